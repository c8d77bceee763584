"""``pictx-fsm check``: every sequence of host actions up to a depth, breadth first.

For each extension's kit (``--extension``, default ``all`` registered ones) and each of its
alphabets (``--alphabet``, default all of them) it explores every action sequence of length
at most ``--depth``, deduplicating on the canonical state and checking every invariant after
every action (:mod:`pictx_fsm.testing.check`). It reports the distinct states, transitions,
the depth reached and states per second, the declared transitions fired within the bound
and those that were not (named). A violation is written as the shortest counterexample,
a trace ``pictx-fsm replay`` reads. Exit 0 clean, 1 with a counterexample (or a planted
fault not found within the bound), 2 on bad options. ``--workers N`` replays each layer in N
local processes (default one per CPU); ``--ray [ADDRESS]`` shards the frontier over Ray
workers instead (``pip install 'pictx-fsm[ray]'``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pictx_fsm.errors import UsageError
from pictx_fsm.testing.kit import Kit, kit_named, kit_names
from pictx_fsm.testing.ray_support import add_ray_arguments, check_workers

if TYPE_CHECKING:
    from collections.abc import Callable

    from pictx_fsm.testing.check import CheckOptions, CheckReport, ExpanderFactory, Progress

__all__ = ["configure", "run"]

MAX_DEPTH = 64


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--depth", type=int, default=8, help="longest action sequence (default 8)")
    parser.add_argument(
        "--extension",
        default="all",
        metavar="NAME",
        help="an extension's kit by name, module:attribute, or all registered ones (default)",
    )
    parser.add_argument(
        "--alphabet",
        action="append",
        metavar="NAME",
        help="explore only this alphabet of the kit (repeatable; default: all of them)",
    )
    parser.add_argument("--fault", metavar="NAME", help="plant a deliberate fault (see docs)")
    parser.add_argument("--seed", type=int, default=0, help="the worlds' seed (default 0)")
    parser.add_argument(
        "--time-budget",
        type=float,
        help="seconds after which no further depth is started (default: none)",
    )
    parser.add_argument("--out", default="verify-out", help="where a counterexample goes")
    add_ray_arguments(
        parser,
        "the frontier sharded by state hash",
        "processes expanding each layer at once, local or on Ray",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress display")


def _kits(name: str) -> list[Kit]:
    if name == "all":
        return [kit_named(n) for n in kit_names()]
    return [kit_named(name)]


def _check_options(args: argparse.Namespace) -> None:
    if not 0 <= args.depth <= MAX_DEPTH:
        raise UsageError(f"--depth must be between 0 and {MAX_DEPTH}, not {args.depth}")
    if args.time_budget is not None and not args.time_budget > 0:
        raise UsageError(
            f"--time-budget must be a positive number of seconds, not {args.time_budget}"
        )
    if not 0 <= args.seed < 2**63:
        raise UsageError(f"--seed must be between 0 and 2**63 - 1, not {args.seed}")
    check_workers(args.workers)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a directory")


def run(args: argparse.Namespace) -> int:
    from pictx_fsm.testing.check import CheckOptions

    _check_options(args)
    kits = _kits(args.extension)
    if args.fault is not None:
        kits = [kit for kit in kits if args.fault in kit.faults]
        if not kits:
            known = sorted({f for k in _kits("all") for f in k.faults})
            raise UsageError(f"--fault {args.fault}: no such planted fault here; known: {known}")
    plans = []
    for kit in kits:
        options = CheckOptions(
            depth=args.depth,
            alphabets=tuple(args.alphabet or ()),
            fault=args.fault,
            seed=args.seed,
            time_budget=args.time_budget,
        )
        try:
            options.alphabet_names(kit)
        except ValueError as error:
            raise UsageError(f"--alphabet: {error}") from None
        plans.append((kit, options))
    with _expander(args) as expander:
        failed = False
        for kit, options in plans:
            report = _explore(args, kit, options, expander)
            failed |= _summarise(args, report)
    return 1 if failed else 0


@contextmanager
def _expander(args: argparse.Namespace) -> Iterator[ExpanderFactory | None]:
    """Ray workers (``--ray``), local worker processes (``--workers``, by default one per
    CPU) or, with one worker, this process."""
    if args.ray is not None:
        from pictx_fsm.testing.ray_support import connect

        connect(args.ray, args.workers)
        from pictx_fsm.testing.ray_check import ray_expander

        yield ray_expander(args.workers)
        return
    workers = args.workers if args.workers is not None else os.cpu_count() or 1
    if workers == 1:
        yield None
        return
    from pictx_fsm.testing.local_check import local_expander

    with local_expander(workers) as factory:
        yield factory


def _explore(
    args: argparse.Namespace, kit: Kit, options: CheckOptions, expander: ExpanderFactory | None
) -> CheckReport:
    from pictx_fsm.testing.check import check

    progress = None if args.quiet else _progress_line()
    if expander is None:
        return check(kit, options, progress)
    return check(kit, options, progress, expander=expander)


def _progress_line() -> Callable[[Progress], None]:
    def show(p: Progress) -> None:
        print(
            f"[{p.extension} · {p.alphabet}] depth {p.depth} · {p.states:,} states · "
            f"{p.transitions:,} transitions · {p.elapsed:.1f}s",
            file=sys.stderr,
            flush=True,
        )

    return show


def _summarise(args: argparse.Namespace, report: CheckReport) -> bool:
    kit, options = report.kit, report.options
    described = kit.describe_settings(report.settings)
    print(
        f"pictx-fsm check · {kit.name} · models {kit.machines().fingerprint[:12]} · depth "
        f"{options.depth}" + (f" · {described}" if described else "")
    )
    if options.fault:
        print(f"planted fault  {options.fault}")
    for search in report.searches:
        names = ", ".join(_action_text(kit, a) for a in search.actions)
        state = "complete" if search.complete else f"stopped at depth {search.depth}"
        if search.bound < options.depth:
            state += f" (its horizon; --alphabet {search.alphabet} explores depth {options.depth})"
        apart = f", {search.apart:,} kept apart (not canonical)" if search.apart else ""
        print(f"alphabet       {search.alphabet} ({len(search.actions)} actions): {names}")
        print(
            f"  {kit.describe(search.config)}: depth {search.depth}/{search.bound} {state}: "
            f"{search.states:,} distinct states{apart}, {search.transitions:,} transitions, "
            f"{search.elapsed:.1f}s, {search.states_per_second:,.0f} states/s"
        )
    failed = False
    print(f"invariants     {len(kit.invariant_names)} checked on every state", end="")
    if report.failed:
        failed = True
        trace = report.counterexample
        assert trace is not None
        path = _write(args, report)
        print(": VIOLATED")
        print(f"  {report.violation}")
        print(f"  shortest counterexample: {len(trace.actions)} actions, written to {path}")
        print(f"  reproduce with: pictx-fsm replay {path}")
    else:
        print(": all held")
    _print_coverage(report)
    if options.fault and not report.failed:
        failed = True
        print(f"planted fault not found within depth {options.depth}: {options.fault}")
    print(
        f"result         {'FAILED' if failed else 'OK'} ({report.states:,} states, "
        f"{report.transitions:,} transitions in {report.elapsed:.1f}s)"
    )
    return failed


def _action_text(kit: Kit, action: object) -> str:
    data = kit.action_to_json(action)
    kind = data.pop("action")
    shown = [f"{k}={v}" for k, v in data.items() if v not in ((), [], None)]
    return f"{kind}({', '.join(shown)})" if shown else kind


def _print_coverage(report: CheckReport) -> None:
    from pictx_fsm.testing.coverage import coverage_of

    machines = report.kit.machines()
    coverage = coverage_of(machines, {t: 1 for t in report.fired})
    print(
        f"transitions    {coverage.covered}/{coverage.declared} declared transitions fired "
        "within the bound"
    )
    for row in coverage.rows:
        if row.fired:
            continue
        reason = f" (exempted: {row.exemption})" if row.exemption else ""
        print(f"  not reached: {row.transition}{reason}")


def _write(args: argparse.Namespace, report: CheckReport) -> Path:
    trace = report.counterexample
    assert trace is not None
    name = report.options.fault or f"depth{report.options.depth}"
    try:
        return trace.save(Path(args.out) / f"check-{report.kit.name}-{name}.json")
    except OSError as error:
        raise UsageError(f"--out {args.out}: {error.strerror or error}") from None
