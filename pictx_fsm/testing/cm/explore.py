"""The exploration of pi-context-management behind ``pictx-fsm verify --extension``.

Phase 1 runs the seed scenarios (:mod:`.scenarios`) in every requested setting (the
extension alone, and after pi-context as a user who installed both would load them);
phase 2 lets Hypothesis generate worlds and action sequences. Every invariant (§12 and, with
pi-context loaded, pi-context's own) is checked after every action; a failure is shrunk —
by Hypothesis, or by delta debugging for a scenario — into a counterexample trace that
``pictx-fsm replay`` reproduces. Coverage counts every declared transition of the family.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from attrs import define, field, frozen
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.extensions.context_management.machines import load_machines
from pictx_fsm.testing.cm.checks import CmViolation
from pictx_fsm.testing.cm.coverage import CmCoverage, cm_coverage
from pictx_fsm.testing.cm.faults import cm_fault
from pictx_fsm.testing.cm.invariants_handoff import CmInvariantSuite
from pictx_fsm.testing.cm.scenarios import SCENARIOS
from pictx_fsm.testing.cm.strategies import cm_actions, cm_configs
from pictx_fsm.testing.cm.trace import (
    CmTrace,
    _as_cm,
    _lifecycle_suite,
    record_cm_trace,
    run_cm_actions,
    shrink_cm_actions,
)
from pictx_fsm.testing.cm.world import CmWorld, CmWorldConfig
from pictx_fsm.testing.explore import (
    DEFAULT_EXAMPLES,
    Budget,
    BudgetSpent,
    Found,
    RunCollector,
    Search,
    exploration_settings,
    run_lengths,
    run_seeded,
)


@frozen(kw_only=True)
class CmExploreOptions:
    examples: int = DEFAULT_EXAMPLES
    """Generated runs at most (0: the seed scenarios alone); the time budget ends a default
    exploration."""
    steps: int = 40
    seed: int = 0
    time_budget: float = 45.0
    fault: str | None = None
    scenarios: bool = True
    settings: tuple[bool, ...] = (False, True)
    """With pi-context loaded (``True``) or not (``False``)."""


@frozen(kw_only=True)
class CmProgress:
    phase: str
    examples: int
    actions: int
    covered: int
    declared: int
    elapsed: float


@define
class CmExploreReport:
    options: CmExploreOptions
    counts: Counter[str] = field(factory=Counter)
    lifecycle_counts: Counter[str] = field(factory=Counter)
    examples: int = 0
    scenario_runs: int = 0
    actions: int = 0
    elapsed: float = 0.0
    counterexample: CmTrace | None = None
    violation: str | None = None
    coverage: CmCoverage | None = None
    budget_exhausted: bool = False
    shrink_cut: bool = False
    """The time budget ended the shrinking: the counterexample is the shortest found so far."""

    @property
    def failed(self) -> bool:
        return self.counterexample is not None


def explore_cm(
    options: CmExploreOptions,
    progress: Callable[[CmProgress], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> CmExploreReport:
    """Run the exploration; the time budget (on ``clock``) bounds it, shrinking included,
    as it bounds pi-context's (:class:`~pictx_fsm.testing.explore.Budget`)."""
    if options.fault is not None:
        cm_fault(options.fault)
    report = CmExploreReport(options=options)
    budget = Budget(clock=clock, started=clock(), seconds=options.time_budget)
    declared = load_machines().transition_ids()

    def tick(phase: str) -> None:
        report.elapsed = budget.elapsed()
        if progress is not None:
            covered = sum(1 for t in declared if report.counts.get(t))
            progress(
                CmProgress(
                    phase=phase,
                    examples=report.examples + report.scenario_runs,
                    actions=report.actions,
                    covered=covered,
                    declared=len(declared),
                    elapsed=report.elapsed,
                )
            )

    if options.scenarios:
        _run_scenarios(options, report, tick, budget)
    if not report.failed and options.examples:
        _run_hypothesis(options, report, tick, budget)
    report.elapsed = budget.elapsed()
    report.coverage = cm_coverage(report.counts)
    return report


def _count(report: CmExploreReport, world: CmWorld, actions: int) -> None:
    report.counts.update(world.transition_counts())
    report.lifecycle_counts.update(world.lifecycle_counts())
    report.actions += actions


def _run_scenarios(
    options: CmExploreOptions,
    report: CmExploreReport,
    tick: Callable[[str], None],
    budget: Budget,
) -> None:
    for scenario in SCENARIOS:
        for with_pi_context in options.settings:
            base = CmWorldConfig(seed=options.seed, pi_context=with_pi_context, fault=options.fault)
            config = scenario.world(base)
            run = run_cm_actions(config, scenario.actions)
            _count(report, run.world, len(scenario.actions))
            report.scenario_runs += 1
            tick(f"scenario {scenario.name}")
            if run.failed:
                invariant = run.invariant or "crash"
                deadline = budget.start_shrinking()
                minimal = shrink_cm_actions(
                    config, scenario.actions, invariant, deadline, budget.clock
                )
                report.shrink_cut = budget.clock() >= deadline
                _fail(report, config, minimal)
                return


def _fail(report: CmExploreReport, config: CmWorldConfig, actions: list[Any]) -> None:
    trace, run = record_cm_trace(config, actions)
    report.counterexample = trace
    report.violation = run.describe_failure()


def _run_hypothesis(
    options: CmExploreOptions,
    report: CmExploreReport,
    tick: Callable[[str], None],
    budget: Budget,
) -> None:
    search = Search(budget=budget)
    collector = RunCollector()
    configs = cm_configs(options.settings, options.fault)
    lengths = run_lengths(options.steps)

    @exploration_settings(options.examples)
    @given(data=st.data())
    def example(data: st.DataObject) -> None:
        search.check_clock()
        config = data.draw(configs)
        actions: list[Any] = []
        try:
            _generated_run(data, config, lengths, actions, report)
        except Exception:
            search.failed(config, actions)
            raise
        finally:
            tick("explore" if search.best is None else "shrink")
            collector.after_run()

    try:
        run_seeded(example, options.seed, collector)
    except BudgetSpent:
        report.budget_exhausted = search.best is None
        report.shrink_cut = search.best is not None
    except Exception:
        if search.best is None:
            raise
    if search.best is not None:
        config, actions = search.best
        _fail(report, config, list(actions))


def _generated_run(
    data: st.DataObject,
    config: CmWorldConfig,
    lengths: st.SearchStrategy[int],
    actions: list[Any],
    report: CmExploreReport,
) -> None:
    world = CmWorld(config)
    suite = CmInvariantSuite()
    extra = _lifecycle_suite(config)
    count = data.draw(lengths)
    moves = cm_actions()
    try:
        for _ in range(count):
            action = data.draw(moves)
            actions.append(action)
            world.apply(action)
            found: list[Any] = suite.check(world)
            if extra is not None:
                found += [_as_cm(v) for v in extra.check(world)]
            if found:
                raise Found(str(found[0]))
    finally:
        report.examples += 1
        _count(report, world, len(actions))


__all__ = ["CmExploreOptions", "CmExploreReport", "CmProgress", "CmViolation", "explore_cm"]
