"""The exploration behind ``pictx-fsm verify``: seed scenarios, then Hypothesis.

Phase 1 runs every seed scenario (:mod:`~pictx_fsm.testing.scenarios`) in each profile, the
host profiles (Pi versions) alternating.
Phase 2 lets Hypothesis generate worlds and swarm runs (:mod:`.strategies`: each run draws
the action groups it may use, then its actions), checking every invariant after every
action; on a failure Hypothesis shrinks the sequence, and the shortest failing example it
ran becomes the counterexample trace. Coverage counts every declared transition any run
fired.

Budgets: ``examples`` generated runs of at most ``steps`` actions each, and a wall-clock
``time_budget`` for the whole exploration, shrinking included: once a failure is found,
shrinking goes on until the budget is spent, or for ``SHRINK_SHARE`` of it when the failure
came late — then the shortest counterexample so far is reported. A shrink that finishes in
time is deterministic (same seed, same counterexample); one cut short depends on the
machine's speed, and says so (:attr:`ExploreReport.shrink_cut`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from attrs import define, field, frozen
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.lifecycle import Lifecycle
from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.hosts.model.profiles import DEFAULT_HOST_PROFILE, HOST_PROFILES
from pictx_fsm.testing.actions import Action, Settle
from pictx_fsm.testing.constant_pool import global_constants_only
from pictx_fsm.testing.coverage import Coverage, coverage_of
from pictx_fsm.testing.faults import fault_named, faulty_lifecycle
from pictx_fsm.testing.invariants import InvariantSuite, Violation
from pictx_fsm.testing.lean import untimed_draw
from pictx_fsm.testing.scenarios import SCENARIOS
from pictx_fsm.testing.strategies import SWARMS, swarm_moves, world_configs
from pictx_fsm.testing.tool_coverage import ToolOutcomeCoverage, tool_outcome_coverage
from pictx_fsm.testing.trace import Trace, record_trace, run_actions, shrink_actions
from pictx_fsm.testing.world import World, WorldConfig, world_lifecycle

DEFAULT_EXAMPLES = 100_000
"""Generated runs at most: the time budget, not this count, ends a default exploration."""


@frozen(kw_only=True)
class ExploreOptions:
    examples: int = DEFAULT_EXAMPLES
    steps: int = 40
    seed: int = 0
    time_budget: float = 45.0
    profiles: tuple[str, ...] = tuple(p.value for p in Profile)
    hosts: tuple[str, ...] = tuple(HOST_PROFILES)
    """The Pi versions (host profiles) the model session behaves as, each explored."""
    fault: str | None = None
    scenarios: bool = True
    max_actions: int | None = None
    """Stop generating once this many actions were checked (long explorations)."""
    without: tuple[str, ...] = ()
    """Action groups (:data:`~.strategies.GROUPS`) no generated run uses."""


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
    shrink_cut: bool = False
    """The time budget ended the shrinking: the counterexample is the shortest found so far."""
    generated_seconds: float = 0.0
    """Wall-clock time of the generated runs (Hypothesis phase), for the throughput."""
    found_after: tuple[int, float] | None = None
    """(runs, seconds) when the first failure was found: scenario runs in the scenario
    phase, generated runs in the Hypothesis phase."""
    tool_outcomes: Counter[str] = field(factory=Counter)
    tool_coverage: ToolOutcomeCoverage | None = None

    @property
    def failed(self) -> bool:
        return self.counterexample is not None

    @property
    def actions_per_second(self) -> float:
        return self.actions / self.elapsed if self.elapsed > 0 else 0.0


class Found(Exception):
    """An invariant broke inside a generated example (Hypothesis shrinks on it)."""


class BudgetSpent(KeyboardInterrupt):
    """The budget ran out (time, the shrink deadline, or ``max_actions``): stop at once.

    Returning early from an example instead would draw less data than an earlier example with
    the same prefix, which Hypothesis reports as ``FlakyStrategyDefinition`` (a false
    counterexample). A ``KeyboardInterrupt`` is the one exception Hypothesis's engine treats
    as an interruption rather than a test outcome, so it stops without recording anything."""


def explore(
    options: ExploreOptions,
    lifecycle: Lifecycle,
    progress: Callable[[Progress], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ExploreReport:
    """Run the exploration; ``lifecycle`` is the unfaulted one (coverage is judged on it).
    ``clock`` (seconds) is what the time budget is measured on."""
    if options.fault is not None:
        fault_named(options.fault)  # fail early on an unknown name
        faulty_lifecycle(options.fault)
    report = ExploreReport(options=options)
    budget = Budget(clock=clock, started=clock(), seconds=options.time_budget)

    def tick(phase: str) -> None:
        report.elapsed = budget.elapsed()
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
        _run_scenarios(options, report, tick, budget)
    if not report.failed:
        _run_hypothesis(options, report, tick, budget)
    report.elapsed = budget.elapsed()
    report.coverage = coverage_of(lifecycle, report.counts, options.profiles)
    report.tool_coverage = tool_outcome_coverage(report.tool_outcomes, lifecycle.directory)
    return report


SHRINK_SHARE = 0.25
"""Shrinking a failure found late gets at least this share of the time budget."""


@define
class Budget:
    """The wall-clock budget of one exploration, shrinking included: generation stops at
    ``seconds``; once a failure is found, shrinking goes on until then, or for
    ``SHRINK_SHARE`` of the budget when the failure came late."""

    clock: Callable[[], float]
    started: float
    seconds: float
    shrink_deadline: float | None = None

    def elapsed(self) -> float:
        return self.clock() - self.started

    def start_shrinking(self) -> float:
        """The shrink deadline (fixed by the first failure)."""
        if self.shrink_deadline is None:
            latest = self.clock() + self.seconds * SHRINK_SHARE
            self.shrink_deadline = max(self.started + self.seconds, latest)
        return self.shrink_deadline

    def spent(self) -> bool:
        limit = self.started + self.seconds
        return self.clock() > (limit if self.shrink_deadline is None else self.shrink_deadline)


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
    options: ExploreOptions,
    report: ExploreReport,
    tick: Callable[[str], None],
    budget: Budget,
) -> None:
    for number, scenario in enumerate(SCENARIOS):
        for index, profile in enumerate(options.profiles):
            # Hosts alternate, so each scenario meets every host over the profiles while the
            # phase costs one run per scenario and profile.
            host = options.hosts[(number + index) % len(options.hosts)]
            config = scenario_config(profile, options.seed, options.fault, host)
            run = run_actions(config, scenario.actions)
            report.counts.update(run.world.transition_counts())
            report.tool_outcomes.update(run.world.tool_outcomes())
            report.scenario_runs += 1
            report.actions += len(scenario.actions)
            tick(f"scenario {scenario.name}")
            if run.failed:
                report.found_after = (report.scenario_runs, budget.elapsed())
                invariant = run.violation.invariant if run.violation else "crash"
                deadline = budget.start_shrinking()
                minimal = shrink_actions(
                    config, scenario.actions, invariant, deadline, budget.clock
                )
                report.shrink_cut = budget.clock() >= deadline
                _fail(report, config, minimal)
                return


def _fail(report: ExploreReport, config: WorldConfig, actions: list[Action]) -> None:
    trace, run = record_trace(config, actions)
    report.counterexample = trace
    report.violation = run.describe_failure()


@define
class Search:
    """What the Hypothesis phase shares with its test function: the budget, and the
    shortest failing example so far (what is reported when shrinking runs out of time).
    Shared by both extensions' explorations (a world config and its actions)."""

    budget: Budget
    best: tuple[Any, list[Any]] | None = None

    def check_clock(self) -> None:
        if self.budget.spent():
            raise BudgetSpent()

    def failed(self, config: Any, actions: list[Any]) -> None:
        self.budget.start_shrinking()
        if self.best is None or len(actions) <= len(self.best[1]):
            self.best = (config, list(actions))


def exploration_settings(examples: int) -> settings:
    """Hypothesis settings of a generated exploration (both extensions): the run count and
    verify's own budget bound it, no database, no health checks, quiet, one bug."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.shrink),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
    )


def _run_hypothesis(
    options: ExploreOptions,
    report: ExploreReport,
    tick: Callable[[str], None],
    budget: Budget,
) -> None:
    search = Search(budget=budget)
    collector = RunCollector()
    configs = world_configs(options.profiles, options.fault, options.hosts)
    counts = run_lengths(options.steps)
    runs = Runs(counts=counts, report=report, lifecycle=world_lifecycle(options.fault))

    @exploration_settings(options.examples)
    @given(data=st.data())
    def example(data: st.DataObject) -> None:
        search.check_clock()
        if search.best is None and report.actions >= (options.max_actions or report.actions + 1):
            raise BudgetSpent()
        draw = drawer(data)
        config = draw(configs)
        actions: list[Action] = []
        try:
            _generated_run(draw, config, actions, runs)
        except Exception:
            if search.best is None:
                report.found_after = (report.examples, budget.elapsed())
            search.failed(config, actions)
            raise
        finally:
            tick("explore" if search.best is None else "shrink")
            collector.after_run()

    phase_started = budget.elapsed()
    try:
        run_seeded(example, options.seed, collector)
    except BudgetSpent:
        report.budget_exhausted = search.best is None
        report.shrink_cut = search.best is not None
    except Exception:
        if search.best is None:
            raise
    finally:
        report.generated_seconds = budget.elapsed() - phase_started
    if search.best is not None:
        config, actions = search.best
        _fail(report, config, actions)


@functools.cache
def run_lengths(steps: int) -> st.SearchStrategy[int]:
    return st.integers(min_value=1, max_value=steps)


T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[T]], T]


def drawer(data: st.DataObject) -> Draw[Any]:
    """How a generated run draws: straight from the example's choices (Hypothesis's
    semi-stable ``DataObject.conjecture_data``), the same choices ``data.draw`` makes
    without its bookkeeping for Hypothesis's own failure report (a label and a note per
    draw, a check of the global random state, each draw's time: :func:`.lean.untimed_draw`)
    — verify writes its own trace, and that bookkeeping cost as much as drawing a small
    value."""
    conjecture = getattr(data, "conjecture_data", None)
    return data.draw if conjecture is None else functools.partial(untimed_draw, conjecture)


@frozen(kw_only=True)
class Runs:
    """What every generated run of one exploration shares: its length strategy, the report
    it counts into, and the lifecycle its worlds run (resolved once, not per world)."""

    counts: st.SearchStrategy[int]
    report: ExploreReport
    lifecycle: Lifecycle


def _generated_run(draw: Draw[Any], config: WorldConfig, actions: list[Action], runs: Runs) -> None:
    """One swarm run: its action groups, its length, then every action, each checked."""
    report = runs.report
    world = World(config, runs.lifecycle)
    suite = InvariantSuite()
    swarm = tuple(group for group in draw(SWARMS) if group not in report.options.without)
    count = draw(runs.counts)
    try:
        while len(actions) < count:
            for action in draw(swarm_moves(swarm, world.session.is_idle)):
                _act(world, suite, actions, action)
        _act(world, suite, actions, Settle())
    finally:
        report.counts.update(world.transition_counts())
        report.tool_outcomes.update(world.tool_outcomes())
        report.examples += 1
        report.actions += len(actions)
        world.release()


MIDDLE_COLLECTION_EVERY = 10
"""Generated runs between two collections of the middle generation (Python's default pace
between young collections, counted in runs instead of allocations)."""
FULL_COLLECTION_EVERY = 1_000
"""Generated runs between two full collections."""


@define
class RunCollector:
    """Cyclic garbage collected once per generated run instead of every 700 allocations.

    Every run builds a world of thousands of objects that live until the run ends and are then
    dropped whole (a world is cyclic). At the collector's own pace they were scanned again and
    again while alive; collected after each run, each is scanned about once, when it is
    garbage. Memory stays bounded by one run's garbage; the middle and oldest generations are
    collected every :data:`MIDDLE_COLLECTION_EVERY` and :data:`FULL_COLLECTION_EVERY` runs."""

    runs: int = 0

    def after_run(self) -> None:
        self.runs += 1
        if self.runs % FULL_COLLECTION_EVERY == 0:
            gc.collect(2)
        elif self.runs % MIDDLE_COLLECTION_EVERY == 0:
            gc.collect(1)
        else:
            gc.collect(0)

    @contextlib.contextmanager
    def pausing(self) -> Iterator[RunCollector]:
        """The automatic collector off while runs are generated, as it was after."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            yield self
        finally:
            if enabled:
                gc.enable()


def run_seeded(example: Callable[[], None], value: int, collector: RunCollector) -> None:
    """Run an exploration's Hypothesis test under seed ``value`` (both extensions): drawing
    from Hypothesis's global constant pool only, so a seed means the same runs on every
    install, with the garbage collected by ``collector`` (the test calls
    :meth:`RunCollector.after_run` after each run)."""
    with global_constants_only(), collector.pausing():
        seed(value)(example)()


def _act(world: World, suite: InvariantSuite, actions: list[Action], action: Action) -> None:
    actions.append(action)
    world.apply(action)
    found: list[Violation] = suite.check(world)
    if found:
        raise Found(str(found[0]))
