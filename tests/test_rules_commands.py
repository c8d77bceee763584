"""Lifecycle §10 through the runtime: reset construction (R58), ``/wipe-memory`` (R59),
``/pi-context`` (R60, R61), native compaction (R62) and the reset success notice (R63)."""

from __future__ import annotations

import errno
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import ROOT_ID, WINDOW, Kit, audits_verify, boot_ids  # noqa: F401

from pictx_fsm.extensions.pi_context.lifecycle import toggle_completions
from pictx_fsm.extensions.pi_context.notes import InMemoryNotesSource, NoteRow
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    NOTICE_COMPACT_DISABLED,
    NOTICE_TOGGLE_USAGE,
    NOTICE_WIPE_NEEDS_ON,
    RESET_SUMMARY_0_24,
)
from pictx_fsm.host.effects import (
    AppendEntry,
    BoundaryResult,
    CancelResult,
    CustomDraft,
    CustomMessageDraft,
    Notify,
    SendMessage,
)
from pictx_fsm.host.events import TurnEnd


def _started(**kw: Any) -> Kit:
    kit = Kit.create(**kw)
    kit.start()
    kit.build.user("task")
    return kit


def _cleared(window_id: str) -> Notify:
    return Notify(message=f"pi-context: memory cleared · {window_id}", level="info")


@attrs.define
class CountingNotes:
    """A notes source that counts listings (one snapshot lists each of five homes once)."""

    inner: Any = attrs.field(factory=InMemoryNotesSource)
    listings: int = 0

    def list_home(self, scope: Any, now_ms: float) -> tuple[NoteRow, ...]:
        self.listings += 1
        return tuple(self.inner.list_home(scope, now_ms))


# -- R58 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["0.25.0", "0.25.1"])
def test_r58_reset_drafts_are_marker_boot_continuation_from_one_notes_snapshot(
    profile: str,
) -> None:
    # Given a session in the root window, with a counting notes source
    notes = CountingNotes()
    kit = _started(profile=profile, notes=notes)
    before = notes.listings
    # When a reset is built
    kit.tool("wipe_memory")
    value = kit.turn_end("x").value
    # Then three drafts in order, one snapshot read, and the boot is a reset boot
    assert isinstance(value, BoundaryResult)
    marker, boot, continuation = value.entries
    assert isinstance(marker, CustomDraft) and marker.custom_type == MARKER_TYPE
    assert isinstance(boot, CustomMessageDraft) and boot.custom_type == BOOT_TYPE
    assert isinstance(continuation, CustomMessageDraft)
    assert continuation.custom_type == CONTINUATION_TYPE
    assert notes.listings - before == 5
    assert boot_ids(boot.content) == {
        "first": ROOT_ID,
        "current": marker.data["windowId"],
        "previous": ROOT_ID,
    }
    assert boot.content.startswith(RESET_SUMMARY_0_24) is (profile == "0.25.0")


def test_r58_the_incomplete_notes_notice_is_for_the_new_window() -> None:
    # Given an unavailable notes home
    kit = _started(notes=InMemoryNotesSource().failing("human", errno.EIO))
    kit.take_notices()
    # When a reset is built
    kit.tool("wipe_memory")
    result = kit.turn_end("x")
    # Then the notes warning is given (once for the new window id)
    assert result.notices == (
        Notify(
            message="pi-context: notes index incomplete for @human; notes_list can retry after "
            "recovery.",
            level="warning",
        ),
    )


# -- R59 -----------------------------------------------------------------------------------------


def test_r59_wipe_memory_requires_pi_context_on() -> None:
    # Given pi-context off
    kit = _started()
    kit.toggle("off")
    kit.take_notices()
    entries = len(kit.tree.entries)
    # When /wipe-memory runs
    result = kit.wipe()
    # Then an error notice and nothing written
    assert result.notices == (Notify(message=NOTICE_WIPE_NEEDS_ON, level="error"),)
    assert len(kit.tree.entries) == entries


@pytest.mark.parametrize(
    ("profile", "sends"), [("0.25.0", [BOOT_TYPE]), ("0.25.1", [BOOT_TYPE, CONTINUATION_TYPE])]
)
def test_r59_wipe_memory_appends_the_marker_sends_the_tail_and_announces(
    profile: str, sends: list[str]
) -> None:
    # Given a running session
    kit = _started(profile=profile)
    # When /wipe-memory runs
    result = kit.wipe()
    # Then: appendEntry(marker), sendMessage(boot[, continuation]) without a model turn,
    # and the success notice at once
    append, *messages, notice = result.effects
    assert isinstance(append, AppendEntry) and append.custom_type == MARKER_TYPE
    assert [m.custom_type for m in messages] == sends  # type: ignore[union-attr]
    assert all(isinstance(m, SendMessage) and m.trigger_turn is False for m in messages)
    assert notice == _cleared(append.data["windowId"])
    assert result.value is None
    assert kit.tail_types(len(kit.tree.branch()) - 1 - len(sends)) == [
        f"custom:{MARKER_TYPE}",
        *[f"custom_message:{t}" for t in sends],
    ]


def test_r59_wipe_memory_clears_the_lifecycle_state() -> None:
    # Given a pending request and an armed overflow
    kit = _started()
    kit.overflow_turn()
    kit.tool("wipe_memory")
    # When /wipe-memory runs
    kit.wipe()
    # Then both are cleared
    assert kit.configuration("reset_control")["request"] == "none"
    assert kit.configuration("reset_control")["overflow"] == "idle"


# -- R60 -----------------------------------------------------------------------------------------


def test_r60_status_notice_names_state_build_and_pi_version() -> None:
    # Given a runtime with a bundled build label
    kit = _started(build_label="0.25.1 · build 0123456789ab")
    # When /pi-context runs without argument, then with off
    assert kit.toggle("", pi_version="0.87.1").notices == (
        Notify(message="pi-context: on · 0.25.1 · build 0123456789ab · Pi 0.87.1", level="info"),
    )
    assert kit.toggle("off").notices[-1].message.startswith("pi-context: off · 0.25.1 · build")
    # And the default label is the unbundled one
    assert _started().toggle("").notices[0].message == (
        "pi-context: on · unbundled source (build unknown) · Pi 0.87.1"
    )


@settings(max_examples=30, deadline=None)
@given(
    word=st.sampled_from(["on", "off"]),
    upper=st.lists(st.booleans(), min_size=3, max_size=3),
    pad=st.sampled_from(["", " ", "  ", "\t"]),
)
def test_r60_the_argument_is_trimmed_and_lowercased(word: str, upper: list[bool], pad: str) -> None:
    # Given any casing and surrounding whitespace
    typed = pad + "".join(c.upper() if u else c for c, u in zip(word, upper, strict=False)) + pad
    kit = _started()
    if word == "on":
        kit.toggle("off")
    # When /pi-context runs
    kit.toggle(typed)
    # Then the toggle moved
    assert kit.runtime.enabled is (word == "on")


@pytest.mark.parametrize("typed", ["status", "onn", "of", "enable", "on off"])
def test_r60_anything_else_shows_usage_and_changes_nothing(typed: str) -> None:
    kit = _started()
    state = kit.runtime.state
    result = kit.toggle(typed)
    assert result.notices == (Notify(message=NOTICE_TOGGLE_USAGE, level="error"),)
    assert kit.runtime.state == state


def test_r60_empty_argument_changes_nothing_but_reports() -> None:
    kit = _started()
    kit.toggle("off")
    kit.toggle("   ")
    assert kit.runtime.enabled is False


def test_r60_on_ensures_the_boot() -> None:
    # Given pi-context off from the start (no root boot written)
    kit = Kit.create()
    kit.toggle("off")
    kit.start()
    assert kit.of_type(BOOT_TYPE) == []
    # When switched on
    result = kit.toggle("on")
    # Then the root boot is sent, before the status notice
    assert [type(e).__name__ for e in result.effects] == ["SendMessage", "Notify"]
    assert len(kit.of_type(BOOT_TYPE)) == 1


def test_r60_off_clears_staging_pending_notices_and_lifecycle() -> None:
    # Given a staged guidance, a pending request and an armed overflow
    kit = _started(tokens=WINDOW - 35_000)
    kit.context()
    kit.overflow_turn()
    kit.tool("wipe_memory")
    # When switched off
    kit.toggle("off")
    # Then all of it is gone
    config = kit.configuration("reset_control")
    assert config["request"] == "none" and config["overflow"] == "idle"
    assert kit.configuration("budget")["guidance"] == "guidance_idle"


def test_r60_argument_completions_are_on_and_off_filtered_by_prefix() -> None:
    assert toggle_completions("") == ("on", "off")
    assert toggle_completions("o") == ("on", "off")
    assert toggle_completions("of") == ("off",)
    assert toggle_completions("x") == ()


# -- R61 -----------------------------------------------------------------------------------------


def test_r61_off_keeps_the_boundary_compaction_cancel_tree_suppression_and_the_meter() -> None:
    # Given a reset window, then pi-context off
    kit = _started()
    kit.wipe()
    kit.build.user("after")
    kit.toggle("off")
    # Then the projection still cuts at the boot, /compact is still cancelled on this branch,
    # branch summaries across the window are still skipped, and the meter answers
    projected = kit.project().value.messages  # type: ignore[union-attr]
    assert projected[0]["customType"] == BOOT_TYPE
    assert isinstance(kit.compact("manual").value, CancelResult)
    assert kit.before_tree(kit.tree.leaf_id).value is not None
    assert kit.tool_payload("get_context_remaining")["remaining_tokens"] is not None


def test_r61_off_stops_boots_reminders_resets_overflow_and_wipe() -> None:
    # Given pi-context off in a root window without a boot, usage past the reserve
    kit = Kit.create(tokens=WINDOW - 1_000)
    kit.toggle("off")
    kit.start()
    kit.build.user("x")
    # Then no boot, no reminder, no automatic or tool reset, no overflow arming, no wipe
    assert kit.of_type(BOOT_TYPE) == []
    assert kit.context().value is None
    assert kit.tool_payload("wipe_memory") == {
        "error": "pi-context is off (/pi-context on to enable)"
    }
    assert kit.turn_end("x").value is None
    kit.overflow_turn()
    assert kit.before_settle().value is None
    kit.wipe()
    assert kit.of_type(MARKER_TYPE) == [] and kit.of_type(GUIDANCE_TYPE) == []


def test_r61_a_fresh_root_branch_gets_native_compact_back_when_off() -> None:
    kit = _started()
    kit.toggle("off")
    assert kit.compact("manual").value is None


# -- R62 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["manual", "threshold", "overflow"])
@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("marker", [True, False])
def test_r62_native_compaction_matrix(reason: str, enabled: bool, marker: bool) -> None:
    # Given a session with or without a marker, on or off
    kit = _started()
    if marker:
        kit.wipe()
    if not enabled:
        kit.toggle("off")
    kit.take_notices()
    # When native compaction asks
    result = kit.compact(reason)
    # Then it is cancelled when enabled or marked; only /compact explains why
    cancels = enabled or marker
    assert isinstance(result.value, CancelResult) is cancels
    if cancels and reason == "manual":
        assert result.notices == (Notify(message=NOTICE_COMPACT_DISABLED, level="warning"),)
    else:
        assert result.notices == ()
    if not cancels:
        assert result.value is None


def test_r62_an_aborted_compaction_signal_is_always_cancelled() -> None:
    kit = _started()
    kit.toggle("off")
    result = kit.compact("manual", signal_aborted=True)
    assert isinstance(result.value, CancelResult) and result.notices[-1:] != (
        Notify(message=NOTICE_COMPACT_DISABLED, level="warning"),
    )


def test_r62_an_inactive_lifecycle_leaves_compaction_alone() -> None:
    kit = _started()
    kit.wipe()
    kit.shutdown()
    assert kit.compact("manual").value is None
    assert kit.compact("manual", signal_aborted=True).value is None


# -- R63 -----------------------------------------------------------------------------------------


def test_r63_a_running_reset_is_announced_at_the_next_turn_start_once() -> None:
    kit = _started()
    kit.tool_turn("wipe_memory")
    window_id = kit.window_id()
    assert kit.turn_start().notices == (_cleared(window_id),)
    assert kit.turn_start().notices == () and kit.settled().notices == ()


def test_r63_agent_settled_announces_a_committed_reset() -> None:
    kit = _started()
    kit.overflow_turn()
    kit.before_settle()
    assert kit.settled().notices == (_cleared(kit.window_id()),)


def test_r63_uncommitted_drafts_are_never_announced() -> None:
    # Given reset drafts the host never committed (e.g. an invalid boundary voided them)
    kit = _started()
    call = kit.build.assistant("c", stop="toolUse", calls=[{"name": "wipe_memory"}])
    kit.tool("wipe_memory")
    kit.build.tool_result("{}", name="wipe_memory")
    kit.runtime.handle(TurnEnd(message=kit.message(call)), kit.ctx)
    # When the next turn starts and the run settles
    assert kit.turn_start().notices == ()
    # Then settlement forgets the id without a notice
    assert kit.settled().notices == ()
    assert kit.runtime.state.pending_resets == ()


@pytest.mark.parametrize("transition", ["start", "tree"])
def test_r63_session_start_and_tree_forget_pending_reset_notices(transition: str) -> None:
    kit = _started()
    kit.tool_turn("wipe_memory")
    if transition == "start":
        kit.start("reload")
    else:
        kit.navigate(kit.tree.leaf_id)
    assert kit.turn_start().notices == ()


def test_r63_requests_repair_startup_and_reload_are_silent() -> None:
    # Given a marker whose boot is missing (repair will append it)
    kit = Kit.create()
    kit.build.marker("pcw:12345678:0a0a0a0a")
    # When startup repairs, a request is made, and the session reloads
    assert kit.start().notices == ()
    assert kit.tool("wipe_memory").notices == ()
    assert kit.start("reload").notices == ()
    assert kit.turn_start().notices == ()


def test_r63_a_runtime_is_per_session_and_shares_no_notice_state() -> None:
    # Given two sessions, one with a pending reset notice
    one, two = _started(), _started()
    one.tool_turn("wipe_memory")
    # Then the other has nothing to announce
    assert two.turn_start().notices == ()
    assert isinstance(one.runtime, LifecycleRuntime) and one.runtime.state != two.runtime.state
