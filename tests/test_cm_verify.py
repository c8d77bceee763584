"""``pictx-fsm verify`` on pi-context-management: every planted fault is caught with a
short counterexample that ``pictx-fsm replay`` reproduces; without a fault the seed
scenarios hold every invariant and fire every declared transition not exempted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pictx_fsm.cli import main
from pictx_fsm.testing.cm.explore import CmExploreOptions, explore_cm
from pictx_fsm.testing.cm.faults import CM_FAULTS


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(name, marks=pytest.mark.slow) if name == "fourth-handoff" else name
        for name in sorted(CM_FAULTS)
    ],
)
def test_every_planted_fault_is_caught_and_replayed(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a planted fault
    args = ["verify", "--extension", "context-management", "--fault", fault]
    args += ["--examples", "0", "--no-contracts", "--quiet", "--out", str(tmp_path)]
    # When verify explores / Then it fails with a short counterexample from the expected
    # invariant
    assert main(args) == 1
    trace = tmp_path / f"counterexample-cm-{fault}.json"
    document = json.loads(trace.read_text())
    assert document["failure"]["invariant"] == CM_FAULTS[fault].caught_by
    assert len(document["actions"]) <= 20
    capsys.readouterr()
    # And replay reproduces it
    assert main(["replay", str(trace)]) == 1
    assert "reproduces the recorded failure" in capsys.readouterr().out


@pytest.mark.parametrize("with_pi_context", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_the_seed_scenarios_hold_every_invariant(with_pi_context: bool) -> None:
    # Given the unfaulted machines, alone and after pi-context
    report = explore_cm(CmExploreOptions(examples=0, settings=(with_pi_context,)))
    # Then no invariant broke
    assert not report.failed, report.violation
    if not with_pi_context:
        # and alone every declared transition fired or is exempted with a reason
        coverage = report.coverage
        assert coverage is not None and coverage.complete, [r.transition for r in coverage.missing]


def test_replay_of_a_clean_trace_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pictx_fsm.testing.cm.scenarios import SCENARIOS
    from pictx_fsm.testing.cm.trace import record_cm_trace
    from pictx_fsm.testing.cm.world import CmWorldConfig

    trace, run = record_cm_trace(CmWorldConfig(), SCENARIOS[0].actions)
    path = trace.save(tmp_path / "clean.json")
    assert not run.failed and main(["replay", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["first_difference"] is None


def test_both_extensions_on_one_host_keep_their_invariants() -> None:
    # Given pi-context loaded first, then pi-context-management, as a user installs both
    from pictx_fsm.testing.cm.scenarios import SCENARIOS
    from pictx_fsm.testing.cm.trace import run_cm_actions
    from pictx_fsm.testing.cm.world import CmWorldConfig

    chosen = [
        s
        for s in SCENARIOS
        if s.name.startswith(("manual handoff: success", "compaction: a checkpoint"))
    ]
    for scenario in chosen:
        # When a handoff and a series of compactions run / Then both suites hold
        run = run_cm_actions(CmWorldConfig(pi_context=True), scenario.actions)
        assert not run.failed, f"{scenario.name}: {run.describe_failure()}"
        assert run.world.lifecycle_runtimes and run.world.transition_counts()
