"""How ``pictx-fsm verify`` explores (issues 11 and 14): strategies built once, swarm runs
aimed at boundaries, coverage judged per profile, a time budget that bounds shrinking, an
audit-chain invariant that reads each record once, and one-line errors for bad options."""

from __future__ import annotations

import gc
import itertools
from pathlib import Path
from typing import Any

import pytest

from pictx_fsm.audit import log as audit
from pictx_fsm.cli import main
from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.extensions.pi_context.kit import invariants
from pictx_fsm.extensions.pi_context.kit.actions import (
    AdvanceTo,
    Fork,
    Navigate,
    Prompt,
    Script,
    Settle,
    anchor_of,
)
from pictx_fsm.extensions.pi_context.kit.faults import FAULTS
from pictx_fsm.extensions.pi_context.kit.invariants import INVARIANT_TYPES, InvariantSuite
from pictx_fsm.extensions.pi_context.kit.kit import KIT
from pictx_fsm.extensions.pi_context.kit.scenarios import SCENARIOS
from pictx_fsm.extensions.pi_context.kit.strategies import (
    GROUPS,
    host_actions,
    swarm_moves,
    world_configs,
)
from pictx_fsm.extensions.pi_context.kit.world import World, scenario_config
from pictx_fsm.extensions.pi_context.lifecycle import load_lifecycle
from pictx_fsm.testing import actions
from pictx_fsm.testing import explore as explore_module
from pictx_fsm.testing.coverage import EXEMPTIONS_FILE, coverage_of, load_exemptions
from pictx_fsm.testing.explore import (
    SHRINK_SHARE,
    Budget,
    ExploreOptions,
    explore,
)

REPAIR_BOOT_AND_CONTINUATION = "boot_repair:boot_repair:standby:repair:9"
REPAIR_CONTINUATION = "boot_repair:boot_repair:standby:repair:11"


def _verify(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["verify", "--no-contracts", "--quiet", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- strategies ----------------------------------------------------------------------------------


def test_strategies_are_built_once_and_reused() -> None:
    # Given the strategies verify draws from / When they are asked for twice
    # Then the same objects come back (Hypothesis validates a strategy once, on first draw)
    assert host_actions() is host_actions()
    assert world_configs() is world_configs()
    swarm = tuple(GROUPS)
    assert swarm_moves(swarm, True) is swarm_moves(swarm, True)
    assert swarm_moves(swarm, True) is not swarm_moves(swarm, False)


def test_a_navigation_anchored_at_tool_calls_lands_on_the_assistant_that_made_them() -> None:
    # Given a settled turn in which the model called a tool
    world = World(scenario_config("0.25.1"))
    for action in (Script(reply="tools", tools=("echo",)), Prompt(chars=40), Settle()):
        world.apply(action)
    # When /tree with a summary aims at the tool calls
    assert world.apply(Navigate(index=0, summarize=True, anchor="tool_call"))
    # Then the summary hangs below the assistant message holding the call
    summary = world.session.tree.leaf
    assert summary is not None and summary.parent is not None
    assert anchor_of(summary.parent.entry) == "tool_call"


def test_a_fork_anchored_where_there_is_no_such_entry_does_not_apply() -> None:
    # Given a session that never called a tool
    world = World(scenario_config("0.25.1"))
    world.apply(Prompt(chars=40))
    world.apply(Settle())
    # When a fork aims at a tool result / Then the action does not apply
    assert world.apply(Fork(index=0, anchor="tool_result")) is False


# -- coverage per profile -------------------------------------------------------------------------


def test_continuation_repairs_are_exempt_only_when_0_25_0_alone_is_explored() -> None:
    # Given the models' exemptions
    directory = load_lifecycle().directory
    # Then 0.25.0 alone exempts the continuation repairs, with a reason naming D4
    only_0_25_0 = load_exemptions(directory, ("0.25.0",))
    assert "D4" in only_0_25_0[REPAIR_BOOT_AND_CONTINUATION]
    assert "D4" in only_0_25_0[REPAIR_CONTINUATION]
    # And a run that also explores 0.25.1 must see them fire
    both = load_exemptions(directory, ("0.25.0", "0.25.1"))
    assert REPAIR_BOOT_AND_CONTINUATION not in both and REPAIR_CONTINUATION not in both
    assert REPAIR_BOOT_AND_CONTINUATION not in load_exemptions(directory)


def test_a_profile_exemption_that_fires_is_reported_as_stale() -> None:
    # Given counts in which an exempted-for-0.25.0 transition fired
    lifecycle = load_lifecycle()
    coverage = coverage_of(lifecycle, {REPAIR_BOOT_AND_CONTINUATION: 1}, ("0.25.0",))
    # Then its documented reason is reported wrong
    assert [row.transition for row in coverage.stale_exemptions] == [REPAIR_BOOT_AND_CONTINUATION]


def test_an_exemption_table_for_an_unknown_profile_is_a_model_document_error(
    tmp_path: Path,
) -> None:
    # Given an exemptions file naming a profile that does not exist
    (tmp_path / EXEMPTIONS_FILE).write_text(
        '[profile_exemptions."9.9"]\n"a:b" = "R1: never"\n', encoding="utf-8"
    )
    # When it is read / Then the error names the file, the table and the profile
    with pytest.raises(ModelDocumentError, match=r"9\.9"):
        load_exemptions(tmp_path, ("0.25.0",), known=("0.25.0", "0.25.1"))


def test_verify_of_0_25_0_alone_passes_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    # Given verify restricted to 0.25.0 (seed scenarios and one generated run)
    code, out, _ = _verify(capsys, "--profile", "0.25.0", "--examples", "1")
    # Then every declared transition fired or is exempted for that profile
    assert code == 0, out
    assert "0 missing" in out and "never fired" not in out


# -- verify's summary -----------------------------------------------------------------------------


def test_verify_prints_its_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a short verify / Then its summary names the actions checked per second
    code, out, _ = _verify(capsys, "--no-scenarios", "--examples", "3")
    line = next(line for line in out.splitlines() if line.startswith("throughput"))
    assert "actions/s" in line and code in (0, 1)


def test_a_planted_fault_that_is_not_caught_fails_verify(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given a planted fault and an exploration too small to reach it (one generated run)
    args = ("--fault", "split-tool-pair-behind-summary", "--no-scenarios", "--examples", "1")
    # When verify runs
    code, out, _ = _verify(capsys, *args, "--out", str(tmp_path))
    # Then the miss is a failure, not a pass
    assert code == 1
    assert "planted fault not detected: split-tool-pair-behind-summary" in out
    assert "result         FAILED" in out


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--examples", "0"), "--examples"),
        (("--examples", "-3"), "--examples"),
        (("--steps", "0"), "--steps"),
        (("--steps", "1000000"), "--steps"),
        (("--time-budget", "0"), "--time-budget"),
        (("--time-budget", "nan"), "--time-budget"),
        (("--time-budget", "inf"), "--time-budget"),
        (("--contract-timeout", "-1"), "--contract-timeout"),
        (("--seed", "-1"), "--seed"),
    ],
)
def test_bad_verify_options_are_one_line_errors_with_exit_2(
    args: tuple[str, ...], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a bad option value / When verify starts
    code, out, err = _verify(capsys, *args)
    # Then it stops at once with one line naming the option, and no traceback
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and named in err and "Traceback" not in err


def test_an_out_path_that_is_a_file_is_refused_before_exploring(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given --out naming an existing regular file
    target = tmp_path / "taken"
    target.write_text("x")
    # When verify starts / Then it refuses in one line (nothing explored, nothing lost)
    code, out, err = _verify(capsys, "--out", str(target))
    assert code == 2 and out == "" and "not a directory" in err


# -- the time budget bounds shrinking --------------------------------------------------------------


class _TickClock:
    """A clock that advances one second every time it is read: budgets become counts."""

    def __init__(self) -> None:
        self._ticks = itertools.count()

    def __call__(self) -> float:
        return float(next(self._ticks))


def test_shrinking_stops_at_the_time_budget_and_reports_the_shortest_failure_so_far() -> None:
    # Given a planted fault the first generated runs hit, and a budget of 40 clock reads
    options = ExploreOptions(
        fault="leak-pre-marker",
        scenarios=False,
        time_budget=40.0,
        variants={"profile": ("0.25.1",)},
    )
    clock = _TickClock()
    # When the exploration runs on that clock
    report = explore(KIT, options, clock=clock)
    # Then it stopped within the budget plus the shrink share, found the fault, and says
    # that shrinking was cut short
    assert report.failed and report.found_after is not None
    assert report.elapsed <= 40.0 * (1 + SHRINK_SHARE) + 2
    assert report.shrink_cut
    # And the reported counterexample still fails on replay (it was a failing example): the
    # leak reaches a provider request, or — where the bridge held a lease on quiet hooks and
    # sent its own fail-closed projection — the lifecycle's leaking projection disagreed
    assert report.counterexample is not None and report.counterexample.failure is not None
    assert report.counterexample.failure["invariant"] in ("no_erased_history", "leases_agree")


def test_the_budget_gives_a_late_failure_a_share_for_shrinking() -> None:
    # Given a failure found when the budget is nearly spent
    clock = _TickClock()
    budget = Budget(clock=clock, started=clock(), seconds=100.0)
    for _ in range(98):
        clock()
    # When shrinking starts / Then it may go on for SHRINK_SHARE of the budget
    assert budget.start_shrinking() == pytest.approx(99 + 100 * SHRINK_SHARE)
    assert not budget.spent()


# -- the audit-chain invariant reads each record once ---------------------------------------------


def test_the_audit_chain_invariant_hashes_each_record_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a world driven through three turns, its invariants checked after every action
    hashed: list[str] = []
    original = invariants._sha256_text

    def counted(text: str) -> str:
        hashed.append(text)
        return original(text)

    monkeypatch.setattr(invariants, "_sha256_text", counted)
    world = World(scenario_config("0.25.1"))
    suite = InvariantSuite()
    for action in (Prompt(chars=40), Settle()) * 3:
        world.apply(action)
        assert suite.check(world) == []
    # Then every audit record was hashed exactly once, not the whole chain per action
    assert len(hashed) == sum(len(log.records) for log in world.audits)


def test_the_audit_chain_invariant_reports_an_edited_record_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a checked world whose log then writes a record edited after it was hashed
    world = World(scenario_config("0.25.1"))
    suite = InvariantSuite()
    world.apply(Prompt(chars=40))
    suite.check(world)
    original = audit.record_line

    def edited(**inputs: Any) -> audit.RecordLine:
        written = original(**inputs)
        line = written.line.replace('"hook":"', '"hook":"edited ', 1)
        return audit.RecordLine(line=line, hash=written.hash)

    monkeypatch.setattr(audit, "record_line", edited)
    world.apply(Settle())
    # When the invariants are checked twice
    first = [v for v in suite.check(world) if v.invariant == "audit_chains"]
    again = [v for v in suite.check(world) if v.invariant == "audit_chains"]
    # Then the break is reported once, naming the record
    assert len(first) == 1 and "does not match its content" in first[0].message
    assert again == []


def test_the_audit_chain_invariant_reports_a_record_out_of_sequence() -> None:
    # Given a checked world, and a log whose next record skips a sequence number
    world = World(scenario_config("0.25.1"))
    suite = InvariantSuite()
    world.apply(Prompt(chars=40))
    assert suite.check(world) == []
    world.audits[0]._seq += 1
    world.apply(Settle())
    # When the invariants are checked
    found = [v for v in suite.check(world) if v.invariant == "audit_chains"]
    # Then the skipped number is named
    assert len(found) == 1 and "sequence number" in found[0].message


# -- liveness: every run settles -----------------------------------------------------------------


def test_a_run_that_does_not_settle_within_the_step_bound_is_a_liveness_violation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a step bound far below what one agent run takes (a stand-in for an endless run)
    monkeypatch.setattr(actions, "RUN_STEP_LIMIT", 3)
    world = World(scenario_config("0.25.1"))
    suite = InvariantSuite()
    world.apply(Prompt(chars=40))
    # When the session is told to settle
    world.apply(Settle())
    # Then the run is reported as never settling, once, naming the action
    found = [v for v in suite.check(world) if v.invariant == "runs_settle"]
    assert len(found) == 1 and "action 1" in found[0].message
    assert [v for v in suite.check(world) if v.invariant == "runs_settle"] == []


def test_advancing_to_a_step_that_never_comes_is_bounded_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the same bound and a stop at a step no run takes
    monkeypatch.setattr(actions, "RUN_STEP_LIMIT", 3)
    world = World(scenario_config("0.25.1"))
    world.apply(Prompt(chars=40))
    # When Pi is advanced to it / Then the world records the endless run, not a hang
    world.apply(AdvanceTo(step="no-such-step"))
    assert world.endless_runs == [1]


# -- one walk of new entries and records feeds every invariant -----------------------------------


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_the_suite_finds_what_each_invariant_finds_alone_after_every_action(fault: str) -> None:
    # Given the seed scenarios in a world with a planted fault, up to the first that breaks an
    # invariant, checked after every action by the suite (one shared walk of the new entries
    # and records) and by each invariant on its own
    found = 0
    for scenario in SCENARIOS:
        world = World(scenario_config("0.25.1", fault=fault))
        suite = InvariantSuite()
        alone = [cls() for cls in INVARIANT_TYPES]
        for action in scenario.actions:
            world.apply(action)
            # Then both find the same violations, in the same order, after every action
            expected = [v for invariant in alone for v in invariant.check(world)]
            assert suite.check(world) == expected, scenario.name
            found += len(expected)
        if found:
            break
    # And the fault was found (the comparison covered violations, not only clean checks)
    assert found, fault


# -- the collector's pace while runs are generated -----------------------------------------------


def test_generated_runs_collect_garbage_after_each_run_and_restore_the_collector() -> None:
    # Given the automatic collector on before an exploration
    assert gc.isenabled()
    automatic: list[bool] = []
    collected: list[int] = []
    original, after_run = KIT.world, explore_module.RunCollector.after_run

    def world(config: object) -> World:
        automatic.append(gc.isenabled())
        return original(config)  # type: ignore[arg-type]

    def counted(collector: explore_module.RunCollector) -> None:
        collected.append(collector.runs)
        after_run(collector)

    # When a short generated exploration runs
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(KIT, "world", world)
        patch.setattr(explore_module.RunCollector, "after_run", counted)
        options = ExploreOptions(examples=3, scenarios=False, time_budget=60)
        report = explore(KIT, options)
    # Then its runs built their worlds with the automatic collector off, garbage was collected
    # after each run, and the collector is on again after
    assert automatic and not any(automatic)
    assert collected == [0, 1, 2] and report.examples == 3
    assert gc.isenabled()


def test_the_run_collector_collects_the_older_generations_at_their_pace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a collector whose collections are recorded
    generations: list[int] = []
    monkeypatch.setattr(explore_module.gc, "collect", generations.append)
    collector = explore_module.RunCollector()
    # When a thousand runs end
    for _ in range(explore_module.FULL_COLLECTION_EVERY):
        collector.after_run()
    # Then every tenth collected the middle generation, the thousandth all, the rest the young
    assert generations.count(2) == 1 and generations[-1] == 2
    assert generations.count(1) == explore_module.FULL_COLLECTION_EVERY // 10 - 1
    assert generations.count(0) == len(generations) - generations.count(1) - 1
