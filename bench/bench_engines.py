"""The two engines of one declaration, and the runtime per hook.

    python bench/bench_engines.py [--events 20000] [--out docs/engines.md]

1. Each lifecycle machine steps the same random event sequence (with random guard values)
   on the compiled engine and on python-statemachine (the reference engine); both are timed
   in the same run, and their configurations are compared after every event.
2. The whole runtime is timed per handled hook inside the model session running the seed
   scenarios (``pictx_fsm.extensions.pi_context.kit.scenarios``), against the model session alone.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pictx_fsm.errors import IllegalEventError
from pictx_fsm.extensions.pi_context.kit.scenarios import SCENARIOS
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig
from pictx_fsm.extensions.pi_context.lifecycle import MACHINE_NAMES, load_lifecycle
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.testing.engines import ChosenFacts, reference_machine


def engines(events: int, seed: int) -> list[tuple[str, float, float, int]]:
    lifecycle = load_lifecycle()
    rows = []
    for name in MACHINE_NAMES:
        machine = lifecycle.machines[name]
        reference = reference_machine(lifecycle, name)
        rng = random.Random(seed)
        names = sorted(machine.spec.guard_names)
        plan = [
            (
                rng.choice(sorted(machine.spec.events)),
                ChosenFacts({g: rng.random() < 0.5 for g in names}),
            )
            for _ in range(events)
        ]
        compiled = machine
        config = compiled.initial()
        steps, compiled_ns, reference_ns = 0, 0, 0
        for event, facts in plan:
            started = time.perf_counter_ns()
            try:
                step = compiled.step(config, event, facts)
            except IllegalEventError:
                continue
            compiled_ns += time.perf_counter_ns() - started
            started = time.perf_counter_ns()
            reference_config, _ = reference.send(event, facts)
            reference_ns += time.perf_counter_ns() - started
            if reference_config != step.after:
                raise SystemExit(f"{name}: the engines disagree after {event}")
            config = step.after
            steps += 1
        rows.append((name, compiled_ns / steps / 1000, reference_ns / steps / 1000, steps))
    return rows


def runtime_per_hook(repeats: int) -> tuple[float, float, float, int]:
    """The seed scenarios on the model session (no invariant checks), timed whole and for the
    runtime's ``handle`` alone; returns µs per hook (whole, runtime), median seconds, hooks."""
    config = WorldConfig(context_window=36_000, reminder_margin=16_000, keep_recent_tokens=1_000)
    totals, in_runtime, hooks = [], [], 0
    original = LifecycleRuntime.handle
    spent = [0]

    def timed(self: LifecycleRuntime, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter_ns()
        try:
            return original(self, *args, **kwargs)
        finally:
            spent[0] += time.perf_counter_ns() - started

    for _ in range(repeats):
        spent[0] = 0
        LifecycleRuntime.handle = timed  # type: ignore[method-assign]
        try:
            started = time.perf_counter()
            hooks = 0
            for scenario in SCENARIOS:
                world = World(config)
                for action in scenario.actions:
                    world.apply(action)
                hooks += sum(len(log.records) for log in world.audits)
            totals.append(time.perf_counter() - started)
        finally:
            LifecycleRuntime.handle = original  # type: ignore[method-assign]
        in_runtime.append(spent[0] / 1e9)
    best, runtime_best = min(totals), min(in_runtime)
    return best / hooks * 1e6, runtime_best / hooks * 1e6, statistics.median(totals), hooks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="docs/engines.md")
    args = parser.parse_args()
    rows = engines(args.events, args.seed)
    per_hook, runtime_us, scenarios_s, hooks = runtime_per_hook(3)
    lines = [
        "# Engines and the runtime per hook",
        "",
        f"Produced by `python bench/bench_engines.py --events {args.events} --seed {args.seed}`"
        f" on {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}; both engines timed in the same run on the same events (random "
        "events and guard values), their configurations compared after every event.",
        "",
        "| machine | events | compiled (µs/event) | python-statemachine (µs/event) | ratio |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| `{name}` | {steps:,} | {fast:.2f} | {slow:.1f} | {slow / fast:.0f}× |"
            for name, fast, slow, steps in rows
        ),
        "",
        f"The runtime inside the model session: the seed scenarios (no invariant checks) handle "
        f"{hooks:,} hooks in {scenarios_s:.2f} s (median of 3 runs): {per_hook:.0f} µs per hook "
        f"for host and lifecycle together, of which {runtime_us:.0f} µs in "
        "`LifecycleRuntime.handle` (the pure step: facts, machine steps, actions, boots; and the "
        "audit record). Best of 3 runs.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
