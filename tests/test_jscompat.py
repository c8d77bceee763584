"""JavaScript value rules the policy, overflow and notes decisions rely on."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm import js


def test_js_regex_dot_does_not_cross_line_terminators() -> None:
    # Given a JS pattern with ".*" (pi-ai's Gemini overflow pattern)
    pattern = js.compile_regex(r"input token count.*exceeds the maximum", ignore_case=True)
    # Then "\r" and "\u2028" stop it, as in JS, while other characters do not
    assert pattern.search("Input token count (5) exceeds the maximum")
    assert not pattern.search("input token count\rexceeds the maximum")
    assert not pattern.search("input token count\u2028exceeds the maximum")


def test_js_regex_whitespace_and_case_folding_follow_javascript() -> None:
    # Given \s and case-insensitive ASCII patterns
    spaces = js.compile_regex(r"^4(?:00|13)\s*\(no body\)", ignore_case=True)
    word = js.compile_regex(r"token limit exceeded", ignore_case=True)
    # Then \s matches JS whitespace (NBSP) and /i never folds non-ASCII letters onto ASCII
    assert spaces.search("413\u00a0(no body)")
    assert word.search("TOKEN LIMIT EXCEEDED")
    assert not word.search("to\u212aen limit exceeded")  # KELVIN SIGN is not "k" in JS


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (-5, "-5"),
        (-5.0, "-5"),
        (1.5, "1.5"),
        ([1, None], "1,"),
        ({"a": 1}, "[object Object]"),
        (math.inf, "Infinity"),
        ("x", "x"),
    ],
)
def test_js_string_renders_values_like_string_of_value(value: object, text: str) -> None:
    assert js.js_string(value) == text


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "[1, NaN]"])
def test_parse_json_rejects_what_json_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        js.parse_json(text)


@pytest.mark.parametrize(
    ("value", "truthy"),
    [
        (0, False),
        (0.0, False),
        (math.nan, False),
        ("", False),
        (None, False),
        (False, False),
        ([], True),
        ({}, True),
        ("0", True),
        (-1, True),
    ],
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


def test_to_number_maps_out_of_range_ints_to_infinity() -> None:
    assert js.to_number(10**400) == math.inf
    assert js.to_number(-(10**400)) == -math.inf
    assert js.to_number(7) == 7.0
