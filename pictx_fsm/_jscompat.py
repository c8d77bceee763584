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
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, TypeGuard

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
    return isinstance(value, Mapping)


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
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


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


def parse_date_ms(text: str) -> int | None:
    """``Date.parse`` for the formats notes carry: ISO 8601 and RFC 2822; ``None`` for NaN.

    Deviation: an ISO date-time without an offset is read as UTC (JS reads it in the host's
    local zone), so results never depend on the machine's time zone.
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
        parsed = parsed.replace(tzinfo=UTC)
    return math.floor(parsed.timestamp() * 1000)
