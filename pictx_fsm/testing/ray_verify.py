"""``pictx-fsm verify --ray``: independent explorations as Ray tasks, merged.

Each task is a whole exploration (:func:`~pictx_fsm.testing.explore.explore`) with its own
seed and one *swarm configuration* — one combination of the kit's variants (a profile and a
host version, a companion) — the first task of each combination also running the seed
scenarios in it. The driver
merges what they counted (transitions, tool outcomes, runs, actions) and judges coverage on
the union; the first task to return a counterexample wins and the others are cancelled.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import attrs

from pictx_fsm.testing.explore import ExploreOptions, ExploreReport, explore
from pictx_fsm.testing.kit import Kit, kit_named
from pictx_fsm.testing.ray_support import worker_count
from pictx_fsm.testing.trace import trace_from_json

__all__ = ["explore_on_ray", "task_options"]


def task_options(kit: Kit, options: ExploreOptions, tasks: int) -> list[ExploreOptions]:
    """The tasks' options: seeds ``seed``, ``seed + 1``, …, each with one combination of the
    variants explored (every combination at least once; the first task of each also runs
    the seed scenarios in it)."""
    settings = options.settings(kit)
    names = list(settings.variants)
    combos = list(itertools.product(*(settings.variants[n] for n in names))) or [()]
    return [
        attrs.evolve(
            options,
            seed=options.seed + index,
            scenarios=options.scenarios and index < len(combos),
            variants={n: (v,) for n, v in zip(names, combos[index % len(combos)], strict=True)},
        )
        for index in range(max(tasks, len(combos)))
    ]


def _explore_task(locator: str, options: ExploreOptions) -> dict[str, Any]:
    kit = kit_named(locator)
    report = explore(kit, options)
    trace = report.counterexample
    return {
        "counts": dict(report.counts),
        "tallies": {name: dict(tally) for name, tally in report.tallies.items()},
        "examples": report.examples,
        "scenario_runs": report.scenario_runs,
        "actions": report.actions,
        "generated_seconds": report.generated_seconds,
        "budget_exhausted": report.budget_exhausted,
        "shrink_cut": report.shrink_cut,
        "found_after": report.found_after,
        "violation": report.violation,
        "trace": None if trace is None else trace.to_json(),
    }


def explore_on_ray(
    kit: Kit,
    options: ExploreOptions,
    workers: int | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ExploreReport:
    """:func:`~pictx_fsm.testing.explore.explore` as tasks on the connected Ray."""
    import ray

    started = clock()
    remote = ray.remote(num_cpus=1)(_explore_task)
    locator = kit.locator or kit.name
    pending = [remote.remote(locator, o) for o in task_options(kit, options, worker_count(workers))]
    settings = options.settings(kit)
    report = ExploreReport(kit=kit, options=options, settings=settings)
    while pending:
        [done], pending = ray.wait(pending, num_returns=1)
        part = ray.get(done)
        _merge(report, part)
        if part["trace"] is not None and report.counterexample is None:
            report.counterexample = trace_from_json(part["trace"], "<ray task>", kit)
            report.violation = part["violation"]
            report.found_after = part["found_after"]
            report.shrink_cut = part["shrink_cut"]
            for ref in pending:
                ray.cancel(ref, force=True)
            pending = []
    report.elapsed = clock() - started
    report.coverage = kit.coverage(report.counts, settings)
    return report


def _merge(report: ExploreReport, part: dict[str, Any]) -> None:
    report.counts.update(part["counts"])
    for name, tally in part["tallies"].items():
        report.tallies.setdefault(name, Counter()).update(tally)
    report.examples += part["examples"]
    report.scenario_runs += part["scenario_runs"]
    report.actions += part["actions"]
    report.generated_seconds += part["generated_seconds"]
    report.budget_exhausted |= part["budget_exhausted"]
