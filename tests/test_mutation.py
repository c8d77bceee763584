"""Mutation evidence (issue 4, item 7): every planted fault makes ``pictx-fsm verify`` exit 1
with a short counterexample, and ``pictx-fsm replay`` reproduces it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pictx_fsm.cli import main
from pictx_fsm.extensions.pi_context.kit.faults import FAULTS

SHORT = 12
"""A counterexample longer than this many host actions would not be "short"."""


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_verify_catches_the_planted_fault_and_replay_reproduces_it(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the lifecycle with one deliberate fault
    out = tmp_path / "out"
    # When verify explores it (no contracts: they do not depend on the fault)
    code = main(
        [
            "verify",
            "--fault",
            fault,
            "--no-contracts",
            "--quiet",
            "--examples",
            "200",
            "--time-budget",
            "30",
            "--out",
            str(out),
        ]
    )
    report = capsys.readouterr().out
    # Then it fails with a short counterexample caught by the intended invariant
    assert code == 1, report
    trace_path = out / f"counterexample-pi-context-{fault}.json"
    trace = json.loads(trace_path.read_text())
    assert len(trace["actions"]) <= SHORT
    assert trace["failure"]["invariant"] == FAULTS[fault].caught_by
    # And replaying the written trace reproduces the same failure
    assert main(["replay", str(trace_path)]) == 1
    replayed = capsys.readouterr().out
    assert "reproduces the recorded failure" in replayed
    assert "all" in replayed and "match the recorded ones" in replayed


def test_verify_without_a_fault_holds_every_invariant(capsys: pytest.CaptureFixture[str]) -> None:
    # Given the lifecycle as declared / When a short exploration runs
    code = main(["verify", "--no-contracts", "--quiet", "--examples", "20", "--time-budget", "15"])
    report = capsys.readouterr().out
    # Then no invariant is violated (coverage is judged by the full default run)
    assert "all held" in report, report
    assert code in (0, 1)


FOUND_BY_LONG_EXPLORATION = ("split-tool-pair-behind-summary", "repair-during-commit")
"""The faults that bring back the two bugs long explorations found (issue 14)."""


@pytest.mark.slow
@pytest.mark.parametrize("fault", FOUND_BY_LONG_EXPLORATION)
def test_generated_runs_alone_find_the_bugs_long_explorations_found(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given one of the bugs a 33-minute exploration found, planted back, and verify's
    # generated phase alone (no seed scenario keeps it), seed 0, a bounded number of runs
    # (the count, not the clock, bounds it, so the outcome does not depend on the machine)
    args = ["--no-scenarios", "--examples", "3000", "--time-budget", "3600"]
    code = main(
        ["verify", "--fault", fault, "--no-contracts", "--quiet", *args, "--out", str(tmp_path)]
    )
    report = capsys.readouterr().out
    # Then swarm runs aimed at boundaries find it, and the intended invariant reports it
    assert code == 1, report
    trace = json.loads((tmp_path / f"counterexample-pi-context-{fault}.json").read_text())
    assert trace["failure"]["invariant"] == FAULTS[fault].caught_by


ISSUE_27 = {
    "pi-context": (
        "second-wipe-cancels",
        "guidance-never-committed",
        "repair-skips-continuation",
        "reserve-off-by-one",
        "warning-line-off-by-one",
        "boot-names-previous-window",
        "remaining-counts-the-runway",
    ),
    "context-management": (
        "switch-never-requested",
        "timeout-never-ends-the-operation",
        "threshold-strict",
        "cooldown-ends-late",
        "status-quota-ignores-use",
        "read-skips-a-byte",
    ),
}
"""Issue 27's planted faults: per extension at least two omissions, two boundary slips and
two content slips (in that order)."""


@pytest.mark.parametrize(
    ("extension", "fault"), [(kit, fault) for kit, faults in ISSUE_27.items() for fault in faults]
)
def test_issue_27_faults_are_caught_by_the_default_exploration_with_a_second_seed(
    extension: str, fault: str
) -> None:
    # Given an omission, a boundary slip or a content slip planted, and another seed than
    # the default command's (seed 0: test_verify_catches_* and tests/test_cm_verify.py)
    from pictx_fsm.testing.explore import ExploreOptions, explore
    from pictx_fsm.testing.kit import kit_named

    kit = kit_named(extension)
    # When the default exploration runs (seed scenarios, then generated runs, 45 s)
    report = explore(kit, ExploreOptions(fault=fault, seed=1))
    # Then it is caught, by the invariant the fault names, with a short counterexample
    trace = report.counterexample
    assert trace is not None and trace.failure is not None, fault
    assert trace.failure["invariant"] == kit.faults[fault].caught_by
    assert len(trace.actions) <= SHORT


def test_issue_27_faults_cover_the_three_classes_in_each_extension() -> None:
    from pictx_fsm.testing.kit import kit_named

    for extension, faults in ISSUE_27.items():
        assert len(faults) >= 6 and set(faults) <= set(kit_named(extension).faults)
