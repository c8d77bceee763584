"""``pictx-fsm verify`` on pi-context-management: every planted fault is caught by the default
command with a short counterexample that ``pictx-fsm replay`` reproduces, and a fault that is
not caught fails the run; without a fault the seed scenarios hold every invariant and fire
every declared transition not exempted; the time budget bounds generation and shrinking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pictx_fsm.cli import main
from pictx_fsm.extensions.context_management.kit.faults import FAULTS
from pictx_fsm.extensions.context_management.kit.kit import KIT
from pictx_fsm.extensions.context_management.kit.world import WorldConfig
from pictx_fsm.testing.explore import ExploreOptions, explore
from pictx_fsm.testing.trace import record_trace, run_actions

WITH_PI_CONTEXT = ("pi-context",)


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(name, marks=pytest.mark.slow) if name == "fourth-handoff" else name
        for name in sorted(FAULTS)
    ],
)
def test_every_planted_fault_is_caught_and_replayed(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a planted fault (the default command: every extension, the default budget)
    args = ["verify", "--fault", fault, "--no-contracts", "--quiet", "--out", str(tmp_path)]
    # When verify explores / Then it fails with a short counterexample from the expected
    # invariant
    assert main(args) == 1
    assert "planted fault not detected" not in capsys.readouterr().out
    trace = tmp_path / f"counterexample-context-management-{fault}.json"
    document = json.loads(trace.read_text())
    assert document["failure"]["invariant"] == FAULTS[fault].caught_by
    assert len(document["actions"]) <= 20
    # And replay reproduces it
    assert main(["replay", str(trace)]) == 1
    assert "reproduces the recorded failure" in capsys.readouterr().out


@pytest.mark.parametrize("with_pi_context", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_the_seed_scenarios_hold_every_invariant(with_pi_context: bool) -> None:
    # Given the unfaulted machines, alone and after pi-context
    companion = "pi-context" if with_pi_context else "none"
    report = explore(KIT, ExploreOptions(examples=0, variants={"companion": (companion,)}))
    # Then no invariant broke
    assert not report.failed, report.violation
    if not with_pi_context:
        # and alone every declared transition fired or is exempted with a reason
        assert report.coverage is not None
        coverage = report.coverage.coverage
        assert coverage.complete, [r.transition for r in coverage.missing]


def test_replay_of_a_clean_trace_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pictx_fsm.extensions.context_management.kit.scenarios import SCENARIOS

    trace, run = record_trace(KIT, WorldConfig(), SCENARIOS[0].actions)
    path = trace.save(tmp_path / "clean.json")
    assert not run.failed and main(["replay", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["first_difference"] is None


def test_both_extensions_on_one_host_keep_their_invariants() -> None:
    # Given pi-context loaded first, then pi-context-management, as a user installs both
    from pictx_fsm.extensions.context_management.kit.scenarios import SCENARIOS

    chosen = [
        s
        for s in SCENARIOS
        if s.name.startswith(("manual handoff: success", "compaction: a checkpoint"))
    ]
    for scenario in chosen:
        # When a handoff and a series of compactions run / Then both suites hold
        run = run_actions(KIT, WorldConfig(companions=WITH_PI_CONTEXT), scenario.actions)
        assert not run.failed, f"{scenario.name}: {run.describe_failure()}"
        assert run.world.companions[0].runtimes and run.world.transition_counts()


def test_a_planted_fault_that_is_not_caught_fails_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a fault no one-action run can reach (a fourth handoff needs three before it)
    args = ["verify", "--fault", "fourth-handoff", "--no-scenarios", "--examples", "1"]
    args += ["--steps", "1", "--no-contracts", "--quiet", "--out", str(tmp_path)]
    # When verify explores / Then the miss is a failure, not a pass
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "planted fault not detected: fourth-handoff (hourly_limit should have caught it)" in out
    assert "result         FAILED" in out


@pytest.mark.parametrize(
    ("fault", "extension"),
    [("fourth-handoff", "pi-context"), ("skip-dedupe", "context-management")],
)
def test_a_fault_planted_in_an_extension_not_explored_is_a_usage_error(
    fault: str, extension: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a fault of one extension and --extension naming only the other
    code = main(["verify", "--fault", fault, "--extension", extension, "--no-contracts"])
    # Then verify refuses in one line (exit 2) instead of a run that cannot catch it
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1 and fault in captured.err


def test_without_examples_the_time_budget_bounds_the_generated_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given the context-management exploration with no --examples and a short budget
    args = ["verify", "--extension", "context-management", "--no-scenarios"]
    args += ["--time-budget", "2", "--no-contracts", "--quiet", "--out", str(tmp_path)]
    # When it runs / Then it generated runs until the budget was spent
    code = main(args)
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("examples"))
    assert "0 scenario runs + 0 generated" not in line and "(time budget reached)" in line
    assert code in (0, 1)


class _TickClock:
    """One second per read: a budget becomes a count of clock reads."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_shrinking_a_scenario_failure_stops_at_the_time_budget() -> None:
    # Given a fault the seed scenarios catch late, and a budget spent before they reach it
    options = ExploreOptions(
        fault="fourth-handoff", examples=0, variants={"companion": ("none",)}, time_budget=5.0
    )
    # When the exploration runs on a clock that advances a second per read
    report = explore(KIT, options, clock=_TickClock())
    # Then it still reports the failure, shrinking was cut short by the budget, and the
    # counterexample it reports fails as recorded
    assert report.failed and report.shrink_cut
    assert report.counterexample is not None and report.counterexample.failure is not None
    assert report.counterexample.failure["invariant"] == "hourly_limit"


def test_m44_a_compaction_whose_writes_all_fail_ends_in_storage_failed_without_looping() -> None:
    # Given both extensions loaded, a disk that refuses every write, and a compaction whose
    # generation fails and falls back to Pi's own (the 5-action story the default verify found:
    # each write of the failure step failed again, and the runtime retried the failure step
    # until Python's recursion limit)
    from pictx_fsm.extensions.context_management.kit import actions as cm
    from pictx_fsm.testing import actions as shared

    story = (
        cm.FailDisk(on=True),
        shared.Prompt(chars=30_000),
        shared.Settle(),
        cm.Generate(reply="stubborn"),
        shared.Compact(),
    )
    # When it runs with every invariant checked
    run = run_actions(KIT, WorldConfig(companions=WITH_PI_CONTEXT), story)
    # Then the extension never throws into the host, the state says the disk failed (Q11),
    # and the failure was handled once per failed step, not retried
    assert not run.failed, run.describe_failure()
    runtime = run.world.runtimes[-1]
    assert runtime.state.storage_failed
    failures = [e for e, _ in runtime.results if type(e).__name__ == "StorageFailed"]
    assert 1 <= len(failures) <= 2
