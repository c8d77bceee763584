"""pi-context's promised outcomes and exact contents (issue 27): each invariant reports a
planted bug of its class — an omission, a boundary slip, a content slip — and holds on the
lifecycle as built, and the oracle it judges by agrees with the spec's arithmetic."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context import policy
from pictx_fsm.extensions.pi_context.kit.actions import (
    AimAt,
    Compact,
    Navigate,
    Prompt,
    Script,
    Settle,
)
from pictx_fsm.extensions.pi_context.kit.boundary import hits
from pictx_fsm.extensions.pi_context.kit.faults import FAULTS, Fault
from pictx_fsm.extensions.pi_context.kit.invariants import INVARIANT_TYPES, InvariantSuite
from pictx_fsm.extensions.pi_context.kit.oracle import lines_of, stage_of
from pictx_fsm.extensions.pi_context.kit.world import World, scenario_config
from pictx_fsm.extensions.pi_context.texts import MARKER_TYPE, NOTICE_COMPACT_DISABLED
from pictx_fsm.host.effects import Notify
from pictx_fsm.session.entries import CustomEntry
from pictx_fsm.testing.invariants import Violation

TURN = (Prompt(chars=60), Settle())
WIPE_TWICE = Script(reply="tools", tools=("wipe_memory", "wipe_memory"))


def _run(
    story: Sequence[Any], *, fault: str | None = None, planted: Fault | None = None
) -> tuple[World, list[Violation]]:
    """The story in the seed-scenario world, every invariant checked after each action, then
    brought to rest (a settle) and what is still owed."""
    config = scenario_config("0.25.1", fault=fault)
    world = World(config, lifecycle=planted.lifecycle() if planted else None)
    suite = InvariantSuite()
    found: list[Violation] = []
    for action in (*story, Settle()):
        world.apply(action)
        found += suite.check(world)
    return world, found + suite.finish(world)


def _names(found: list[Violation]) -> set[str]:
    return {v.invariant for v in found}


def _markers(world: World) -> int:
    return sum(
        1
        for e in world.session.entries
        if isinstance(e, CustomEntry) and e.custom_type == MARKER_TYPE
    )


# -- promised outcomes ---------------------------------------------------------------------------


def test_r30_a_second_wipe_memory_that_cancels_the_request_leaves_a_reset_owed() -> None:
    story = (*TURN, WIPE_TWICE, *TURN)
    # Given a second wipe_memory in one batch / When the batch reaches its turn_end
    world, found = _run(story)
    # Then the lifecycle as built resets once, and every invariant holds
    assert found == [] and _markers(world) == 1
    # But when the second call cancels the request, the reset owed is reported
    _, found = _run(story, fault="second-wipe-cancels")
    assert "resets_commit" in _names(found)


@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_r50_a_turn_ending_on_the_reserve_line_resets_iff_at_or_below_it(offset: int) -> None:
    # Given a reply that leaves the reserve + offset tokens at its turn's end
    story = (*TURN, AimAt(line="reserve", offset=offset, at="reply"), *TURN)
    # When it runs / Then it resets exactly when remaining ≤ reserve, every invariant holding
    world, found = _run(story)
    assert found == [] and _markers(world) == (1 if offset <= 0 else 0)
    # And with the test one off (< for ≤) the reset owed exactly on the line is reported
    _, found = _run(story, fault="reserve-off-by-one")
    assert ("resets_commit" in _names(found)) == (offset == 0)


def test_r52_a_request_exactly_on_the_warning_line_carries_the_final_warning() -> None:
    story = (*TURN, AimAt(line="warning", offset=0, at="prompt"))
    _, found = _run(story)
    assert found == []
    _, found = _run(story, fault="warning-line-off-by-one")
    assert "reminders_when_due" in _names(found)


def test_r53_guidance_staged_on_the_reminder_line_is_committed_at_its_turn_end() -> None:
    story = (*TURN, AimAt(line="reminder", offset=0, at="prompt"))
    world, found = _run(story)
    assert found == []
    assert any(
        getattr(e, "custom_type", "") == "pi-context/guidance" for e in world.session.entries
    )
    _, found = _run(story, fault="guidance-never-committed")
    assert "reminders_when_due" in _names(found)


def _no_recovery(facts: Any, turn: Any) -> Any:
    return turn


def test_r35_an_armed_overflow_chain_gets_its_one_recovery() -> None:
    story = (*TURN, Script(reply="overflow"), Prompt(chars=60))
    world, found = _run(story)
    assert found == [] and _markers(world) == 1
    # Given a recovery that silently does nothing / Then the chain's owed recovery is reported
    planted = Fault(
        name="no-recovery",
        description="before_settle recovers nothing",
        caught_by="overflow_recovered",
        actions={"recover_overflow": _no_recovery},
    )
    _, found = _run(story, planted=planted)
    assert "overflow_recovered" in _names(found)


def test_d4_a_bare_tail_after_tree_gets_boot_and_continuation() -> None:
    story = (*TURN, Script(reply="tools", tools=("wipe_memory",)), *TURN)
    story += (Navigate(index=9, summarize=True),)
    _, found = _run(story)
    assert found == []
    _, found = _run(story, fault="repair-skips-continuation")
    assert "repair_when_due" in _names(found)


# -- exact contents -----------------------------------------------------------------------------


def test_r15_a_reset_boot_names_its_own_window_as_the_current_one() -> None:
    story = (*TURN, Script(reply="tools", tools=("wipe_memory",)), *TURN)
    assert _run(story)[1] == []
    _, found = _run(story, fault="boot-names-previous-window")
    assert "exact_reset_entries" in _names(found)


def test_r17_get_context_remaining_answers_remaining_minus_the_warning_line() -> None:
    story = (*TURN, Script(reply="tools", tools=("get_context_remaining",)), *TURN)
    world, found = _run(story)
    assert found == []
    answers = [
        e.message.raw["content"][0]["text"]
        for e in world.session.entries
        if getattr(e, "message", None) is not None and e.message.role == "toolResult"
    ]
    assert json.loads(answers[0])["remaining_tokens"] >= 0
    _, found = _run(story, fault="remaining-counts-the-runway")
    assert "exact_lifecycle_answers" in _names(found)


def _compact_notice_as_info(facts: Any, turn: Any) -> Any:
    return turn.emit(Notify(message=NOTICE_COMPACT_DISABLED, level="info"))


def test_r62_the_compact_notice_is_a_warning() -> None:
    story = (Prompt(chars=8_000), Settle(), Compact())
    assert _run(story)[1] == []
    planted = Fault(
        name="compact-notice-as-info",
        description="the /compact refusal at level info",
        caught_by="exact_notices",
        actions={"report_compact_disabled": _compact_notice_as_info},
    )
    assert "exact_notices" in _names(_run(story, planted=planted)[1])


def test_r78_history_windows_counts_the_items_of_each_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pictx_fsm.extensions.pi_context.tools import history_tools

    story = (*TURN, Script(reply="tools", tools=("history_windows",)), *TURN)
    assert _run(story)[1] == []
    # Given a history that forgets each window's last item
    windows = history_tools._windows

    def fewer(context: Any) -> Any:
        import attrs

        return tuple(attrs.evolve(w, items=w.items[:-1]) for w in windows(context))

    monkeypatch.setattr(history_tools, "_windows", fewer)
    assert "exact_tool_answers" in _names(_run(story)[1])


def test_every_new_invariant_is_reached_by_a_planted_fault_or_a_test_above() -> None:
    # The promised outcomes and exact contents judge the fault classes of issue 27
    new = {t.name for t in INVARIANT_TYPES[-8:]}
    assert new == {
        "resets_commit",
        "reminders_when_due",
        "overflow_recovered",
        "repair_when_due",
        "exact_reset_entries",
        "exact_notices",
        "exact_lifecycle_answers",
        "exact_tool_answers",
    }
    kinds = {t.name: t.kind for t in INVARIANT_TYPES}
    assert {n for n in new if kinds[n] == "outcome"} == {
        "resets_commit",
        "reminders_when_due",
        "overflow_recovered",
        "repair_when_due",
    }
    assert {f.caught_by for f in FAULTS.values()} >= new - {
        "overflow_recovered",
        "exact_notices",
        "exact_tool_answers",
    }


# -- the oracle and the boundary values ---------------------------------------------------------


@given(
    reserve=st.integers(0, 40_000),
    margin=st.integers(1, 40_000),
    remaining=st.one_of(st.none(), st.integers(0, 100_000)),
)
def test_r44_r52_the_oracle_stages_as_the_policy_does(
    reserve: int, margin: int, remaining: int | None
) -> None:
    lines = lines_of(reserve, margin)
    thresholds = policy.derive_thresholds(reserve, margin)
    assert (lines.reserve, lines.reminder, lines.warning) == (
        thresholds.reserve,
        thresholds.reminder,
        thresholds.warning,
    )
    stage = policy.reminder_stage(remaining, thresholds)
    assert stage_of(remaining, lines) == (None if stage == "none" else stage)


@pytest.mark.parametrize("at", ["reply", "prompt"])
@pytest.mark.parametrize("line", ["reserve", "reminder", "warning"])
def test_an_aim_lands_the_next_decision_on_its_line(line: str, at: str) -> None:
    # Given a session past its first request (and, for the second aim, after a reset)
    world = World(scenario_config("0.25.1"))
    for action in (*TURN, AimAt(line=line, offset=1, at=at), Prompt(chars=40), Settle()):
        world.apply(action)
    for action in (Script(reply="tools", tools=("wipe_memory",)), *TURN):
        world.apply(action)
    for action in (AimAt(line=line, offset=-1, at=at), Prompt(chars=40), Settle()):
        world.apply(action)
    # Then a decision met the line at +1 in the root window and at −1 in the reset window
    met = hits(r for log in world.audits for r in log.records)
    assert met[f"{line}:1"] and met[f"{line}:-1"], met
