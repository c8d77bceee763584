"""notesoup's reducer (S21–S36, S46, S54–S58, S63–S69) on the runtime, hook by hook.

The rule-test host raises hooks in any order, so these tests also decide the transitions
Pi's event order never reaches on the model session — each one listed, with the reason, in
``models/notesoup/coverage-exemptions.toml``. Every test names the declared transition it
fires, read from the audit record of the hook (the same record ``pictx-fsm verify`` counts).
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from notesoup_kit import NotesoupKit, audits_verify  # noqa: F401

from pictx_fsm.extensions.notesoup.lifecycle.facts import RESET_CONTROL
from pictx_fsm.extensions.notesoup.lifecycle.state import Request
from pictx_fsm.extensions.notesoup.texts import BOOT_TYPE, MARKER_TYPE
from pictx_fsm.host.effects import BoundaryResult, HookResult
from pictx_fsm.host.events import (
    ContextWithSystem,
    SessionBeforeCompact,
    ToolCall,
    TurnEnd,
)

BUDGET = "notesoup_budget"
PROJECTION = "notesoup_projection"
TOGGLE = "notesoup_toggle"
WARNING_TOKENS = 175_000
"""Remaining 25 000 of 200 000: under the warning line (reserve 16 384 + 16 384), above the
hard reserve."""
GUIDANCE_TOKENS = 162_000
"""Remaining 38 000: under the reminder line (reserve + 24 576), above the warning line."""
HARD_RESERVE_TOKENS = 190_000
OVERFLOW_ERROR = "Prompt too long: context exceeds maximum context length"


def _started(**kw: Any) -> NotesoupKit:
    kit = NotesoupKit.create(**kw)
    kit.start()
    kit.build.user("task")
    return kit


def fired(kit: NotesoupKit) -> set[str]:
    """The declared transitions the last hook fired (its audit record)."""
    record = kit.audit.records[-1]
    return {t["id"] for step in record["steps"] for t in step["transitions"]}


def rc(tail: str) -> str:
    return f"{RESET_CONTROL}:{tail}"


def _turn_end(kit: NotesoupKit, *, stop: str = "stop", **ctx: Any) -> HookResult:
    if stop == "overflow":
        return kit.turn_end("", stop="error", error=OVERFLOW_ERROR, **ctx)
    if stop == "error":
        return kit.turn_end("", stop="error", error="rate limit", **ctx)
    return kit.turn_end("answer", stop=stop, **ctx)


def _off_without_clear(kit: NotesoupKit) -> None:
    """``enabled`` false with everything else as it is (``/notesoup off`` would also forget
    the request, S14)."""
    kit.force(TOGGLE, notesoup_toggle="off")


def _arm(kit: NotesoupKit, request: str) -> None:
    """Reach a request phase the way Pi does."""
    if request == "close_out_budget":
        kit.set_tokens(WARNING_TOKENS)
        kit.context()
    elif request == "close_out_manual":
        kit.clear_memory(idle=False)
    elif request == "tool_requested":
        kit.tool("clear_memory")
    elif request == "stop_pending":
        kit.clear_memory(idle=False)
        kit.set_tokens(HARD_RESERVE_TOKENS)
        _turn_end(kit)
    assert kit.request == request, kit.request


REQUESTS = ("close_out_budget", "close_out_manual", "tool_requested", "stop_pending")


# -- S28: an inactive lifecycle ------------------------------------------------------------------


@pytest.mark.parametrize("phase", ("none", *REQUESTS))
def test_s28_after_shutdown_turn_end_and_settlement_answer_nothing_and_keep_the_request(
    phase: str,
) -> None:
    # Given a request phase, then session_shutdown (forced back: shutdown clears it first)
    kit = _started()
    if phase != "none":
        _arm(kit, phase)
    kit.shutdown()
    kit.force(RESET_CONTROL, request=phase)
    # When a turn ends and the run settles
    ended = _turn_end(kit)
    assert rc(f"request:{phase}:turn_end:1") in fired(kit)
    settled = kit.before_settle()
    # Then both answer undefined and the request is kept
    assert ended.value is None and settled.value is None
    if phase != "none":
        assert rc(f"request:{phase}:before_settle:1") in fired(kit)
    assert kit.request == phase


@pytest.mark.parametrize("chain", ("idle", "pending", "pending_spent", "spent"))
def test_s28_after_shutdown_the_overflow_chain_is_kept(chain: str) -> None:
    kit = _started()
    kit.shutdown()
    kit.force(RESET_CONTROL, overflow=chain)
    _turn_end(kit, stop="overflow")
    assert rc(f"overflow:{chain}:turn_end:1") in fired(kit)
    if chain != "idle":
        kit.before_settle()
        assert rc(f"overflow:{chain}:before_settle:1") in fired(kit)
    assert kit.overflow == chain


def test_s28_start_reactivates_and_a_second_shutdown_keeps_inactive() -> None:
    kit = _started()
    kit.shutdown()
    kit.shutdown()
    assert rc("activity:inactive:shutdown:1") in fired(kit)
    kit.start()
    assert rc("activity:inactive:start:1") in fired(kit)
    assert kit.region(RESET_CONTROL, "activity") == "active"


@pytest.mark.parametrize("staged", ("guidance", "warning"))
def test_s28_after_shutdown_staged_reminders_stay_staged(staged: str) -> None:
    kit = _started()
    kit.shutdown()
    kit.force(BUDGET, **{staged: f"{staged}_staged"})
    _turn_end(kit)
    assert f"{BUDGET}:{staged}:{staged}_staged:turn_end:1" in fired(kit)


@pytest.mark.parametrize("toggle", ("on", "off"))
def test_s20_s28_after_shutdown_compaction_is_left_alone(toggle: str) -> None:
    kit = _started()
    kit.shutdown()
    kit.force(TOGGLE, notesoup_toggle=toggle)
    result = kit.handle(SessionBeforeCompact(reason="manual"))
    assert f"{TOGGLE}:notesoup_toggle:{toggle}:compact:1" in fired(kit)
    assert result.value is None


@pytest.mark.parametrize("toggle", ("on", "off"))
def test_s20_an_aborted_compaction_signal_is_cancelled(toggle: str) -> None:
    kit = _started()
    kit.force(TOGGLE, notesoup_toggle=toggle)
    result = kit.handle(SessionBeforeCompact(reason="manual", signal_aborted=True))
    assert f"{TOGGLE}:notesoup_toggle:{toggle}:compact:2" in fired(kit)
    assert result.value is not None and kit.notice_texts() == []


# -- S14: off forgets the request ----------------------------------------------------------------


def test_s14_off_forgets_every_request() -> None:
    for request in REQUESTS:
        kit = _started()
        _arm(kit, request)
        kit.notesoup("off")
        assert kit.request == "none", request


@pytest.mark.parametrize("phase", REQUESTS)
def test_s12_s14_a_request_under_a_disabled_lifecycle_reports_disabled(phase: str) -> None:
    # Given a request phase, then enabled false without off's clear
    kit = _started()
    _arm(kit, phase)
    _off_without_clear(kit)
    # When the model calls clear_memory and the user runs /clear-memory
    kit.tool("clear_memory")
    assert rc(f"request:{phase}:tool_request:1") in fired(kit)
    kit.clear_memory(idle=False)
    assert rc(f"request:{phase}:manual_close_out:1") in fired(kit)
    # Then the request is kept and nothing is armed
    assert kit.request == phase


@pytest.mark.parametrize(
    ("chain", "index"), (("idle", 4), ("pending", 4), ("pending_spent", 4), ("spent", 4))
)
def test_s25_an_overflow_under_a_manual_close_out_while_disabled_never_arms(
    chain: str, index: int
) -> None:
    kit = _started()
    _arm(kit, "close_out_manual")
    kit.force(RESET_CONTROL, overflow=chain)
    _off_without_clear(kit)
    _turn_end(kit, stop="overflow")
    assert rc(f"overflow:{chain}:turn_end:{index}") in fired(kit)
    assert kit.overflow in ("idle", "spent")


@pytest.mark.parametrize(("outcome", "index"), (("error", 6), ("completed", 7)))
def test_s26_a_manual_overflow_while_disabled_never_commits(outcome: str, index: int) -> None:
    kit = _started()
    _arm(kit, "close_out_manual")
    kit.force(RESET_CONTROL, overflow="pending")
    _off_without_clear(kit)
    result = kit.before_settle(outcome)
    assert rc(f"request:close_out_manual:before_settle:{index}") in fired(kit)
    assert result.value is None and kit.of_type(MARKER_TYPE) == []


# -- S21: a request from another window ----------------------------------------------------------


def _another_window(kit: NotesoupKit) -> None:
    """The pending request belongs to another window than the current one (S21): a request
    made before a window change this runtime did not decide."""
    state = kit.runtime.state
    assert state.request is not None
    other = attrs.evolve(state.request, window_id="pcw:12345678:0ther000")
    kit.runtime.state = state.evolve(request=other)


@pytest.mark.parametrize("phase", ("close_out_budget", "close_out_manual", "tool_requested"))
def test_s21_a_request_from_another_window_counts_as_none(phase: str) -> None:
    # Given a request armed in the root window, then the window changes under it
    kit = _started()
    _arm(kit, phase)
    _another_window(kit)
    # When the model asks again, the budget re-arms, the user asks, a turn ends
    kit.tool("clear_memory")
    assert rc(f"request:{phase}:tool_request:3") in fired(kit)
    assert kit.request == "tool_requested"


@pytest.mark.parametrize("phase", ("close_out_budget", "close_out_manual", "tool_requested"))
def test_s21_the_budget_rearms_over_another_windows_request(phase: str) -> None:
    kit = _started()
    _arm(kit, phase)
    _another_window(kit)
    kit.force(BUDGET, warning="warning_idle")
    kit.set_tokens(WARNING_TOKENS)
    kit.context()
    assert rc(f"request:{phase}:budget_close_out:2") in fired(kit)
    assert kit.request == "close_out_budget"


@pytest.mark.parametrize(
    ("phase", "index"),
    (("close_out_budget", 5), ("close_out_manual", 5), ("tool_requested", 5)),
)
def test_s21_s15_a_manual_close_out_replaces_another_windows_request(
    phase: str, index: int
) -> None:
    kit = _started()
    _arm(kit, phase)
    _another_window(kit)
    kit.clear_memory(idle=False)
    assert rc(f"request:{phase}:manual_close_out:{index}") in fired(kit)
    assert kit.request == "close_out_manual"


@pytest.mark.parametrize(
    ("phase", "tokens", "index"),
    (
        ("close_out_budget", 1_000, 5),
        ("close_out_manual", HARD_RESERVE_TOKENS, 7),
        ("tool_requested", HARD_RESERVE_TOKENS, 4),
        ("tool_requested", 1_000, 5),
    ),
)
def test_s21_s25_turn_end_treats_another_windows_request_as_none(
    phase: str, tokens: int, index: int
) -> None:
    # Given another window's request; the hard reserve due or not
    kit = _started()
    _arm(kit, phase)
    _another_window(kit)
    kit.set_tokens(tokens)
    # When the turn ends
    result = _turn_end(kit)
    # Then only the hard reserve commits (a plain reset: no stop, no prompt)
    assert rc(f"request:{phase}:turn_end:{index}") in fired(kit)
    assert kit.request == "none"
    committed = isinstance(result.value, BoundaryResult) and any(
        getattr(d, "custom_type", None) == MARKER_TYPE for d in result.value.entries
    )
    assert committed == (tokens == HARD_RESERVE_TOKENS)


def test_s21_settlement_drops_another_windows_manual_close_out() -> None:
    kit = _started()
    _arm(kit, "close_out_manual")
    _another_window(kit)
    result = kit.before_settle()
    assert rc("request:close_out_manual:before_settle:2") in fired(kit)
    assert result.value is None and kit.request == "none"


# -- S25.6: a tool request never outlives its batch -----------------------------------------------


def test_s25_a_tool_request_is_decided_by_its_batch_turn_end() -> None:
    kit = _started()
    kit.tool_turn("clear_memory")
    assert rc("request:tool_requested:turn_end:3") in fired(kit)
    assert kit.request == "none"


@pytest.mark.parametrize(
    ("hook", "index"),
    (
        ("provider_request", 1),
        ("budget_close_out", 1),
        ("agent_end", 2),
        ("before_settle", 2),
        ("settled", 1),
        ("clear", 1),
    ),
)
def test_s25_s27_a_tool_request_past_its_turn_end_is_kept_until_settlement(
    hook: str, index: int
) -> None:
    # Given a tool request whose turn_end never came (a host that skips it)
    kit = _started()
    _arm(kit, "tool_requested")
    # When a later hook arrives
    if hook == "provider_request":
        kit.handle(ContextWithSystem(messages=kit.projection()))
    elif hook == "budget_close_out":
        kit.set_tokens(WARNING_TOKENS)
        kit.context()
    elif hook == "agent_end":
        kit.agent_end()
    elif hook == "before_settle":
        kit.before_settle()
    elif hook == "settled":
        kit.settled()
    else:
        kit.navigate(kit.tree.leaf_id)
    # Then it fires the request's own transition
    assert rc(f"request:tool_requested:{hook}:{index}") in fired(kit)


def test_s27_an_aborted_agent_end_drops_a_tool_request() -> None:
    kit = _started()
    _arm(kit, "tool_requested")
    kit.agent_end(signal_aborted=True)
    assert rc("request:tool_requested:agent_end:1") in fired(kit)
    assert kit.request == "none"


# -- S26.1, S27: aborts, settlement and clear ----------------------------------------------------


@pytest.mark.parametrize("chain", ("pending", "pending_spent", "spent"))
def test_s26_an_aborted_settlement_ends_the_overflow_chain(chain: str) -> None:
    kit = _started()
    kit.force(RESET_CONTROL, overflow=chain)
    result = kit.before_settle("aborted")
    assert rc(f"overflow:{chain}:before_settle:2") in fired(kit)
    assert result.value is None and kit.overflow == "idle"


def test_s26_an_aborted_settlement_drops_the_stop_latch() -> None:
    kit = _started()
    _arm(kit, "stop_pending")
    result = kit.before_settle("aborted")
    assert rc("request:stop_pending:before_settle:2") in fired(kit)
    assert result.value is None and kit.request == "none"


@pytest.mark.parametrize("phase", ("close_out_budget", "stop_pending"))
@pytest.mark.parametrize("hook", ("settled", "clear"))
def test_s27_settlement_and_clear_drop_any_request(phase: str, hook: str) -> None:
    kit = _started()
    _arm(kit, phase)
    if hook == "settled":
        kit.settled()
    else:
        kit.navigate(kit.tree.leaf_id)
    assert rc(f"request:{phase}:{hook}:1") in fired(kit)
    assert kit.request == "none"


@pytest.mark.parametrize("hook", ("settled", "clear"))
def test_s27_settlement_and_clear_end_a_spent_overflow_chain(hook: str) -> None:
    kit = _started()
    kit.force(RESET_CONTROL, overflow="pending_spent")
    if hook == "settled":
        kit.settled()
    else:
        kit.navigate(kit.tree.leaf_id)
    assert rc(f"overflow:pending_spent:{hook}:1") in fired(kit)
    assert kit.overflow == "idle"


def test_s26_a_failed_run_discards_a_manual_close_out_at_settlement() -> None:
    # Given a manual close-out armed after the last turn (a host with no steering turn)
    kit = _started()
    _arm(kit, "close_out_manual")
    # When the run settles failed
    result = kit.before_settle("error")
    # Then nothing commits and the close-out is gone
    assert rc("request:close_out_manual:before_settle:8") in fired(kit)
    assert result.value is None and kit.request == "none"


def test_s26_s65_a_manual_close_out_ends_a_spent_chain_at_settlement() -> None:
    kit = _started()
    _arm(kit, "close_out_manual")
    kit.force(RESET_CONTROL, overflow="spent")
    kit.before_settle()
    assert rc("overflow:spent:before_settle:4") in fired(kit)
    assert kit.overflow == "idle" and kit.request == "none"
    assert len(kit.of_type(MARKER_TYPE)) == 1


# -- S56: staging never meets settlement ---------------------------------------------------------


@pytest.mark.parametrize("staged", ("guidance", "warning"))
@pytest.mark.parametrize("hook", ("settled", "clear"))
def test_s56_settlement_and_clear_drop_a_staged_reminder(staged: str, hook: str) -> None:
    # Given a reminder staged at a provider request whose turn_end never came
    kit = _started()
    kit.set_tokens(WARNING_TOKENS if staged == "warning" else GUIDANCE_TOKENS)
    kit.context()
    assert kit.region(BUDGET, staged) == f"{staged}_staged"
    # When the run settles or the session is cleared
    if hook == "settled":
        kit.settled()
    else:
        kit.navigate(kit.tree.leaf_id)
    # Then the staging is dropped; nothing was persisted
    assert f"{BUDGET}:{staged}:{staged}_staged:{hook}:1" in fired(kit)
    assert kit.region(BUDGET, staged) == f"{staged}_idle"


def _committed_warning(kit: NotesoupKit) -> None:
    kit.set_tokens(WARNING_TOKENS)
    kit.context()
    _turn_end(kit)
    assert kit.region(BUDGET, "warning") == "warning_committed"


@pytest.mark.parametrize(
    ("tokens", "enabled", "index"),
    ((WARNING_TOKENS, False, 1), (WARNING_TOKENS, True, 3), (1_000, True, 4)),
)
def test_s54_s59_a_committed_warning_awaiting_its_notice_at_a_request(
    tokens: int, enabled: bool, index: int
) -> None:
    # Given a warning committed at turn_end, its notice not yet given (no turn_start)
    kit = _started()
    _committed_warning(kit)
    if not enabled:
        _off_without_clear(kit)
    # When another provider request comes
    kit.set_tokens(tokens)
    kit.context()
    # Then the warning is not staged again; under the line the budget close-out re-arms
    transitions = fired(kit)
    assert f"{BUDGET}:warning:warning_committed:context:{index}" in transitions
    assert kit.region(BUDGET, "warning") == "warning_committed"
    rearmed = rc("request:close_out_budget:budget_close_out:1") in transitions
    assert rearmed == (index == 3)


@pytest.mark.parametrize("hook", ("turn_end", "clear"))
def test_s57_a_committed_warning_waits_for_turn_start_or_settlement(hook: str) -> None:
    kit = _started()
    _committed_warning(kit)
    if hook == "turn_end":
        _turn_end(kit)
        assert f"{BUDGET}:warning:warning_committed:turn_end:1" in fired(kit)
        assert kit.region(BUDGET, "warning") == "warning_committed"
    else:
        kit.navigate(kit.tree.leaf_id)
        assert f"{BUDGET}:warning:warning_committed:clear:1" in fired(kit)
        assert kit.region(BUDGET, "warning") == "warning_idle"


# -- S46: pending reset notices at start, tree, shutdown -------------------------------------------


def _reset_built(kit: NotesoupKit) -> None:
    kit.tool_turn("clear_memory")
    assert kit.region(RESET_CONTROL, "notice") == "awaiting"


@pytest.mark.parametrize(
    ("hook", "enabled", "transition"),
    (
        ("start", True, "start:1"),
        ("start", False, "start:2"),
        ("tree", True, "tree:1"),
        ("shutdown", True, "shutdown:1"),
    ),
)
def test_s46_start_tree_and_shutdown_forget_pending_reset_notices(
    hook: str, enabled: bool, transition: str
) -> None:
    # Given a reset whose notice waits for the next turn_start
    kit = _started()
    _reset_built(kit)
    if not enabled:
        _off_without_clear(kit)
    # When the session starts again, is navigated or shuts down
    if hook == "start":
        kit.start()
    elif hook == "tree":
        kit.navigate(kit.tree.leaf_id)
    else:
        kit.shutdown()
    # Then the notice is forgotten (session_start only while enabled) and never given
    assert rc(f"notice:awaiting:{transition}") in fired(kit)
    kit.turn_start()
    assert kit.notice_texts() == (
        [] if enabled else [f"notesoup: memory cleared · {kit.window_id()}"]
    )


# -- S79: the missing-boot notice ----------------------------------------------------------------


def test_s79_a_start_rewatches_and_a_root_window_projects_while_announced() -> None:
    # Given a reset window whose boot Pi's projection does not show: announced
    kit = _started()
    _reset_built(kit)
    boot = kit.of_type(BOOT_TYPE)[-1]
    kit.build.edit(boot.id)
    kit.handle(ContextWithSystem(messages=kit.projection()))
    assert kit.region(PROJECTION, "notesoup_projection") == "announced"
    # When the leaf goes back to the root window without a tree event (an embedder)
    kit.tree.navigate(kit.of_type(BOOT_TYPE)[0].id)
    kit.handle(ContextWithSystem(messages=kit.projection()))
    # Then the root window projects; a session start watches again
    assert f"{PROJECTION}:notesoup_projection:announced:project:1" in fired(kit)
    kit.start()
    assert f"{PROJECTION}:notesoup_projection:announced:start:1" in fired(kit)


# -- Q6: the refused window's recovery ------------------------------------------------------------


def _refused(kit: NotesoupKit) -> None:
    _reset_built(kit)
    kit.turn_start()
    boot = kit.of_type(BOOT_TYPE)[-1]
    kit.build.edit(boot.id)


def test_q6_clear_memory_in_a_refused_window_never_splits_a_tool_pair() -> None:
    # Given a refused window whose leaf is an assistant's tool call without its result
    kit = _started()
    _refused(kit)
    kit.build.assistant("calling", stop="toolUse", calls=[{"name": "echo", "arguments": {}}])
    before = len(kit.tree.entries)
    # When the user runs /clear-memory idle
    kit.clear_memory()
    # Then nothing is written and the user is told why
    assert rc("request:none:manual_close_out:2") in fired(kit)
    assert len(kit.tree.entries) == before
    assert kit.notice_texts()[-1].startswith("notesoup:")


@pytest.mark.parametrize(
    ("phase", "pair_open", "index"),
    (
        ("close_out_budget", True, 2),
        ("close_out_budget", False, 3),
        ("close_out_manual", True, 3),
        ("close_out_manual", False, 4),
        ("tool_requested", True, 2),
        ("tool_requested", False, 3),
    ),
)
def test_q6_s27_a_refused_windows_recovery_replaces_any_request(
    phase: str, pair_open: bool, index: int
) -> None:
    # Given a refused window and a request left over from another window (a host that
    # skipped settlement)
    kit = _started()
    _refused(kit)
    kit.force(RESET_CONTROL, request=phase)
    kit.runtime.state = kit.runtime.state.evolve(request=Request(window_id="pcw:12345678:root"))
    if pair_open:
        kit.build.assistant("calling", stop="toolUse", calls=[{"name": "echo", "arguments": {}}])
    markers = len(kit.of_type(MARKER_TYPE))
    # When the user runs /clear-memory idle
    kit.clear_memory()
    # Then the request is gone; the recovery writes a fresh window unless a pair is open
    assert rc(f"request:{phase}:manual_close_out:{index}") in fired(kit)
    assert kit.request == "none"
    assert len(kit.of_type(MARKER_TYPE)) == markers + (0 if pair_open else 1)


def test_s24_tool_calls_in_one_batch_dedupe() -> None:
    kit = _started()
    kit.tool("clear_memory")
    kit.handle(ToolCall(name="clear_memory"))
    assert rc("request:tool_requested:tool_request:2") in fired(kit)
    result = kit.handle(
        TurnEnd(message=kit.message(kit.build.assistant("done")), outcome="completed")
    )
    assert isinstance(result.value, BoundaryResult)
    assert sum(getattr(d, "custom_type", None) == MARKER_TYPE for d in result.value.entries) == 1
