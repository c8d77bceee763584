"""Every JavaScript rule pictx_fsm reproduces gives Node's answer on generated inputs: numbers
as ``String(n)`` prints them, ``JSON.stringify`` (tool results and session lines too) and
``JSON.parse`` (at any depth), ``String(value)``, ``===``, ``trim``, truthiness,
``Number.isSafeInteger``, ``Math.max``, UTF-16 ``length``/``indexOf``/``includes``/``split``/
splicing, UTF-8 byte lengths, ``localeCompare`` order, ``String(error)``, ``slugify``'s
``toLowerCase``, ``Date.parse``, ``new Date(text)``, ``toISOString`` and pi-context's
``localIso``. Inputs carry what makes the languages differ: lone surrogates, astral
characters, line terminators, JS-only white space, -0, NaN, integers beyond 2**53,
array-index object keys, dates at the ends of the JS range, V8's legacy date forms."""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from js_node import JsNode, JsThrew, bits

from pictx_fsm import js, js_date
from pictx_fsm.extensions.pi_context.tools.homes import slugify
from pictx_fsm.host.tool_outcome import result_text
from pictx_fsm.session.estimate import js_json, js_length, js_max
from pictx_fsm.session.jsonl import dumps_json
from pictx_fsm.session.projection import iso_to_epoch_ms
from pictx_fsm.session.writer import iso as writer_iso

BATCH = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

SPECIAL = (
    "\ud800\udbff\udc00\udfff\U0001f600\U00010000\U0010ffff\n\r\u2028\u2029\t\v\f \u00a0"
    '\u1680\u2000\u200a\u202f\u205f\u3000\ufeff\x1c\x85\u180e\x00\x7f"\\/é\u212a'
)
CHARS = st.characters() | st.sampled_from(SPECIAL)
TEXT = st.text(CHARS, max_size=12).map(js.from_code_units)
"""Text as JSON hands it over: astral characters whole, lone surrogates alone."""

NUMBERS = (
    st.floats()
    | st.integers(-(2**70), 2**70).map(float)
    | st.sampled_from(
        [0.0, -0.0, 5e-324, 1e21, 1e-7, 1e-6, 123e-20, 2.0**53, 2.0**53 + 2, 1e300 * 10, 0.1 + 0.2]
    )
)
INTEGERS = st.integers(-(2**64), 2**64) | st.sampled_from([2**53 - 1, 2**53, 2**53 + 1, 10**21])
INDEX_KEYS = st.sampled_from(["0", "1", "10", "2", "01", "-1", "1.5", "4294967294", "4294967295"])
KEYS = TEXT | INDEX_KEYS
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | INTEGERS | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=12,
)


def answers(node_js: JsNode, fn: str, args: list[list[Any]], tz: str = "UTC") -> list[Any]:
    return node_js.call(fn, args, tz=tz)


# -- numbers -------------------------------------------------------------------------------------


@BATCH
@given(numbers=st.lists(NUMBERS, min_size=50, max_size=80))
def test_number_string_is_string_of_a_number(node_js: JsNode, numbers: list[float]) -> None:
    expected = answers(node_js, "numberString", [[bits(n)] for n in numbers])
    assert [js.number_string(n) for n in numbers] == expected


@BATCH
@given(numbers=st.lists(INTEGERS, min_size=30, max_size=50))
def test_python_integers_are_the_doubles_javascript_reads(
    node_js: JsNode, numbers: list[int]
) -> None:
    # Given integers as JSON carries them (JSON.parse reads each as a double)
    texts = [[json.dumps(n)] for n in numbers]
    # Then to_number, String(n), safety and truthiness agree with Node
    assert [js.number_string(n) for n in numbers] == answers(node_js, "string", texts)
    assert [js.js_string(n) for n in numbers] == answers(node_js, "string", texts)
    assert [js.is_safe_integer(n) for n in numbers] == answers(node_js, "isSafeInteger", texts)
    doubles = answers(node_js, "numberString", [[bits(js.to_number(n))] for n in numbers])
    assert doubles == answers(node_js, "string", texts)


# -- JSON ----------------------------------------------------------------------------------------


@BATCH
@given(values=st.lists(JSON_VALUES, min_size=20, max_size=40), indent=st.sampled_from([None, 2]))
def test_stringify_is_json_stringify(
    node_js: JsNode, values: list[Any], indent: int | None
) -> None:
    # Given JSON values as Python holds them (dicts in insertion order, ints unbounded)
    expected = answers(node_js, "stringify", [[json.dumps(v), indent] for v in values])
    # Then stringify writes what JSON.stringify writes for the same JS value, and a JSON tool
    # result is JSON.stringify(value, null, 2)
    assert [js.stringify(v, indent=indent) for v in values] == expected
    if indent == 2:
        assert [result_text(v) for v in values] == expected


JSON_TEXTS = JSON_VALUES.map(json.dumps) | st.sampled_from(
    [
        "NaN",
        "-Infinity",
        "1e400",
        "-0",
        "[1,]",
        "\ufeff1",
        "01",
        "1.",
        ".5",
        "+1",
        '"\\x41"',
        '"\t"',
        '"\u2028"',
        " \t\n\r1 ",
        "\u00a01",
        '{"a":1,"a":2,"b":3}',
        '{"__proto__":1}',
        "[" * 600 + "]" * 600,
        "1 2",
        "",
        "tru",
        '"\\ud800"',
        '{"2":1,"1":2,"b":0,"0":3}',
        "123456789012345678901234567890",
        "-0.0",
        "1E2",
        "1e-400",
        '"\\u00e9"',
        "[-]",
    ]
)


@BATCH
@given(texts=st.lists(JSON_TEXTS, min_size=20, max_size=40))
def test_parse_json_value_is_json_parse(node_js: JsNode, texts: list[str]) -> None:
    # Given JSON texts, valid and not
    expected = answers(node_js, "parse", [[t] for t in texts])
    # Then parse_json_value (and parse_json) accept exactly what JSON.parse accepts and
    # hold the same value (property order and doubles included)
    for text, node in zip(texts, expected, strict=True):
        if isinstance(node, JsThrew):
            with pytest.raises(ValueError):
                js.parse_json_value(text)
            with pytest.raises(ValueError):
                js.parse_json(text)
        else:
            assert js.stringify(js.parse_json_value(text)) == node, text
            js.parse_json(text)


@BATCH
@given(texts=st.lists(JSON_TEXTS, min_size=10, max_size=20))
def test_deeply_nested_json_is_json_parse(node_js: JsNode, texts: list[str]) -> None:
    # Given generated JSON texts, each nested 1,500 arrays deep (past the json module's
    # recursion, so the explicit-stack parser reads them)
    deep = ["[" * 1500 + text + "]" * 1500 for text in texts if text.strip(" \t\n\r")]
    expected = answers(node_js, "innermost", [[text, 1500] for text in deep])
    # Then it accepts and reads exactly what JSON.parse does
    for text, node in zip(deep, expected, strict=True):
        if isinstance(node, JsThrew):
            with pytest.raises(ValueError):
                js.parse_json_value(text)
            continue
        value = js.parse_json_value(text)
        for _ in range(1500):
            (value,) = value
        assert js.stringify(value) == node, text[1500:-1500]


def test_json_nested_deeper_than_pythons_recursion_parses_as_in_node(node_js: JsNode) -> None:
    # Given arrays nested 5,000 deep around an object with index keys and a big integer
    inner = '{"b":1,"2":[12345678901234567890]}'
    texts = [
        "[" * 5000 + inner + "]" * 5000,
        "[" * 5000 + "]" * 4999,
        "[" * 5000 + "1,]" + "]" * 4999,
    ]
    expected = answers(node_js, "innermost", [[t, 5000] for t in texts])
    # Then JSON.parse reads the first (the json module alone would exceed its recursion) and
    # rejects the others, as here
    value = js.parse_json_value(texts[0])
    for _ in range(5000):
        (value,) = value
    assert js.stringify(value) == expected[0] == '{"2":[12345678901234567000],"b":1}'
    assert isinstance(expected[1], JsThrew) and isinstance(expected[2], JsThrew)
    for text in texts[1:]:
        with pytest.raises(ValueError):
            js.parse_json_value(text)


@BATCH
@given(values=st.lists(JSON_VALUES, min_size=20, max_size=40))
def test_js_string_and_truthiness_are_string_and_boolean_of_the_value(
    node_js: JsNode, values: list[Any]
) -> None:
    texts = [[json.dumps(v)] for v in values]
    assert [js.js_string(v) for v in values] == answers(node_js, "string", texts)
    assert [js.truthy(v) for v in values] == answers(node_js, "truthy", texts)
    assert [js.is_safe_integer(v) for v in values] == answers(node_js, "isSafeInteger", texts)


def test_nan_is_falsy_and_prints_nan(node_js: JsNode) -> None:
    assert js.truthy(math.nan) is False and js.js_string(math.nan) == "NaN"
    assert node_js.value("numberString", bits(math.nan)) == "NaN"


# -- strings as UTF-16 -----------------------------------------------------------------------------


@BATCH
@given(texts=st.lists(TEXT, min_size=30, max_size=50))
def test_trim_and_length_are_javascripts(node_js: JsNode, texts: list[str]) -> None:
    assert [js.trim(t) for t in texts] == answers(node_js, "trim", [[t] for t in texts])


@BATCH
@given(
    texts=st.lists(
        TEXT | st.sampled_from(["İstanbul", "ΑΣ Σ", "K\u212a", "a--b", "ß"]), min_size=30
    )
)
def test_slugify_is_javascripts_lower_case_and_regex(node_js: JsNode, texts: list[str]) -> None:
    assert [slugify(t) for t in texts] == answers(node_js, "slugify", [[t] for t in texts])


@st.composite
def text_and_query(draw: st.DrawFn) -> tuple[str, str]:
    """A text and a query cut from its code units (so it may be half of a pair), or any."""
    text = draw(TEXT)
    units = js.code_units(text)
    start = draw(st.integers(0, len(units)))
    end = draw(st.integers(start, min(len(units), start + 4)))
    query = draw(st.just(js.from_code_units(units[start:end])) | TEXT)
    return text, query


@BATCH
@given(cases=st.lists(text_and_query(), min_size=30, max_size=50), new=TEXT)
def test_index_of_includes_split_join_and_splice_are_utf16(
    node_js: JsNode, cases: list[tuple[str, str]], new: str
) -> None:
    # Given texts and queries that may be half of a surrogate pair
    args = [[text, query] for text, query in cases]
    # Then indexOf (as a code-point offset), includes, split/join and splicing are Node's
    assert [js.index_of(t, q) for t, q in cases] == answers(node_js, "indexOf", args)
    assert [js.includes(t, q) for t, q in cases] == answers(node_js, "includes", args)
    found = [(t, q) for t, q in cases if q and js.includes(t, q)]
    with_new = [[t, q, new] for t, q in found]
    assert [js.replace_all(t, q, new) for t, q in found] == answers(node_js, "splitJoin", with_new)
    assert [js.splice(t, q, new) for t, q in found] == answers(node_js, "splice", with_new)
    assert [js.occurrence_starts(t, q) for t, q in found] == answers(
        node_js, "occurrences", [[t, q] for t, q in found]
    )


@BATCH
@given(texts=st.lists(TEXT, min_size=30, max_size=50))
def test_utf8_length_and_bytes_are_buffers(node_js: JsNode, texts: list[str]) -> None:
    args = [[t] for t in texts]
    assert [js.utf8_length(t) for t in texts] == answers(node_js, "byteLength", args)
    assert [js.to_utf8(t).hex() for t in texts] == answers(node_js, "utf8", args)


def test_adjacent_surrogate_halves_are_one_character_to_javascript(node_js: JsNode) -> None:
    # Given the two halves of an emoji as two Python characters (a cut text put back together)
    halves = "\ud83d\ude00"
    # Then JavaScript sees the emoji: 4 UTF-8 bytes, its own bytes
    assert js.utf8_length(halves) == node_js.value("byteLength", halves) == 4
    assert js.to_utf8(halves) == "\U0001f600".encode()


# -- order and errors ----------------------------------------------------------------------------


def assigned(char: str) -> bool:
    """Assigned in Python's Unicode (14.0), hence in both ICUs (77: 16.0, Node's 78: 17.0)."""
    return unicodedata.category(char) not in ("Cn", "Cs")


WORDS = st.text(
    alphabet=st.characters(codec="utf-8").filter(assigned), max_size=8
) | st.sampled_from(["a.md", "A.md", "@human/a.md", "_", "-", "é", "e\u0301", "a\u0001", "10", "9"])


@BATCH
@given(lists=st.lists(st.lists(WORDS, min_size=2, max_size=30), min_size=20, max_size=40))
def test_locale_key_orders_as_locale_compare(node_js: JsNode, lists: list[list[str]]) -> None:
    expected = answers(node_js, "localeSort", [[words] for words in lists])
    assert [sorted(words, key=js.locale_key) for words in lists] == expected


class _Named(Exception):
    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.js_name = name


@BATCH
@given(pairs=st.lists(st.tuples(TEXT.filter(bool), TEXT), min_size=20, max_size=30))
def test_error_string_is_string_of_an_error(node_js: JsNode, pairs: list[tuple[str, str]]) -> None:
    expected = answers(node_js, "errorString", [[name, message] for name, message in pairs])
    assert [js.error_string(_Named(name, message)) for name, message in pairs] == expected


# -- dates ---------------------------------------------------------------------------------------

ZONES = ["UTC", "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe", "Europe/Dublin"]
MILLIS = (
    st.integers(-(10**13), 10**14)
    | st.integers(-(8.64 * 10**15), 8.64 * 10**15)
    | st.floats(-8.7e15, 8.7e15)
    | st.sampled_from([0, -1, -0.5, 0.5, 8.64e15, -8.64e15, 8.64e15 + 1, 1e16, math.nan, math.inf])
)


@pytest.mark.parametrize("zone", ZONES)
@BATCH
@given(millis=st.lists(MILLIS, min_size=40, max_size=60))
def test_local_iso_is_the_anchors_in_each_zone(
    node_js: JsNode, zone: str, millis: list[float]
) -> None:
    expected = answers(node_js, "localIso", [[bits(float(ms))] for ms in millis], tz=zone)
    assert [js_date.local_iso(ms, ZoneInfo(zone)) for ms in millis] == expected


@st.composite
def iso_dates(draw: st.DrawFn) -> str:
    """Date strings around the ECMAScript date-time format: valid, near-valid and odd."""
    year = draw(
        st.sampled_from(
            ["2024", "1970", "0000", "9999", "+002024", "-000001", "+275760", "-271821"]
        )
        | st.integers(0, 9999).map("{:04d}".format)
    )
    month = draw(st.sampled_from(["", "-01", "-02", "-12", "-13", "-00", "-1"]))
    day = draw(st.sampled_from(["", "-01", "-29", "-30", "-31", "-32", "-00"])) if month else ""
    time = draw(
        st.sampled_from(
            [
                "",
                "T00:00",
                "T12:34:56",
                "T23:59:59.999",
                "T24:00",
                "T24:00:01",
                "T10:00:00.1",
                "T10:00:00.123456",
                " 10:00",
                "t10:00",
                "T1:00",
                "T10",
            ]
        )
    )
    zone = draw(st.sampled_from(["", "", "Z", "z", "+05:30", "-08:00", "+0530", "+05", "-00:00"]))
    text = year + month + day + time + (zone if time else "")
    return draw(st.just(text) | st.just(f" {text}") | st.just(text.replace("-", "/")))


DATE_WORDS = st.lists(
    st.sampled_from(
        [
            "Jan",
            "january",
            "Feb",
            "mar",
            "Sept",
            "Dec",
            "Tue",
            "thu,",
            "am",
            "PM",
            "UTC",
            "GMT",
            "UT",
            "Z",
            "EST",
            "pdt",
            "T",
            "t",
            "x",
            "(note)",
            "((a)b)",
            ")",
            "+",
            "-",
            ":",
            "::",
            ".",
            "/",
            ",",
            " ",
            "  ",
            "\t",
            "\u00a0",
            "é",
            "\x00",
        ]
    )
    | st.integers(0, 2100).map(str)
    | st.sampled_from(
        [
            "1",
            "01",
            "001",
            "12",
            "24",
            "59",
            "60",
            "99",
            "100",
            "0530",
            "12345",
            "2024",
            "275760",
            "1234567890",
        ]
    ),
    max_size=9,
).map("".join)
"""Strings of the legacy parser's tokens: numbers, month and zone words, signs, separators."""

DATE_TEXTS = (
    iso_dates()
    | DATE_WORDS
    | st.sampled_from(
        [
            "Tue, 01 Jan 2024 10:00:00 GMT",
            "01 Jan 2024 10:00:00 +0200",
            "Jan 1 2024",
            "2024",
            "not a date",
            "",
            "2024-01-01T10:00:00+05:30",
            "2024-02-30",
            "Thu, 01 Jan 1970 00:00:00",
        ]
    )
)


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
@BATCH
@given(texts=st.lists(DATE_TEXTS, min_size=30, max_size=50))
def test_parse_date_ms_is_date_parse(node_js: JsNode, zone: str, texts: list[str]) -> None:
    expected = answers(node_js, "dateParse", [[t] for t in texts], tz=zone)
    ours = [js_date.parse_date_ms(t, ZoneInfo(zone)) for t in texts]
    assert list(zip(texts, ours, strict=True)) == list(zip(texts, expected, strict=True))


# -- Pi's session format ------------------------------------------------------------------------

OBJECTS = st.dictionaries(KEYS, JSON_VALUES, max_size=6)
INSTANTS = (
    st.integers(0, 253_402_300_799_999)
    | st.integers(-(8_640_000_000_000_000), 8_640_000_000_000_000)
    | st.sampled_from([-1, 253_402_300_800_000, -62_167_219_200_001, 8_640_000_000_000_001])
)


IN_RANGE = INSTANTS.filter(lambda ms: abs(ms) <= js_date.MAX_TIME_MS)


@BATCH
@given(objects=st.lists(OBJECTS, min_size=20, max_size=40))
def test_session_lines_are_json_stringify(node_js: JsNode, objects: list[dict[str, Any]]) -> None:
    # Given entry-like objects (the writer's input)
    expected = answers(node_js, "stringify", [[json.dumps(o), None] for o in objects])
    # Then a session line is JSON.stringify's text, and the estimate's JSON is the same
    assert [dumps_json(o) for o in objects] == expected
    assert [js_json(o) for o in objects] == expected


@BATCH
@given(texts=st.lists(TEXT, min_size=30, max_size=50))
def test_js_length_is_string_length(node_js: JsNode, texts: list[str]) -> None:
    assert [js_length(t) for t in texts] == answers(node_js, "length", [[t] for t in texts])


@BATCH
@given(pairs=st.lists(st.tuples(NUMBERS, NUMBERS), min_size=30, max_size=50))
def test_js_max_is_math_max(node_js: JsNode, pairs: list[tuple[float, float]]) -> None:
    # Given numbers, ±0 and NaN among them (NaN's payload is not observable in JS)
    expected = answers(node_js, "max", [[bits(a), bits(b)] for a, b in pairs])
    nan = bits(math.nan)
    ours = [bits(js_max(a, b)) for a, b in pairs]
    assert ours == [nan if bits(-math.nan) == e or e == nan else e for e in expected]


@BATCH
@given(millis=st.lists(INSTANTS, min_size=30, max_size=50))
def test_entry_timestamps_are_to_iso_string(node_js: JsNode, millis: list[int]) -> None:
    # Given instants, at the ends of the JS range too
    expected = answers(node_js, "isoString", [[bits(float(ms))] for ms in millis])
    # Then entry timestamps are Date#toISOString, and a RangeError is an error here
    for ms, node in zip(millis, expected, strict=True):
        if isinstance(node, JsThrew):
            with pytest.raises(ValueError):
                writer_iso(ms)
        else:
            assert writer_iso(ms) == node, ms


@BATCH
@given(texts=st.lists(DATE_TEXTS | IN_RANGE.map(js_date.iso_string), min_size=30, max_size=50))
def test_entry_timestamps_are_read_as_new_date(node_js: JsNode, texts: list[str]) -> None:
    expected = answers(node_js, "getTime", [[t] for t in texts])
    assert [iso_to_epoch_ms(t) for t in texts] == expected


@BATCH
@given(pairs=st.lists(st.tuples(JSON_VALUES, JSON_VALUES), min_size=30, max_size=50))
def test_strict_equals_is_triple_equals(node_js: JsNode, pairs: list[tuple[Any, Any]]) -> None:
    pairs += [(a, a) for a, _ in pairs[:5]] + [(1, 1.0), (0, -0.0), (2**53, 2**53 + 1)]
    expected = answers(node_js, "strictEquals", [[json.dumps(a), json.dumps(b)] for a, b in pairs])
    scalars = [not isinstance(a, list | dict) for a, _ in pairs]
    ours = [js.strict_equals(a, b) for a, b in pairs]
    assert [o for o, s in zip(ours, scalars, strict=True) if s] == [
        e for e, s in zip(expected, scalars, strict=True) if s
    ]
