"""pi-context-management's activation, surface, flags, status bar and compatibility
(spec §1, M1–M7)."""

from __future__ import annotations

import pytest
from cm_kit import (
    NOTES_TYPE,
    C,
    D,
    P,
    S,
    T,
    checkpoints,
    cm,
    customs,
    fired,
    machine,
    notices,
    play,
    shared,
    state,
    tool,
    tool_payloads,
    world,
)
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.extensions.context_management.events import ReplyEnded
from pictx_fsm.extensions.context_management.texts import (
    COMMAND,
    NOTES_TOOL,
    READ_TOOL,
    SEARCH_TOOL,
    STATUS_LOG_FAILED,
    STATUS_READY,
    STATUS_REOPEN,
    STATUS_TOOL,
)
from pictx_fsm.hosts.model.context_memory import CM_HOOKS, flags_from


def test_m1_a_child_session_registers_nothing() -> None:
    # Given PI_SUBAGENT_CHILD=1
    w = world(child=True)
    # When a long session runs and compacts
    play(w, T(chars=12_000), shared.Compact())
    # Then no hook, tool, command or runtime exists and nothing was written
    assert not w.extension.hooks and not w.extension.tools and not w.extension.commands
    assert not w.runtimes and not customs(w, NOTES_TYPE) and not checkpoints(w)


@given(st.text(max_size=3))
def test_m1_only_the_value_1_marks_a_child(value: str) -> None:
    # Given any PI_SUBAGENT_CHILD value / Then only "1" is a child (other launchers: no)
    assert flags_from({"PI_SUBAGENT_CHILD": value}).child is (value == "1")


def test_m2_the_surface_is_four_tools_one_command_and_no_context_hook() -> None:
    # Given a loaded extension
    w = world()
    # Then it offers exactly the four tools and /ctx-memory, and never rewrites context
    assert set(w.extension.tools) == {SEARCH_TOOL, READ_TOOL, NOTES_TOOL, STATUS_TOOL}
    assert set(w.extension.commands) == {COMMAND}
    assert "context" not in CM_HOOKS and "session_before_compact" in CM_HOOKS


def test_m3_no_background_disables_only_background_notes() -> None:
    # Given --context-memory-no-background
    w = world(no_background=True)
    flags = flags_from({}, ["--context-memory-no-background"])
    assert flags.no_background and not flags.no_auto_handoff
    # When a long reply ends, the model writes a note and the user compacts
    play(w, P(chars=400), S, *tool(tool="notes_update"), T(chars=20_000), shared.Compact())
    play(w, P(chars=200), S)
    # Then no background job ran, but the manual note and the checkpoint did
    assert machine(w, "background_notes") == "disabled"
    assert tool_payloads(w, NOTES_TOOL)[0]["ok"] is True
    assert checkpoints(w)


def test_m3_no_auto_handoff_overrides_auto_on() -> None:
    # Given --context-memory-no-auto-handoff
    w = world(no_auto_handoff=True)
    # When the user turns automatic handoff on
    play(w, C(args="auto on"))
    # Then it stays forced off, and the user is told why
    assert machine(w, "auto_handoff") == "forced_off"
    assert "--context-memory-no-auto-handoff" in notices(w)[-1]


def test_m4_status_bar_ready_reopen_and_log_failure() -> None:
    # Given a loaded extension / Then the status bar says ready
    w = world()
    assert w.extension.status == STATUS_READY
    # When the disk refuses a note write
    play(w, P(chars=200), S, cm.FailDisk(on=True), *tool(tool="notes_update"))
    # Then the status bar asks to reopen the session (a log failure shows too)
    assert w.extension.status in (STATUS_REOPEN, STATUS_LOG_FAILED)
    assert state(w).storage_failed


def test_m4_the_status_bar_shows_the_current_batch_never_a_total() -> None:
    # Given a manual handoff generating its notes
    w = play(world(), P(chars=1_000), S, C(args="handoff"))
    # Then the status bar names the current batch only
    assert w.extension.status == "Memory: checkpoint batch 1"


def test_m4_status_clears_after_checkpoint_commits() -> None:
    # Given a session to compact
    w = play(world(), P(chars=4_000), S, P(chars=20_000), S)
    shown = len(w.extension.status_log)
    # When Pi compacts and the plugin's checkpoint commits
    play(w, shared.Compact())
    assert checkpoints(w)
    # Then the bar showed the batch while it ran, and is ready again once it committed
    assert "Memory: checkpoint batch 1" in w.extension.status_log[shown:]
    assert w.extension.status == STATUS_READY


def test_m4_status_after_a_handoff_is_the_new_sessions_own() -> None:
    # Given a manual handoff that switched to its new session
    w = play(world(), P(chars=300), S, C(args="handoff"), D)
    assert w.journal.switches
    # Then the bar showed the handoff's phases, and the new session's bar says ready
    assert "Memory: handoff creating" in w.extension.status_log
    assert w.extension.status == STATUS_READY


@pytest.mark.parametrize("failure", [cm.FailCreate(on=True), cm.VetoSwitch(on=True)])
def test_m4_status_clears_after_a_handoff_stopped_before_switching(failure: object) -> None:
    # Given a manual handoff whose new session cannot be created, or whose switch is vetoed
    w = play(world(), P(chars=300), S, failure, C(args="handoff"), D)
    # Then no switch happened and the bar is ready again, not stuck on the last phase
    assert not w.journal.switches and machine(w, "handoff") == "idle"
    assert w.extension.status == STATUS_READY


def test_m5_startup_and_reload_write_nothing() -> None:
    # Given a session with history
    w = play(world(), P(chars=12_000), S, D)
    before = len(w.session.tree.entries)
    # When it is reloaded
    play(w, shared.Reload())
    # Then the reload wrote nothing and no background job started
    assert len(w.session.tree.entries) == before
    assert machine(w, "background_notes") == "idle"


def test_m6_schedulers_run_only_at_the_reply_end() -> None:
    # Given a long prompt whose run is not finished
    w = play(world(), P(chars=12_000), shared.Advance(steps=6))
    # Then no background job started before the run settled
    assert machine(w, "background_notes") == "idle"
    # When it settles (agent_settled) / Then the job starts at that reply end
    play(w, S)
    starts = [
        r
        for r in w.journal.steps
        if "background_notes:background_notes:idle:reply_end:1" in r.result.fired
    ]
    assert starts and all(isinstance(r.event, ReplyEnded) for r in starts)


def test_m7_notes_are_written_as_version_2_and_version_1_is_read() -> None:
    # Given a note written now
    w = play(world(), P(chars=200), S, *tool(tool="notes_update"))
    assert customs(w, NOTES_TYPE)[-1]["version"] == 2
    # When a version-1 note (no inferred, no revision) is read back
    from pictx_fsm.extensions.context_management.notes import note_from_json

    note = note_from_json({"key": "k", "kind": "goal", "text": "t", "sources": ["a"]})
    # Then it is understood, and existing entries are never rewritten
    assert note.inferred is False and note.revision == 1
    texts = [e.to_json() for e in w.session.tree.entries]
    play(w, shared.Reload(), P(chars=200), S)
    assert [e.to_json() for e in w.session.tree.entries][: len(texts)] == texts
    assert fired(w)
