"""Mutation evidence: plant each deliberate fault and show that verify catches it.

    python bench/mutation.py [--extension NAME] [--seed 0 [--seed 1 …]] [--time-budget 45]
                             [--no-scenarios] [--out docs/mutation.md] [--append]

For every planted fault of every extension's kit (or of ``--extension``) and every seed this
runs the same exploration as ``pictx-fsm verify --fault NAME --seed N`` (seed scenarios,
then Hypothesis; with ``--no-scenarios`` Hypothesis alone), records whether it failed, which
invariant caught it, the length of the shrunk counterexample, whether replaying the trace
reproduces it, how many runs and seconds it took to find the fault (before shrinking) and
the total wall time; then writes one Markdown table per seed (``--append`` adds them as
sections instead of replacing the file). The exhaustive check beside it, bounded by each
fault's counterexample here, is ``bench/check_faults.py``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from pictx_fsm.testing.explore import DEFAULT_EXAMPLES, ExploreOptions, explore
from pictx_fsm.testing.kit import Kit, kit_named, kit_names
from pictx_fsm.testing.trace import run_actions

HEADER = [
    "# Mutation evidence",
    "",
    "Each planted fault (`pictx_fsm/extensions/<extension>/kit/faults.py`) changes one guard,",
    "action, model transition or tool answer (or, for pi-context's queue faults, the host)",
    "the way a regression would; three of pi-context's bring back bugs that long explorations",
    "found (issue 14), and issue 27 added, per extension, slips of the three classes a",
    "reviewer found surviving `verify`: omissions (a promised outcome that never happens),",
    "boundary slips (a line one off, `<` for `≤`) and content slips (a wrong id, text or",
    "number). `verify` must fail on each with a short counterexample that `replay` reproduces;",
    'a planted fault that is not caught fails `verify` ("planted fault not detected").',
    '"found after" counts the runs (seed scenario runs, or generated runs) and seconds until',
    'the first failure, before shrinking; "(cut)" marks a shrink ended by the time budget.',
    "",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, action="append", help="seeds (default: 0)")
    parser.add_argument("--time-budget", type=float, default=45.0)
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("--fault", action="append", help="only these faults (default: all)")
    parser.add_argument("--append", action="store_true", help="add a section to --out")
    parser.add_argument("--no-scenarios", action="store_true", help="Hypothesis only")
    parser.add_argument("--out", default="docs/mutation.md")
    parser.add_argument("--extension", action="append", help="only these (default: all)")
    args = parser.parse_args()
    kits = [kit_named(name) for name in args.extension or kit_names()]
    tables = [_table(args, kits, seed) for seed in args.seed or [0]]
    phase = "generated runs only" if args.no_scenarios else "seed scenarios, then generated runs"
    sections = [
        [f"## {phase.capitalize()}, seed {seed}", "", *table]
        for seed, table in zip(args.seed or [0], tables, strict=True)
    ]
    out = Path(args.out)
    text = out.read_text(encoding="utf-8").rstrip("\n") + "\n\n" if args.append else ""
    body = [line for section in sections for line in section]
    out.write_text(text + "\n".join(body if args.append else [*HEADER, *body]), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _table(args: argparse.Namespace, kits: list[Any], seed: int) -> list[str]:
    """One seed's table: every fault of every kit, explored as ``verify --fault`` does."""
    rows = []
    for kit, name, fault in ((k, n, f) for k in kits for n, f in k.faults.items()):
        if args.fault and name not in args.fault:
            continue
        rows.append(_row(args, kit, name, fault, seed))
        print(rows[-1], file=sys.stderr)
    phase = "generated runs only" if args.no_scenarios else "seed scenarios, then generated runs"
    only = "".join(f" --fault {name}" for name in args.fault or ())
    only += "".join(f" --extension {name}" for name in args.extension or ())
    examples = "" if args.examples == DEFAULT_EXAMPLES else f" --examples {args.examples}"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return [
        f"Measured with `python bench/mutation.py --seed {seed} --time-budget "
        f"{args.time_budget:g}{examples}{' --no-scenarios' if args.no_scenarios else ''}"
        f"{only}` "
        f"({phase}) on {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores shared with other work (load average "
        f"at the end: {load}).",
        "",
        "| extension | fault | what it breaks | caught by | counterexample (actions) |"
        " replay reproduces | found after (runs) | found after (time) | total time |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def _row(args: argparse.Namespace, kit: Kit, name: str, fault: Any, seed: int) -> str:
    started = time.perf_counter()
    report = explore(
        kit,
        ExploreOptions(
            examples=args.examples,
            seed=seed,
            time_budget=args.time_budget,
            fault=name,
            scenarios=not args.no_scenarios,
        ),
    )
    elapsed = time.perf_counter() - started
    trace = report.counterexample
    if trace is None or report.found_after is None:
        return (
            f"| {kit.name} | `{name}` | {fault.description} | **not caught** | – | "
            f"– | – | – | {elapsed:.1f} s |"
        )
    replay = run_actions(kit, trace.config, trace.actions)
    reproduced = replay.describe_failure() == report.violation
    caught = (trace.failure or {}).get("invariant", "?")
    runs, seconds = report.found_after
    phase = "scenario" if report.examples == 0 else "generated"
    cut = " (cut)" if report.shrink_cut else ""
    return (
        f"| {kit.name} | `{name}` | {fault.description} | `{caught}` | "
        f"{len(trace.actions)}{cut} | "
        f"{'yes' if reproduced else 'NO'} | {runs} {phase} | {seconds:.1f} s | "
        f"{elapsed:.1f} s |"
    )


if __name__ == "__main__":
    sys.exit(main())
