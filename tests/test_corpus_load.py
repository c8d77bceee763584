"""Every real and synthetic session file in ``../shared`` loads, and its known defects
(``index.json``) are reported at the right lines (failure-modes §F)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from shared_paths import CORPUS, SHARED, TRACES

from pictx_fsm.cli import main
from pictx_fsm.cli.inspect import inspect_file
from pictx_fsm.session.entries import ENTRY_TYPES, CompactionEntry, MessageEntry
from pictx_fsm.session.jsonl import LoadedSession, dumps_entry, read_session
from pictx_fsm.session.problems import ProblemKind

if not (CORPUS / "index.json").is_file() or not TRACES.is_dir():
    pytest.skip(f"no shared corpora at {SHARED}", allow_module_level=True)

pytestmark = pytest.mark.corpus

INDEX: list[dict[str, Any]] = json.loads((CORPUS / "index.json").read_text())
SESSIONS = [item for item in INDEX if (item.get("stats") or {}).get("lines") is not None]
SESSION_FILES = sorted(CORPUS.glob("*/*.jsonl"))
TRACE_FILES = sorted(TRACES.glob("*.session.jsonl"))
READ_ERRORS = {ProblemKind.TORN_LINE, ProblemKind.GLUED_OBJECTS, ProblemKind.INVALID_JSON}


def _lines_of(loaded: LoadedSession, kind: ProblemKind) -> list[int | None]:
    return [p.line for p in loaded.problems if p.kind is kind]


def _oracle(path: Path) -> dict[str, list[int]]:
    """Defect lines found by a naive line-by-line scan (files whose lines all parse)."""
    objects = {n: json.loads(raw) for n, raw in enumerate(path.read_text().split("\n"), 1) if raw}
    ids = {o["id"] for n, o in objects.items() if n > 1 and isinstance(o.get("id"), str)}
    return {
        "dangling": [
            n for n, o in objects.items() if o.get("parentId") and o["parentId"] not in ids
        ],
        "unknown": [n for n, o in objects.items() if n > 1 and o.get("type") not in ENTRY_TYPES],
        "no_id": [n for n, o in objects.items() if n > 1 and not isinstance(o.get("id"), str)],
    }


def test_the_corpus_is_all_here() -> None:
    # Given the index / Then every listed file exists, so the parametrised tests cover it all
    assert {CORPUS / item["dest"] for item in INDEX} <= {*SESSION_FILES, *CORPUS.glob("*/*.lock")}
    assert len(TRACE_FILES) >= 20


@pytest.mark.parametrize("path", SESSION_FILES + TRACE_FILES, ids=lambda p: p.name)
def test_every_corpus_and_trace_file_loads_as_a_session(path: Path) -> None:
    # Given a real or synthetic session file / When it is read
    loaded = read_session(path)
    # Then it has a header and every line became an entry or a reported problem
    assert loaded.header is not None
    assert len(loaded.entries) >= len(path.read_bytes().splitlines()) - 1 - len(loaded.problems)


@pytest.mark.parametrize("item", SESSIONS, ids=lambda item: item["dest"])
def test_known_defects_from_the_index_are_reported_at_their_lines(item: dict[str, Any]) -> None:
    # Given a corpus file and its independently computed stats
    stats, path = item["stats"], CORPUS / item["dest"]
    # When it is read
    loaded = read_session(path)
    # Then the malformed lines are reported at their numbers (glued ones recovered whole)
    assert _lines_of(loaded, ProblemKind.GLUED_OBJECTS) == stats["malformed_lines"]
    glued_extra = 2 * len(stats["malformed_lines"])
    assert len(loaded.entries) == stats["entries"] + glued_extra
    # And dangling parents, duplicate ids, entries without id, foreign types are reported
    assert len(_lines_of(loaded, ProblemKind.DANGLING_PARENT)) == stats["dangling_parent_refs"]
    assert len(_lines_of(loaded, ProblemKind.DUPLICATE_ID)) == stats["duplicate_ids"]
    nonstandard = sum(n for t, n in stats["types"].items() if t not in ENTRY_TYPES)
    assert len(_lines_of(loaded, ProblemKind.UNKNOWN_ENTRY_TYPE)) == nonstandard
    # And a missing final newline is reported on the last line
    expected_tail = [] if stats["ends_with_newline"] else [stats["lines"]]
    assert _lines_of(loaded, ProblemKind.MISSING_FINAL_NEWLINE) == expected_tail


@pytest.mark.parametrize(
    "item", [i for i in SESSIONS if not i["stats"]["malformed_lines"]], ids=lambda i: i["dest"]
)
def test_defect_lines_match_a_naive_line_scan(item: dict[str, Any]) -> None:
    # Given a corpus file whose lines all parse, and a naive scan of it
    path = CORPUS / item["dest"]
    oracle = _oracle(path)
    # When it is read
    loaded = read_session(path)
    # Then the defects sit on exactly the lines the scan finds
    assert _lines_of(loaded, ProblemKind.DANGLING_PARENT) == oracle["dangling"]
    assert _lines_of(loaded, ProblemKind.UNKNOWN_ENTRY_TYPE) == oracle["unknown"]
    if loaded.original_version == 3:
        assert _lines_of(loaded, ProblemKind.ENTRY_WITHOUT_ID) == oracle["no_id"]
    # And nothing else is called a read error
    assert not [p for p in loaded.problems if p.kind in READ_ERRORS]


@pytest.mark.parametrize("item", SESSIONS, ids=lambda item: item["dest"])
def test_v1_files_are_migrated_and_v2_v3_files_keep_their_version(item: dict[str, Any]) -> None:
    # Given a corpus file / When it is read
    path = CORPUS / item["dest"]
    first = json.loads(path.read_text().split("\n", 1)[0])
    loaded = read_session(path)
    # Then its original version is the header's (v1 when absent) and old files are noted
    assert loaded.original_version == first.get("version", 1)
    legacy = _lines_of(loaded, ProblemKind.LEGACY_VERSION)
    assert legacy == ([1] if loaded.original_version in (1, 2) else [])
    if loaded.original_version == 1:
        assert all(isinstance(e.id, str) for e in loaded.entries)


def test_glued_compaction_in_pi_mono_compact_is_recovered() -> None:
    # Given pi-mono's compact.v1 file, where line 1013 holds a message and the compaction
    loaded = read_session(CORPUS / "real" / "pi-mono__compact.v1.jsonl")
    # When its line 1013 is looked at
    on_line = [e for e, n in zip(loaded.entries, loaded.lines, strict=True) if n == 1013]
    # Then both objects are entries; the compaction's index is its own, so it retains nothing
    assert [e.type for e in on_line] == ["message", "compaction"]
    compaction = on_line[1]
    assert isinstance(compaction, CompactionEntry) and compaction.retains_nothing
    assert compaction.parent_id == on_line[0].id


def test_glued_assistant_and_user_in_pi_mono_session_are_recovered() -> None:
    # Given pi-mono's session.v1 file, where line 440 holds an assistant and a user message
    loaded = read_session(CORPUS / "real" / "pi-mono__session.v1.jsonl")
    on_line = [e for e, n in zip(loaded.entries, loaded.lines, strict=True) if n == 440]
    # Then both messages are recovered in order
    roles = [e.message.role for e in on_line if isinstance(e, MessageEntry)]
    assert roles == ["assistant", "user"]


def test_lock_file_is_read_without_error_and_is_not_a_session() -> None:
    # Given the stale lock file committed beside a session
    [lock] = list(CORPUS.glob("*/*.lock"))
    # When it is read and inspected
    loaded = read_session(lock)
    # Then nothing raises, it is not a session, and inspect reports its problems (1)
    assert not loaded.is_session
    assert inspect_file(str(lock)).exit_code == 1


@pytest.mark.parametrize("path", TRACE_FILES, ids=lambda p: p.name)
def test_pi_written_traces_are_clean_and_dump_back_to_the_same_json(path: Path) -> None:
    # Given a session file written by Pi 0.87.1
    raw_lines = path.read_text().splitlines()
    # When it is read
    loaded = read_session(path)
    # Then there is no problem, and each entry dumps back to the same JSON object
    assert loaded.problems == ()
    assert loaded.header is not None
    assert json.loads(dumps_entry(loaded.header)) == json.loads(raw_lines[0])
    for entry, number in zip(loaded.entries, loaded.lines, strict=True):
        assert json.loads(dumps_entry(entry)) == json.loads(raw_lines[number - 1])


@pytest.mark.parametrize(
    "path", [*TRACE_FILES, *sorted(CORPUS.glob("real/*.v3.jsonl"))], ids=lambda p: p.name
)
def test_pi_written_lines_dump_back_byte_for_byte(path: Path) -> None:
    # Given a v3 file written by Pi (numbers like 0.000013456, non-ASCII text)
    raw_lines = path.read_text(encoding="utf-8").split("\n")
    # When it is read and each entry is dumped again
    loaded = read_session(path)
    assert loaded.header is not None
    # Then the header and every entry line are identical to Pi's
    assert dumps_entry(loaded.header) == raw_lines[0]
    for entry, number in zip(loaded.entries, loaded.lines, strict=True):
        assert dumps_entry(entry) == raw_lines[number - 1], f"line {number}"


def test_inspect_runs_over_every_file_with_the_specified_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given every corpus file (including the lock) and every trace
    paths = [str(p) for p in [*SESSION_FILES, *CORPUS.glob("*/*.lock"), *TRACE_FILES]]
    # When they are inspected together as JSON
    code = main(["inspect", "--json", *paths])
    reports = json.loads(capsys.readouterr().out)
    # Then problems make the overall code 1 (nothing is unreadable), per file as found
    assert code == 1
    by_name = {Path(r["path"]).name: r["exitCode"] for r in reports}
    assert by_name["openclaw-muskfanx__main-b4c26dcb.jsonl.lock"] == 1
    assert by_name["pi-mono__compact.v1.jsonl"] == 1
    assert by_name["kuato__pi-session.jsonl"] == 1
    assert by_name["whamp__branches.jsonl"] == 1
    assert by_name["pi-mono__large-session.v1.jsonl"] == 0
    assert all(by_name[p.name] == 0 for p in TRACE_FILES)
