"""The exploration behind ``pictx-fsm verify``, for any extension's kit: seed scenarios, then
Hypothesis.

Phase 1 runs every seed scenario of the kit in the configurations it names (one per
explored variant, or alternating them). Phase 2 lets Hypothesis generate worlds and runs
(the kit draws each action as the run goes), checking every invariant after every action;
on a failure Hypothesis shrinks the run, and the shortest failing run it tried becomes the
counterexample trace. Coverage counts every declared transition any run fired.

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
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from attrs import define, field, frozen
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from pictx_fsm.testing.kit import CoverageVerdict, Draw, ExploreSettings, Kit
from pictx_fsm.testing.tables import TABLE_SIZE, table
from pictx_fsm.testing.trace import (
    Trace,
    close_run,
    record_trace,
    run_actions,
    shrink_actions,
)

__all__ = [
    "DEFAULT_EXAMPLES",
    "ExploreOptions",
    "ExploreReport",
    "Progress",
    "drawn_rounds",
    "exploration_settings",
    "explore",
    "run_lengths",
]

DEFAULT_EXAMPLES = 100_000
"""Generated runs at most: the time budget, not this count, ends a default exploration."""


@frozen(kw_only=True)
class ExploreOptions:
    examples: int = DEFAULT_EXAMPLES
    """Generated runs at most (0: the seed scenarios alone)."""
    steps: int = 40
    seed: int = 0
    time_budget: float = 45.0
    fault: str | None = None
    scenarios: bool = True
    max_actions: int | None = None
    """Stop generating once this many actions were checked (long explorations)."""
    variants: Mapping[str, tuple[str, ...]] = field(factory=dict)
    """The kit's options (:attr:`~.kit.Kit.options`) by name: the variants explored."""
    without: tuple[str, ...] = ()
    """Action groups no generated run uses (kits that draw from groups)."""

    def settings(self, kit: Kit) -> ExploreSettings:
        """What the kit reads: every option at its value here or at its default."""
        variants = {o.name: tuple(self.variants.get(o.name) or o.default) for o in kit.options}
        return ExploreSettings(
            steps=self.steps,
            seed=self.seed,
            fault=self.fault,
            variants=variants,
            without=self.without,
        )


@frozen(kw_only=True)
class Progress:
    extension: str
    phase: str
    examples: int
    actions: int
    covered: int
    declared: int
    elapsed: float


@define
class ExploreReport:
    kit: Kit
    options: ExploreOptions
    settings: ExploreSettings
    counts: Counter[str] = field(factory=Counter)
    tallies: dict[str, Counter[str]] = field(factory=dict)
    """What the kit counted beyond transitions (:meth:`~.kit.Kit.tally`)."""
    examples: int = 0
    scenario_runs: int = 0
    actions: int = 0
    elapsed: float = 0.0
    counterexample: Trace | None = None
    violation: str | None = None
    coverage: CoverageVerdict | None = None
    budget_exhausted: bool = False
    shrink_cut: bool = False
    """The time budget ended the shrinking: the counterexample is the shortest found so far."""
    generated_seconds: float = 0.0
    """Wall-clock time of the generated runs (Hypothesis phase), for the throughput."""
    found_after: tuple[int, float] | None = None
    """(runs, seconds) when the first failure was found: scenario runs in the scenario
    phase, generated runs in the Hypothesis phase."""

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
    kit: Kit,
    options: ExploreOptions,
    progress: Callable[[Progress], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ExploreReport:
    """Explore ``kit``'s extension; ``clock`` (seconds) is what the time budget is measured
    on. Coverage is judged on the kit's declared (unfaulted) machines."""
    if options.fault is not None and options.fault not in kit.faults:
        raise ValueError(f"{kit.name} has no planted fault {options.fault!r}")
    settings = options.settings(kit)
    report = ExploreReport(kit=kit, options=options, settings=settings)
    budget = Budget(clock=clock, started=clock(), seconds=options.time_budget)
    declared = kit.machines().transition_ids()

    def tick(phase: str) -> None:
        report.elapsed = budget.elapsed()
        if progress is not None:
            progress(
                Progress(
                    extension=kit.name,
                    phase=phase,
                    examples=report.examples + report.scenario_runs,
                    actions=report.actions,
                    covered=sum(1 for t in declared if report.counts.get(t)),
                    declared=len(declared),
                    elapsed=report.elapsed,
                )
            )

    if options.scenarios:
        _run_scenarios(kit, report, tick, budget)
    if not report.failed and options.examples:
        _run_hypothesis(kit, report, tick, budget)
    report.elapsed = budget.elapsed()
    report.coverage = kit.coverage(report.counts, settings)
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


def _count(kit: Kit, report: ExploreReport, world: Any, actions: int) -> None:
    report.counts.update(world.transition_counts())
    kit.tally(world, report.tallies)
    report.actions += actions


def _run_scenarios(
    kit: Kit, report: ExploreReport, tick: Callable[[str], None], budget: Budget
) -> None:
    for number, scenario in enumerate(kit.scenarios):
        for config in kit.scenario_configs(scenario, number, report.settings):
            run = run_actions(kit, config, scenario.actions)
            _count(kit, report, run.world, len(scenario.actions))
            run.world.release()
            report.scenario_runs += 1
            tick(f"scenario {scenario.name}")
            if run.failed:
                report.found_after = (report.scenario_runs, budget.elapsed())
                deadline = budget.start_shrinking()
                minimal = shrink_actions(
                    kit, config, scenario.actions, run.invariant or "crash", deadline, budget.clock
                )
                report.shrink_cut = budget.clock() >= deadline
                _fail(kit, report, config, minimal)
                return


def _fail(kit: Kit, report: ExploreReport, config: Any, actions: list[Any]) -> None:
    trace, run = record_trace(kit, config, actions)
    report.counterexample = trace
    report.violation = run.describe_failure()


@define
class Search:
    """What the Hypothesis phase shares with its test function: the budget, and the
    shortest failing example so far (what is reported when shrinking runs out of time)."""

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
    """Hypothesis settings of a generated exploration: the run count and verify's own budget
    bound it, no database, no health checks, quiet, one bug."""
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
    kit: Kit, report: ExploreReport, tick: Callable[[str], None], budget: Budget
) -> None:
    options = report.options
    search = Search(budget=budget)
    collector = RunCollector()
    configs = kit.configs(report.settings)

    @exploration_settings(options.examples)
    @given(data=st.data())
    def example(data: st.DataObject) -> None:
        search.check_clock()
        if search.best is None and report.actions >= (options.max_actions or report.actions + 1):
            raise BudgetSpent()
        draw: Draw = data.draw
        config = draw(configs)
        actions: list[Any] = []
        try:
            _generated_run(kit, draw, config, actions, report)
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
        with collector.pausing():
            seed(options.seed)(example)()
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
        _fail(kit, report, config, actions)


@functools.cache
def run_lengths(steps: int) -> st.SearchStrategy[int]:
    """How many actions a generated run has (at most ``steps``): an integer below 100, where
    Hypothesis draws no constant of a local module, or one of :data:`~.tables.TABLE_SIZE`
    lengths spread from 1 to ``steps`` (:mod:`.tables`: a seed means the same runs on every
    install)."""
    if steps < TABLE_SIZE:
        return st.integers(min_value=1, max_value=steps)
    return table(sorted({1 + (steps - 1) * i // (TABLE_SIZE - 1) for i in range(TABLE_SIZE)}))


def drawn_rounds(
    draw: Draw, steps: int, round_of: Callable[[], st.SearchStrategy[Sequence[Any]]]
) -> Iterator[Any]:
    """The actions of one generated run: a drawn length (:func:`run_lengths`), then rounds
    drawn one at a time from ``round_of()`` (asked again before each round, so a round can
    follow the world the previous ones left) until the length is reached or passed."""
    count = draw(run_lengths(steps))
    done = 0
    while done < count:
        for action in draw(round_of()):
            done += 1
            yield action


def _generated_run(
    kit: Kit, draw: Draw, config: Any, actions: list[Any], report: ExploreReport
) -> None:
    """One generated run: the kit draws each action after the previous one was applied;
    every invariant is checked after each, and the promised outcomes once the world is at
    rest (:func:`~pictx_fsm.testing.trace.close_run`)."""
    world = kit.world(config)
    suite = kit.suite(config)
    try:
        for action in kit.generate(draw, world, report.settings):
            actions.append(action)
            world.apply(action)
            found = suite.check(world)
            if found:
                raise Found(str(found[0]))
        found = close_run(kit, world, suite)
        if found:
            raise Found(str(found[0]))
    finally:
        report.examples += 1
        _count(kit, report, world, len(actions))
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
