"""JavaScript rules by example: the cases that document a rule, and one regression example for
every difference Node found (``tests/test_js_node.py`` and ``tests/test_js_regex_node.py``
check the same rules against Node on generated inputs). These run without Node."""

from __future__ import annotations

import math
from datetime import UTC

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm import js, js_date
from pictx_fsm.js_regex import JsRegexUnsupported, compile_regex
from pictx_fsm.session.estimate import js_max

# -- regular expressions -------------------------------------------------------------------------


def test_js_regex_dollar_is_the_end_of_the_input_not_before_a_final_newline() -> None:
    # Given a configurable overflow pattern ending in $ (Python's $ matches before a final \n)
    # Then, as in Node, it does not match "exceeded\n"; with the m flag it does
    assert not compile_regex("exceeded$", "i").test("Token limit exceeded\n")
    assert compile_regex("exceeded$", "im").test("Token limit exceeded\n")


def test_js_regex_dot_does_not_cross_line_terminators() -> None:
    # Given a JS pattern with ".*" (pi-ai's Gemini overflow pattern)
    pattern = compile_regex(r"input token count.*exceeds the maximum", "i")
    # Then "\r" and "\u2028" stop it, as in JS, while other characters do not
    assert pattern.test("Input token count (5) exceeds the maximum")
    assert not pattern.test("input token count\rexceeds the maximum")
    assert not pattern.test("input token count\u2028exceeds the maximum")


def test_js_regex_whitespace_and_case_folding_follow_javascript() -> None:
    # Given \s and case-insensitive patterns
    spaces = compile_regex(r"^4(?:00|13)\s*\(no body\)", "i")
    word = compile_regex(r"token limit exceeded", "i")
    # Then \s matches JS whitespace (NBSP), /i never folds non-ASCII letters onto ASCII
    # (KELVIN SIGN is not "k"), but folds non-ASCII letters among themselves
    assert spaces.test("413\u00a0(no body)")
    assert word.test("TOKEN LIMIT EXCEEDED")
    assert not word.test("to\u212aen limit exceeded")
    assert compile_regex("é", "i").test("É")


def test_js_regex_named_groups_work() -> None:
    regex = compile_regex(r"(?<n>\d+) tokens")
    assert regex.replace("5 tokens", "$<n>") == "5"
    assert regex.execute("over 12 tokens") == ("12 tokens", "12")


def test_js_regex_not_boundary_matches_the_empty_string() -> None:
    # Regression: Python's \B never matches in "", JavaScript's does
    assert compile_regex(r"\B").test("")


def test_js_regex_negated_class_is_negated_after_case_closing() -> None:
    # Regression: /[^a]/i must not match "a" or "A" (the set is closed under i, then negated)
    assert not compile_regex("[^a]", "i").test("A")


def test_js_regex_an_emoji_is_two_code_units() -> None:
    assert not compile_regex("^.$").test("\U0001f600")
    assert compile_regex("^..$").test("\U0001f600")


def test_js_regex_refuses_what_python_would_match_differently() -> None:
    with pytest.raises(JsRegexUnsupported, match=r"/\(\?:\|a\)\*/"):
        compile_regex("(?:|a)*")


# -- values ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (-5.0, "-5"),
        ([1, None], "1,"),
        ({"a": 1}, "[object Object]"),
        (math.inf, "Infinity"),
        (2**53 + 1, "9007199254740992"),  # regression: an int is a double to JavaScript
        (10**21, "1e+21"),
    ],
)
def test_js_string_renders_values_like_string_of_value(value: object, text: str) -> None:
    assert js.js_string(value) == text


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "[1, NaN]"])
def test_parse_json_rejects_what_json_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        js.parse_json(text)


def test_stringify_lists_array_index_keys_first() -> None:
    # Regression: a JS object lists "0", "10" before "b" and "01" (not an index)
    value = {"b": 1, "10": 2, "01": 3, "0": 4}
    assert js.stringify(value) == '{"0":4,"10":2,"b":1,"01":3}'


@pytest.mark.parametrize(
    ("value", "truthy"),
    [(0, False), (math.nan, False), ("", False), (None, False), ([], True), ("0", True)],
)
def test_truthy_is_javascript_truthiness(value: object, truthy: bool) -> None:
    assert js.truthy(value) is truthy


@given(st.integers(-(2**60), 2**60))
def test_is_safe_integer_for_ints_is_the_safe_range(value: int) -> None:
    # Given any int (a JSON integer)
    # Then it is safe iff |value| <= 2**53 - 1, also when written as an integral float
    assert js.is_safe_integer(value) is (abs(value) <= 2**53 - 1)
    if abs(value) <= 2**53:
        assert js.is_safe_integer(float(value)) is (abs(value) <= 2**53 - 1)


def test_trim_removes_javascript_whitespace_only() -> None:
    # Given BOM and NBSP (JS whitespace) and U+001C (Python whitespace, not JS)
    assert js.trim("\ufeff\u00a0---\u00a0") == "---"
    assert js.trim("\x1c---") == "\x1c---"


def test_math_max_prefers_positive_zero() -> None:
    # Regression: Math.max(-0, 0) is +0 (Python's max keeps the first of equal values)
    assert math.copysign(1.0, js_max(-0.0, 0.0)) == 1.0
    assert math.isnan(js_max(1.0, math.nan))


def test_to_number_maps_out_of_range_ints_to_infinity() -> None:
    assert js.to_number(10**400) == math.inf
    assert js.to_number(-(10**400)) == -math.inf


# -- strings as UTF-16 -----------------------------------------------------------------------------


def test_a_lone_surrogate_query_matches_half_of_a_pair() -> None:
    assert js.index_of("a\U0001f600", "\ude00") == 2  # Array.from("a\ud83d").length
    assert js.includes("\U0001f600", "\ud83d")


def test_a_query_with_a_whole_pair_and_a_half_is_searched_as_units() -> None:
    # Regression: the query's astral characters are split too, not only the text's
    assert js.index_of("0\U00010000\U00010000", "0\U00010000\ud800") == 0


def test_adjacent_surrogate_halves_count_as_one_character() -> None:
    # Regression: two Python characters "\ud83d\ude00" are one emoji to JavaScript
    assert js.utf8_length("\ud83d\ude00") == 4
    assert js.utf8_length("\ud83d") == 3


# -- dates -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "epoch_ms"),
    [
        ("2024", 1_704_067_200_000),  # regression: a year alone is ISO (UTC midnight)
        ("2024-01-01T10:00", 1_704_103_200_000),  # a date-time without offset: wall time
        ("Jan 5", 978_652_800_000),  # V8: a missing year is 2001
        ("Tue, 01 Jan 2024 10:00:00 GMT", 1_704_103_200_000),
        ("\u00a00", 946_684_800_000),  # regression: NBSP is a space, "0" the year 2000
        ("2024-02-30", 1_709_251_200_000),  # rolls over to 1 March
        ("+275760-09-13T00:00:00.001Z", None),  # past the JS range
        ("2024-01-01T25:00", None),
    ],
)
def test_parse_date_ms_follows_v8(text: str, epoch_ms: int | None) -> None:
    assert js_date.parse_date_ms(text, UTC) == epoch_ms
