"""The audit over every real and synthetic session file and every Pi trace in ``../shared``:
the known defects of ``failure-modes.md`` are found where they are, and nothing else is."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from shared_paths import CORPUS, SHARED, TRACES

from pictx_fsm.cli import main
from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import Finding, SessionAudit, audit_file

if not (CORPUS / "index.json").is_file() or not TRACES.is_dir():
    pytest.skip(f"no shared corpora at {SHARED}", allow_module_level=True)

pytestmark = pytest.mark.corpus

REAL = CORPUS / "real"
SESSION_FILES = sorted(CORPUS.glob("*/*.jsonl"))
TRACE_FILES = sorted(TRACES.glob("*.session.jsonl"))
LOCK = REAL / "openclaw-muskfanx__main-b4c26dcb.jsonl.lock"

OUT_OF_BAND = {
    "openclaw-cattj__main-0c4e9163.reset-archive.jsonl": 25,
    "openclaw-rs__main-ea774ff3.jsonl": 2,
    "openclaw-verve__main-22a2a42e.jsonl": 2,
    "openclaw-muskfanx__main-b4c26dcb.jsonl": 1,
    "openclaw-rs__mrbeast-cad3c17f.reset-archive.jsonl": 1,
}
"""Failure mode 19's corpus instances, per file (31 in all)."""

EXPECTED_DEFECTS: dict[str, Counter[str]] = {
    **{name: Counter(out_of_band_fork=n) for name, n in OUT_OF_BAND.items()},
    "openclaw-rs__chairong-5f89f070.jsonl": Counter(
        overflow_storm=1, ineffective_compaction=1, empty_compaction_summary=2
    ),
    "pi-mono__compact.v1.jsonl": Counter(
        {"structure/glued_objects": 1, "boundary_on_damaged_line": 1}
    ),
    "pi-mono__session.v1.jsonl": Counter({"structure/glued_objects": 1}),
    "pi-mono__before-compaction.v1.jsonl": Counter(boundary_splits_tool_pair=1),
    "kuato__empty-session.jsonl": Counter({"structure/missing_final_newline": 1}),
    "kuato__pi-session.jsonl": Counter(
        {"structure/dangling_parent": 1, "structure/missing_final_newline": 1}
    ),
    "whamp__branches.jsonl": Counter(
        {"structure/invalid_field": 1, "structure/entry_without_id": 1}
    ),
}
"""Every warning or error the corpus holds, per file; every other file has none."""

_audits: dict[Path, SessionAudit] = {}


def audited(path: Path) -> SessionAudit:
    if path not in _audits:
        _audits[path] = audit_file(path, session_checks())
    return _audits[path]


def of_kind(path: Path, name: str) -> list[Finding]:
    return [f for f in audited(path).findings if f.name == name]


@pytest.mark.parametrize("path", SESSION_FILES, ids=lambda p: p.name)
def test_every_corpus_file_has_exactly_its_known_defects(path: Path) -> None:
    # Given a corpus file
    # When it is audited
    report = audited(path)
    # Then its warnings and errors are exactly the known ones, and the exit code follows
    found = Counter(f.name for f in report.findings if f.is_defect)
    expected = EXPECTED_DEFECTS.get(path.name, Counter())
    assert found == expected
    assert report.exit_code == (1 if expected else 0)


@pytest.mark.parametrize("path", TRACE_FILES, ids=lambda p: p.name)
def test_every_pi_trace_audits_clean(path: Path) -> None:
    # Given a session file written by Pi 0.87.1 (its pi-capture/* entries are not pi-context's)
    # When it is audited, in either profile
    # Then there is no finding at all
    assert audited(path).findings == ()
    assert audit_file(path, session_checks("0.25.0")).findings == ()


def test_the_31_out_of_band_forks_are_mirrored_or_injected_assistant_stops() -> None:
    # Given the five OpenClaw files of failure mode 19
    # When their out-of-band forks are collected
    total = 0
    for name, count in OUT_OF_BAND.items():
        forks = of_kind(REAL / name, "out_of_band_fork")
        total += len(forks)
        # Then each is an abandoned assistant 'stop' beside a pending tool call, named by model
        model = "gateway-injected" if "mrbeast" in name else "delivery-mirror"
        assert len(forks) == count
        assert all(f"assistant 'stop' message from model {model}" in f.message for f in forks)
        assert all(
            len(f.entries) == 2 and f.entries[0].line == (f.entries[1].line or 0) + 1 for f in forks
        )
    assert total == 31


def test_the_glued_compaction_of_pi_mono_compact_is_a_lost_boundary() -> None:
    path = REAL / "pi-mono__compact.v1.jsonl"
    [glued] = of_kind(path, "structure/glued_objects")
    [boundary] = of_kind(path, "boundary_on_damaged_line")
    assert (glued.line, boundary.line, boundary.rule) == (1013, 1013, "FM20")
    assert boundary.message.startswith("compaction entry on a glued line")


def test_the_glued_assistant_and_user_of_pi_mono_session_carry_no_boundary() -> None:
    path = REAL / "pi-mono__session.v1.jsonl"
    assert [f.line for f in of_kind(path, "structure/glued_objects")] == [440]
    assert of_kind(path, "boundary_on_damaged_line") == []


def test_the_overflow_storm_of_chairong_is_reported_with_its_five_entries() -> None:
    # Given 3 overflow errors and 2 compactions within 6 s (failure mode 5's instance)
    path = REAL / "openclaw-rs__chairong-5f89f070.jsonl"
    [storm] = of_kind(path, "overflow_storm")
    # Then the storm names every overflow and recovery, and the 176-token compaction
    assert [ref.line for ref in storm.entries] == [54, 55, 56, 58, 59]
    assert storm.message.startswith("3 overflow errors and 2 recoveries within 6 s")
    assert "tokensBefore 63260 → 176" in storm.message
    [ineffective] = of_kind(path, "ineffective_compaction")
    assert ineffective.line == 59
    assert [f.line for f in of_kind(path, "empty_compaction_summary")] == [55, 59]


def test_anuo_reports_its_second_overflow_recovery() -> None:
    # Given two overflow errors, each followed at once by a compaction, a week apart
    path = REAL / "openclaw-rs__anuo-0139686e.final.jsonl"
    [repeated] = of_kind(path, "repeated_overflow_recovery")
    # Then the second recovery is reported (info: progress separates them)
    assert [ref.line for ref in repeated.entries] == [643, 347]
    assert "tokensBefore 137274 → 137407" in repeated.message
    assert of_kind(path, "overflow_storm") == []


def test_pi_mono_before_compaction_has_a_compaction_inside_a_tool_pair() -> None:
    # Given the Pi author's session whose later request failed with "tool_use ids were found
    # without tool_result" (failure mode 19)
    path = REAL / "pi-mono__before-compaction.v1.jsonl"
    [split] = of_kind(path, "boundary_splits_tool_pair")
    # Then the compaction at line 629 sits after the tool call at line 628
    assert [ref.line for ref in split.entries] == [629, 628]


def test_the_lock_file_is_reported_as_not_a_session() -> None:
    # Given the stale lock file kept beside a corpus session / When it is audited
    report = audit_file(LOCK, session_checks())
    # Then it is readable, holds no session, and its problems are findings (exit 1)
    assert report.exit_code == 1
    assert report.error is None and report.note == "no session header and no entry"
    assert any(f.name == "structure/missing_header" for f in report.findings)


def test_the_whole_corpus_audits_without_traceback_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given every session file of the corpus and the traces
    files = [str(p) for p in (*SESSION_FILES, *TRACE_FILES)]
    # When they are audited in one run, as JSON
    code = main(["audit", "--json", "--stats", *files])
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    # Then it exits 1 (findings), covering every file
    assert code == 1
    assert len(document["files"]) == len(files)
    assert document["findings"]["error"] > 0
    assert document["stats"]["bytes"] == sum(Path(f).stat().st_size for f in files)


def test_the_whole_corpus_folder_including_the_lock_file_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given every file of the corpus folder, the lock file included / When audited
    files = sorted(str(p) for p in CORPUS.glob("*/*") if p.is_file())
    # Then the run reports findings and exits 1 (nothing is unreadable)
    assert main(["audit", *files]) == 1
    capsys.readouterr()
