"""The exploration behind ``pictx-fsm verify``: seed scenarios, then Hypothesis.

Phase 1 runs every seed scenario (:mod:`~pictx_fsm.testing.scenarios`) in each profile, the
host profiles (Pi versions) alternating.
Phase 2 lets Hypothesis generate worlds and action sequences, checking every invariant after
every action; on a failure Hypothesis shrinks the sequence and the last example it runs is
the minimal one, which becomes the counterexample trace. Coverage counts every declared
transition any run fired.

Budgets: ``examples`` generated runs of at most ``steps`` actions each, and a wall-clock
``time_budget`` after which remaining examples are skipped (never once a failure is being
shrunk, so shrinking stays deterministic).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from attrs import define, field, frozen
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from pictx_fsm.hosts.model.profiles import DEFAULT_HOST_PROFILE, HOST_PROFILES
from pictx_fsm.lifecycle import Lifecycle
from pictx_fsm.protocol import Profile
from pictx_fsm.testing.actions import Action, Settle
from pictx_fsm.testing.coverage import Coverage, coverage_of
from pictx_fsm.testing.faults import fault_named, faulty_lifecycle
from pictx_fsm.testing.invariants import InvariantSuite, Violation
from pictx_fsm.testing.scenarios import SCENARIOS
from pictx_fsm.testing.strategies import host_actions, world_configs
from pictx_fsm.testing.trace import Trace, record_trace, run_actions, shrink_actions
from pictx_fsm.testing.world import World, WorldConfig


@frozen(kw_only=True)
class ExploreOptions:
    examples: int = 60
    steps: int = 40
    seed: int = 0
    time_budget: float = 45.0
    profiles: tuple[str, ...] = tuple(p.value for p in Profile)
    hosts: tuple[str, ...] = tuple(HOST_PROFILES)
    """The Pi versions (host profiles) the model session behaves as, each explored."""
    fault: str | None = None
    scenarios: bool = True


@frozen(kw_only=True)
class Progress:
    phase: str
    examples: int
    actions: int
    covered: int
    declared: int
    elapsed: float


@define
class ExploreReport:
    options: ExploreOptions
    counts: Counter[str] = field(factory=Counter)
    examples: int = 0
    scenario_runs: int = 0
    actions: int = 0
    elapsed: float = 0.0
    counterexample: Trace | None = None
    violation: str | None = None
    coverage: Coverage | None = None
    budget_exhausted: bool = False

    @property
    def failed(self) -> bool:
        return self.counterexample is not None


class _Found(Exception):
    """An invariant broke inside a generated example (Hypothesis shrinks on it)."""


class _BudgetSpent(KeyboardInterrupt):
    """The time budget ran out: stop generating at once.

    Returning early from an example instead would draw less data than an earlier example with
    the same prefix, which Hypothesis reports as ``FlakyStrategyDefinition`` (a false
    counterexample). A ``KeyboardInterrupt`` is the one exception Hypothesis's engine treats
    as an interruption rather than a test outcome, so it stops without recording anything."""


def explore(
    options: ExploreOptions,
    lifecycle: Lifecycle,
    progress: Callable[[Progress], None] | None = None,
) -> ExploreReport:
    """Run the exploration; ``lifecycle`` is the unfaulted one (coverage is judged on it)."""
    if options.fault is not None:
        fault_named(options.fault)  # fail early on an unknown name
        faulty_lifecycle(options.fault)
    report = ExploreReport(options=options)
    started = time.monotonic()

    def tick(phase: str) -> None:
        report.elapsed = time.monotonic() - started
        if progress is not None:
            covered = sum(1 for t in lifecycle.transition_ids() if report.counts.get(t))
            progress(
                Progress(
                    phase=phase,
                    examples=report.examples + report.scenario_runs,
                    actions=report.actions,
                    covered=covered,
                    declared=len(lifecycle.transition_ids()),
                    elapsed=report.elapsed,
                )
            )

    if options.scenarios:
        _run_scenarios(options, report, tick)
    if not report.failed:
        _run_hypothesis(options, report, tick, started)
    report.elapsed = time.monotonic() - started
    report.coverage = coverage_of(lifecycle, report.counts)
    return report


def scenario_config(
    profile: str, seed: int = 0, fault: str | None = None, host: str = DEFAULT_HOST_PROFILE.name
) -> WorldConfig:
    """The world every seed scenario runs in (the numbers of :mod:`.scenarios` assume it):
    native compaction keeps only 1 000 tokens, so ``/compact`` and overflow compaction find
    something to cut in a short story and reach ``session_before_compact``."""
    return WorldConfig(
        profile=profile,
        seed=seed,
        context_window=36_000,
        reserve_tokens=2_000,
        reminder_margin=16_000,
        keep_recent_tokens=1_000,
        fault=fault,
        host=host,
    )


def _run_scenarios(
    options: ExploreOptions, report: ExploreReport, tick: Callable[[str], None]
) -> None:
    for number, scenario in enumerate(SCENARIOS):
        for index, profile in enumerate(options.profiles):
            # Hosts alternate, so each scenario meets every host over the profiles while the
            # phase costs one run per scenario and profile.
            host = options.hosts[(number + index) % len(options.hosts)]
            config = scenario_config(profile, options.seed, options.fault, host)
            run = run_actions(config, scenario.actions)
            report.counts.update(run.world.transition_counts())
            report.scenario_runs += 1
            report.actions += len(scenario.actions)
            tick(f"scenario {scenario.name}")
            if run.failed:
                invariant = run.violation.invariant if run.violation else "crash"
                minimal = shrink_actions(config, scenario.actions, invariant)
                _fail(report, config, minimal)
                return


def _fail(report: ExploreReport, config: WorldConfig, actions: list[Action]) -> None:
    trace, run = record_trace(config, actions)
    report.counterexample = trace
    report.violation = run.describe_failure()


def _run_hypothesis(
    options: ExploreOptions,
    report: ExploreReport,
    tick: Callable[[str], None],
    started: float,
) -> None:
    state: dict[str, Any] = {"failing": False, "last": None}
    deadline = started + options.time_budget
    configs = world_configs(options.profiles, options.fault, options.hosts)

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
            state["failing"] = True  # from now on never stop early: shrinking must replay
            raise
        finally:
            tick("explore")

    try:
        seed(options.seed)(example)()
    except _BudgetSpent:
        report.budget_exhausted = True
    except Exception:  # the minimal failing example is in state["last"]
        if state["last"] is None:
            raise
        config, actions = state["last"]
        _fail(report, config, list(actions))


def _generated_run(
    data: st.DataObject,
    options: ExploreOptions,
    configs: st.SearchStrategy[WorldConfig],
    report: ExploreReport,
    state: dict[str, Any],
) -> None:
    config = data.draw(configs)
    world = World(config)
    suite = InvariantSuite()
    actions: list[Action] = []
    state["last"] = (config, actions)
    count = data.draw(st.integers(min_value=1, max_value=options.steps))
    try:
        for _ in range(count):
            _act(world, suite, actions, data.draw(host_actions()))
        _act(world, suite, actions, Settle())
    finally:
        report.counts.update(world.transition_counts())
        report.examples += 1
        report.actions += len(actions)


def _act(world: World, suite: InvariantSuite, actions: list[Action], action: Action) -> None:
    actions.append(action)
    world.apply(action)
    found: list[Violation] = suite.check(world)
    if found:
        raise _Found(str(found[0]))
