"""pi-context-management fails closed on the real Pi (every supported version), print mode.

When its Python side dies, hangs or writes garbage — at a notes call, in a compaction, in a
handoff — a user still has: a ``context_notes`` call that answers an error (Pi makes it the
tool's error result) and every note already saved in the session; Pi's native compaction in
place of the checkpoint; a handoff abandoned before any switch, the source session intact and
usable (the next prompt is answered, and noted, by a restarted server); one notice per failure
episode; no stack trace; and Pi exiting by itself with its normal code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from real_cm import READ_NOTES, note_reply
from real_pi import PiExit, faulty_python, python_wrapper, run_pi

from pictx_fsm.extensions.context_management.records import NOTES_TYPE, RECEIPT_TYPE
from pictx_fsm.hosts.pi import entry_path
from pictx_fsm.hosts.pi.texts import CONTEXT_MANAGEMENT_VOICE, bridge_texts
from pictx_fsm.session.entries import CompactionEntry, CustomEntry, MessageEntry
from pictx_fsm.session.jsonl import read_session

TEXTS = bridge_texts(CONTEXT_MANAGEMENT_VOICE)
FAULT = re.compile(r"^notice\[warning\] pi-context-management: the memory server .*; restarting it")
DIAGNOSIS = re.compile(r"^notice\[error\] pi-context-management: cannot run the memory server: ")
STACK_TRACE = re.compile(r"Traceback \(most recent call last\)|^\s+at .*:\d+:\d+\)?$", re.M)
CM = [entry_path("context-management")]
NO_BACKGROUND = "--context-memory-no-background"
pytestmark = pytest.mark.real_pi


def _run(tmp_path: Path, script: dict[str, Any], *inputs: str, fault: dict[str, Any]) -> PiExit:
    env = {
        "PICTX_FSM_PYTHON": str(faulty_python(tmp_path)),
        "PICTX_FAULT": json.dumps(fault),
        "PICTX_FAULT_STATE": str(tmp_path / "fault-state"),
    }
    return run_pi(tmp_path, script, *inputs, env=env, bridge=CM, argv=(NO_BACKGROUND,))


def _entries(path: Path) -> list[Any]:
    return list(read_session(path).entries)


def _notes(path: Path) -> list[CustomEntry]:
    return [e for e in _entries(path) if isinstance(e, CustomEntry) and e.custom_type == NOTES_TYPE]


def _tool_results(path: Path) -> list[dict[str, Any]]:
    return [
        e.message.raw
        for e in _entries(path)
        if isinstance(e, MessageEntry) and e.message.role == "toolResult"
    ]


def _assert_fails_closed(run: PiExit, notices: list[re.Pattern[str]]) -> None:
    assert run.returncode == 0, run.stderr
    assert not STACK_TRACE.search(run.stderr), run.stderr
    failures = [n for n in run.notices() if "memory server" in n]
    assert len(failures) == len(notices), failures
    for notice, pattern in zip(failures, notices, strict=True):
        assert pattern.match(notice), notice


def test_m16_a_notes_call_the_dead_server_cannot_answer_is_an_error_and_saved_notes_stay(
    tmp_path: Path,
) -> None:
    # Given a saved note, then a server that dies as the next notes call reaches it
    script = {"replies": [note_reply("api"), {"text": "noted"}, READ_NOTES, {"text": "read"}]}
    fault = {"fault": "kill", "hook": "context_notes", "nth": 2}
    # When Pi runs both prompts in print mode
    run = _run(tmp_path, script, "Keep the public API stable.", "What do we know?", fault=fault)
    # Then the read answered an error result, the saved note is still in the session, Pi
    # exited normally and the user was told once
    _assert_fails_closed(run, [FAULT])
    results = _tool_results(run.session_file())
    assert results[0].get("isError") is not True and results[-1].get("isError") is True
    assert len(_notes(run.session_file())) == 1


def test_a_hung_server_at_a_notes_call_is_an_error_after_the_timeout(tmp_path: Path) -> None:
    script = {"replies": [READ_NOTES, {"text": "read"}]}
    fault = {"fault": "hang", "hook": "context_notes", "nth": 1}
    run = _run(tmp_path, script, "What do we know?", fault=fault)
    _assert_fails_closed(run, [FAULT])
    assert _tool_results(run.session_file())[-1].get("isError") is True


def test_a_server_writing_garbage_is_a_fault_told_once(tmp_path: Path) -> None:
    script = {"replies": [READ_NOTES, {"text": "read"}, READ_NOTES, {"text": "again"}]}
    fault = {"fault": "garbage", "hook": "context_notes", "nth": 1}
    run = _run(tmp_path, script, "What do we know?", "And now?", fault=fault)
    _assert_fails_closed(run, [FAULT])
    # And the restarted server answers the next call
    assert _tool_results(run.session_file())[-1].get("isError") is not True


def _long(label: str, chars: int) -> str:
    return (label + " alpha bravo charlie delta") * (chars // 30)


COMPACTION_INPUTS = (_long("archived", 60_000), _long("recent", 90_000), "/ctx-memory compact")
"""A long turn Pi archives, a recent one it keeps, and the extension's own compact command
(print mode runs no built-in command): Pi's compaction, through ``ctx.compact()``."""


def test_m34_a_compaction_the_server_cannot_answer_is_pis_own(tmp_path: Path) -> None:
    # Given a server that dies when the compaction reaches it
    script = {"replies": [{"text": _long("reply", 60_000)}, {"text": "ok"}]}
    fault = {"fault": "kill", "hook": "session_before_compact", "nth": 1}
    # When the user compacts
    run = _run(tmp_path, script, *COMPACTION_INPUTS, fault=fault)
    # Then Pi compacted natively (its summary, not a checkpoint), exited normally, told once
    _assert_fails_closed(run, [FAULT])
    [compaction] = [e for e in _entries(run.session_file()) if isinstance(e, CompactionEntry)]
    assert compaction.from_hook is not True


def test_m34_a_compaction_whose_model_call_outlives_the_server_is_pis_own(tmp_path: Path) -> None:
    # Given a server that hangs on the checkpoint's first model reply (a host call's return)
    script = {"replies": [{"text": _long("reply", 60_000)}, {"text": "ok"}]}
    fault = {"fault": "hang", "hook": "return", "nth": 1}
    run = _run(tmp_path, script, *COMPACTION_INPUTS, fault=fault)
    _assert_fails_closed(run, [FAULT])
    [compaction] = [e for e in _entries(run.session_file()) if isinstance(e, CompactionEntry)]
    assert compaction.from_hook is not True


def test_m48_a_handoff_the_server_dies_in_is_abandoned_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    # Given a saved note, and a server that dies when the handoff's model reply comes back
    script = {"replies": [note_reply("api"), {"text": "noted"}, {"text": "still here"}]}
    fault = {"fault": "kill", "hook": "generation_replied", "nth": 1}
    # When the user hands off, then prompts again
    run = _run(
        tmp_path,
        script,
        "Keep the public API stable.",
        "/ctx-memory handoff",
        "Go on.",
        fault=fault,
    )
    # Then no session was switched to (only the source has messages), the source has its note
    # and the next prompt's answer, Pi exited normally and the user was told once
    _assert_fails_closed(run, [FAULT])
    [source, *created] = run.session_files()
    kinds = [getattr(e, "custom_type", None) for e in _entries(source)]
    assert kinds.count(NOTES_TYPE) >= 1 and RECEIPT_TYPE not in kinds
    texts = [json.dumps(e.message.raw) for e in _entries(source) if isinstance(e, MessageEntry)]
    assert any("still here" in t for t in texts)
    for path in created:  # a file created before the server died holds no conversation
        assert not any(isinstance(e, MessageEntry) for e in _entries(path))


def test_a_missing_interpreter_is_diagnosed_once_and_notes_calls_answer_an_error(
    tmp_path: Path,
) -> None:
    env = {"PICTX_FSM_PYTHON": str(tmp_path / "no-such-python")}
    script = {"replies": [READ_NOTES, {"text": "read"}, READ_NOTES, {"text": "again"}]}
    run = run_pi(tmp_path, script, "One.", "Two.", env=env, bridge=CM)
    _assert_fails_closed(run, [DIAGNOSIS])
    results = _tool_results(run.session_file())
    assert [r.get("isError") for r in results] == [True, True]


def test_a_python_without_the_package_is_diagnosed_once(tmp_path: Path) -> None:
    import sys

    bare = python_wrapper(tmp_path, "bare-python", f'exec "{sys.executable}" -I -S "$@"')
    script = {"replies": [READ_NOTES, {"text": "read"}]}
    run = run_pi(tmp_path, script, "One.", env={"PICTX_FSM_PYTHON": str(bare)}, bridge=CM)
    _assert_fails_closed(run, [DIAGNOSIS])
    assert "cannot import pictx_fsm" in run.stderr
