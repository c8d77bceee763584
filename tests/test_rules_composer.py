"""Lifecycle §7 through the runtime: the ``turn_end`` composer (R19–R32)."""

from __future__ import annotations

import errno
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import WINDOW, Kit, audits_verify  # noqa: F401

from pictx_fsm.extensions.pi_context.notes import InMemoryNotesSource
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    WARNING_TYPE,
)
from pictx_fsm.host.effects import (
    BoundaryResult,
    CustomDraft,
    CustomMessageDraft,
    HookResult,
    Notify,
    SendMessage,
)
from pictx_fsm.host.settings import StaticSettingsSource

RESERVE = 16_384
GUIDANCE_TOKENS = WINDOW - 35_000  # remaining 35000: inside the reminder band
WARNING_TOKENS = WINDOW - 20_000  # remaining 20000: below the warning line
INCOMING = (CustomDraft(custom_type="other/ext", data={"n": 1}),)
RESET_TAIL = [MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE]


def _started(**kw: Any) -> Kit:
    kit = Kit.create(**kw)
    kit.start()
    kit.build.user("task")
    return kit


def _types(result: HookResult) -> list[str]:
    value = result.value
    assert isinstance(value, BoundaryResult)
    return [d.custom_type for d in value.entries]  # type: ignore[union-attr]


def _continues(result: HookResult) -> bool:
    return isinstance(result.value, BoundaryResult) and result.value.continue_ is True


def _recovers(kit: Kit) -> bool:
    """Whether ``agent_before_settle`` (nothing queued) runs an overflow recovery now."""
    return _continues(kit.before_settle())


# -- R19 -----------------------------------------------------------------------------------------


def test_r19_inactive_lifecycle_returns_undefined_and_keeps_the_request() -> None:
    # Given a pending request, then session_shutdown
    kit = _started()
    kit.tool("wipe_memory")
    kit.shutdown()
    kit.tool("wipe_memory")
    # When a turn ends with incoming drafts from another extension
    result = kit.turn_end("late", incoming=INCOMING)
    # Then the handler returns undefined (the incoming drafts commit untouched), no reset
    assert result.value is None
    assert kit.of_type(MARKER_TYPE) == [] and len(kit.of_type("other/ext")) == 1
    assert kit.configuration("reset_control")["request"] == "explicit"


def test_r19_inactive_before_settle_does_not_recover() -> None:
    # Given an armed overflow, then shutdown before settlement
    kit = _started()
    kit.overflow_turn()
    kit.shutdown()
    # Then agent_before_settle returns undefined
    assert kit.before_settle().value is None


# -- R20 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("turn", ["aborted", "overflow", "error"])
def test_r20_every_turn_end_consumes_the_request_even_without_a_commit(turn: str) -> None:
    # Given a pending wipe request
    kit = _started()
    kit.tool("wipe_memory")
    # When a turn that cannot commit ends (aborted, overflow-like, ordinary error)
    if turn == "aborted":
        kit.turn_end("partial", stop="aborted")
    elif turn == "overflow":
        kit.overflow_turn()
    else:
        kit.turn_end("", stop="error", error="rate limit: try again later")
    # Then the request is gone: after settlement the next ordinary turn does not reset
    assert kit.configuration("reset_control")["request"] == "none"
    kit.settled()
    assert kit.turn_end("next").value is None
    assert kit.of_type(MARKER_TYPE) == []


def test_r20_disabled_turn_end_consumes_a_request_made_while_enabled() -> None:
    # Given a request, then the toggle moved to off without /pi-context off's clear (white
    # box: R60 clears the request, so only a direct configuration reaches this state)
    kit = _started()
    kit.tool("wipe_memory")
    kit.set_toggle("off")
    # When the disabled turn ends
    assert kit.turn_end("x").value is None
    # Then the request was consumed
    assert kit.configuration("reset_control")["request"] == "none"


# -- R21 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["outcome", "stop_reason", "signal"])
def test_r21_each_abort_source_marks_the_turn_aborted(source: str) -> None:
    # Given a pending request and a staged guidance
    kit = _started(tokens=GUIDANCE_TOKENS)
    kit.context()
    kit.tool("wipe_memory")
    # When the turn is aborted by outcome, by the assistant's stopReason, or by the signal
    if source == "outcome":
        result = kit.turn_end("x", outcome="aborted")
    elif source == "stop_reason":
        result = kit.turn_end("x", stop="aborted", outcome="completed")
    else:
        result = kit.turn_end("x", signal_aborted=True)
    # Then nothing is committed: no reset, no reminder
    assert result.value is None and kit.of_type(GUIDANCE_TYPE) == []


def test_r21_a_non_assistant_message_with_stop_reason_aborted_is_not_an_abort() -> None:
    # Given a request and a turn_end whose message is not an assistant message
    from pictx_fsm.host.events import TurnEnd

    kit = _started()
    kit.tool("wipe_memory")
    result = kit.handle(TurnEnd(message={"role": "user", "stopReason": "aborted"}))
    # Then the request commits
    assert _types(result) == RESET_TAIL


# -- R22 -----------------------------------------------------------------------------------------


def test_r22_budget_drafts_follow_incoming_drafts() -> None:
    # Given a staged guidance and incoming drafts of an earlier extension
    kit = _started(tokens=GUIDANCE_TOKENS)
    kit.context()
    # When the turn ends
    result = kit.turn_end("ok", incoming=INCOMING)
    # Then entries = incoming ++ guidance
    assert _types(result) == ["other/ext", GUIDANCE_TYPE] and not _continues(result)


def test_r22_error_turns_keep_budget_drafts() -> None:
    # Given a staged warning and an ordinary provider error
    kit = _started(tokens=WARNING_TOKENS)
    kit.context()
    # When the error turn ends
    result = kit.turn_end("", stop="error", error="rate limit: try again later")
    # Then the warning commits anyway (0.25.x, §20.5)
    assert _types(result) == [WARNING_TYPE]


def test_r22_disabled_turns_drain_and_drop_budget_drafts() -> None:
    # Given a staged guidance, then the toggle moved to off without /pi-context off's clear
    # (white box, as above: R60 itself clears staging)
    kit = _started(tokens=GUIDANCE_TOKENS)
    kit.context()
    kit.set_toggle("off")
    # When the turn ends
    assert kit.turn_end("x").value is None
    # Then the staged guidance was drained: re-enabling does not commit it later
    kit.set_toggle("on")
    assert kit.turn_end("y").value is None
    assert kit.of_type(GUIDANCE_TYPE) == []


# -- R23 -----------------------------------------------------------------------------------------


def test_r23_aborted_turn_never_resets_and_clears_the_overflow_chain() -> None:
    # Given an armed overflow and a pending request
    kit = _started(tokens=WINDOW)
    kit.overflow_turn()
    kit.tool("wipe_memory")
    # When an aborted turn ends with incoming drafts
    result = kit.turn_end("partial", stop="aborted", incoming=INCOMING)
    # Then it returns only the incoming drafts, never continue, and the chain is cleared
    assert _types(result) == ["other/ext"] and not _continues(result)
    assert kit.configuration("reset_control")["overflow"] == "idle"
    assert not _recovers(kit)


def test_r23_aborted_turn_without_drafts_returns_undefined() -> None:
    kit = _started()
    assert kit.turn_end("partial", stop="aborted").value is None


# -- R24 -----------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    pending=st.integers(min_value=0, max_value=2),
    host_pending=st.booleans(),
    enabled=st.booleans(),
    automatic=st.booleans(),
)
def test_r24_overflow_turn_arms_recovery_only_when_nothing_is_queued(
    pending: int, host_pending: bool, enabled: bool, automatic: bool
) -> None:
    # Given any queue state, toggle and compaction.enabled setting
    settings_source = StaticSettingsSource(global_settings={"compaction": {"enabled": automatic}})
    kit = _started(settings=settings_source)
    if not enabled:
        kit.toggle("off")
    kit.tool("wipe_memory")
    # When an overflow-like turn ends
    result = (
        kit.overflow_turn(has_pending_messages=host_pending)
        if not pending
        else kit.turn_end(
            "",
            stop="error",
            error="prompt is too long",
            pending=pending,
            has_pending_messages=host_pending,
        )
    )
    # Then it never resets at turn_end, and arms iff nothing queued, enabled and automatic
    assert result.value is None
    queued = pending > 0 or host_pending
    armed = not queued and enabled and automatic
    assert (kit.configuration("reset_control")["overflow"] == "pending") is armed


# -- R25 -----------------------------------------------------------------------------------------


def test_r25_a_successful_turn_supersedes_an_older_overflow_failure() -> None:
    # Given an overflow recovered once (the chain is spent)
    kit = _started()
    kit.overflow_turn()
    assert _recovers(kit)
    # When the retry succeeds
    kit.turn_start()
    kit.turn_end("fine now")
    # Then the chain is cleared: a later overflow may recover again
    assert kit.configuration("reset_control")["overflow"] == "idle"
    kit.overflow_turn()
    assert _recovers(kit)


# -- R26 -----------------------------------------------------------------------------------------


def test_r26_a_non_overflow_error_leaves_the_armed_chain_untouched() -> None:
    # Given an armed overflow
    kit = _started()
    kit.overflow_turn()
    # When an ordinary error turn ends
    result = kit.turn_end("", stop="error", error="rate limit: slow down")
    # Then no reset and the overflow is still armed
    assert result.value is None
    assert _recovers(kit)


def test_r26_disabled_or_error_turns_never_reset_even_when_due() -> None:
    # Given usage past the reserve
    kit = _started(tokens=WINDOW - 1_000)
    # When an error turn ends, then (switched off) an ordinary turn
    assert kit.turn_end("", stop="error", error="Service unavailable: x").value is None
    kit.toggle("off")
    assert kit.turn_end("x").value is None
    # Then nothing reset
    assert kit.of_type(MARKER_TYPE) == []


# -- R27 -----------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(remaining=st.integers(min_value=-5_000, max_value=60_000), requested=st.booleans())
def test_r27_reset_commits_iff_requested_or_the_reserve_is_reached(
    remaining: int, requested: bool
) -> None:
    # Given usage leaving `remaining` tokens (negative: past the window) and maybe a request
    kit = _started(tokens=WINDOW - remaining)
    if requested:
        kit.tool("wipe_memory")
    # When an ordinary turn ends
    result = kit.turn_end("ok")
    # Then the reset commits iff requested or window − tokens ≤ reserve (unclamped)
    committed = requested or remaining <= RESERVE
    assert _continues(result) is committed
    assert (result.value is not None and _types(result) == RESET_TAIL) is committed


def test_r27_unknown_usage_never_makes_a_reset_due() -> None:
    kit = _started(tokens=None)
    assert kit.turn_end("ok").value is None
    assert kit.turn_end("ok", usage=None).value is None


# -- R28 -----------------------------------------------------------------------------------------


def test_r28_commit_orders_incoming_then_reminders_then_the_reset_tail() -> None:
    # Given incoming drafts, a staged warning and a due reset
    kit = _started(tokens=WINDOW - 10_000)
    kit.context()
    # When the turn ends
    result = kit.turn_end("ok", incoming=INCOMING)
    # Then incoming → warning → marker → boot → continuation, with continue
    assert _types(result) == ["other/ext", WARNING_TYPE, *RESET_TAIL]
    assert _continues(result)


def test_r28_the_new_window_awaits_its_success_notice() -> None:
    # Given a committed reset
    kit = _started()
    kit.tool("wipe_memory")
    kit.turn_end("ok")
    window_id = kit.window_id()
    # Then its id is pending a notice, announced at the next turn_start
    assert kit.runtime.state.pending_resets == (window_id,)
    assert kit.turn_start().notices == (
        Notify(message=f"pi-context: memory cleared · {window_id}", level="info"),
    )


# -- R29 -----------------------------------------------------------------------------------------


def test_r29_reset_construction_failure_warns_and_keeps_the_other_drafts() -> None:
    # Given a notes home that fails with a non-errno error, a staged guidance, a request
    notes = InMemoryNotesSource().failing("project", TypeError("notes exploded"))
    kit = Kit.create(notes=notes, tokens=GUIDANCE_TOKENS)
    kit.build.user("task")
    kit.context()
    kit.tool("wipe_memory")
    # When the turn ends
    result = kit.turn_end("ok", incoming=INCOMING)
    # Then a warning names the error, incoming + guidance drafts survive, no continue, no marker
    assert result.notices == (
        Notify(
            message="pi-context: could not build reset (TypeError: notes exploded).",
            level="warning",
        ),
    )
    assert _types(result) == ["other/ext", GUIDANCE_TYPE] and not _continues(result)
    assert kit.of_type(MARKER_TYPE) == [] and kit.runtime.state.pending_resets == ()


def test_r29_failure_with_nothing_else_to_write_returns_undefined() -> None:
    notes = InMemoryNotesSource().failing("human", ValueError("bad"))
    kit = Kit.create(notes=notes)
    kit.build.user("x")
    kit.tool("wipe_memory")
    result = kit.turn_end("ok")
    assert result.value is None and len(result.notices) == 1


def test_r29_an_errno_notes_failure_does_not_fail_the_reset() -> None:
    # Given a notes home failing with EIO (isolated, R71)
    kit = Kit.create(notes=InMemoryNotesSource().failing("human", errno.EIO))
    kit.build.user("x")
    kit.tool("wipe_memory")
    # Then the reset commits
    assert _types(kit.turn_end("ok")) == RESET_TAIL


# -- R30 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("calls", [1, 2, 5])
def test_r30_several_wipe_calls_in_one_batch_give_one_reset_tail(calls: int) -> None:
    # Given a batch of `calls` wipe_memory calls
    kit = _started()
    result = kit.tool_turn(*["wipe_memory"] * calls)
    # Then exactly one marker/boot/continuation follows, and later calls said "already pending"
    assert _types(result) == RESET_TAIL
    statuses = [json_status(r) for r in kit.results if r.hook == "tool"]
    assert statuses == ["rollover_requested"] + ["rollover_already_pending"] * (calls - 1)


def test_r30_a_later_window_may_request_again() -> None:
    kit = _started()
    kit.tool_turn("wipe_memory")
    kit.turn_start()
    assert _types(kit.tool_turn("wipe_memory")) == RESET_TAIL
    assert len(kit.of_type(MARKER_TYPE)) == 2


def json_status(result: HookResult) -> str:
    return str(result.value.payload["status"])  # type: ignore[union-attr]


# -- R31 -----------------------------------------------------------------------------------------


def test_r31_reminders_staged_for_another_window_are_dropped_at_turn_end() -> None:
    # Given a guidance staged for the root window
    kit = _started(tokens=GUIDANCE_TOKENS)
    kit.context()
    # When the branch moves to a new window before turn_end (a marker written meanwhile)
    kit.build.marker("pcw:12345678:0000aaaa")
    kit.build.boot("pcw:12345678:0000aaaa")
    result = kit.turn_end("ok")
    # Then the staged guidance is dropped, not committed into the new window
    assert result.value is None and kit.of_type(GUIDANCE_TYPE) == []


# -- R32 -----------------------------------------------------------------------------------------


def test_r32_continue_is_the_only_continuation_mechanism_of_a_running_reset() -> None:
    # Given a due reset
    kit = _started(tokens=WINDOW - 1_000)
    # When the turn ends
    result = kit.turn_end("ok")
    # Then the reset asks for one continuation by `continue` and sends nothing itself
    assert _continues(result)
    assert not [e for e in result.effects if isinstance(e, SendMessage)]
    value = result.value
    assert isinstance(value, BoundaryResult)
    assert [d for d in value.entries if isinstance(d, CustomMessageDraft)][-1].custom_type == (
        CONTINUATION_TYPE
    )
