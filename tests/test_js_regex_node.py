"""JavaScript regexes match here exactly as in Node: generated patterns (every construct of the
non-``u`` grammar, valid or not) and generated inputs (astral characters, lone surrogates,
line terminators, characters whose case folds differ between JavaScript and Python) are
compiled by :func:`pictx_fsm.js_regex.compile_regex` and by Node, and ``test``, ``search``,
``exec`` and ``replace`` give the same answers. A pattern Node rejects raises
``JsRegexSyntaxError`` here; one we refuse as ``JsRegexUnsupported`` must be valid in Node."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from js_node import JsNode

from pictx_fsm.extensions.pi_context.tools import frontmatter
from pictx_fsm.extensions.pi_context.tools.address import SLUG_PATTERN, glob_matches, glob_regex
from pictx_fsm.host import overflow
from pictx_fsm.hosts.model.runs import RETRYABLE
from pictx_fsm.js_regex import (
    JsRegExp,
    JsRegexSyntaxError,
    JsRegexUnsupported,
    compile_regex,
)
from pictx_fsm.js_regex.charset import canonicalize, case_closed, char_set

BATCH = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

# Characters where the engines part: case folding (KELVIN SIGN, LONG S, dotted/dotless i, ß,
# Greek sigma forms), line terminators, JS-only white space, an astral character and both
# halves of it alone.
TRICKY = (
    "aAbBkKsSiI\u212a\u017f\u0130\u0131\u00df\u1e9e\u03c3\u03c2\u03a3\u00e9\u00c9\u01c5\u01c4"
    "\n\r\u2028\u2029 \t\u00a0\ufeff\u1680\x1c\u0085019_-.$\\/()[]{}<>*+?|^"
)
ASTRAL = ["\U0001f600", "\ud83d", "\ude00", "\U00010400", "\U00010428"]
CHARS = st.sampled_from(list(TRICKY)) | st.sampled_from(ASTRAL)
INPUTS = st.lists(CHARS, max_size=12).map("".join)

LITERALS = st.sampled_from(list("aAbBkKsSiI-_019 é\u212a\u017f\u0131\u00df\u03c3\u2028") + ASTRAL)
ESCAPES = st.sampled_from(
    [
        r"\d",
        r"\D",
        r"\s",
        r"\S",
        r"\w",
        r"\W",
        r"\n",
        r"\r",
        r"\t",
        r"\v",
        r"\f",
        r"\0",
        r"\00",
        r"\012",
        r"\377",
        r"\400",
        r"\x41",
        r"\x4",
        r"\u00e9",
        r"\u212A",
        r"\u{41}",
        r"\cJ",
        r"\cj",
        r"\c1",
        r"\c",
        r"\k",
        r"\8",
        r"\9",
        r"\-",
        r"\.",
        r"\*",
        r"\/",
        r"\$",
        r"\^",
        r"\]",
        r"\{",
        r"\a",
        r"\p{L}",
    ]
)
CLASS_ITEMS = st.sampled_from(
    [
        r"a",
        r"b",
        r"z",
        r"A",
        r"Z",
        r"k",
        r"K",
        r"a-z",
        r"A-Z",
        r"0-9",
        r"\d",
        r"\w",
        r"\s",
        r"\W",
        r"\D",
        r"\S",
        r"\b",
        r"\B",
        r"\c_",
        r"\c1",
        r"\cJ",
        r"-",
        r"^",
        r"]",
        r"[",
        r".",
        r"\]",
        r"\-",
        r"\\",
        r"é",
        r"K",
        r"ſ",
        r"😀",
        r"�-�",
        r"\d-z",
        r"a-\d",
    ]
)
CHAR_CLASSES = st.builds(
    lambda negate, items: "[" + ("^" if negate else "") + "".join(items) + "]",
    st.booleans(),
    st.lists(CLASS_ITEMS, max_size=4),
)
QUANTIFIERS = st.sampled_from(
    ["", "", "", "*", "+", "?", "*?", "+?", "??", "{2}", "{1,3}", "{0,}", "{2,}?", "{,2}", "{1"]
)
ATOMS = LITERALS | ESCAPES | CHAR_CLASSES | st.sampled_from([".", "^", "$", r"\b", r"\B"])
REFERENCES = st.sampled_from([r"\1", r"\2", r"\k<n>", r"\k<m>", r"\10", r"\k<é>", r"\k<a>"])
GROUP_KINDS = st.sampled_from(
    ["", "", "?:", "?<n>", "?<m>", "?=", "?!", "?<=", "?<!", "?<é>", "?<a·>", "?<·>", "?<€>"]
) | st.sampled_from([r"?<\u0061>", r"?<\u{e9}>", "?<\U0001d49c>", "?<a\u200c>"])


def _group(body: str, kind: str) -> str:
    return f"({kind}{body})"


PATTERNS = st.recursive(
    st.tuples(ATOMS, QUANTIFIERS).map("".join),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4).map("".join),
        st.lists(inner, min_size=2, max_size=3).map("|".join),
        st.builds(
            _group,
            inner,
            GROUP_KINDS,
        ).flatmap(lambda group: QUANTIFIERS.map(lambda q: group + q)),
        st.tuples(inner, REFERENCES).map("".join),
    ),
    max_leaves=6,
)
TOKENS = st.lists(
    st.sampled_from(
        [
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "{2}",
            "{3,1}",
            "*",
            "+",
            "?",
            "|",
            "\\",
            "a",
            "(?<n>",
            "(?<",
            ">",
            "(?:",
            "(?=",
            "(?<=",
            "(?x",
            "\\k<n>",
            "\\k",
            "\\1",
            "^",
            "$",
            "-",
            "é",
        ]
    ),
    max_size=8,
).map("".join)
FLAGS = st.sampled_from(
    ["", "", "i", "m", "s", "g", "y", "im", "is", "gi", "gm", "dgimsy", "ii", "x"]
)
TEMPLATES = st.lists(
    st.sampled_from(
        [
            "x",
            "$&",
            "$1",
            "$2",
            "$01",
            "$10",
            "$0",
            "$00",
            "$<n>",
            "$<m>",
            "$<",
            "$<zz>",
            "$`",
            "$'",
            "$$",
            "$",
            "\ud83d",
        ]
    ),
    max_size=4,
).map("".join)


Case = tuple[str, str, list[str], str]
"""A pattern, its flags, inputs and a replacement."""


def ours(source: str, flags: str, inputs: list[str], replacement: str) -> dict[str, Any]:
    """What this library answers, in the shape of the Node fixture's answer."""
    try:
        regex = compile_regex(source, flags)
    except JsRegexSyntaxError:
        return {"error": "SyntaxError"}
    except JsRegexUnsupported:
        return {"unsupported": True}
    answer: dict[str, Any] = {
        "test": [regex.test(text) for text in inputs],
        "search": [regex.search(text) for text in inputs],
    }
    if not regex.unreliable:
        answer["exec"] = [_listed(regex.execute(text)) for text in inputs]
    with contextlib.suppress(JsRegexUnsupported):  # a replacement reading an unreliable group
        answer["replace"] = [regex.replace(text, replacement) for text in inputs]
    return answer


def _listed(match: tuple[str | None, ...] | None) -> list[str | None] | None:
    return None if match is None else list(match)


def judged(node_js: JsNode, cases: list[Case]) -> tuple[int, int]:
    """Compare every case with Node; returns (compared, refused) counts."""
    answers = node_js.regex(
        [{"source": s, "flags": f, "inputs": i, "replacement": r} for s, f, i, r in cases]
    )
    refused = 0
    for (source, flags, inputs, replacement), node in zip(cases, answers, strict=True):
        mine = ours(source, flags, inputs, replacement)
        where = f"/{source}/{flags} on {inputs!r} (replacement {replacement!r})"
        if "error" in node or "error" in mine:
            assert ("error" in node) == ("error" in mine), (where, node, mine)
            assert "SyntaxError" in node["error"], (where, node)
            continue
        if mine.get("unsupported"):
            refused += 1
            continue
        for key, value in mine.items():
            assert value == node[key], (where, key, value, node[key])
    return len(cases) - refused, refused


def case_lists(patterns: st.SearchStrategy[str], count: int) -> st.SearchStrategy[list[Case]]:
    inputs = st.lists(INPUTS, min_size=1, max_size=8)
    return st.lists(st.tuples(patterns, FLAGS, inputs, TEMPLATES), min_size=count, max_size=count)


@BATCH
@given(batch=case_lists(PATTERNS, 20))
def test_generated_patterns_match_as_in_node(node_js: JsNode, batch: list[Case]) -> None:
    # Given generated patterns of every construct, flags and inputs
    # When both Node and compile_regex compile and run them
    compared, refused = judged(node_js, batch)
    # Then every answer is Node's, and most patterns are matched, not refused
    assert compared >= refused


@BATCH
@given(batch=case_lists(TOKENS, 30))
def test_token_soup_is_rejected_exactly_where_node_rejects_it(
    node_js: JsNode, batch: list[Case]
) -> None:
    # Given strings of regex punctuation, mostly not valid patterns
    # Then JsRegexSyntaxError is raised exactly where Node throws a SyntaxError
    judged(node_js, batch)


PI_PATTERNS = (
    *overflow.PI_0_87_OVERFLOW,
    *overflow.PI_0_87_NON_OVERFLOW,
    overflow.CEREBRAS_BODYLESS_OVERFLOW,
    *overflow.PI_MONO_LEGACY.overflow[:1],
)


def _fragments(pattern: str) -> list[str]:
    return [word for word in pattern.replace("\\", " ").split(" ") if word.isalpha()]


PI_WORDS = sorted({word for pattern in PI_PATTERNS for word in _fragments(pattern)})
PI_TEXTS = st.lists(
    st.sampled_from(PI_WORDS)
    | st.sampled_from(
        [
            " ",
            "  ",
            "\n",
            "\u2028",
            "\u00a0",
            "(",
            ")",
            "400",
            "413",
            "12,345",
            "status code",
            "(no body)",
            ":",
            "'s",
            "\u212a",
            "\u017f",
            "\U0001f600",
        ]
    )
    | st.sampled_from(PI_WORDS).map(str.upper),
    max_size=14,
).map(" ".join) | st.sampled_from(PI_WORDS).map(lambda w: w + "\n")


@BATCH
@given(inputs=st.lists(PI_TEXTS, min_size=10, max_size=20))
def test_pi_overflow_patterns_match_error_texts_as_in_node(
    node_js: JsNode, inputs: list[str]
) -> None:
    # Given Pi's overflow lists (case-insensitive) and error texts built from their words
    cases = [(pattern, "i", inputs, "<$&>") for pattern in PI_PATTERNS]
    # Then every pattern compiles and answers as Node does
    _, refused = judged(node_js, cases)
    assert refused == 0


def test_overflow_pattern_dollar_is_the_end_of_the_input(node_js: JsNode) -> None:
    # Given a configured pattern ending in $ and a message with a trailing newline
    patterns = overflow.OverflowPatterns(overflow=("exceeded$",), non_overflow=(), bodyless="x^")
    # Then it does not match, as in Node (Python's $ would match before the newline)
    assert node_js.regex(
        [{"source": "exceeded$", "flags": "i", "inputs": ["exceeded\n"], "replacement": ""}]
    )[0]["test"] == [False]
    assert not patterns.is_overflow_error("exceeded\n", None)
    assert patterns.is_overflow_error("Token limit EXCEEDED", None)


def test_named_groups_and_references_compile_and_match(node_js: JsNode) -> None:
    # Given a named group and a named back-reference (they raised before)
    regex = compile_regex(r"(?<word>\w+) \k<word>")
    # Then they match as in Node, and the name is usable in a replacement
    assert regex.test("hello hello") and not regex.test("hello world")
    assert (
        regex.replace("say hi hi", "<$<word>>")
        == node_js.regex(
            [
                {
                    "source": regex.source,
                    "flags": "",
                    "inputs": ["say hi hi"],
                    "replacement": "<$<word>>",
                }
            ]
        )[0]["replace"][0]
        == "say <hi>"
    )


def test_canonical_forms_are_node_case_folding_for_every_code_unit(node_js: JsNode) -> None:
    # Given ECMAScript's Canonicalize computed by Node for all 65,536 code units
    table = node_js.value("canonicalize")
    # Then ours agrees on every unit but the surrogates (which have no case)
    different = [
        hex(unit)
        for unit in range(0x10000)
        if not 0xD800 <= unit <= 0xDFFF and canonicalize(unit) != table[unit]
    ]
    assert different == []
    # And a one-unit class under i holds exactly the units of the same canonical form
    forms: dict[int, list[int]] = {}
    for unit, form in enumerate(table):
        if not 0xD800 <= unit <= 0xDFFF:
            forms.setdefault(form, []).append(unit)
    closed = [
        hex(unit)
        for units in forms.values()
        for unit in units
        if case_closed(((unit, unit),)) != char_set((u, u) for u in units)
    ]
    assert closed == []


def test_a_regex_python_cannot_match_faithfully_is_refused_naming_it() -> None:
    # Given a repeat that can match nothing: Node finds "aa", Python's re would find ""
    # Then compiling it raises, naming the pattern and the reason
    for source, reason in [
        ("(?:|a)*", "empty string"),
        ("(a)\\1", "i flag"),
        ("(?<=a+)b", "Python's re cannot compile it"),
        ("(?:(a)|b)+\\1", "group 1"),
    ]:
        flags = "i" if reason == "i flag" else ""
        try:
            compile_regex(source, flags)
        except JsRegexUnsupported as error:
            assert f"/{source}/{flags}" in str(error) and reason in str(error)
        else:
            raise AssertionError(f"/{source}/{flags} compiled")


def test_a_regex_node_rejects_raises_a_syntax_error_naming_it() -> None:
    try:
        compile_regex("a**")
    except JsRegexSyntaxError as error:
        assert str(error) == "invalid regular expression /a**/: Nothing to repeat"
    else:
        raise AssertionError("compiled")


def test_compiled_regexes_are_shared() -> None:
    assert compile_regex("a", "i") is compile_regex("a", "i")
    assert isinstance(compile_regex("a"), JsRegExp)


# -- the project's own JavaScript regexes ---------------------------------------------------------

PROJECT = (RETRYABLE, SLUG_PATTERN, frontmatter._FIELD, frontmatter._SEQUENCE_ITEM)
PROJECT_TEXTS = st.lists(
    st.sampled_from(
        [
            "overloaded",
            "Rate Limit",
            "rate-limit",
            "socket hang up",
            "SOC\u212aET",
            "timed out",
            "429",
            "key",
            "a-b",
            "a--b",
            "-",
            " - item",
            "\t-\u00a0x",
            "-x",
            "name_1:",
            " value",
            "\n",
            "\r",
            "\u2028",
            "Ω",
            "\U0001f600",
            "\ud83d",
        ]
    )
    | INPUTS,
    max_size=5,
).map("".join)


@BATCH
@given(inputs=st.lists(PROJECT_TEXTS, min_size=10, max_size=20))
def test_the_projects_regexes_match_as_in_node(node_js: JsNode, inputs: list[str]) -> None:
    # Given Pi's retry pattern, the slug check and the frontmatter line patterns
    batch = [(regex.source, regex.flags, inputs, "<$&>") for regex in PROJECT]
    # Then each compiles and answers as Node does
    _, refused = judged(node_js, batch)
    assert refused == 0


GLOBS = st.lists(
    st.sampled_from(["*", "**", "**/", "a", "b", "/", ".", "?", "@", "+", "(", "["]), max_size=6
).map("".join)
ADDRESSES = st.lists(
    st.sampled_from(["a", "b", "/", ".md", "?", "@human/", "(", "\n", "é"]), max_size=6
).map("".join)


@BATCH
@given(globs=st.lists(GLOBS, min_size=10, max_size=20), addresses=st.lists(ADDRESSES, max_size=10))
def test_note_globs_match_addresses_as_in_node(
    node_js: JsNode, globs: list[str], addresses: list[str]
) -> None:
    # Given globs (N41) and addresses, the glob's regex built as the anchor builds it
    regexes = [glob_regex(glob) for glob in globs]
    answers = node_js.regex(
        [{"source": r.source, "flags": "", "inputs": addresses, "replacement": ""} for r in regexes]
    )
    # Then an address matches exactly where Node's RegExp says so
    for regex, answer in zip(regexes, answers, strict=True):
        assert [glob_matches(regex, a) for a in addresses] == answer["test"], regex.source
