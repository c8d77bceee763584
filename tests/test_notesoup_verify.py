"""``pictx-fsm verify --extension notesoup``: full transition coverage (or a reasoned
exemption), the migration invariants, and every planted fault caught by the invariant it
names."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from pictx_fsm.cli import main
from pictx_fsm.extensions.notesoup.kit.faults import FAULTS
from pictx_fsm.extensions.notesoup.kit.invariants import (
    MIGRATION_INVARIANTS,
    InvariantSuite,
    RequestedResetCommits,
)
from pictx_fsm.extensions.notesoup.kit.kit import KIT
from pictx_fsm.extensions.notesoup.kit.world import NotesoupWorld, scenario_config
from pictx_fsm.extensions.notesoup.texts import MARKER_TYPE, STATUS_REQUESTED
from pictx_fsm.testing import actions as host_actions
from pictx_fsm.testing.check import CheckOptions, check
from pictx_fsm.testing.coverage import load_exemptions


def _caught(fault: str) -> set[str]:
    """The invariants the seed scenarios see violated with ``fault`` planted."""
    found: set[str] = set()
    for scenario in KIT.scenarios:
        config = scenario_config(0, fault)
        if scenario.world is not None:
            config = scenario.world(config)
        world = NotesoupWorld(config)
        suite = InvariantSuite()
        for action in scenario.actions:
            world.apply(action)
            violations = suite.check(world)
            if violations:
                found.add(violations[0].invariant)
                break
    return found


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_planted_fault_is_caught_by_the_invariant_it_names(fault: str) -> None:
    assert FAULTS[fault].caught_by in _caught(fault)


def test_the_migration_invariants_are_checked() -> None:
    assert set(MIGRATION_INVARIANTS) <= set(KIT.invariant_names)
    assert {"legacy_history_stays_erased", "session_file_audits"} <= set(MIGRATION_INVARIANTS)


def test_the_seed_scenarios_alone_fire_every_transition_not_exempted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # When verify runs the seed scenarios (no time for generated runs)
    code = main(
        ["verify", "--extension", "notesoup", "--time-budget", "1", "--no-contracts", "--quiet"]
    )
    out = capsys.readouterr().out
    # Then every invariant held and no declared transition is missing
    assert code == 0, out
    assert "all held" in out
    assert re.search(r"transitions +\d+/281 declared transitions fired; .* 0 missing", out)


def test_every_exemption_names_the_rule_test_that_decides_it() -> None:
    exemptions = load_exemptions(KIT.machines().directory)
    assert exemptions
    tests = (Path(__file__).parent / "test_notesoup_reducer.py").read_text(encoding="utf-8")
    for transition, reason in exemptions.items():
        named = re.search(r"tested by tests/test_notesoup_reducer\.py::(test_\w+)", reason)
        assert named is not None, transition
        assert f"def {named.group(1)}(" in tests, (transition, named.group(1))


def _requested_reply(seq: int) -> dict[str, object]:
    """A ``clear_memory`` tool record whose reply is ``rollover_requested`` (S25.6)."""
    text = f'{{"status":"{STATUS_REQUESTED}"}}'
    return {"hook": "tool", "seq": seq, "result": {"value": {"content": [{"text": text}]}}}


def _at_rest(runtimes: int, *, idle: bool = True) -> SimpleNamespace:
    return SimpleNamespace(audits=[()] * runtimes, session=SimpleNamespace(is_idle=idle))


def test_s30_a_requested_reset_still_owed_when_the_run_rests_is_a_violation() -> None:
    # Given the live runtime answered clear_memory with rollover_requested
    invariant = RequestedResetCommits()
    assert invariant.check_record(_requested_reply(1), 0) == []
    # When the world is brought to rest without that batch's turn_end
    found = invariant.finish(_at_rest(1))
    # Then the promise is reported unkept
    assert [v.invariant for v in found] == ["requested_reset_commits"]


def test_s30_a_requested_reset_judged_at_its_turn_end_owes_nothing_at_rest() -> None:
    # Given the request met its batch's turn_end, which committed the reset
    invariant = RequestedResetCommits()
    invariant.check_record(_requested_reply(1), 0)
    marker = {"effect": "append_entry", "customType": MARKER_TYPE, "data": {"windowId": "w1"}}
    turn_end = {"hook": "turn_end", "seq": 2, "event": {}, "result": {"effects": [marker]}}
    assert invariant.check_record(turn_end, 0) == []
    # Then nothing is owed at rest, nor while a run is still under way
    assert invariant.finish(_at_rest(1)) == []
    invariant.check_record(_requested_reply(3), 0)
    assert invariant.finish(_at_rest(1, idle=False)) == []


def test_every_notesoup_run_is_closed_at_rest_before_its_outcomes_are_judged() -> None:
    # Given a notesoup world mid-run (a prompt sent, its run not yet settled)
    world = KIT.world(scenario_config(0, None))
    world.apply(host_actions.Prompt(chars=40))
    assert not world.session.is_idle
    # When the kit closes the run
    for action in KIT.closing(world):
        world.apply(action)
    # Then Pi is at rest and the suite's end-of-run judgement finds nothing owed
    assert world.session.is_idle
    assert InvariantSuite().finish(world) == []


def test_check_explores_notesoup_canonically_with_every_invariant_holding() -> None:
    # Given notesoup's kit and the exhaustive check to depth 2 over its memory alphabet
    report = check(KIT, CheckOptions(depth=2, alphabets=("memory",)))
    [search] = report.searches
    # Then it completes with every state canonical (its world and invariants give a state
    # and a residual) and merges the states different action orders reach
    assert search.complete and report.counterexample is None
    assert search.apart == 0
    assert search.states < 1 + len(search.actions) + len(search.actions) ** 2
