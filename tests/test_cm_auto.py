"""Automatic handoff (spec §7, M52–M61)."""

from __future__ import annotations

import pytest
from attrs import evolve
from cm_kit import (
    AUTO_TYPE,
    C,
    P,
    S,
    T,
    bare_tree,
    cm,
    ctx,
    customs,
    fill,
    fired,
    log_records,
    machine,
    notices,
    play,
    shared,
    started,
    wait,
    world,
)
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management import guards
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.policy import AUTO_COOLDOWN_MS, HOUR_MS
from pictx_fsm.extensions.context_management.state import Observation

TRIGGER = "auto_handoff:auto_handoff:armed:reply_end:2"
PREPARE = "auto_handoff:auto_handoff:pending:idle_reached:1"


def _crossing() -> tuple[object, ...]:
    """A covered context, then a reply end past 80 % (scheduled, not yet idle)."""
    return (*fill(2), P(chars=100_000), S)


def _auto_round() -> tuple[object, ...]:
    return (*fill(2), T(chars=100_000))


def test_m52_on_by_default_persisted_and_resumed_without_clearing_limits() -> None:
    w = play(world())
    assert machine(w, "auto_handoff") == "armed"
    # When preparation is cancelled, then auto on resumes it
    play(w, *_crossing(), C(args="cancel"))
    paused = customs(w, AUTO_TYPE)[-1]
    play(w, C(args="auto on"))
    resumed = customs(w, AUTO_TYPE)[-1]
    # Then the pause is cleared but attempts and nextEligibleAt are kept
    assert paused["paused"] and not resumed["paused"]
    assert (
        resumed["attempts"] == paused["attempts"]
        and resumed["nextEligibleAt"] == paused["nextEligibleAt"]
    )
    play(w, C(args="auto off"), shared.Reload())
    assert machine(w, "auto_handoff") == "off"


def _facts(tokens: int | None, *, window: int = 64_000, baseline: int | None = None) -> CmFacts:
    tree = bare_tree()
    state0 = started(tree)
    if baseline is not None:
        state0 = evolve(
            state0,
            baseline=Observation(
                session_id=state0.session_id, model="faux/faux-1", compactions=0, tokens=baseline
            ),
        )
    return CmFacts(
        state=state0,
        event=ev.ReplyEnded(),
        ctx=ctx(tokens=tokens, context_window=window),
        services=ev.CmServices(tree=tree),
    )


def test_m53_unknown_usage_never_triggers() -> None:
    assert not guards.usage_known(_facts(None))
    assert not guards.threshold_reached(_facts(None)) and not guards.forecast_reached(
        _facts(None, baseline=1)
    )


@given(st.integers(0, 64_000), st.integers(0, 64_000))
def test_m54_threshold_at_80_and_forecast_from_65_to_90_percent(tokens: int, before: int) -> None:
    # Given any observation and baseline on a 64 000-token window
    threshold = guards.threshold_reached(_facts(tokens))
    forecast = guards.forecast_reached(_facts(tokens, baseline=before))
    # Then threshold ⇔ ≥ 80 %; forecast ⇔ ≥ 65 % and tokens + growth ≥ 90 %
    assert threshold == (tokens >= 51_200)
    assert forecast == (tokens >= 41_600 and 2 * tokens - before >= 57_600)


def test_m54_forecast_triggers_in_a_session() -> None:
    w = play(world(), *fill(2), T(chars=26_000), P(chars=48_000), S)
    trigger = [r for r in log_records(w) if r["kind"] == "auto_trigger"][-1]
    assert trigger["reason"] == "forecast" and trigger["projectedTokens"] >= 57_600


def test_m55_a_baseline_from_another_model_is_no_baseline() -> None:
    facts = _facts(50_000, baseline=30_000)
    assert facts.growth() == 20_000
    other = evolve(facts, ctx=ctx(tokens=50_000, model="faux/faux-2"))
    assert other.growth() is None and not guards.forecast_reached(other)


def test_m56_no_handoff_inside_the_cooldown_or_past_three_an_hour() -> None:
    facts = _facts(60_000)
    auto = facts.state.auto
    cooling = evolve(
        facts, state=evolve(facts.state, auto=evolve(auto, next_eligible_at=facts.now + 1))
    )
    crowded = evolve(
        facts,
        state=evolve(
            facts.state,
            auto=evolve(auto, attempts=(facts.now - 10, facts.now - 20, facts.now - 30)),
        ),
    )
    aged = evolve(
        facts, state=evolve(facts.state, auto=evolve(auto, attempts=(facts.now - HOUR_MS,) * 3))
    )
    assert guards.cooling(cooling) and guards.cooling(crowded) and not guards.cooling(aged)


def test_m57_scheduling_waits_for_idle_and_a_changed_session_revokes() -> None:
    # Given a scheduled handoff
    w = play(world(), *_crossing())
    assert machine(w, "auto_handoff") == "pending" and TRIGGER in fired(w)
    # When another extension changes the context before idle is reached
    play(w, cm.ForeignMessage(chars=400), cm.Deliver())
    # Then the re-check fails and nothing started
    assert (
        "auto_handoff:auto_handoff:pending:idle_reached:2" in fired(w)
        and machine(w, "auto_handoff") == "armed"
    )


def test_m58_the_pause_is_persisted_before_the_first_request() -> None:
    w = play(world(), *_crossing(), cm.Deliver())
    assert machine(w, "auto_handoff") == "preparing"
    record = next(r for r in w.journal.steps if PREPARE in r.result.fired)
    kinds = [type(e).__name__ for e in record.result.effects]
    assert kinds.index("AppendEntry") < kinds.index("RequestGeneration")
    assert customs(w, AUTO_TYPE)[-1]["paused"] is True
    requests = [r for r in w.generator.requests if r.kind == "handoff_auto"]
    assert 1 <= len(requests) <= 4


def test_m59_user_input_during_preparation_revokes_and_pauses() -> None:
    w = play(world(), *_crossing(), cm.Deliver(), P(chars=200), S)
    assert machine(w, "auto_handoff") == "paused" and not w.journal.switches
    assert customs(w, AUTO_TYPE)[-1]["lastFailure"]["code"] == "attempt_incomplete"


def test_m60_a_verified_target_clears_the_pause_and_starts_the_cooldown() -> None:
    w = play(world(), *_auto_round())
    (switch,) = w.journal.switches
    source = customs(w, AUTO_TYPE, switch.source)[-1]
    target = customs(w, AUTO_TYPE)[-1]
    # Then the source stays paused; the target is unpaused, inherited this attempt, and is
    # next eligible 5 minutes after its verification
    assert source["paused"] is True and target["paused"] is False
    assert target["attempts"] == source["attempts"] and len(target["attempts"]) == 1
    assert target["nextEligibleAt"] - target["attempts"][0] >= AUTO_COOLDOWN_MS
    assert machine(w, "auto_handoff") == "armed"


def test_m60_the_fourth_handoff_within_an_hour_is_refused() -> None:
    rounds = (*_auto_round(), wait(5.5)) * 4
    w = play(world(), *rounds)
    assert len(w.journal.switches) == 3 and fired(w).count(PREPARE) == 3


def test_m61_a_failed_preparation_pauses_without_a_popup() -> None:
    w = play(world(), *_crossing(), cm.Generate(reply="failing"), cm.Drain())
    assert machine(w, "auto_handoff") == "paused"
    assert customs(w, AUTO_TYPE)[-1]["lastFailure"]["code"] == "checkpoint_request_failed"
    # Background notes continue while paused
    play(w, wait(1.1), T(chars=12_000))
    assert fired(w).count("background_notes:background_notes:running:succeeded:1") >= 1


@pytest.mark.parametrize(
    "failure",
    [cm.Generate(reply="failing"), cm.Generate(reply="invalid_shape"), cm.VetoSwitch(on=True)],
)
def test_m61_an_automatic_handoff_failure_changes_only_the_status(failure: object) -> None:
    # Given an automatic handoff whose generation fails, or whose switch is vetoed
    w = play(world(), *_crossing(), failure, cm.Drain())
    # Then it paused with lastFailure set, and no notice popped up
    assert machine(w, "auto_handoff") == "paused" and not w.journal.switches
    assert customs(w, AUTO_TYPE)[-1]["lastFailure"]["code"]
    assert not [n for n in notices(w) if n.startswith("Handoff stopped")]


def test_m61_a_storage_failure_of_an_automatic_handoff_is_announced() -> None:
    # Given an automatic handoff whose new session file cannot be created
    w = play(world(), *_crossing(), cm.FailCreate(on=True), cm.Drain())
    # Then the user is told (a storage failure), and automatic handoff paused
    assert machine(w, "auto_handoff") == "paused"
    assert [n for n in notices(w) if n.startswith("Handoff stopped")]
