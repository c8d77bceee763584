"""Issue 11's benchmark suite in one command: every row of its table, with its target.

    python bench/run.py [--quick] [--out docs/performance.md] [--skip NAME …]

Runs the benches one after the other, each measuring its rows as ratios within its own run:

- ``runtime`` (``bench_runtime.py``): the runtime per hook at 1k, 10k and 100k entries, audit
  off and on, both session shapes, and what the audit adds per hook;
- ``audit`` (``bench_audit.py``): ``pictx-fsm audit`` against a ``json.loads`` loop (and an
  ``orjson.loads`` loop) on the real corpus ×N and on a generated session, its peak RSS at
  10 MB and 100 MB, and ``pictx-fsm --help`` beside ``python -c pass``;
- ``verify`` (``bench_verify.py speed``, its workers fresh processes): verify's host actions
  per second against a trivial Hypothesis ``RuleBasedStateMachine`` (its own section, with a
  before/after comparison, is written by ``bench_verify.py speed --baseline … --out …``);
- ``foundation`` (``bench_foundation.py``, not in quick mode): the per-hook questions,
  incremental against pi-context's rescans.

It prints one table, ``row | measured | target | met/NOT met``. ``--quick`` runs the same rows
on small inputs (1k/10k entries, 10 MB files, short verify rounds) in a few minutes: a smoke
run, whose figures are not the issue's. ``--out`` lets each bench rewrite its own section of
the file and writes the table as this script's section (``bench_run``); the rest of the file
is kept (``doc_sections``). Nothing asserts a time: the benches report.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import bench_audit
import bench_foundation
import bench_runtime
from attrs import frozen
from bench_verify import TARGET_ACTIONS_PER_SECOND as TARGET_ACTIONS
from doc_sections import write_section

ROOT = Path(__file__).resolve().parent.parent
SECTION = "bench_run"
BENCHES = ("runtime", "audit", "verify", "foundation")
Row = tuple[str, str, str, bool | None]


@frozen(kw_only=True)
class Plan:
    """What each bench runs: the full sizes, or the quick ones."""

    sizes: tuple[int, ...]
    rounds: int
    corpus_mb: float
    generated_mb: float
    audit_runs: int
    help_runs: int
    verify_seconds: float
    verify_rounds: int

    @classmethod
    def of(cls, quick: bool) -> Plan:
        if quick:
            return cls(
                sizes=(1000, 10000),
                rounds=3,
                corpus_mb=10,
                generated_mb=10,
                audit_runs=2,
                help_runs=7,
                verify_seconds=8,
                verify_rounds=1,
            )
        return cls(
            sizes=(1000, 10000, 100000),
            rounds=9,
            corpus_mb=99,
            generated_mb=100,
            audit_runs=3,
            help_runs=15,
            verify_seconds=40,
            verify_rounds=3,
        )


# --------------------------------------------------------------------------------------------
# the benches, each giving its rows


def runtime_rows(plan: Plan, out: Path | None) -> list[Row]:
    tables = bench_runtime.run(plan.sizes, plan.rounds, bench_runtime.SHAPES)
    if out is not None:
        sizes = " ".join(map(str, plan.sizes))
        command = f"python bench/bench_runtime.py --sizes {sizes} --rounds {plan.rounds}"
        write_section(out, bench_runtime.SECTION, bench_runtime.section(tables, command))
    return [
        (f"{row.strip()} [shape {table.shape}]", measured, target, met)
        for table, _ in tables
        for row, measured, target, met in bench_runtime.target_rows(table)
        if not row.startswith(" ")  # the per-kind guard rows stay in the bench's own section
    ]


def audit_rows(plan: Plan, out: Path | None) -> list[Row]:
    figures = bench_audit.measure(
        plan.corpus_mb, plan.generated_mb, plan.audit_runs, plan.help_runs
    )
    found = bench_audit.rows(figures, plan.help_runs)
    if out is not None:
        command = (
            f"python bench/bench_audit.py --corpus-mb {plan.corpus_mb:g} --generated-mb "
            f"{plan.generated_mb:g} --runs {plan.audit_runs} --help-runs {plan.help_runs}"
        )
        write_section(out, bench_audit.SECTION, bench_audit.report(found, command))
    return found


_VERIFY_ROW = re.compile(r"\| `verify` generated runs \(this checkout\) \| ([\d,]+) \| ([\d,]+) \|")
_TRIVIAL_ROW = re.compile(r"\| trivial `RuleBasedStateMachine`[^|]*\| ([\d,]+) \| ([\d,]+) \|")


def verify_rows(plan: Plan, out: Path | None) -> list[Row]:
    """``bench_verify.py speed`` as its own process; its printed table is read back for the
    row. Its own section of the file is left as it is (it holds a before/after comparison
    with ``--baseline`` that this suite does not make)."""
    command = [
        sys.executable,
        str(ROOT / "bench" / "bench_verify.py"),
        "speed",
        "--seconds",
        f"{plan.verify_seconds:g}",
        "--rounds",
        str(plan.verify_rounds),
        "--out",
        "",
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    verify, trivial = _VERIFY_ROW.search(done.stdout), _TRIVIAL_ROW.search(done.stdout)
    row = "verify throughput (host actions per CPU second; per wall second)"
    if done.returncode != 0 or verify is None or trivial is None:
        why = done.stderr.strip().splitlines()[-1:] or ["no table printed"]
        return [
            (row, f"not measured: bench_verify failed ({why[0]})", f"≥ {TARGET_ACTIONS}", False)
        ]
    cpu, wall = (int(verify.group(i).replace(",", "")) for i in (1, 2))
    base = int(trivial.group(1).replace(",", ""))
    measured = (
        f"{cpu:,}/s; {wall:,}/s (a trivial `RuleBasedStateMachine`: {base:,}/s, ratio "
        f"{cpu / base:.3f})"
    )
    return [(row, measured, f"≥ {TARGET_ACTIONS:,.0f}/s", cpu >= TARGET_ACTIONS)]


def foundation_rows(plan: Plan, out: Path | None) -> list[Row]:
    found, builds = bench_foundation.run(list(plan.sizes))
    if out is not None:
        command = f"python bench/bench_foundation.py --sizes {' '.join(map(str, plan.sizes))}"
        text = bench_foundation.report(found, builds, command)
        write_section(out, bench_foundation.SECTION, text)
    usage = max((r for r in found if r.question.startswith("append one")), key=lambda r: r.size)
    return [
        (
            f"issue 2: append one entry, then window + usage, rescan / incremental "
            f"({usage.size:,} entries)",
            f"{usage.ratio:,.0f}×",
            "≥ 100×",
            usage.ratio >= 100,
        )
    ]


RUNNERS = {
    "runtime": runtime_rows,
    "audit": audit_rows,
    "verify": verify_rows,
    "foundation": foundation_rows,
}


# --------------------------------------------------------------------------------------------
# the table


def verdict(met: bool | None) -> str:
    return "" if met is None else ("met" if met else "NOT met")


def table(found: Sequence[Row]) -> list[str]:
    return [
        "| row | measured | target | |",
        "|---|---|---|---|",
        *(f"| {r} | {m} | {t} | {verdict(ok)} |" for r, m, t, ok in found),
    ]


def section(found: Sequence[Row], command: str, minutes: float) -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    unmet = [r for r, _, _, ok in found if ok is False]
    status = (
        "Every row meets its target."
        if not unmet
        else f"{len(unmet)} of {sum(ok is not None for *_, ok in found)} rows do **not** meet "
        "their target (marked NOT met)."
    )
    return "\n".join(
        [
            "## Issue 11's table (`bench/run.py`)",
            "",
            f"- Command: `{command}` ({minutes:.0f} min)",
            f"- Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}; load average {load} when written (a shared machine:",
            "  each row is a ratio or a figure of one run; the sections below give the details)",
            "",
            *table(found),
            "",
            status,
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs: a smoke run")
    parser.add_argument("--out", type=Path, help="rewrite the benches' sections of this file")
    parser.add_argument("--skip", nargs="+", choices=BENCHES, default=[])
    args = parser.parse_args(argv)
    if args.out is not None:
        args.out = args.out.resolve()  # verify's bench writes it from its own process
    plan = Plan.of(args.quick)
    skip = {*args.skip, *(("foundation",) if args.quick else ())}
    started = time.monotonic()
    found: list[Row] = []
    for name in BENCHES:
        if name in skip:
            if name in args.skip:  # said in the table: its rows are not this run's
                found.append(
                    (f"`{name}` bench", f"skipped in this run (`--skip {name}`)", "", None)
                )
            continue
        print(f"== {name}", file=sys.stderr, flush=True)
        found += RUNNERS[name](plan, args.out)
    print("\n".join(table(found)))
    unmet = sum(ok is False for *_, ok in found)
    print(f"\n{unmet} row(s) NOT met" if unmet else "\nevery row met")
    if args.out is not None:
        shown = " ".join(sys.argv[1:] if argv is None else argv)
        minutes = (time.monotonic() - started) / 60
        write_section(args.out, SECTION, section(found, f"python bench/run.py {shown}", minutes))
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
