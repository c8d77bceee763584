"""Planted faults under the exhaustive check, each bounded by verify's counterexample.

    python bench/check_faults.py [--extension NAME]… [--fault NAME]… [--alphabet NAME]…
                                 [--seed 0] [--time-budget 45] [--check-time-budget S]
                                 [--out docs/mutation.md]

For every planted fault of every extension's kit (or of ``--extension``): ``verify``'s
exploration, as ``pictx-fsm verify --fault NAME --seed N`` runs it (seed scenarios, then
generated runs), gives the length L of its shrunk counterexample; then ``pictx-fsm check
--fault NAME --depth L`` explores every alphabet of the kit breadth first, so what it finds
is a shortest counterexample there and no longer than verify's. Each row records both
lengths, the alphabet the check's counterexample lies in, the check's states and wall time,
and whether its trace — written to a file and read back as ``pictx-fsm replay`` reads it —
reproduces the failure. ``--alphabet`` narrows the check to those alphabets (its rows then
say so: a shortest counterexample *there*); ``--check-time-budget`` starts no further depth
after S seconds. Each invocation's table is written between its own markers in ``--out``
(by extension, and by the faults and alphabets it was narrowed to) after every fault, so a
stopped run leaves the rows it measured, and says so.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from attrs import frozen

from pictx_fsm.testing.check import CheckOptions, check
from pictx_fsm.testing.explore import ExploreOptions, explore
from pictx_fsm.testing.kit import Kit, kit_named, kit_names
from pictx_fsm.testing.trace import load_trace, run_actions

__all__ = ["FaultRow", "main", "measure"]


@frozen(kw_only=True)
class FaultRow:
    fault: str
    caught_by: str
    verify: int | None
    check: int | None
    alphabet: str
    states: int
    seconds: float
    replays: bool
    reached: int = 0
    """The deepest layer every search completed (when none was found)."""


def measure(kit: Kit, fault: str, args: argparse.Namespace, out: Path) -> FaultRow:
    """Verify's shortest (shrunk) counterexample for ``fault``, then the check to its length."""
    found = explore(kit, ExploreOptions(seed=args.seed, time_budget=args.time_budget, fault=fault))
    trace = found.counterexample
    if trace is None:
        return FaultRow(
            fault=fault, caught_by="–", verify=None, check=None, alphabet="–", states=0,
            seconds=0.0, replays=False,
        )  # fmt: skip
    depth = len(trace.actions)
    started = time.perf_counter()
    options = CheckOptions(
        depth=depth,
        fault=fault,
        seed=args.seed,
        alphabets=tuple(args.alphabet or ()),
        time_budget=args.check_time_budget,
    )
    report = check(kit, options)
    seconds = time.perf_counter() - started
    shortest = report.counterexample
    caught = (trace.failure or {}).get("invariant", "?")
    if shortest is None:
        return FaultRow(
            fault=fault, caught_by=caught, verify=depth, check=None, alphabet="–",
            states=report.states, seconds=seconds, replays=False,
            reached=min(s.depth for s in report.searches),
        )  # fmt: skip
    path = shortest.save(out / f"check-{kit.name}-{fault}.json")
    written = load_trace(path)
    replayed = run_actions(written.kit, written.config, written.actions).describe_failure()
    return FaultRow(
        fault=fault,
        caught_by=(shortest.failure or {}).get("invariant", "?"),
        verify=depth,
        check=len(shortest.actions),
        alphabet=next(s.alphabet for s in report.searches if s.violation is not None),
        states=report.states,
        seconds=seconds,
        replays=replayed is not None and replayed == (written.failure or {}).get("message"),
    )


def _line(kit: Kit, row: FaultRow) -> str:
    verify = "not caught" if row.verify is None else str(row.verify)
    if row.check is None:
        shortest = "–"
        if row.verify is not None and row.reached < row.verify:
            shortest = f"**not found**: depth {row.reached} of {row.verify} explored"
        elif row.verify is not None:
            shortest = f"**none within {row.verify}**"
        return (
            f"| {kit.name} | `{row.fault}` | {verify} | {shortest} | – | {row.states:,} | "
            f"{row.seconds:.1f} s | – |"
        )
    return (
        f"| {kit.name} | `{row.fault}` | {verify} | {row.check} (`{row.caught_by}`) | "
        f"`{row.alphabet}` | {row.states:,} | {row.seconds:.1f} s | "
        f"{'yes' if row.replays else '**NO**'} |"
    )


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _narrowed(args: argparse.Namespace) -> str:
    """The options that narrow a run (its command's tail, and its markers' key)."""
    text = "".join(f" --fault {name}" for name in args.fault or ())
    text += "".join(f" --alphabet {name}" for name in args.alphabet or ())
    if args.check_time_budget is not None:
        text += f" --check-time-budget {args.check_time_budget:g}"
    return text


def _block(kit: Kit, args: argparse.Namespace, lines: list[str], total: int, commit: str) -> str:
    only = _narrowed(args)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    done = len(lines)
    stopped = "" if done == total else f" **Stopped: {done} of {total} faults measured.**"
    return "\n".join(
        [
            f"Measured with `python bench/check_faults.py --extension {kit.name} --seed "
            f"{args.seed} --time-budget {args.time_budget:g}{only}` at {commit} on "
            f"{platform.python_implementation()} {platform.python_version()}, "
            f"{platform.machine()}, {os.cpu_count()} cores shared with other work (load "
            f"average at the end: {load}).{stopped}",
            "",
            "| extension | fault | verify (actions) | check's shortest (actions, caught by) | "
            "alphabet | distinct states | check time | replays |",
            "|---|---|---|---|---|---|---|---|",
            *lines,
        ]
    )


def _write(out: Path, kit: Kit, args: argparse.Namespace, block: str) -> None:
    key = kit.name + _narrowed(args).replace(" --", ":").replace(" ", "=")
    begin, end = f"<!-- check_faults:{key}:begin -->", f"<!-- check_faults:{key}:end -->"
    text = out.read_text(encoding="utf-8")
    section = f"{begin}\n{block}\n{end}"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + f"\n\n{section}\n"
    out.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--extension", action="append", help="only these (default: all)")
    parser.add_argument("--fault", action="append", help="only these faults (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-budget", type=float, default=45.0, help="verify's budget")
    parser.add_argument("--alphabet", action="append", help="check only these alphabets")
    parser.add_argument(
        "--check-time-budget", type=float, help="seconds after which check starts no depth"
    )
    parser.add_argument("--out", default="docs/mutation.md")
    args = parser.parse_args()
    out = Path(args.out)
    commit = _commit()
    with tempfile.TemporaryDirectory(prefix="check-faults-") as traces:
        for kit in (kit_named(name) for name in args.extension or kit_names()):
            faults = [f for f in kit.faults if not args.fault or f in args.fault]
            lines: list[str] = []
            for fault in faults:
                row = measure(kit, fault, args, Path(traces))
                lines.append(_line(kit, row))
                print(lines[-1], file=sys.stderr, flush=True)
                _write(out, kit, args, _block(kit, args, lines, len(faults), commit))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
