"""JavaScript dates as Node computes them: ``Date.parse`` and pi-context's ``localIso``.

Note timestamps are read with ``Date.parse`` (N20) and written with ``localIso`` (N18).
ECMAScript fixes only the ISO date-time format; every other string is the engine's choice,
so :func:`parse_date_ms` follows V8 (Node's engine): first the ES5 ISO form (with V8's
extensions: any number of fraction digits, ``hhmm`` offsets, ``24:00``), then V8's legacy
parser, which reads what is left as words (month names, ``am``/``pm``, ``UTC``/``GMT``/``EST``
…), numbers (``10:30``, day/month/year in V8's orders, two-digit years) and signed offsets,
ignoring parenthesised text. A date-only ISO string is UTC; any other without an offset is
wall time in ``zone``. ``tests/test_js_node.py`` compares both functions with Node on
generated strings and instants, in several zones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Final, Literal

from attrs import define, frozen

from pictx_fsm.js import WHITESPACE, code_units, number_string

__all__ = [
    "MAX_TIME_MS",
    "civil_from_days",
    "days_from_civil",
    "iso_string",
    "local_iso",
    "parse_date_ms",
]

MAX_TIME_MS: Final = 8_640_000_000_000_000
"""The largest distance of a JS ``Date`` from the epoch (±100,000,000 days)."""
_DAY_MS: Final = 86_400_000
_CYCLE_DAYS: Final = 146_097
"""Days in 400 Gregorian years: shifting by them keeps the calendar (and a zone's rules)."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_PY_FIRST_DAY: Final = -719_162 + 1
_PY_LAST_DAY: Final = 2_932_896 - 1
"""Day numbers (from 1970-01-01) of Python's datetime range, a day inside each end."""


# -- localIso --------------------------------------------------------------------------------------


def local_iso(epoch_ms: float, zone: tzinfo | None = None) -> str:
    """pi-context ``localIso``: the wall clock of ``zone`` (``None``: the host's local zone)
    as ``YYYY-MM-DDTHH:MM:SS.mmm±HH:MM``, never ``Z``; a time outside the JS range prints
    ``NaN`` fields, as a JS ``Date`` does."""
    if not math.isfinite(epoch_ms) or abs(math.trunc(epoch_ms)) > MAX_TIME_MS:
        return "NaN-NaN-NaNTNaN:NaN:NaN.NaN+NaN:NaN"
    instant = math.trunc(epoch_ms)
    offset_ms = _offset_at_instant(instant, zone)
    local = instant + offset_ms
    year, month, day = civil_from_days(local // _DAY_MS)
    clock = local % _DAY_MS
    wall = (
        f"{year}-{month:02d}-{day:02d}T{clock // 3_600_000:02d}:{clock // 60_000 % 60:02d}:"
        f"{clock // 1000 % 60:02d}.{clock % 1000:03d}"
    )
    minutes = math.trunc(offset_ms / 60_000)  # V8: whole minutes, seconds of LMT dropped
    sign = "-" if minutes < 0 else "+"
    whole, rest = math.floor(abs(minutes) / 60), math.fmod(abs(minutes), 60)
    return f"{wall}{sign}{_pad2(whole)}:{_pad2(rest)}"


def iso_string(epoch_ms: float) -> str:
    """``new Date(epoch_ms).toISOString()``: UTC, ``±YYYYYY`` for a year outside 0..9999;
    ``ValueError`` where JavaScript throws a ``RangeError`` (outside the JS range, NaN)."""
    if not math.isfinite(epoch_ms) or abs(math.trunc(epoch_ms)) > MAX_TIME_MS:
        raise ValueError(f"Invalid time value: {epoch_ms!r}")
    days, clock = divmod(math.trunc(epoch_ms), _DAY_MS)
    year, month, day = civil_from_days(days)
    shown = f"{year:04d}" if 0 <= year <= 9999 else f"{'+' if year > 0 else '-'}{abs(year):06d}"
    seconds, millis = divmod(clock, 1000)
    return (
        f"{shown}-{month:02d}-{day:02d}T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:"
        f"{seconds % 60:02d}.{millis:03d}Z"
    )


def _pad2(value: float) -> str:
    return number_string(value).rjust(2, "0")


def _in_python_range(day: int) -> int:
    """How many days to add to ``day`` to bring it into Python's years 1..9999 by whole
    400-year cycles (ICU extrapolates a zone's rules the same way)."""
    if day > _PY_LAST_DAY:
        return -math.ceil((day - _PY_LAST_DAY) / _CYCLE_DAYS) * _CYCLE_DAYS
    if day < _PY_FIRST_DAY:
        return math.ceil((_PY_FIRST_DAY - day) / _CYCLE_DAYS) * _CYCLE_DAYS
    return 0


def _offset_at_instant(instant: int, zone: tzinfo | None) -> int:
    """The zone's UTC offset in ms at ``instant`` (ms from the epoch)."""
    shift = _in_python_range(instant // _DAY_MS) * _DAY_MS
    moment = _EPOCH + timedelta(milliseconds=instant + shift)
    offset = (moment.astimezone(zone) if zone is not None else moment.astimezone()).utcoffset()
    return round(offset / timedelta(milliseconds=1)) if offset is not None else 0


def _offset_at_wall_time(local: int, zone: tzinfo | None) -> int:
    """The offset ECMAScript's ``UTC(t)`` applies to wall time ``local``: the earlier of two
    instants in a repeated hour, the offset before the change in a skipped one (fold 0)."""
    shift = _in_python_range(local // _DAY_MS) * _DAY_MS
    wall = datetime(1970, 1, 1) + timedelta(milliseconds=local + shift)
    aware = wall.replace(tzinfo=zone, fold=0) if zone is not None else wall.astimezone()
    offset = aware.utcoffset()
    return round(offset / timedelta(milliseconds=1)) if offset is not None else 0


def civil_from_days(days: int) -> tuple[int, int, int]:
    """Proleptic Gregorian (year, month, day) of a day count from 1970-01-01 (any range)."""
    shifted = days + 719_468
    era = shifted // _CYCLE_DAYS
    day_of_era = shifted - era * _CYCLE_DAYS
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    month = month_index + 3 if month_index < 10 else month_index - 9
    year = year_of_era + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def days_from_civil(year: int, month: int, day: int) -> int:
    """The day count from 1970-01-01 of a proleptic Gregorian date (``month`` 1..12)."""
    year -= 1 if month <= 2 else 0
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * _CYCLE_DAYS + day_of_era - 719_468


# -- Date.parse: tokens ----------------------------------------------------------------------------

_Kind = Literal["number", "symbol", "word", "space", "unknown", "end"]
_MONTHS: Final = (
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
)
_ZONE_HOURS: Final = {
    "ut": 0,
    "utc": 0,
    "z": 0,
    "gmt": 0,
    "cdt": -5,
    "cst": -6,
    "edt": -4,
    "est": -5,
    "mdt": -6,
    "mst": -7,
    "pdt": -7,
    "pst": -8,
}
_SIGNIFICANT_DIGITS: Final = 9
_MAX_SMI: Final = 2**31 - 1
_SPACES: Final = frozenset(WHITESPACE)
_SPACES_IN_WORDS: Final = frozenset("\u2028\u2029")
"""Line terminators at or above ``A`` that V8 reads as word characters, not spaces."""


@frozen
class _Token:
    kind: _Kind
    value: int | str = 0
    """A number's value, a symbol's character, a word's lower-case three-letter prefix."""
    length: int = 0

    def is_symbol(self, char: str) -> bool:
        return self.kind == "symbol" and self.value == char

    def is_sign(self) -> bool:
        return self.kind == "symbol" and self.value in ("+", "-")

    def is_digits(self, count: int) -> bool:
        return self.kind == "number" and self.length == count

    @property
    def number(self) -> int:
        assert isinstance(self.value, int)
        return self.value

    @property
    def sign(self) -> int:
        return 1 if self.value == "+" else -1

    def keyword(self) -> tuple[str, int] | None:
        """``(type, value)`` of a known word: a month (any word starting with its three
        letters), ``am``/``pm``, a zone name, the ``t`` separator; ``None`` for others."""
        if self.kind != "word":
            return None
        prefix = str(self.value)
        if len(prefix) == 3 and prefix in _MONTHS:
            return "month", _MONTHS.index(prefix) + 1
        if self.length > 3:
            return None
        if prefix in ("am", "pm"):
            return "ampm", 0 if prefix == "am" else 12
        if prefix in _ZONE_HOURS:
            return "zone", _ZONE_HOURS[prefix]
        return ("separator", 0) if prefix == "t" else None

    def is_z(self) -> bool:
        return self.kind == "word" and self.value == "z" and self.length == 1


def _tokens(units: str) -> Iterator[_Token]:
    end = units.find("\0")  # V8 reads a NUL as the end of the string
    end = len(units) if end < 0 else end
    index = 0
    while index < end:
        char = units[index]
        start = index
        if "0" <= char <= "9":
            while index < end and "0" <= units[index] <= "9":
                index += 1
            yield _Token(
                "number", int(units[start : min(index, start + _SIGNIFICANT_DIGITS)]), index - start
            )
            continue
        index += 1
        if char in ":-+.)":
            yield _Token("symbol", char, 1)
        elif _word_char(char):
            while index < end and _word_char(units[index]):
                index += 1
            prefix = "".join(chr(ord(c) | 0x20) for c in units[start : min(index, start + 3)])
            yield _Token("word", prefix, index - start)
        elif char in _SPACES:
            yield _Token("space", " ", 1)
        elif char == "(":
            depth = 1
            while index < end and depth:
                depth += {"(": 1, ")": -1}.get(units[index], 0)
                index += 1
            yield _Token("unknown")
        else:
            yield _Token("unknown")
    yield _Token("end")


def _word_char(char: str) -> bool:
    return char >= "A" and (char not in _SPACES or char in _SPACES_IN_WORDS)


class _Scanner:
    def __init__(self, text: str) -> None:
        self._tokens = _tokens(code_units(text))
        self.peek = next(self._tokens)

    def next(self) -> _Token:
        token = self.peek
        if token.kind != "end":
            self.peek = next(self._tokens)
        return token

    def skip(self, char: str) -> bool:
        if self.peek.is_symbol(char):
            self.next()
            return True
        return False


# -- Date.parse: the three parts -------------------------------------------------------------------


@define
class _Day:
    parts: list[int]
    month_name: int | None = None
    iso: bool = False

    def add(self, number: int) -> bool:
        if len(self.parts) >= 3:
            return False
        self.parts.append(number)
        return True

    def resolve(self) -> tuple[int, int, int] | None:
        """(year, month, day) in V8's orders. Missing parts are 1 (so ``Jan 5`` is in 2001,
        as in V8), and a legacy year below 100 is 19xx or 20xx."""
        if not self.parts:
            return None
        first, second, third = self.parts + [1] * (3 - len(self.parts))
        if self.month_name is not None:
            month = self.month_name
            year, day = (first, second) if not _is_day(first) else (second, first)
        elif self.iso or not _is_day(first):
            year, month, day = first, second, third
        else:
            month, day, year = first, second, third
        if not self.iso:
            year += 2000 if 0 <= year <= 49 else 1900 if 50 <= year <= 99 else 0
        if not (1 <= month <= 12 and _is_day(day)):
            return None
        return year, month, day


@define
class _Time:
    parts: list[int]
    hour_offset: int | None = None

    def add(self, number: int) -> bool:
        if len(self.parts) >= 4:
            return False
        self.parts.append(number)
        return True

    def add_final(self, number: int) -> bool:
        if not self.add(number):
            return False
        self.parts += [0] * (4 - len(self.parts))
        return True

    def expects(self, number: int) -> bool:
        count = len(self.parts)
        return (count in (1, 2) and 0 <= number <= 59) or (count == 3 and 0 <= number <= 999)

    def resolve(self) -> int | None:
        hour, minute, second, milli = self.parts + [0] * (4 - len(self.parts))
        if self.hour_offset is not None:
            if not 0 <= hour <= 12:
                return None
            hour = hour % 12 + self.hour_offset
        valid = hour <= 23 and minute <= 59 and second <= 59 and milli <= 999
        if not valid and (hour, minute, second, milli) != (24, 0, 0, 0):
            return None
        return ((hour * 60 + minute) * 60 + second) * 1000 + milli


@define
class _Zone:
    sign: int | None = None
    hours: int | None = None
    minutes: int | None = None

    def set_hours(self, hours: int) -> None:
        self.sign = -1 if hours < 0 else 1
        self.hours, self.minutes = abs(hours), 0

    def expects(self, number: int) -> bool:
        return self.hours is not None and self.minutes is None and 0 <= number <= 59

    def is_utc(self) -> bool:
        return self.hours == 0 and self.minutes == 0

    def offset_ms(self) -> int | None:
        """The offset, ``None`` without one; raises ``OverflowError`` past V8's limit (its
        seconds are summed in 32-bit unsigned arithmetic and must fit a small integer)."""
        if self.sign is None:
            return None
        seconds = ((self.hours or 0) * 3600 + (self.minutes or 0) * 60) % 2**32
        if seconds > _MAX_SMI:
            raise OverflowError(seconds)
        return self.sign * seconds * 1000


def _is_day(number: int) -> bool:
    return 1 <= number <= 31


def _milliseconds(token: _Token) -> int:
    """The first three digits of a fraction, from its value and its digit count."""
    digits = min(token.length, _SIGNIFICANT_DIGITS)
    if digits < 3:
        return token.number * (100 if digits == 1 else 10)
    return token.number // int(10 ** (digits - 3))


# -- Date.parse ------------------------------------------------------------------------------------

_MAX_LOCAL_MS: Final = MAX_TIME_MS + 10 * _DAY_MS
_TO_ISO_STRING: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", re.ASCII)


def parse_date_ms(text: str, zone: tzinfo | None = UTC) -> int | None:
    """``Date.parse(text)`` in V8, or ``None`` for NaN. Wall times without an offset are read
    in ``zone`` (``None``: the host's local zone, as Node does; the default UTC keeps results
    independent of the machine for callers that do not say)."""
    if len(text) == 24 and _TO_ISO_STRING.fullmatch(text):  # what Pi writes: the fast path
        try:
            return (datetime.fromisoformat(text) - _EPOCH) // timedelta(milliseconds=1)
        except ValueError:
            pass  # 24:00, 30 February: as V8 reads them
    scanner = _Scanner(text)
    day, time, offset = _Day([]), _Time([]), _Zone()
    rest = _iso_date_time(scanner, day, time, offset)
    if rest is None or not _legacy(scanner, rest, day, time, offset):
        return None
    date, clock = day.resolve(), time.resolve()
    if date is None or clock is None or not -1_000_000 <= date[0] <= 1_000_000:
        return None
    year, month, day_of_month = date
    local = (days_from_civil(year, month, 1) + day_of_month - 1) * _DAY_MS + clock
    try:
        zone_ms = offset.offset_ms()
    except OverflowError:
        return None
    if zone_ms is None:
        if abs(local) > _MAX_LOCAL_MS:
            return None
        instant = local - _offset_at_wall_time(local, zone)
    else:
        instant = local - zone_ms
    return instant if abs(instant) <= MAX_TIME_MS else None


def _iso_date_time(scanner: _Scanner, day: _Day, time: _Time, zone: _Zone) -> _Token | None:
    """As much of the ES5 form ``[±YY]YYYY[-MM[-DD]][THH:mm[:ss[.s…]][Z|±hh:mm]]`` as there
    is: the token the legacy parser continues with (``end`` when the form is complete), or
    ``None`` when a started time part is malformed (NaN)."""
    if scanner.peek.is_sign():
        sign = scanner.next()
        if not scanner.peek.is_digits(6):
            return sign
        year = scanner.next().number
        if sign.sign < 0 and year == 0:
            return sign
        day.add(sign.sign * year)
    elif scanner.peek.is_digits(4):
        day.add(scanner.next().number)
    else:
        return scanner.next()
    for check in (lambda n: 1 <= n <= 12, _is_day):
        if not scanner.skip("-"):
            break
        if not (scanner.peek.is_digits(2) and check(scanner.peek.number)):
            return scanner.next()
        day.add(scanner.next().number)
    if scanner.peek.keyword() != ("separator", 0):
        if scanner.peek.kind != "end":
            return scanner.next()
    elif not _iso_time(scanner, time, zone):
        return None
    if zone.hours is None and not time.parts:
        zone.set_hours(0)  # a date alone is UTC, a date-time without offset is wall time
    day.iso = True
    return _Token("end")


def _iso_time(scanner: _Scanner, time: _Time, zone: _Zone) -> bool:
    """``THH:mm[:ss[.s…]]`` and an optional zone, to the end of the string."""
    scanner.next()
    if not (scanner.peek.is_digits(2) and scanner.peek.number <= 24):
        return False
    midnight = scanner.peek.number == 24  # 24:00, 24:00:00 and 24:00:00.000 only
    time.add(scanner.next().number)
    if not (scanner.skip(":") and _two_digits(scanner, midnight)):
        return False
    time.add(scanner.next().number)
    if scanner.skip(":"):
        if not _two_digits(scanner, midnight):
            return False
        time.add(scanner.next().number)
        if scanner.skip("."):
            peek = scanner.peek
            if peek.kind != "number" or (midnight and peek.number):
                return False
            time.add(_milliseconds(scanner.next()))
    return _iso_zone(scanner, zone) and scanner.peek.kind == "end"


def _two_digits(scanner: _Scanner, midnight: bool) -> bool:
    """Minutes or seconds: two digits, at most 59, zero after hour 24."""
    peek = scanner.peek
    return peek.is_digits(2) and peek.number <= 59 and not (midnight and peek.number)


def _iso_zone(scanner: _Scanner, zone: _Zone) -> bool:
    if scanner.peek.is_z():
        scanner.next()
        zone.set_hours(0)
        return True
    if not scanner.peek.is_sign():
        return True
    zone.sign = scanner.next().sign
    if scanner.peek.is_digits(4):
        zone.hours, zone.minutes = divmod(scanner.next().number, 100)
        return zone.hours <= 23 and zone.minutes <= 59
    if not (scanner.peek.is_digits(2) and scanner.peek.number <= 23):
        return False
    zone.hours = scanner.next().number
    if not (scanner.skip(":") and scanner.peek.is_digits(2) and scanner.peek.number <= 59):
        return False
    zone.minutes = scanner.next().number
    return True


def _legacy(scanner: _Scanner, token: _Token, day: _Day, time: _Time, zone: _Zone) -> bool:
    """V8's legacy parser over the tokens the ES5 form left; ``False`` for NaN."""
    state = _Legacy(scanner, day, time, zone, has_number=bool(day.parts))
    while token.kind != "end":
        if not state.read(token):
            return False
        token = scanner.next()
    return True


@define
class _Legacy:
    scanner: _Scanner
    day: _Day
    time: _Time
    zone: _Zone
    has_number: bool

    def read(self, token: _Token) -> bool:
        if token.kind == "number":
            self.has_number = True
            return self.number(token.number)
        if token.kind == "word":
            return self.word(token)
        if token.is_sign() and (self.zone.is_utc() or self.time.parts):
            return self.signed_offset(token.sign)
        return not ((token.is_sign() or token.is_symbol(")")) and self.has_number)

    def number(self, number: int) -> bool:
        scanner, time = self.scanner, self.time
        if scanner.skip(":"):
            if scanner.skip(":"):
                if time.parts:
                    return False
                time.add(number)
                time.add(0)
                return True
            if not time.add(number):
                return False
            scanner.skip(".")
            return True
        if scanner.skip(".") and time.expects(number):
            time.add(number)
            if scanner.peek.kind != "number":
                return False
            time.add_final(_milliseconds(scanner.next()))
            return True
        if self.zone.expects(number):
            self.zone.minutes = number
            return True
        if time.expects(number):
            time.add_final(number)
            peek = scanner.peek
            return peek.kind in ("end", "space") or peek.is_z() or peek.is_sign()
        if not self.day.add(number):
            return False
        scanner.skip("-")
        return True

    def word(self, token: _Token) -> bool:
        keyword = token.keyword()
        kind, value = keyword if keyword is not None else ("", 0)
        if kind == "ampm" and self.time.parts:
            self.time.hour_offset = value
        elif kind == "month":
            self.day.month_name = value
            self.scanner.skip("-")
        elif kind == "zone" and self.has_number:
            self.zone.set_hours(value)
        elif self.has_number or self.scanner.peek.kind == "number":
            return False  # a stray word after a number, or glued to the first one
        return True

    def signed_offset(self, sign: int) -> bool:
        zone = self.zone
        zone.sign = sign
        number = length = 0
        if self.scanner.peek.kind == "number":
            digits = self.scanner.next()
            number, length = digits.number, digits.length
        self.has_number = True
        if self.scanner.peek.is_symbol(":"):
            zone.hours, zone.minutes = number, None
        elif length in (1, 2):
            zone.hours, zone.minutes = number, 0
        elif length in (3, 4):
            zone.hours, zone.minutes = divmod(number, 100)
        else:
            return False
        return True
