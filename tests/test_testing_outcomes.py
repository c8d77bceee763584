"""The generic kit judges promised outcomes "eventually, within the run": a kit's closing
actions bring every run to rest (checked like any action), then each invariant's
``finish`` says what is still owed — in generated runs, seed scenarios, replay and shrinking
alike, the failure counted at the run's last action so the trace keeps every action. And
boundary values are counted and reported per extension.

The extension is turn-bell (``tests/fixtures/extensions/turn_bell``), built outside the
package, with one promised outcome added here: once three turns are done the bell has rung.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.testing import actions
from pictx_fsm.testing.boundaries import DELTAS, TALLY, hit, summary
from pictx_fsm.testing.explore import ExploreOptions, explore
from pictx_fsm.testing.host_world import HostConfig, HostWorld
from pictx_fsm.testing.invariants import Invariant, InvariantSuite, Violation
from pictx_fsm.testing.trace import record_trace, run_actions

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "extensions" / "turn_bell"))
import turn_bell

TURN = (actions.Script(reply="text"), actions.Prompt(chars=40), actions.Settle())


class BellRingsOnceDue(Invariant[HostWorld]):
    """A promised outcome: when the run is at rest, a runtime that finished three turns has
    rung its bell."""

    name = "bell_rings_once_due"
    rule = "TB2"
    kind = "outcome"

    def check(self, world: HostWorld) -> list[Violation]:
        return []

    def finish(self, world: HostWorld) -> list[Violation]:
        owed = []
        for log in world.audits:
            records = log.records
            effects = [e for r in records for e in r["result"]["effects"]]
            rung = any(e.get("message") == turn_bell.BELL for e in effects)
            if len(records) >= turn_bell.TURNS and not rung:
                owed.append(self.violation(f"{len(records)} turns done and no bell"))
        return owed


class SilentBellKit(turn_bell.TurnBellKit):
    """turn-bell with the outcome checked, runs ending settled, and a fault that never rings."""

    name: ClassVar[str] = "silent-bell"

    @property
    def faults(self) -> dict[str, Any]:
        silent = turn_bell.EarlyBell(name="silent-bell", caught_by=BellRingsOnceDue.name)
        return {**turn_bell.FAULTS, "silent-bell": silent}

    def world(self, config: HostConfig) -> HostWorld:
        threshold = {"silent-bell": 99, "early-bell": 1}.get(config.fault or "", turn_bell.TURNS)
        return HostWorld(
            config, lambda world: [turn_bell.BellExtension(world=world, threshold=threshold)]
        )

    def suite(self, config: HostConfig) -> InvariantSuite[HostWorld]:
        return InvariantSuite([turn_bell.RingsAfterThreeTurns, BellRingsOnceDue])

    def closing(self, world: HostWorld) -> Sequence[Any]:
        self.closed += 1
        return (actions.Settle(),)

    def boundary_names(self) -> tuple[str, ...]:
        return ("turns",)

    def tally(self, world: HostWorld, tallies: dict[str, Counter[str]]) -> None:
        key = hit("turns", len(world.audits[0].records) if world.audits else 0, turn_bell.TURNS)
        tallies.setdefault(TALLY, Counter()).update([key] if key else [])

    closed = 0


KIT = SilentBellKit()


def test_an_outcome_still_owed_at_rest_fails_the_run_at_its_last_action() -> None:
    # Given the bell that never rings, and three turns of which the last is left mid-flight
    config = HostConfig(fault="silent-bell")
    story = [*TURN, *TURN, actions.Script(reply="text"), actions.Prompt(chars=40)]
    # When the actions are run (the closing settle finishes the third turn)
    run = run_actions(KIT, config, story)
    # Then the owed outcome is reported, counted at the last action
    assert run.invariant == "bell_rings_once_due"
    assert run.failed_at == len(story) - 1
    # And the trace keeps every action, and replays to the same failure
    trace, again = record_trace(KIT, config, story)
    assert len(trace.actions) == len(story)
    assert trace.failure is not None and trace.failure["invariant"] == "bell_rings_once_due"
    assert again.describe_failure() == run.describe_failure()


def test_an_outcome_delivered_in_time_holds() -> None:
    # Given the bell as built, and the same story / When it runs to rest
    run = run_actions(KIT, HostConfig(), [*TURN, *TURN, actions.Script(reply="text")])
    # Then the third turn (finished by the closing settle) rang the bell: nothing owed
    assert not run.failed, run.describe_failure()


def test_a_run_cut_short_owes_nothing_it_had_no_turn_to_do() -> None:
    # Given the silent bell, and two turns only / When the run ends
    run = run_actions(KIT, HostConfig(fault="silent-bell"), list(TURN * 2))
    # Then nothing was owed yet
    assert not run.failed


def test_the_exploration_brings_every_run_to_rest_and_finds_an_owed_outcome() -> None:
    # Given the silent bell (no seed scenario: generated runs alone)
    before = KIT.closed
    # When verify's exploration runs
    report = explore(KIT, ExploreOptions(fault="silent-bell", scenarios=False, examples=200))
    # Then every generated run was closed, and the owed outcome found with a short trace
    assert KIT.closed > before
    assert report.counterexample is not None
    assert report.counterexample.failure is not None
    assert report.counterexample.failure["invariant"] == "bell_rings_once_due"


def test_a_violation_in_a_closing_action_is_reported_like_any_action() -> None:
    # Given the early bell (a safety fault), and a turn left mid-flight
    story = [actions.Script(reply="text"), actions.Prompt(chars=40)]
    config = HostConfig(fault="early-bell")
    # When turn-bell's own kit runs it (no closing: the turn never ends) / Then nothing rang
    assert not run_actions(turn_bell.KIT, config, story).failed
    # But when the closing settle ends the turn, the bell rings at the first turn: reported
    # like any action's violation, at the run's last action
    run = run_actions(KIT, config, story)
    assert run.invariant == "rings_after_three_turns" and run.failed_at == len(story) - 1


# -- boundary values ---------------------------------------------------------------------------


@given(line=st.integers(-(10**6), 10**6), offset=st.integers(-5, 5))
def test_a_value_within_one_of_a_line_is_a_hit_named_by_its_offset(line: int, offset: int) -> None:
    key = hit("reserve", line + offset, line)
    assert (key == f"reserve:{offset}") if offset in DELTAS else key is None


def test_the_report_counts_each_lines_three_values_met() -> None:
    lines = summary(("reserve", "warning"), {"reserve:-1": 2, "reserve:0": 1, "warning:1": 4})
    assert lines[0].startswith("boundaries     3/6 boundary values met")
    assert lines[1:] == ["  reserve −1 =", "  warning +1"]
    assert summary((), {"x:0": 1}) == []


def test_verify_reports_the_boundaries_of_each_extension(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a kit that names its lines / When the exploration's report is printed
    from pictx_fsm.cli.verify import _summarise

    report = explore(KIT, ExploreOptions(examples=30))

    class Args:
        out = "verify-out"

    _summarise(Args(), report)  # type: ignore[arg-type]
    printed = capsys.readouterr().out
    # Then its boundary line is there, counting what decisions met
    assert "boundary values met" in printed and "  turns " in printed
