"""Mutation evidence: plant each deliberate fault and show that verify catches it.

    python bench/mutation.py [--extension NAME] [--seed 0] [--time-budget 45]
                             [--no-scenarios] [--out docs/mutation.md]

For every planted fault of every extension's kit (or of ``--extension``) this runs the same
exploration as ``pictx-fsm verify --fault NAME`` (seed scenarios, then Hypothesis; with
``--no-scenarios``
Hypothesis alone), records whether it failed, which invariant caught it, the length of the
shrunk counterexample, whether replaying the trace reproduces it, how many runs and seconds
it took to find the fault (before shrinking) and the total wall time, and the length of the
shortest counterexample ``pictx-fsm check --fault NAME`` finds within ``--check-depth``
(default 8; whether it replays); then writes a Markdown table (``--append`` adds it as a
section instead of replacing the file).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from pictx_fsm.testing.check import CheckOptions, check
from pictx_fsm.testing.explore import DEFAULT_EXAMPLES, ExploreOptions, explore
from pictx_fsm.testing.kit import Kit, kit_named, kit_names
from pictx_fsm.testing.trace import run_actions

HEADER = [
    "# Mutation evidence",
    "",
    "Each planted fault (`pictx_fsm/extensions/<extension>/kit/faults.py`) changes one guard,",
    "action or model transition (or, for pi-context's queue faults, the host) the way a",
    "regression would; three of pi-context's bring back bugs that long explorations found",
    "(issue 14).",
    "`verify` must fail on each with a short counterexample that `replay` reproduces; a",
    'planted fault that is not caught fails `verify` ("planted fault not detected").',
    '"found after" counts the runs (seed scenario runs, or generated runs) and seconds until',
    'the first failure, before shrinking; "(cut)" marks a shrink ended by the time budget.',
    "",
]


def _check_column(kit: Kit, fault: str, depth: int) -> str:
    """``pictx-fsm check --fault`` to ``depth``: the shortest counterexample's length and
    whether it replays, or that none lies within the bound."""
    if depth <= 0:
        return "–"
    started = time.perf_counter()
    report = check(kit, CheckOptions(depth=depth, fault=fault))
    seconds = time.perf_counter() - started
    trace = report.counterexample
    if trace is None:
        return f"none within {depth} ({seconds:.0f} s)"
    replayed = run_actions(kit, trace.config, trace.actions).describe_failure()
    alphabet = next(s.alphabet for s in report.searches if s.violation is not None)
    verdict = "" if replayed == report.violation else ", replay DIFFERS"
    return f"{len(trace.actions)} (`{alphabet}`, {seconds:.0f} s{verdict})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-budget", type=float, default=45.0)
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("--fault", action="append", help="only these faults (default: all)")
    parser.add_argument("--append", action="store_true", help="add a section to --out")
    parser.add_argument("--no-scenarios", action="store_true", help="Hypothesis only")
    parser.add_argument("--out", default="docs/mutation.md")
    parser.add_argument("--extension", action="append", help="only these (default: all)")
    parser.add_argument(
        "--check-depth",
        type=int,
        default=8,
        help="also run pictx-fsm check --fault NAME to this depth (0: not)",
    )
    args = parser.parse_args()
    rows = []
    kits = [kit_named(name) for name in args.extension or kit_names()]
    for kit, name, fault in ((k, n, f) for k in kits for n, f in k.faults.items()):
        if args.fault and name not in args.fault:
            continue
        started = time.perf_counter()
        report = explore(
            kit,
            ExploreOptions(
                examples=args.examples,
                seed=args.seed,
                time_budget=args.time_budget,
                fault=name,
                scenarios=not args.no_scenarios,
            ),
        )
        elapsed = time.perf_counter() - started
        exhaustive = _check_column(kit, name, args.check_depth)
        trace = report.counterexample
        if trace is None or report.found_after is None:
            rows.append(
                f"| {kit.name} | `{name}` | {fault.description} | **not caught** | – | "
                f"{exhaustive} | – | – | – | {elapsed:.1f} s |"
            )
            continue
        replay = run_actions(kit, trace.config, trace.actions)
        reproduced = replay.describe_failure() == report.violation
        caught = (trace.failure or {}).get("invariant", "?")
        runs, seconds = report.found_after
        phase = "scenario" if report.examples == 0 else "generated"
        cut = " (cut)" if report.shrink_cut else ""
        rows.append(
            f"| {kit.name} | `{name}` | {fault.description} | `{caught}` | "
            f"{len(trace.actions)}{cut} | {exhaustive} | "
            f"{'yes' if reproduced else 'NO'} | {runs} {phase} | {seconds:.1f} s | "
            f"{elapsed:.1f} s |"
        )
        print(rows[-1], file=sys.stderr)
    phase = "generated runs only" if args.no_scenarios else "seed scenarios, then generated runs"
    only = "".join(f" --fault {name}" for name in args.fault or ())
    only += "".join(f" --extension {name}" for name in args.extension or ())
    examples = "" if args.examples == DEFAULT_EXAMPLES else f" --examples {args.examples}"
    examples += f" --check-depth {args.check_depth}" if args.check_depth != 8 else ""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    table = [
        f"Measured with `python bench/mutation.py --seed {args.seed} --time-budget "
        f"{args.time_budget:g}{examples}{' --no-scenarios' if args.no_scenarios else ''}"
        f"{only}` "
        f"({phase}) on {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores shared with other work (load average "
        f"at the end: {load}).",
        "",
        "| extension | fault | what it breaks | caught by | counterexample (actions) "
        "| check's shortest (actions) | replay reproduces | found after (runs) "
        "| found after (time) | total time |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    out = Path(args.out)
    if args.append:
        heading = f"## {phase.capitalize()}, seed {args.seed}"
        text = out.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + heading + "\n\n"
        out.write_text(text + "\n".join(table), encoding="utf-8")
    else:
        out.write_text("\n".join([*HEADER, *table]), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
