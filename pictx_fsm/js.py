"""JavaScript value semantics that pi-context's decisions depend on, for JSON-decoded values.

pi-context runs on Node: settings values are JS numbers, regexes are JS regexes, note
timestamps go through ``Date.parse``. Python differs at the edges (``True`` is an ``int``,
``\\d`` matches any Unicode digit, ``.`` matches ``\\r``), and those edges decide whether a
margin is valid or an error message is an overflow. This module holds the few JS rules the
policy, overflow and notes modules need, in one place.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import threading
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Final, TypeGuard

import icu

from pictx_fsm.fastjson import utf8_string

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""``Number.MAX_SAFE_INTEGER``."""

# ECMAScript WhiteSpace + LineTerminator: what ``\s`` matches and ``String.prototype.trim``
# removes.
_JS_SPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_SPACE_CLASS: Final = "[" + "".join(f"\\u{ord(c):04x}" for c in _JS_SPACE) + "]"
_JS_DOT_CLASS: Final = "[^\\n\\r\\u2028\\u2029]"


def is_number(value: object) -> bool:
    """``typeof value === "number"`` for a JSON-decoded value (``bool`` is not a number)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def to_number(value: int | float) -> float:
    """A Python number as a JS number (a double; ints beyond its range become infinite)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_safe_integer(value: object) -> bool:
    """``Number.isSafeInteger``: a JSON ``30000.0`` is the JS number 30000, hence valid.

    post: implies(__return__, is_number(value))
    """
    if not is_number(value):
        return False
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return False
    return abs(value) <= MAX_SAFE_INTEGER  # type: ignore[arg-type]


def is_plain_object(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``typeof value === "object" && value !== null && !Array.isArray(value)`` for JSON."""
    return type(value) is dict or isinstance(value, Mapping)  # a dict without the ABC check


def truthy(value: object) -> bool:
    """JS truthiness of a JSON value (``0``, ``""``, ``null``, ``false`` and NaN are falsy)."""
    if value is None or value is False:
        return False
    if is_number(value):
        return bool(value) and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


def js_string(value: object) -> str:
    """``String(value)`` for a JSON-decoded value, as it appears in Pi's error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _number_string(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return str(value)


def _number_string(value: float) -> str:
    return number_string(value)


def number_string(value: int | float) -> str:
    """``Number.prototype.toString()`` of a JS number (ECMAScript Number::toString).

    Python's ``repr`` finds the same shortest round-trip digits as V8; only the layout
    differs (``1e-07`` vs ``1e-7``, ``1e+16`` vs ``10000000000000000``).
    """
    number = to_number(value)
    if math.isnan(number):
        return "NaN"
    if number == 0:
        return "0"
    if number < 0:
        return "-" + number_string(-number)
    if math.isinf(number):
        return "Infinity"
    digits, point = _shortest_digits(number)
    return _layout_number(digits, point)


def _shortest_digits(number: float) -> tuple[str, int]:
    """``(digits, n)`` with ``number == 0.digits × 10**n`` and no leading/trailing zeros."""
    mantissa, _, exponent = repr(number).partition("e")
    whole, _, fraction = mantissa.partition(".")
    written = whole + fraction
    digits = written.lstrip("0")
    point = len(whole) + int(exponent or 0) - (len(written) - len(digits))
    return digits.rstrip("0"), point


def _layout_number(digits: str, point: int) -> str:
    count = len(digits)
    if count <= point <= 21:
        return digits + "0" * (point - count)
    if 0 < point <= 21:
        return f"{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    exponent = point - 1
    sign = "+" if exponent >= 0 else "-"
    head = digits if count == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{head}e{sign}{abs(exponent)}"


def error_string(error: BaseException) -> str:
    """``String(error)`` of a JS ``Error``: ``"<name>: <message>"``, or the name alone."""
    name = getattr(error, "js_name", None) or type(error).__name__
    message = str(error)
    return f"{name}: {message}" if message else name


def parse_json(text: str) -> Any:
    """``JSON.parse``: strict JSON, so ``NaN`` and ``Infinity`` are syntax errors as in JS."""
    return json.loads(text, parse_constant=_reject_constant)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Unexpected token {name!r} in JSON")


def trim(text: str) -> str:
    """``String.prototype.trim`` (JS whitespace, which differs from ``str.strip``)."""
    return text.strip(_JS_SPACE)


def compile_regex(source: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """Compile the source of a JS regex literal (no ``u`` flag) with JS matching rules.

    ASCII mode gives JS's ASCII ``\\d``/``\\w`` and its ASCII-only case folding; ``\\s`` and
    ``.`` are rewritten to JS's classes. Only the syntax shared by both engines is supported.
    """
    flags = re.ASCII | (re.IGNORECASE if ignore_case else 0)
    return re.compile(_translate(source), flags)


def _translate(source: str) -> str:
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(source):
        char = source[index]
        if char == "\\" and index + 1 < len(source):
            escaped = source[index + 1]
            if escaped == "s":
                out.append(_JS_SPACE_CLASS[1:-1] if in_class else _JS_SPACE_CLASS)
            else:
                out.append(char + escaped)
            index += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "." and not in_class:
            char = _JS_DOT_CLASS
        out.append(char)
        index += 1
    return "".join(out)


def parse_date_ms(text: str, zone: tzinfo | None = UTC) -> int | None:
    """``Date.parse`` for the formats notes carry: ISO 8601 and RFC 2822; ``None`` for NaN.

    A date alone is UTC midnight, as in JS. A date-time without an offset is read in
    ``zone`` (``None``: the host's local zone, as Node does; the default UTC keeps results
    independent of the machine for callers that do not say).
    """
    stripped = text.strip()
    try:
        parsed = datetime.fromisoformat(stripped)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(stripped)
        except (TypeError, ValueError, IndexError):
            return None
    if parsed.tzinfo is None:
        date_only = len(stripped) <= 10 and "T" not in stripped
        if date_only or zone is not None:
            parsed = parsed.replace(tzinfo=UTC if date_only else zone)
        else:
            parsed = parsed.astimezone()
    return (parsed - _EPOCH) // timedelta(milliseconds=1)


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_TIME_MS: Final = 8.64e15
_DAY_MS: Final = 86_400_000
_CYCLE_MS: Final = 146_097 * _DAY_MS
_PY_RANGE_MS: Final = (-62_135_596_800_000 + _DAY_MS, 253_402_300_799_000 - _DAY_MS)


def local_iso(epoch_ms: float, zone: tzinfo | None = None) -> str:
    """pi-context ``localIso``: the wall clock of ``zone`` (``None``: the host's local zone)
    as ``YYYY-MM-DDTHH:MM:SS.mmm±HH:MM``, never ``Z``; a time outside the JS range prints
    ``NaN`` fields, as a JS ``Date`` does."""
    if not math.isfinite(epoch_ms) or abs(math.trunc(epoch_ms)) > _MAX_TIME_MS:
        return "NaN-NaN-NaNTNaN:NaN:NaN.NaN+NaN:NaN"
    instant = math.trunc(epoch_ms)
    offset_ms = _zone_offset_ms(instant, zone)
    local = instant + offset_ms
    year, month, day = _civil_from_days(local // _DAY_MS)
    clock = local % _DAY_MS
    wall = (
        f"{year}-{month:02d}-{day:02d}T{clock // 3_600_000:02d}:{clock // 60_000 % 60:02d}:"
        f"{clock // 1000 % 60:02d}.{clock % 1000:03d}"
    )
    minutes = math.trunc(offset_ms / 60_000)  # V8: whole minutes, seconds of LMT dropped
    sign = "-" if minutes < 0 else "+"
    whole, rest = math.floor(abs(minutes) / 60), math.fmod(abs(minutes), 60)
    return f"{wall}{sign}{_pad2(whole)}:{_pad2(rest)}"


def _zone_offset_ms(instant: int, zone: tzinfo | None) -> int:
    """The zone's UTC offset at ``instant``; instants outside Python's years 1..9999 are
    moved by whole 400-year Gregorian cycles, as ICU extrapolates the zone's rules."""
    low, high = _PY_RANGE_MS
    probe = instant
    if probe > high:
        probe -= math.ceil((probe - high) / _CYCLE_MS) * _CYCLE_MS
    elif probe < low:
        probe += math.ceil((low - probe) / _CYCLE_MS) * _CYCLE_MS
    moment = datetime.fromtimestamp(probe / 1000, tz=UTC)
    offset = (moment.astimezone(zone) if zone is not None else moment.astimezone()).utcoffset()
    return round(offset.total_seconds() * 1000) if offset is not None else 0


def _pad2(value: float) -> str:
    return number_string(value).rjust(2, "0")


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """Proleptic Gregorian (year, month, day) of a day count from 1970-01-01 (any range)."""
    shifted = days + 719_468
    era = shifted // 146_097
    day_of_era = shifted - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    year = year_of_era + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


# -- JSON.stringify ----------------------------------------------------------------------------

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def stringify(value: Any, *, indent: int | None = None) -> str:
    """``JSON.stringify(value, null, indent)`` of a JSON value: JS number layout, lone
    surrogates escaped as ``\\udxxx`` (well-formed stringify), non-finite numbers ``null``."""
    out: list[str] = []
    _stringify(value, indent, 0, out)
    return "".join(out)


def _stringify(value: Any, indent: int | None, level: int, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(quote(value))
    elif value is None or value is True or value is False:
        out.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, int | float):
        number = to_number(value)
        out.append(number_string(number) if math.isfinite(number) else "null")
    elif isinstance(value, Mapping):
        items: list[tuple[str | None, Any]] = [
            (quote(str(key)), item) for key, item in value.items()
        ]
        _container(items, "{", "}", indent, level, out)
    else:
        _container([(None, item) for item in value], "[", "]", indent, level, out)


def _container(
    items: list[tuple[str | None, Any]],
    opener: str,
    closer: str,
    indent: int | None,
    level: int,
    out: list[str],
) -> None:
    if not items:
        out.append(opener + closer)
        return
    inner = "" if indent is None else "\n" + " " * (indent * (level + 1))
    colon = ":" if indent is None else ": "
    out.append(opener)
    for index, (key, item) in enumerate(items):
        out.append(("," if index else "") + inner)
        if key is not None:
            out.append(key + colon)
        _stringify(item, indent, level + 1, out)
    out.append(("" if indent is None else "\n" + " " * (indent * level)) + closer)


def quote(text: str) -> str:
    """A JSON string literal as ``JSON.stringify`` writes it (U+2028/U+2029 stay raw)."""
    return well_formed_json(utf8_string(text))


def well_formed_json(json_text: str) -> str:
    """JSON text with each lone surrogate as its ``\\udxxx`` escape: what the well-formed
    ``JSON.stringify`` writes where ``json.dumps(..., ensure_ascii=False)`` left it raw."""
    if not _LONE_SURROGATE.search(json_text):
        return json_text
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", json_text)


def first_lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (half of a cut emoji), or ``None``."""
    match = _LONE_SURROGATE.search(text)
    return None if match is None else match.start()


def utf8_length(text: str) -> int:
    """``Buffer.byteLength(text, "utf8")``: a lone surrogate counts 3 bytes (U+FFFD)."""
    return len(text.encode("utf-8", errors="surrogatepass"))


def to_utf8(text: str) -> bytes:
    """What Node writes for ``text``: UTF-8 with each lone surrogate as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


def parse_json_value(text: str) -> Any:
    """``JSON.parse`` with JS values: an integer beyond 2**53 becomes a double, and an
    object lists its array-index keys first, ascending (JS property order)."""
    return json.loads(
        text, parse_constant=_reject_constant, parse_int=_js_int, object_pairs_hook=_js_object
    )


def _js_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    indices = sorted((key for key in value if _is_array_index(key)), key=int)
    if not indices:
        return value
    return {**{key: value[key] for key in indices}, **value}


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


def _js_int(text: str) -> int | float:
    value = int(text)
    return value if abs(value) <= MAX_SAFE_INTEGER else float(text)


# -- strings as UTF-16 (indexOf, includes, split) ------------------------------------------------


def _units(text: str) -> str:
    """``text`` with every astral character split into its two surrogate code units."""
    if not any(ord(char) > 0xFFFF for char in text):
        return text
    data = text.encode("utf-16-le", errors="surrogatepass")
    return "".join(chr(data[i] | data[i + 1] << 8) for i in range(0, len(data), 2))


def _from_units(units: str) -> str:
    return units.encode("utf-16-le", errors="surrogatepass").decode(
        "utf-16-le", errors="surrogatepass"
    )


def _has_surrogate(text: str) -> bool:
    return _LONE_SURROGATE.search(text) is not None


def index_of(text: str, query: str, start: int = 0) -> int:
    """``text.indexOf(query)`` as a code-point index (-1 when absent).

    JS searches UTF-16 code units, so a query holding a lone surrogate can match half of a
    surrogate pair; only then are text and query searched as code units (an astral
    character of the query as its two units).
    """
    if not _has_surrogate(query):
        return text.find(query, start)
    units = _units(text)
    found = units.find(_units(query), len(_units(text[:start])))
    return -1 if found < 0 else len(_from_units(units[:found]))


def includes(text: str, query: str) -> bool:
    """``text.includes(query)`` (UTF-16 semantics, see :func:`index_of`)."""
    if not _has_surrogate(query):
        return query in text
    return _units(query) in _units(text)


def replace_all(text: str, old: str, new: str) -> str:
    """``text.split(old).join(new)``: left-to-right non-overlapping, literal."""
    if not _has_surrogate(old):
        return text.replace(old, new)
    return _from_units(_units(text).replace(_units(old), _units(new)))


def splice(text: str, old: str, new: str) -> str:
    """Replace the first occurrence of ``old`` (``indexOf`` + substring splicing)."""
    if not _has_surrogate(old):
        index = text.find(old)
        return text[:index] + new + text[index + len(old) :]
    units, old_units = _units(text), _units(old)
    index = units.find(old_units)
    return _from_units(units[:index] + _units(new) + units[index + len(old_units) :])


def occurrence_starts(text: str, needle: str) -> list[int]:
    """Code-unit-faithful starts of the non-overlapping occurrences of ``needle``, as
    code-point prefixes of ``text`` (what ``indexOf`` in a loop visits)."""
    if _has_surrogate(needle):
        units, needle = _units(text), _units(needle)
    else:
        units = text
    starts: list[int] = []
    found = units.find(needle)
    while found >= 0:
        starts.append(found)
        found = units.find(needle, found + max(len(needle), 1))
    if units is text:
        return starts
    return [len(_from_units(units[:start])) for start in starts]


# -- localeCompare --------------------------------------------------------------------------------

_COLLATORS: Final = threading.local()


def locale_key(text: str) -> bytes:
    """A sort key with ``a.localeCompare(b)`` order: the ICU root collator (CLDR root, the
    order of Node's default ``en``/root locale), tertiary strength, as V8 uses it."""
    collator = getattr(_COLLATORS, "root", None)
    if collator is None:
        collator = icu.Collator.createInstance(icu.Locale.getRoot())
        _COLLATORS.root = collator
    return bytes(collator.getSortKey(text))
