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
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from pictx_fsm.context_management.machines import load_machines
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


@frozen(kw_only=True)
class CmExploreOptions:
    examples: int = 100
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

    @property
    def failed(self) -> bool:
        return self.counterexample is not None


class _BudgetSpent(KeyboardInterrupt):
    """The time budget ran out (see :mod:`pictx_fsm.testing.explore` for why an interrupt)."""


class _Found(Exception):
    pass


def explore_cm(
    options: CmExploreOptions, progress: Callable[[CmProgress], None] | None = None
) -> CmExploreReport:
    if options.fault is not None:
        cm_fault(options.fault)
    report = CmExploreReport(options=options)
    started = time.monotonic()
    declared = load_machines().transition_ids()

    def tick(phase: str) -> None:
        report.elapsed = time.monotonic() - started
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
        _run_scenarios(options, report, tick)
    if not report.failed and options.examples:
        _run_hypothesis(options, report, tick, started)
    report.elapsed = time.monotonic() - started
    report.coverage = cm_coverage(report.counts)
    return report


def _count(report: CmExploreReport, world: CmWorld, actions: int) -> None:
    report.counts.update(world.transition_counts())
    report.lifecycle_counts.update(world.lifecycle_counts())
    report.actions += actions


def _run_scenarios(
    options: CmExploreOptions, report: CmExploreReport, tick: Callable[[str], None]
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
                minimal = shrink_cm_actions(config, scenario.actions, invariant)
                _fail(report, config, minimal)
                return


def _fail(report: CmExploreReport, config: CmWorldConfig, actions: list[Any]) -> None:
    trace, run = record_cm_trace(config, actions)
    report.counterexample = trace
    report.violation = run.describe_failure()


def _run_hypothesis(
    options: CmExploreOptions, report: CmExploreReport, tick: Callable[[str], None], started: float
) -> None:
    state: dict[str, Any] = {"failing": False, "last": None}
    deadline = started + options.time_budget
    configs = cm_configs(options.settings, options.fault)

    @settings(
        max_examples=options.examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.shrink),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
    )
    @given(data=st.data())
    def example(data: st.DataObject) -> None:
        if not state["failing"] and time.monotonic() > deadline:
            raise _BudgetSpent()
        try:
            _generated_run(data, options, configs, report, state)
        except Exception:
            state["failing"] = True
            raise
        finally:
            tick("explore")

    try:
        seed(options.seed)(example)()
    except _BudgetSpent:
        report.budget_exhausted = True
    except Exception:
        if state["last"] is None:
            raise
        config, actions = state["last"]
        _fail(report, config, list(actions))


def _generated_run(
    data: st.DataObject,
    options: CmExploreOptions,
    configs: st.SearchStrategy[CmWorldConfig],
    report: CmExploreReport,
    state: dict[str, Any],
) -> None:
    config = data.draw(configs)
    world = CmWorld(config)
    suite = CmInvariantSuite()
    extra = _lifecycle_suite(config)
    actions: list[Any] = []
    state["last"] = (config, actions)
    count = data.draw(st.integers(min_value=1, max_value=options.steps))
    try:
        for _ in range(count):
            action = data.draw(cm_actions())
            actions.append(action)
            world.apply(action)
            found: list[Any] = suite.check(world)
            if extra is not None:
                found += [_as_cm(v) for v in extra.check(world)]
            if found:
                raise _Found(str(found[0]))
    finally:
        report.examples += 1
        _count(report, world, len(actions))


__all__ = ["CmExploreOptions", "CmExploreReport", "CmProgress", "CmViolation", "explore_cm"]
