"""The verification world (issue 4 items 3, 4): seed scenarios fire every declared transition
that Pi can reach, exemptions are documented, and the world's extra host behaviour (other
extensions, settings changes, stopping after a hook) does what the scenarios rely on."""

from __future__ import annotations

import functools
from collections import Counter

import pytest

from pictx_fsm.extensions.pi_context.kit.actions import (
    Action,
    AdvanceTo,
    HideBoot,
    Prompt,
    QueueAtSettle,
    Script,
    SetAutomatic,
    Settle,
    VoidNextBoundary,
    action_from_json,
    action_to_json,
    apply_action,
)
from pictx_fsm.extensions.pi_context.kit.kit import KIT
from pictx_fsm.extensions.pi_context.kit.noise import UNKNOWN_TARGET
from pictx_fsm.extensions.pi_context.kit.scenarios import SCENARIOS
from pictx_fsm.extensions.pi_context.kit.world import World, scenario_config
from pictx_fsm.extensions.pi_context.lifecycle import load_lifecycle
from pictx_fsm.extensions.pi_context.texts import MARKER_TYPE, NOTICE_MISSING_BOOT, Profile
from pictx_fsm.session.entries import CustomEntry
from pictx_fsm.testing.coverage import coverage_of, load_exemptions
from pictx_fsm.testing.explore import ExploreOptions, explore
from pictx_fsm.testing.trace import run_actions

PROFILES = tuple(p.value for p in Profile)
WIPE = Script(reply="tools", tools=("wipe_memory",))


@functools.cache
def _seed_counts() -> Counter[str]:
    counts: Counter[str] = Counter()
    for scenario in SCENARIOS:
        for profile in PROFILES:
            run = run_actions(KIT, scenario_config(profile), scenario.actions)
            assert not run.failed, f"{scenario.name} ({profile}): {run.describe_failure()}"
            assert all(run.world.applied), f"{scenario.name} ({profile}): an action did not apply"
            counts.update(run.world.transition_counts())
    return counts


def _markers(world: World) -> list[str]:
    return [
        e.id or "" for e in world.session.entries if getattr(e, "custom_type", None) == MARKER_TYPE
    ]


# -- coverage ----------------------------------------------------------------------------------


def test_seed_scenarios_hold_every_invariant_and_fire_every_transition_not_exempted() -> None:
    # Given every seed scenario run in both profiles (every invariant checked after each action)
    counts = _seed_counts()
    # When the fired transitions are compared with the declared ones
    coverage = coverage_of(load_lifecycle(), counts)
    # Then every declared transition fired or is exempted with a reason
    assert [row.transition for row in coverage.missing] == []
    assert coverage.unknown_exemptions == ()


def test_no_exempted_transition_fires_in_the_seed_scenarios() -> None:
    # Given the exemptions (transitions Pi cannot fire)
    exemptions = load_exemptions(load_lifecycle().directory)
    # Then none of them fired: an exemption that fires is a wrong reason
    assert sorted(t for t in exemptions if _seed_counts().get(t)) == []


def test_every_exemption_gives_a_specific_reason() -> None:
    # Given the exemptions file
    exemptions = load_exemptions(load_lifecycle().directory)
    # Then each reason names the rule or host behaviour it rests on
    vague = [t for t, reason in exemptions.items() if len(reason) < 60 or "R" not in reason]
    assert vague == []


# -- world actions -----------------------------------------------------------------------------


def test_advance_to_stops_right_after_the_named_hook() -> None:
    # Given a prompt in flight
    world = World(scenario_config("0.25.1"))
    world.apply(Prompt(chars=40))
    # When Pi advances to the turn's turn_end
    world.apply(AdvanceTo(step="turn_end"))
    # Then turn_end was the last hook and the run has not ended
    hooks = world.session.log.event_names()
    assert hooks[-1] == "turn_end" and "agent_end" not in hooks
    assert not world.session.is_idle


def test_a_voided_boundary_commits_nothing_and_the_reset_is_never_announced() -> None:
    # Given a later extension armed to void the next boundary, and a wipe_memory turn
    world = World(scenario_config("0.25.1"))
    world.apply(VoidNextBoundary())
    world.apply(WIPE)
    # When the turn runs to the end
    world.apply(Prompt(chars=40))
    world.apply(Settle())
    # Then Pi reported the invalid draft against that extension, and nothing was committed
    errors = [(e.event, e.extension) for e in world.session.log.errors]
    assert errors == [("turn_end", "noise")]
    assert UNKNOWN_TARGET in world.session.log.errors[0].error
    assert _markers(world) == []
    # And pi-context built a reset it never announced
    fired = world.transition_counts()
    assert fired.get("reset_control:notice:quiet:reset_built:1") == 1
    assert not any("memory cleared" in n.message for n in world.session.log.notices)


def test_a_hidden_boot_makes_the_next_request_cancel_with_the_missing_boot_notice() -> None:
    # Given a reset window, and a later extension armed to hide the window's boot
    world = World(scenario_config("0.25.1"))
    for action in (WIPE, Prompt(chars=40), Settle(), HideBoot(), Prompt(chars=40), Settle()):
        world.apply(action)
    (window_id,) = [e.data["windowId"] for e in world.session.entries if isinstance(e, CustomEntry)]
    # When the next prompt is sent
    world.apply(Prompt(chars=40))
    world.apply(Settle())
    # Then pi-context cancels it and says so once (R68)
    notices = [n.message for n in world.session.log.notices]
    assert NOTICE_MISSING_BOOT.format(window_id=window_id) in notices


def test_a_follow_up_queued_at_settle_is_seen_by_pi_context_and_delivered_once() -> None:
    # Given an armed overflow chain and an earlier extension armed to queue at settle
    world = World(scenario_config("0.25.1"))
    for action in (Script(reply="overflow"), Prompt(chars=40), AdvanceTo(step="turn_end")):
        world.apply(action)
    world.apply(QueueAtSettle(chars=40))
    # When the run settles
    world.apply(Settle())
    # Then pi-context kept the chain for the queued turn (R35), which was delivered once
    assert world.transition_counts().get("reset_control:overflow:pending:before_settle:2") == 1
    follow_ups = [d for d in world.session.log.deliveries if d.kind == "follow_up"]
    assert len(follow_ups) == 1


def test_switching_automatic_off_mid_chain_stops_the_recovery() -> None:
    # Given an armed overflow chain
    world = World(scenario_config("0.25.1"))
    for action in (Script(reply="overflow"), Prompt(chars=40), AdvanceTo(step="turn_end")):
        world.apply(action)
    # When automatic resets are switched off before the settle boundary
    world.apply(SetAutomatic(enabled=False))
    world.apply(Settle())
    # Then the settle clears the chain without a reset (R35, R39)
    assert world.transition_counts().get("reset_control:overflow:pending:before_settle:4") == 1
    assert _markers(world) == []


@pytest.mark.parametrize(
    "action", [VoidNextBoundary(), HideBoot(), QueueAtSettle(chars=7), SetAutomatic(enabled=False)]
)
def test_world_actions_round_trip_and_need_the_world(action: Action) -> None:
    # Given a world action / Then its JSON form reads back to the same action
    assert action_from_json(action_to_json(action)) == action
    # And the bare session cannot apply it
    world = World(scenario_config("0.25.1"))
    assert apply_action(world.session, action, serial=0) is False


# -- the time budget ---------------------------------------------------------------------------


def test_the_time_budget_stops_generation_without_a_false_counterexample() -> None:
    # Given a generous example count and a budget far too small for it
    options = ExploreOptions(examples=500, steps=10, time_budget=1.0, scenarios=False)
    # When the exploration runs out of time
    report = explore(KIT, options)
    # Then it stops cleanly: no counterexample, the budget is reported as reached
    assert report.counterexample is None, report.violation
    assert report.budget_exhausted
