"""docs/rules.md, the project's own index of the rule ids its code and tests cite (issue 23
item 7): it is current, every citation names a rule with a summary, every id of every
specification has one, and the scan reads citations — ranges, test names — as a maintainer
would. Regenerate with ``python scripts/rules_index.py``."""

from __future__ import annotations

import random
import re
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_paths import SHARED

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from rules_index import (  # noqa: E402
    COMMAND,
    DATA,
    OUTPUT,
    BadCitation,
    Citation,
    IdRange,
    RuleIndex,
    RuleIndexError,
    Spec,
    load_index,
    main,
    render,
    scan,
)

INDEX = load_index(ROOT / DATA)
REPOSITORY = scan(ROOT, INDEX)
"""Every citation in the repository's pictx_fsm/, models/ and tests/."""
SPECS = SHARED / "spec"
COPIED_WORDS = 8
"""A summary sharing this many consecutive words with its specification copies it."""


# -- the repository's index --------------------------------------------------------------------


def test_docs_rules_md_is_generated_from_the_current_summaries_and_citations() -> None:
    # Given the summaries and every citation in pictx_fsm/, models/ and tests/
    page = render(INDEX, REPOSITORY.citations)
    # Then the committed page is exactly what they generate
    committed = (ROOT / OUTPUT).read_text(encoding="utf-8")
    assert committed == page, f"{OUTPUT} is stale: regenerate it with `{COMMAND}`"


def test_every_citation_in_code_and_tests_names_a_rule_of_its_specification() -> None:
    # Given every citation of the repository / When it is scanned
    bad = REPOSITORY.bad
    # Then each names an id some specification defines (a new valid id needs only
    # docs/rules.md regenerated; an invalid one is a wrong citation to fix in the code)
    assert not bad, "citations of no rule:\n" + "\n".join(str(b) for b in bad)


def test_every_id_of_every_specification_has_a_one_line_summary() -> None:
    # Given the index / Then each specification has one non-empty one-line summary per id
    # of its declared ranges, and no other entry
    for spec in INDEX.specs:
        assert list(spec.rules) == spec.ids(), spec.key
        for rule, summary in spec.rules.items():
            assert summary.strip() and "\n" not in summary, rule
    keys = [spec.key for spec in INDEX.specs]
    assert keys == ["lifecycle", "notes-tools", "context-management", "failure-modes", "notesoup"]


def test_the_five_specifications_declare_every_rule_the_brief_names() -> None:
    # R1–R80, D1–D6, N1–N58, M1–M72 with the 21 invariants, FM1–FM20, S1–S141
    ranges = {(r.prefix, r.first, r.last) for spec in INDEX.specs for r in spec.ranges}
    assert ranges == {
        ("R", 1, 80),
        ("D", 1, 6),
        ("N", 1, 58),
        ("M", 1, 72),
        ("§12.", 1, 21),
        ("FM", 1, 20),
        ("S", 1, 141),
    }


def _defined_numbers(text: str, prefix: str) -> set[int]:
    """The numbers a specification defines for ``prefix``: bold ``**R1**`` items; the failure
    modes are a numbered bold list; pi-context-management's invariants the list of its §12."""
    if prefix == "FM":
        return {int(n) for n in re.findall(r"^(\d+)\. \*\*", text, re.MULTILINE)}
    if prefix == "§12.":
        section = text.split("\n## 12.", 1)[1].split("\n## ", 1)[0]
        return {int(n) for n in re.findall(r"^(\d+)\. ", section, re.MULTILINE)}
    return {int(n) for n in re.findall(rf"\*\*{re.escape(prefix)}(\d+)\*\*", text)}


needs_specs = pytest.mark.skipif(
    not SPECS.is_dir(), reason=f"the specifications are not at {SPECS}"
)


@pytest.mark.corpus
@needs_specs
@pytest.mark.parametrize("spec", INDEX.specs, ids=[s.key for s in INDEX.specs])
def test_the_declared_ranges_are_exactly_the_ids_the_specification_defines(spec: Spec) -> None:
    # Given the specification's text
    text = (SPECS / spec.file).read_text(encoding="utf-8")
    # Then each declared range is the whole set of numbers it defines for that prefix
    for r in spec.ranges:
        assert _defined_numbers(text, r.prefix) == set(range(r.first, r.last + 1)), r


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'’-]+", text.lower())


@pytest.mark.corpus
@needs_specs
@pytest.mark.parametrize("spec", INDEX.specs, ids=[s.key for s in INDEX.specs])
def test_summaries_are_the_projects_words_not_copies_of_the_specification(spec: Spec) -> None:
    # Given every run of COPIED_WORDS words of the specification
    words = _words((SPECS / spec.file).read_text(encoding="utf-8"))
    runs = {tuple(words[i : i + COPIED_WORDS]) for i in range(len(words) - COPIED_WORDS + 1)}
    # Then no summary repeats one
    for rule, summary in spec.rules.items():
        mine = _words(summary)
        copied = [
            " ".join(mine[i : i + COPIED_WORDS])
            for i in range(len(mine) - COPIED_WORDS + 1)
            if tuple(mine[i : i + COPIED_WORDS]) in runs
        ]
        assert not copied, f"{rule} copies the specification: {copied[0]!r}"


def test_the_readme_lists_the_rule_index_among_its_documents() -> None:
    documents = (ROOT / "README.md").read_text(encoding="utf-8").split("## Documents", 1)[1]
    assert f"`{OUTPUT.as_posix()}`" in documents


# -- the scan ----------------------------------------------------------------------------------


def _table(key: str, ranges: list[tuple[str, int, int]]) -> str:
    """One specification's table of ``docs/rules.toml``; the summary of id X is ``X rule``."""
    ids = ", ".join(f'{{ prefix = "{p}", first = {a}, last = {b} }}' for p, a, b in ranges)
    rules = "".join(f'"{p}{n}" = "{p}{n} rule"\n' for p, a, b in ranges for n in range(a, b + 1))
    about = f'file = "{key}.md"\ntitle = "the {key}"\nabout = "About {key}."\n'
    return f"[{key}]\n{about}ids = [{ids}]\n\n[{key}.rules]\n{rules}\n"


SMALL = (
    _table("lifecycle", [("R", 1, 40), ("D", 1, 6)])
    + _table("cm", [("M", 1, 9), ("§12.", 1, 12)])
    + _table("fm", [("FM", 1, 20)])
)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def _repo(root: Path, files: dict[str, str], data: str = SMALL) -> RuleIndex:
    """A repository under ``root`` holding ``docs/rules.toml`` and ``files``."""
    _write(root, {DATA.as_posix(): data, **files})
    return load_index(root / DATA)


def _cited(citations: tuple[Citation, ...]) -> list[str]:
    return sorted({c.rule for c in citations})


def test_a_range_cites_every_id_from_its_first_to_its_last(tmp_path: Path) -> None:
    # Given a module citing ranges in each form the code uses
    index = _repo(
        tmp_path,
        {"pictx_fsm/a.py": '"""Rules R21–R23 and R33-R38, FM14–16, §12.10; D1..D2."""\n'},
    )
    # When it is scanned
    found = scan(tmp_path, index)
    # Then every id in between is cited, nothing else, and nothing is wrong
    ranges = "R21 R22 R23 R33 R34 R35 R36 R37 R38 FM14 FM15 FM16 §12.10 D1 D2"
    assert _cited(found.citations) == sorted(ranges.split())
    assert found.bad == ()


def test_ids_inside_words_numbers_and_section_references_are_not_citations(
    tmp_path: Path,
) -> None:
    # Given text with ids glued to words, decimals and a plain section reference
    index = _repo(
        tmp_path,
        {"models/m.yaml": "# PR21, R2x, XM3, §12 and lifecycle §9.1; but R2-style is R2\n"},
    )
    # Then only the standalone R2 (twice) is cited
    assert [(c.rule, c.line) for c in scan(tmp_path, index).citations] == [("R2", 1)]


@given(
    data=st.data(),
    dash=st.sampled_from(["–", "-", ".."]),
    repeat_prefix=st.booleans(),
)
def test_property_any_range_inside_a_specification_expands_to_exactly_its_ids(
    data: st.DataObject, dash: str, repeat_prefix: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        index = _repo(root, {})
        # Given any range of one specification's ids
        r = data.draw(st.sampled_from([r for s in index.specs for r in s.ranges]))
        first = data.draw(st.integers(r.first, r.last))
        last = data.draw(st.integers(first, r.last))
        end = f"{r.prefix}{last}" if repeat_prefix else str(last)
        _repo(root, {"tests/helper.py": f"# see {r.prefix}{first}{dash}{end}.\n"})
        # When it is scanned
        found = scan(root, index)
        # Then it cites exactly the ids from first to last, all in that line
        assert [c.rule for c in found.citations] == sorted(IdRange(r.prefix, first, last).ids())
        assert {(c.path, c.line) for c in found.citations} == {("tests/helper.py", 1)}
        assert found.bad == ()


@given(data=st.data())
def test_property_an_id_beyond_its_specification_is_a_bad_citation_naming_its_place(
    data: st.DataObject,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        index = _repo(root, {})
        # Given a citation of a number past a specification's last id, on line 3
        r = data.draw(st.sampled_from([r for s in index.specs for r in s.ranges]))
        beyond = data.draw(st.integers(r.last + 1, r.last + 500))
        _repo(root, {"pictx_fsm/x.py": f"a = 1\n\n# {r.prefix}{beyond}\n"})
        # When it is scanned
        found = scan(root, index)
        # Then it cites nothing and is reported with its file, line and the range it misses
        assert found.citations == ()
        (bad,) = found.bad
        assert (bad.path, bad.line, bad.text) == ("pictx_fsm/x.py", 3, f"{r.prefix}{beyond}")
        assert f"{r.prefix}{r.first}–{r.prefix}{r.last}" in bad.reason


def test_a_range_crossing_the_end_cites_the_ids_inside_and_reports_the_rest(
    tmp_path: Path,
) -> None:
    index = _repo(tmp_path, {"pictx_fsm/x.py": "# D5–D8\n"})
    found = scan(tmp_path, index)
    assert _cited(found.citations) == ["D5", "D6"]
    assert [b.reason for b in found.bad] == ["D7, D8 outside lifecycle.md's D1–D6"]


def test_a_range_that_runs_backwards_is_a_bad_citation(tmp_path: Path) -> None:
    index = _repo(tmp_path, {"pictx_fsm/x.py": "# R23–R21\n"})
    found = scan(tmp_path, index)
    assert found.citations == ()
    assert found.bad == (
        BadCitation("pictx_fsm/x.py", 1, "R23–R21", "the range runs backwards (R23 after R21)"),
    )


def test_citations_in_a_test_belong_to_that_test_and_its_name_cites_too(tmp_path: Path) -> None:
    # Given a test module: a docstring citation, a helper, a test named after two rules
    # citing a third in its body, a parametrized test and a test method of a class
    index = _repo(
        tmp_path,
        {
            "tests/test_reset.py": (
                '"""Resets (R28)."""\n'  # 1
                "def helper():\n"  # 2
                "    return 'R1'\n"  # 3
                "def test_r30_r14_one_reset_per_batch():\n"  # 4
                "    # and R20\n"  # 5
                "    pass\n"  # 6
                "@pytest.mark.parametrize('x', ['M2'])\n"  # 7
                "def test_param(x):\n"  # 8
                "    pass\n"  # 9
                "class TestGroup:\n"  # 10
                "    def test_fm19_and_d4_boundary(self):\n"  # 11
                "        '§12.3'\n"  # 12
            )
        },
    )
    # When it is scanned
    cited = {(c.rule, c.line, c.test) for c in scan(tmp_path, index).citations}
    # Then each citation names the test it is in, or none outside tests
    assert cited == {
        ("R28", 1, None),
        ("R1", 3, None),
        ("R30", 4, "test_r30_r14_one_reset_per_batch"),
        ("R14", 4, "test_r30_r14_one_reset_per_batch"),
        ("R20", 5, "test_r30_r14_one_reset_per_batch"),
        ("M2", 7, "test_param"),
        ("FM19", 11, "TestGroup::test_fm19_and_d4_boundary"),
        ("D4", 11, "TestGroup::test_fm19_and_d4_boundary"),
        ("§12.3", 12, "TestGroup::test_fm19_and_d4_boundary"),
    }


def test_a_test_named_after_a_rule_that_does_not_exist_is_a_bad_citation(
    tmp_path: Path,
) -> None:
    index = _repo(tmp_path, {"tests/test_x.py": "def test_r99_nothing():\n    pass\n"})
    (bad,) = scan(tmp_path, index).bad
    assert (bad.path, bad.line, bad.text) == ("tests/test_x.py", 1, "test_r99_nothing")


def test_only_source_and_declaration_files_of_the_three_trees_are_read(tmp_path: Path) -> None:
    # Given citations in a session fixture, in bench/, in a cache and in a YAML model
    index = _repo(
        tmp_path,
        {
            "tests/fixtures/sessions/a.jsonl": '{"note": "R1"}\n',
            "bench/bench_x.py": "# R2\n",
            "pictx_fsm/__pycache__/a.py": "# R3\n",
            "models/pi/budget.yaml": "# R4\n",
            "pictx_fsm/hosts/pi/bridge.mjs": "// R5\n",
        },
    )
    # Then only the model and the bridge cite
    assert _cited(scan(tmp_path, index).citations) == ["R4", "R5"]


# -- the page ----------------------------------------------------------------------------------


def test_the_page_lists_each_rule_with_where_it_is_implemented_and_tested(tmp_path: Path) -> None:
    index = _repo(
        tmp_path,
        {
            "pictx_fsm/reset.py": "# R28\n",
            "models/reset.yaml": "# R28 | R1\n",
            "tests/test_reset.py": '"""R1."""\ndef test_r28_tail():\n    pass\n',
        },
    )
    page = render(index, scan(tmp_path, index).citations)
    assert (
        "| R28 | R28 rule | `models/reset.yaml`, `pictx_fsm/reset.py` "
        "| `tests/test_reset.py`: `test_r28_tail` |"
    ) in page
    assert "| R1 | R1 rule | `models/reset.yaml` | `tests/test_reset.py` |" in page
    assert "| R2 | R2 rule | — | — |" in page
    assert "## cm: the cm" in page and "| §12.12 | §12.12 rule | — | — |" in page


def test_a_bar_in_a_summary_does_not_end_its_table_cell(tmp_path: Path) -> None:
    index = _repo(tmp_path, {}, SMALL.replace('"R1 rule"', '"either | or"'))
    assert "| R1 | either \\| or | — | — |" in render(index, ())


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1))
def test_property_the_page_does_not_depend_on_the_order_citations_are_found(seed: int) -> None:
    # Given the repository's citations in any order
    citations = list(REPOSITORY.citations)
    random.Random(seed).shuffle(citations)
    # Then the page is the same
    assert render(INDEX, citations) == render(INDEX, REPOSITORY.citations)


# -- docs/rules.toml ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace('"R7" = "R7 rule"\n', ""), "[lifecycle].rules: no summary for R7"),
        (lambda t: t + 'R41 = "more"\n', "R41 outside the ids [fm] declares"),
        (lambda t: t.replace('"R7 rule"', '"  "'), "[lifecycle].rules R7: expected a non-empty"),
        (
            lambda t: t.replace('"R7 rule"', '"a\\nb"'),
            "[lifecycle].rules R7: a summary is one line",
        ),
        (lambda t: t.replace('"R7 rule"', "7"), "[lifecycle].rules R7: expected a non-empty"),
        (
            lambda t: t.replace('prefix = "M"', 'prefix = "R"'),
            "prefix 'R' is already [lifecycle]'s",
        ),
        (lambda t: t.replace("first = 1, last = 40", "first = 5, last = 4"), "1 <= first <= last"),
        (lambda t: t.replace('about = "About fm."\n', ""), "missing keys ['about']"),
        (lambda t: t.replace('title = "the fm"', 'title = "x'), "not valid TOML"),
    ],
    ids=[
        "missing",
        "extra",
        "blank",
        "two-lines",
        "not-text",
        "shared-prefix",
        "empty-range",
        "missing-key",
        "syntax",
    ],
)
def test_an_unusable_summary_file_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, edit: object, message: str
) -> None:
    assert callable(edit)
    (tmp_path / "rules.toml").write_text(edit(SMALL), encoding="utf-8")
    with pytest.raises(RuleIndexError) as raised:
        load_index(tmp_path / "rules.toml")
    assert str(raised.value).startswith(f"{tmp_path / 'rules.toml'}:")
    assert message in str(raised.value)


# -- the command -------------------------------------------------------------------------------


def test_check_fails_naming_the_regeneration_command_when_a_new_citation_appears(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a page the command wrote, which check finds current
    _repo(tmp_path, {"pictx_fsm/a.py": "# R3\n"})
    assert main(["--root", str(tmp_path)]) == 0
    assert "| R3 | R3 rule | `pictx_fsm/a.py` | — |" in (tmp_path / OUTPUT).read_text()
    assert main(["--check", "--root", str(tmp_path)]) == 0
    # and then a test that cites a valid rule anew
    _repo(tmp_path, {"tests/test_a.py": "def test_r4_new():\n    pass\n"})
    capsys.readouterr()
    # When checked / Then it is stale, and the message says how to regenerate
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert f"docs/rules.md is stale; regenerate it with `{COMMAND}`" in capsys.readouterr().err
    # And regenerating is all it takes
    assert main(["--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0


def test_a_citation_of_no_rule_fails_the_command_naming_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _repo(tmp_path, {"models/m.yaml": "a: 1\n# R41\n"})
    assert main(["--root", str(tmp_path)]) == 1
    assert "models/m.yaml:2: R41: R41 outside lifecycle.md's R1–R40" in capsys.readouterr().err


def test_an_unusable_summary_file_exits_2_with_one_line_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, {DATA.as_posix(): SMALL.replace('"R7" = "R7 rule"\n', "")})
    assert main(["--check", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no summary for R7" in err and "Traceback" not in err
