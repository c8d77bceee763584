"""How many generated runs verify takes to find planted faults, over many seeds.

    python bench/fault_seeds.py [--faults F ...] [--seeds 0 1 2 ...] [--examples 1000]
                                [--baseline DIR ...]

``bench/mutation.py`` reports one seed; a fault that generated runs find once in a few hundred
runs is found after 5 runs by one seed and not in 1,000 by the next, so one seed cannot tell two
versions of the strategies apart. This script runs verify's generated phase alone
(``--no-scenarios``) with each fault and each seed, stops at the first failure (no shrinking),
and prints the runs it took (``–``: not found within ``--examples`` runs), how many seeds found
it and the median over the seeds that did; with ``--baseline DIR`` (another checkout:
``git archive REV | tar -x -C DIR``; repeatable) it runs that checkout the same way, each in
its own process alongside. Counts of runs do not depend on the machine's speed or load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench_verify import PROFILES, _pi_context_exploration

ROOT = Path(__file__).resolve().parent.parent
RARE = ("continue-after-abort", "split-tool-pair-behind-summary", "repair-during-commit")
"""The planted faults generated runs find once in a few hundred runs (docs/mutation.md)."""


def _work(faults: list[str], seeds: list[int], examples: int) -> dict[str, list[int | None]]:
    """Runs until each fault is found, per seed (``None``: not within ``examples``)."""
    found: dict[str, list[int | None]] = {}
    for fault in faults:
        found[fault] = []
        for seed in seeds:
            state = {"shrinking": False}

            def progress(event: Any, state: dict[str, bool] = state) -> None:
                state["shrinking"] = state["shrinking"] or event.phase == "shrink"

            def clock(state: dict[str, bool] = state) -> float:
                """The time budget spent at once when shrinking starts: no shrink."""
                return time.monotonic() + (1e9 if state["shrinking"] else 0.0)

            explore, options = _pi_context_exploration(
                examples=examples,
                seed=seed,
                time_budget=86_400,
                scenarios=False,
                fault=fault,
                profiles=PROFILES,
            )
            report = explore(options, progress=progress, clock=clock)
            found[fault].append(report.found_after[0] if report.found_after else None)
            print(f"{fault} seed {seed}: {found[fault][-1]}", file=sys.stderr, flush=True)
    return found


def _spawn(source: Path, faults: list[str], seeds: list[int], examples: int) -> Any:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "_worker",
        json.dumps({"faults": faults, "seeds": seeds, "examples": examples}),
    ]
    env = dict(os.environ, PYTHONPATH=str(source))
    done = subprocess.run(command, env=env, cwd=source, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{source}: worker failed\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _summary(counts: list[int | None], examples: int) -> str:
    hits = [count for count in counts if count is not None and count <= examples]
    median = f"median {statistics.median(hits):,.0f}" if hits else "no median"
    return f"{len(hits)}/{len(counts)} found; {median}"


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "_worker":
        given = json.loads(sys.argv[2])
        print(json.dumps(_work(given["faults"], given["seeds"], given["examples"])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", nargs="+", default=list(RARE))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(range(8)))
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument(
        "--baseline", type=Path, action="append", default=[], help="another checkout (repeatable)"
    )
    args = parser.parse_args()
    sides = {"this checkout": ROOT}
    for baseline in args.baseline:
        sides[f"`{baseline}`"] = baseline.resolve()
    with ThreadPoolExecutor(max_workers=len(sides)) as pool:
        futures = {
            name: pool.submit(_spawn, source, args.faults, args.seeds, args.examples)
            for name, source in sides.items()
        }
        results = {name: future.result() for name, future in futures.items()}
    seeds = " ".join(str(seed) for seed in args.seeds)
    baseline = "".join(f" --baseline {baseline}" for baseline in args.baseline)
    faults = " ".join(args.faults)
    print(
        f"`python bench/fault_seeds.py --faults {faults} --seeds {seeds} "
        f"--examples {args.examples}{baseline}`\n"
    )
    print(f"| fault | checkout | runs to find it, seeds {seeds} | seeds that found it |")
    print("|---|---|---|---|")
    for fault in args.faults:
        for name, found in results.items():
            runs = ", ".join(
                "–" if c is None or c > args.examples else f"{c:,}" for c in found[fault]
            )
            print(f"| `{fault}` | {name} | {runs} | {_summary(found[fault], args.examples)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
