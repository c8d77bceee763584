"""The exhaustive check finds planted faults no later than verify's sampling: bounded by the
length of verify's counterexample, breadth first over every alphabet of the kit, it finds a
shortest counterexample that ``replay`` reproduces.

A handful of representative faults, each of another kind (an omission judged when the run
ends, a boundary slip met by an exact line, a fault reached only in an alphabet's own
configuration); every fault is ``bench/check_faults.py``'s table in ``docs/mutation.md``."""

from __future__ import annotations

from pathlib import Path

import pytest

from pictx_fsm.testing.check import CheckOptions, check
from pictx_fsm.testing.explore import ExploreOptions, explore
from pictx_fsm.testing.kit import kit_named
from pictx_fsm.testing.trace import load_trace, run_actions


@pytest.mark.parametrize(
    ("extension", "fault"),
    [
        # an omission: the handoff never asks the host to switch (judged at rest)
        ("context-management", "switch-never-requested"),
        # a boundary slip: usage exactly at 80 % of the window (the `due` alphabet's aim)
        ("context-management", "threshold-strict"),
        # a boundary slip of pi-context: a window exactly at the reserve (the `lines` alphabet)
        ("pi-context", "reserve-off-by-one"),
        # reached only in its alphabet's configuration: a resumed pi-context 0.25 session
        ("notesoup", "checkpoint-assumed"),
    ],
)
def test_check_bounded_by_verifys_counterexample_finds_one_no_longer_that_replays(
    extension: str, fault: str, tmp_path: Path
) -> None:
    # Given a planted fault and the counterexample verify's exploration shrinks it to
    kit = kit_named(extension)
    sampled = explore(kit, ExploreOptions(seed=0, fault=fault, time_budget=45))
    assert sampled.counterexample is not None
    bound = len(sampled.counterexample.actions)
    # When check explores every alphabet of the kit to that depth
    report = check(kit, CheckOptions(depth=bound, fault=fault))
    # Then it finds a counterexample no longer than verify's
    found = report.counterexample
    assert found is not None and found.failure is not None, fault
    assert len(found.actions) <= bound
    # And the trace, written and read back as `pictx-fsm replay` reads it, reproduces it
    written = load_trace(found.save(tmp_path / "trace.json"))
    replayed = run_actions(written.kit, written.config, written.actions)
    assert replayed.describe_failure() == found.failure["message"] == report.violation


def test_check_judges_what_a_run_ending_in_a_state_still_owes() -> None:
    # Given the handoff that never asks the host to switch: its flow is owed an end, which
    # only a run brought to rest shows (the state after `/ctx-memory handoff` breaks nothing)
    kit = kit_named("context-management")
    options = CheckOptions(depth=1, fault="switch-never-requested", alphabets=("handoff",))
    # When check explores one action
    report = check(kit, options)
    # Then the single command is the counterexample, caught by the promised outcome
    found = report.counterexample
    assert found is not None and found.failure is not None
    assert [a.KIND for a in found.actions] == ["ctx_memory"]
    assert found.failure["invariant"] == "operations_end"


def test_an_alphabets_configuration_is_the_one_its_search_explores() -> None:
    # Given notesoup's `legacy` alphabet, declared with a resumed pi-context 0.25 session
    kit = kit_named("notesoup")
    settings = CheckOptions().settings(kit)
    # When check plans its searches
    searches = dict(
        (name, config) for config, name in kit.check_searches(settings, ("legacy", "memory"))
    )
    # Then only that alphabet's search resumes the legacy session
    assert searches["legacy"].legacy is not None
    assert searches["memory"].legacy is None


def test_the_hourly_alphabet_holds_a_fourth_handoff_within_an_hour_in_seven_actions() -> None:
    # Given pi-context-management's `hourly` alphabet, explored with the provider's usage as
    # pi-ai's faux model reports it: a turn crossing 80 %, and a cooldown passing
    kit = kit_named("context-management")
    options = CheckOptions(fault="fourth-handoff", alphabets=("hourly",))
    [(config, _)] = kit.check_searches(options.settings(kit), ("hourly",))
    assert config.usage == "faux"
    turn, cool = kit.alphabets()["hourly"]
    # When four turns cross 80 %, the cooldown passing between them
    run = run_actions(kit, config, [turn, cool] * 3 + [turn])
    # Then the fourth automatic handoff within the hour breaks the hourly limit at the last
    # action: seven actions, against the eighteen verify's seed scenario shrinks to
    assert run.invariant == "hourly_limit" and run.failed_at == 6
