"""Sets of UTF-16 code units, as a JavaScript regex without the ``u`` flag matches them.

A JS regex matches one code unit at a time, so every class, escape, ``.`` and literal is a
set of units 0..0xFFFF; sets are sorted, disjoint, non-adjacent ``(low, high)`` ranges. The
``i`` flag compares ``Canonicalize(ch)`` (ECMAScript 22.2.2.7.3): the single-unit
``toUpperCase`` of ``ch``, except that a non-ASCII unit never becomes an ASCII one (so
KELVIN SIGN is not ``k``). :func:`case_closed` turns a set into every unit that matches it
under ``i``, so the Python pattern needs no ``re.IGNORECASE`` (whose folding differs).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable
from typing import Final, TypeAlias

import icu

__all__ = [
    "ALL",
    "DIGITS",
    "LINE_TERMINATORS",
    "NOTHING",
    "SPACES",
    "WORD",
    "CharSet",
    "canonicalize",
    "case_closed",
    "char_set",
    "complement",
    "contains",
    "python_class",
    "union",
]

CharSet: TypeAlias = tuple[tuple[int, int], ...]
"""Sorted, disjoint, non-adjacent inclusive ranges of code units."""

MAX_UNIT: Final = 0xFFFF
NOTHING: Final[CharSet] = ()
ALL: Final[CharSet] = ((0, MAX_UNIT),)


def char_set(ranges: Iterable[tuple[int, int]]) -> CharSet:
    """The normal form of any ranges (unsorted, overlapping or adjacent)."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return tuple(merged)


def _units(text: str) -> CharSet:
    return char_set((ord(char), ord(char)) for char in text)


DIGITS: Final = _units("0123456789")
WORD: Final = char_set([(ord("0"), ord("9")), (ord("A"), ord("Z")), (95, 95), (ord("a"), ord("z"))])
"""``\\w`` and the word characters of ``\\b``: ASCII only without the ``u`` flag."""
LINE_TERMINATORS: Final = _units("\n\r\u2028\u2029")
SPACES: Final = char_set(
    [
        *_units("\t\v\f \u00a0\u1680\u202f\u205f\u3000\ufeff"),
        (0x2000, 0x200A),
        *LINE_TERMINATORS,
    ]
)
"""``\\s``: ECMAScript WhiteSpace (the Zs category of Unicode 17 among them) and
LineTerminator — also what ``String.prototype.trim`` removes."""


def union(*sets: CharSet) -> CharSet:
    return char_set(span for ranges in sets for span in ranges)


def complement(ranges: CharSet) -> CharSet:
    gaps: list[tuple[int, int]] = []
    start = 0
    for low, high in ranges:
        if low > start:
            gaps.append((start, low - 1))
        start = high + 1
    if start <= MAX_UNIT:
        gaps.append((start, MAX_UNIT))
    return tuple(gaps)


def contains(ranges: CharSet, unit: int) -> bool:
    index = bisect.bisect_right(ranges, (unit, MAX_UNIT + 1)) - 1
    return index >= 0 and ranges[index][0] <= unit <= ranges[index][1]


# -- the i flag ---------------------------------------------------------------------------------


_UNICODE_17_UPPER: Final = {0xA7CF: 0xA7CE, 0xA7D3: 0xA7D2, 0xA7D5: 0xA7D4}
"""The BMP lower-case letters Unicode 17 (Node 22's ICU 78) added with an upper case, which
the bundled ICU 77 (Unicode 16) does not know; a newer ICU maps them itself."""


def canonicalize(unit: int) -> int:
    """ECMAScript ``Canonicalize(rer, ch)`` without ``u``: V8 computes it with ICU's full
    upper-casing (``icu::UnicodeString::toUpper``), as here."""
    upper = str(icu.UnicodeString(chr(unit)).toUpper(icu.Locale.getRoot()))
    if len(upper) != 1:
        return unit
    mapped = _UNICODE_17_UPPER.get(unit, unit) if upper == chr(unit) else ord(upper)
    return unit if unit >= 128 and mapped < 128 else mapped


@functools.cache
def _case_classes() -> dict[int, tuple[int, ...]]:
    """Each unit that shares its canonical form with others, to all units of that form
    (about 2,800 units in 1,400 sets), computed once. A unit whose canonical form is another
    unit changes when upper-cased, so only those (and their forms) are asked of ICU."""
    changing = icu.UnicodeSet("[[:Changes_When_Uppercased:]&[\\u0000-\\uffff]]")
    changing.addAll(icu.UnicodeSet("[\\ua7cf\\ua7d3\\ua7d5]"))  # _UNICODE_17_UPPER
    by_canonical: dict[int, set[int]] = {}
    for index in range(changing.getRangeCount()):
        start, end = ord(changing.getRangeStart(index)), ord(changing.getRangeEnd(index))
        for unit in range(start, end + 1):
            if not 0xD800 <= unit <= 0xDFFF and (form := canonicalize(unit)) != unit:
                by_canonical.setdefault(form, {form}).add(unit)
    return {unit: tuple(sorted(units)) for units in by_canonical.values() for unit in units}


@functools.lru_cache(maxsize=4096)
def case_closed(ranges: CharSet) -> CharSet:
    """Every unit whose canonical form is that of a member: what ``[…]`` matches under ``i``."""
    classes = _case_classes()
    if sum(high - low + 1 for low, high in ranges) <= len(classes):
        members = (unit for low, high in ranges for unit in range(low, high + 1))
        extra = [classes[unit] for unit in members if unit in classes]
    else:
        extra = [units for unit, units in classes.items() if contains(ranges, unit)]
    if not extra:
        return ranges
    return union(ranges, tuple((unit, unit) for units in extra for unit in units))


# -- Python ---------------------------------------------------------------------------------------


def python_class(ranges: CharSet) -> str:
    """A Python ``re`` atom matching exactly the units of ``ranges``."""
    if not ranges:
        return "(?!)"
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return _escaped(ranges[0][0])
    body = "".join(
        _escaped(low) if low == high else f"{_escaped(low)}-{_escaped(high)}"
        for low, high in ranges
    )
    return f"[{body}]"


def _escaped(unit: int) -> str:
    char = chr(unit)
    if char.isascii() and char.isalnum():
        return char
    return f"\\x{unit:02x}" if unit < 0x100 else f"\\u{unit:04x}"
