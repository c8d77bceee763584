"""JavaScript value semantics that the extensions' decisions and Pi's files depend on, for
JSON-decoded values.

Pi and pi-context run on Node: settings values are JS numbers, texts are UTF-16, objects list
index keys first, ``JSON.stringify`` writes the session files and tool results. Python
differs at the edges (``True`` is an ``int``, ``repr(1e-7)`` is ``1e-07``, an emoji is one
character, ``str.strip`` knows other spaces), and those edges decide whether a margin is
valid, how long a text is, or what a line says. This module holds those rules in one place;
regexes are in :mod:`pictx_fsm.js_regex` and dates in :mod:`pictx_fsm.js_date`. Each rule is
checked against Node on generated inputs (``tests/test_js_node.py``).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Final, TypeGuard

import icu

from pictx_fsm.fastjson import dumper, utf8_string

__all__ = [
    "MAX_SAFE_INTEGER",
    "WHITESPACE",
    "code_units",
    "error_string",
    "first_lone_surrogate",
    "from_code_units",
    "includes",
    "index_of",
    "is_number",
    "is_plain_object",
    "is_safe_integer",
    "js_string",
    "locale_key",
    "number_string",
    "occurrence_starts",
    "parse_json",
    "parse_json_value",
    "property_order",
    "quote",
    "replace_all",
    "splice",
    "strict_equals",
    "string_property",
    "stringify",
    "to_number",
    "to_utf8",
    "trim",
    "truthy",
    "utf8_length",
    "well_formed_json",
]

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""``Number.MAX_SAFE_INTEGER``."""

WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""ECMAScript WhiteSpace and LineTerminator: what ``String.prototype.trim`` removes and a
regex's ``\\s`` matches."""


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


def string_property(value: object, key: str) -> str | None:
    """``value[key]`` where ``value`` is a plain object and that property a string; else
    ``None`` (a window id in an entry's ``data`` or ``details``: any other JSON is no id)."""
    if not is_plain_object(value):
        return None
    found = value.get(key)
    return found if isinstance(found, str) else None


def strict_equals(left: object, right: object) -> bool:
    """``left === right`` for JSON-decoded values: numbers by value (``1 === 1.0``,
    ``0 === -0``, never NaN), other scalars by type and value, objects and arrays by identity."""
    if is_number(left) and is_number(right):
        return to_number(left) == to_number(right)  # type: ignore[arg-type]
    if isinstance(left, list | Mapping) or isinstance(right, list | Mapping):
        return left is right
    return type(left) is type(right) and left == right


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
    if isinstance(value, int | float):
        return number_string(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return str(value)


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
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return _parse_nested(text, js_values=False)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"Unexpected token {name!r} in JSON")


def trim(text: str) -> str:
    """``String.prototype.trim`` (JS whitespace, which differs from ``str.strip``)."""
    return text.strip(WHITESPACE)


# -- JSON.stringify ----------------------------------------------------------------------------

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def stringify(value: Any, *, indent: int | None = None, finite: bool = False) -> str:
    """``JSON.stringify(value, null, indent)`` of a JSON value: JS number layout, integers as
    the doubles JS holds, array-index keys first, lone surrogates escaped as ``\\udxxx``
    (well-formed stringify), non-finite numbers ``null`` — or, with ``finite``, a
    ``ValueError`` (what must never be written). A value JSON cannot hold is a ``TypeError``.

    A compact value whose Python spelling is already JavaScript's (the common case: text,
    safe integers, short floats, no index keys) is written by the C encoder."""
    if indent is None and _spelled_alike(value):
        return well_formed_json(_compact(value))
    out: list[str] = []
    _stringify(value, indent, 0, out, finite)
    return "".join(out)


_compact: Final = dumper(separators=(",", ":"), ensure_ascii=False)


def _spelled_alike(value: Any) -> bool:
    """``json.dumps`` writes ``value`` as ``JSON.stringify`` does (up to lone surrogates)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER)
    if kind is float:  # repr and JS agree between 1e-4 and 1e16 except for "1.0"
        spelled = repr(value)
        return "e" not in spelled and "n" not in spelled and not spelled.endswith(".0")
    if kind is dict:
        return all(type(key) is str and not key[:1].isdigit() for key in value) and all(
            _spelled_alike(item) for item in value.values()
        )
    if kind is list:
        return all(_spelled_alike(item) for item in value)
    return False


def _escaped_unit(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _stringify(value: Any, indent: int | None, level: int, out: list[str], finite: bool) -> None:
    if isinstance(value, str):
        out.append(quote(value))
    elif value is None or value is True or value is False:
        out.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, int | float):
        number = to_number(value)
        if finite and not math.isfinite(number):
            raise ValueError(f"{value!r} is not JSON")
        out.append(number_string(number) if math.isfinite(number) else "null")
    elif isinstance(value, Mapping):
        items: list[tuple[str | None, Any]] = [
            (quote(key), item) for key, item in property_order(value).items()
        ]
        _container(items, "{", "}", indent, level, out, finite)
    elif isinstance(value, list | tuple):
        _container([(None, item) for item in value], "[", "]", indent, level, out, finite)
    else:
        raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _container(
    items: list[tuple[str | None, Any]],
    opener: str,
    closer: str,
    indent: int | None,
    level: int,
    out: list[str],
    finite: bool,
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
        _stringify(item, indent, level + 1, out, finite)
    out.append(("" if indent is None else "\n" + " " * (indent * level)) + closer)


def quote(text: str) -> str:
    """A JSON string literal as ``JSON.stringify`` writes it (U+2028/U+2029 stay raw)."""
    return well_formed_json(utf8_string(text))


def well_formed_json(json_text: str) -> str:
    """JSON text with each lone surrogate as its ``\\udxxx`` escape: what the well-formed
    ``JSON.stringify`` writes where ``json.dumps(..., ensure_ascii=False)`` left it raw."""
    if json_text.isascii() or not _LONE_SURROGATE.search(json_text):
        return json_text
    return _LONE_SURROGATE.sub(_escaped_unit, json_text)


def first_lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (half of a cut emoji), or ``None``."""
    match = _LONE_SURROGATE.search(text)
    return None if match is None else match.start()


def utf8_length(text: str) -> int:
    """``Buffer.byteLength(text, "utf8")``: a lone surrogate counts 3 bytes (U+FFFD), the two
    halves of a pair (even as two Python characters) 4 — one character to JavaScript."""
    if text.isascii():
        return len(text)
    return len(from_code_units(text).encode("utf-8", errors="surrogatepass"))


def to_utf8(text: str) -> bytes:
    """What Node writes for ``text``: UTF-8 with each lone surrogate as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", from_code_units(text)).encode("utf-8")


def parse_json_value(text: str) -> Any:
    """``JSON.parse`` with JS values: an integer beyond 2**53 becomes a double, and an
    object lists its array-index keys first, ascending (JS property order)."""
    try:
        return json.loads(
            text, parse_constant=_reject_constant, parse_int=_js_int, object_pairs_hook=_js_object
        )
    except RecursionError:
        return _parse_nested(text, js_values=True)


_JSON_TOKEN: Final = re.compile(
    r'[ \t\n\r]*(?:(?P<string>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")'
    r"|(?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<word>true|false|null)|(?P<mark>[\[\]{},:]))"
)
_WORDS: Final = {"true": True, "false": False, "null": None}


def _parse_nested(text: str, *, js_values: bool) -> Any:
    """``JSON.parse`` of a value nested deeper than the ``json`` module recurses (V8 has no
    such limit): the same grammar over tokens, with an explicit stack."""
    stack: list[tuple[list[Any], bool]] = []  # items (an object's: key, value, …), is_object
    expect, result = "value", None
    for kind, token in _json_tokens(text):
        opens = kind == "mark" and token in "[{"
        closes = kind == "mark" and token in "]}" and bool(stack)
        if opens and expect in ("value", "item"):
            stack.append(([], token == "{"))
            expect = "key" if token == "{" else "item"
            continue
        if closes and expect in ("item", "key", "next") and stack[-1][1] == (token == "}"):
            items, is_object = stack.pop()
            value = _container_value(items, is_object, js_values)
        elif kind != "mark" and expect in ("value", "item"):
            value = _token_value(kind, token, js_values)
        elif kind == "string" and expect in ("key", "member"):
            stack[-1][0].append(json.loads(token))
            expect = "colon"
            continue
        elif (expect, token) in (("colon", ":"), ("next", ",")):
            expect = "value" if token == ":" or not stack[-1][1] else "member"
            continue
        else:
            raise ValueError(f"Unexpected token {token!r} in JSON")
        if stack:
            stack[-1][0].append(value)
            expect = "next"
        else:
            expect, result = "end", value
    if expect != "end":
        raise ValueError("Unexpected end of JSON input")
    return result


def _json_tokens(text: str) -> Iterator[tuple[str, str]]:
    position = 0
    while (match := _JSON_TOKEN.match(text, position)) is not None:
        kind = match.lastgroup or ""
        yield kind, match.group(kind)
        position = match.end()
    if text[position:].strip(" \t\n\r"):
        raise ValueError(f"Unexpected token in JSON at position {position}")


def _token_value(kind: str, token: str, js_values: bool) -> Any:
    if kind == "word":
        return _WORDS[token]
    if kind == "number" and js_values and token.lstrip("-").isdigit():
        return _js_int(token)
    return json.loads(token)


def _container_value(items: list[Any], is_object: bool, js_values: bool) -> Any:
    if not is_object:
        return items
    value = dict(zip(items[::2], items[1::2], strict=True))
    return property_order(value) if js_values else value


def _js_object(pairs: list[tuple[str, Any]]) -> Mapping[str, Any]:
    return property_order(dict(pairs))


def property_order(value: Mapping[Any, Any]) -> Mapping[str, Any]:
    """``value`` with its keys as a JS object lists them: strings, the array-index keys
    first in ascending order, then the others in insertion order."""
    keys = [key if isinstance(key, str) else js_string(key) for key in value]
    if not any(_is_array_index(key) for key in keys):
        return (
            value
            if all(type(key) is str for key in value)
            else dict(zip(keys, value.values(), strict=True))
        )
    named = dict(zip(keys, value.values(), strict=True))
    indices = sorted((key for key in named if _is_array_index(key)), key=int)
    return {**{key: named[key] for key in indices}, **named}


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


def _js_int(text: str) -> int | float:
    value = int(text)
    return value if abs(value) <= MAX_SAFE_INTEGER else float(text)


# -- strings as UTF-16 (indexOf, includes, split) ------------------------------------------------


_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")


def code_units(text: str) -> str:
    """``text`` as JavaScript holds it: every astral character split into its two surrogate
    code units (one ``str`` character per UTF-16 unit)."""
    if text.isascii() or not _ASTRAL.search(text):
        return text
    data = text.encode("utf-16-le", errors="surrogatepass")
    return "".join(chr(data[i] | data[i + 1] << 8) for i in range(0, len(data), 2))


def from_code_units(units: str) -> str:
    """The ``str`` of a JavaScript string's units: each surrogate pair becomes its character,
    a lone surrogate stays."""
    if units.isascii() or not _LONE_SURROGATE.search(units):
        return units
    return units.encode("utf-16-le", errors="surrogatepass").decode(
        "utf-16-le", errors="surrogatepass"
    )


def _has_surrogate(text: str) -> bool:
    return _LONE_SURROGATE.search(text) is not None


def index_of(text: str, query: str, start: int = 0) -> int:
    """``text.indexOf(query)`` as a code-point offset (-1 when absent).

    JS searches UTF-16 code units, so a query holding a lone surrogate can match half of a
    surrogate pair; only then are text and query searched as code units (an astral
    character of the query as its two units).
    """
    if not _has_surrogate(query):
        return text.find(query, start)
    units = code_units(text)
    found = units.find(code_units(query), len(code_units(text[:start])))
    return -1 if found < 0 else len(from_code_units(units[:found]))


def includes(text: str, query: str) -> bool:
    """``text.includes(query)`` (UTF-16 semantics, see :func:`index_of`)."""
    if not _has_surrogate(query):
        return query in text
    return code_units(query) in code_units(text)


def replace_all(text: str, old: str, new: str) -> str:
    """``text.split(old).join(new)``: left-to-right non-overlapping, literal."""
    if not _has_surrogate(old):
        return text.replace(old, new)
    return from_code_units(code_units(text).replace(code_units(old), code_units(new)))


def splice(text: str, old: str, new: str) -> str:
    """Replace the first occurrence of ``old`` (``indexOf`` + substring splicing)."""
    if not _has_surrogate(old):
        index = text.find(old)
        return text[:index] + new + text[index + len(old) :]
    units, old_units = code_units(text), code_units(old)
    index = units.find(old_units)
    return from_code_units(units[:index] + code_units(new) + units[index + len(old_units) :])


def occurrence_starts(text: str, needle: str) -> list[int]:
    """Code-unit-faithful starts of the non-overlapping occurrences of ``needle``, as
    code-point offsets of ``text`` (what ``indexOf`` in a loop visits)."""
    surrogates = _has_surrogate(needle)
    units = code_units(text) if surrogates else text
    needle = code_units(needle) if surrogates else needle
    starts: list[int] = []
    found = units.find(needle)
    while found >= 0:
        starts.append(found)
        found = units.find(needle, found + max(len(needle), 1))
    if not surrogates:
        return starts
    return [len(from_code_units(units[:start])) for start in starts]


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
