"""The exhaustive check's figures: every alphabet of every kit to a depth, and its scaling.

    python bench/bench_check.py [--depth 8] [--extension NAME …] [--workers N]
                                [--baseline-depth D] [--ray] [--scaling DEPTH]
                                [--out docs/check.md]

For each kit (or ``--extension``) it runs ``pictx-fsm check``'s search (:func:`check`) on
every alphabet to ``--depth`` with ``--workers`` local worker processes (default 2; 1: this
process alone) and prints one row per search — distinct states, transitions, depth reached,
the search's wall time and states per second — and one per kit: its wall time, the CPU time
of this process and its workers, states per second of wall and of CPU time.
``--baseline-depth D`` measures, in the same run, each kit to depth D in one process and
with the workers: the speed-up of the workers over the one-process replay.
``--ray`` runs the searches on a local Ray instead. ``--scaling DEPTH`` measures one search
(pi-context's ``turns``) to DEPTH on 1 and on 2 Ray workers and reports the speed-up and the
efficiency (speed-up over workers). ``--out`` writes the searches' table as section
``bench_check`` of the file and the scaling table as ``bench_check_scaling``
(``doc_sections``: ``docs/check.md`` and ``docs/performance.md`` hold them). Nothing asserts
a time: the bench reports.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from doc_sections import write_section

from pictx_fsm.testing.check import CheckOptions, ExpanderFactory, check, expand, serial_expander
from pictx_fsm.testing.kit import kit_named, kit_names
from pictx_fsm.testing.local_check import local_expander

SECTION = "bench_check"
TURN_BELL = (
    Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "extensions" / "turn_bell"
)


def _searches(names: list[str], depth: int, workers: int, ray: object) -> list[str]:
    rows = []
    for name in names:
        kit = kit_named(name)
        with _expander(workers, ray) as expander:
            began, cpu = time.perf_counter(), _cpu()
            report = check(kit, CheckOptions(depth=depth), progress=_show, expander=expander)
            total = time.perf_counter() - began
        cpu = _cpu() - cpu  # the workers' CPU time is counted once they have ended
        for search in report.searches:
            rows.append(
                f"| {kit.name} | `{search.alphabet}` ({len(search.actions)}) | "
                f"{search.depth}{'' if search.complete else ' (cut)'} | {search.states:,} | "
                f"{search.transitions:,} | {search.elapsed:.0f} s | | "
                f"{search.states_per_second:,.1f} | |"
            )
            print(rows[-1], file=sys.stderr, flush=True)
        rows.append(
            f"| **{kit.name}** | all | | {report.states:,} | {report.transitions:,} | "
            f"{total:.0f} s | {cpu:.0f} s | {report.states / total:,.1f} | "
            f"{report.states / max(cpu, 1e-9):,.1f} |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def _baseline(names: list[str], depth: int, workers: int) -> list[str]:
    """Each kit to ``depth`` replayed in this process, then with ``workers`` workers."""
    rows = []
    for name in names:
        kit = kit_named(name)
        seconds = []
        for count in (1, workers):
            with _expander(count, None) as expander:
                began = time.perf_counter()
                report = check(kit, CheckOptions(depth=depth), expander=expander)
                seconds.append(time.perf_counter() - began)
        rows.append(
            f"| {kit.name} | {depth} | {report.states:,} | {report.transitions:,} | "
            f"{seconds[0]:.1f} s | {seconds[1]:.1f} s | {seconds[0] / seconds[1]:.2f}× |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


@contextmanager
def _expander(workers: int, ray: object) -> Iterator[ExpanderFactory]:
    if ray is not None:
        yield ray  # type: ignore[misc]
    elif workers == 1:
        yield serial_expander
    else:
        with local_expander(workers) as factory:
            yield factory


def _cpu() -> float:
    """CPU seconds of this process and of its ended children (the workers)."""
    own, ended = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime


def _show(p: object) -> None:
    """Each layer as it completes (a long run shows how far it got)."""
    print(f"  {p}", file=sys.stderr, flush=True)


def _scaling(depth: int) -> list[str]:
    import ray

    from pictx_fsm.testing.ray_check import ray_expander
    from pictx_fsm.testing.ray_support import connect

    kit = kit_named("pi-context")
    options = CheckOptions(depth=depth, alphabets=("turns",))
    rows = []
    base = None
    for workers in (1, 2):
        connect("local", workers)
        started = time.perf_counter()
        report = check(kit, options, expander=ray_expander(workers))
        seconds = time.perf_counter() - started
        base = base or seconds
        speedup = base / seconds
        rows.append(
            f"| {workers} | {report.states:,} | {report.transitions:,} | {seconds:.1f} s | "
            f"{report.states / seconds:,.1f} | {speedup:.2f}× | {speedup / workers:.0%} |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
        ray.shutdown()
    return rows


def _snapshot() -> list[str]:
    """Replaying a prefix against copying a world: the choice ``expand`` makes."""
    import copy

    kit = kit_named("pi-context")
    config = kit.check_configs(CheckOptions().settings(kit))[0]
    alphabet = kit.alphabets()["turns"]
    names = [type(a).__name__ for a in alphabet]
    prompt, settle = names.index("Prompt"), names.index("Settle")
    path = (prompt, settle) * 4
    runs = 20
    started = time.perf_counter()
    for _ in range(runs):
        expand(kit, config, alphabet, path)
    replay = (time.perf_counter() - started) / runs
    rows = [f"| replay {len(path)} actions, checks, canonical state | {replay * 1000:.1f} ms |"]
    for label, prefix in (("idle", path), ("mid-run", (prompt,))):
        world = kit.world(config)
        for index in prefix:
            world.apply(alphabet[index])
        try:
            started = time.perf_counter()
            copy.deepcopy(world)
            outcome = f"{(time.perf_counter() - started) * 1000:.1f} ms"
        except Exception as error:  # what a snapshot would meet
            outcome = f"impossible: {type(error).__name__}: {error}"
        finally:
            world.release()
        rows.append(f"| `copy.deepcopy` of a world {label} | {outcome} |")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--extension", action="append")
    parser.add_argument("--ray", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--baseline-depth", type=int, metavar="D")
    parser.add_argument("--scaling", type=int, metavar="DEPTH")
    parser.add_argument("--snapshot", action="store_true", help="replay against copy")
    parser.add_argument("--out")
    args = parser.parse_args()
    started_load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    sys.path.insert(0, str(TURN_BELL))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, (str(TURN_BELL), os.environ.get("PYTHONPATH")))
    )
    names = args.extension or [*kit_names(), "turn_bell:KIT"]
    ray: object = None
    if args.ray:
        from pictx_fsm.testing.ray_check import ray_expander
        from pictx_fsm.testing.ray_support import connect

        connect("local", args.workers)
        ray = ray_expander(args.workers)
    load = lambda: ", ".join(f"{x:.1f}" for x in os.getloadavg())  # noqa: E731
    where = (
        f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} cores shared with other work"
    )
    lines = []
    if args.snapshot:
        lines += ["| expanding a state by | cost |", "|---|---|", *_snapshot(), ""]
    if (not args.scaling and not args.snapshot) or args.extension:
        rows = _searches(names, args.depth, args.workers, ray)
        extensions = [f"--extension {n}" for n in args.extension or ()]
        workers = f"--ray --workers {args.workers}" if args.ray else f"--workers {args.workers}"
        command = " ".join([f"--depth {args.depth}", *extensions, workers])
        lines += [
            f"Measured with `python bench/bench_check.py {command}` on {where} (load average "
            f"before: {started_load}; at the end: {load()}).",
            "",
            "| extension | alphabet (actions) | depth | distinct states | transitions | wall time "
            "| CPU time | states/s (wall) | states/CPU s |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    if args.baseline_depth:
        rows = _baseline(names, args.baseline_depth, args.workers)
        lines += [
            f"The same kits to depth {args.baseline_depth}, replayed in one process and with "
            f"{args.workers} worker processes, in the same run (load average at the end: "
            f"{load()}):",
            "",
            f"| extension | depth | distinct states | transitions | 1 process | {args.workers} "
            "workers | speed-up |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    scaling: list[str] = []
    if args.scaling:
        rows = _scaling(args.scaling)
        scaling += [
            f"Scaling, measured with `python bench/bench_check.py --scaling {args.scaling}` "
            f"(pi-context's `turns` to depth {args.scaling}, on a local Ray) on {where} (load "
            f"average at the end: {load()}).",
            "",
            "| workers | distinct states | transitions | time | states/s | speed-up | efficiency |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    print("\n".join([*lines, *scaling]))
    if args.out and lines:
        write_section(Path(args.out), SECTION, "\n".join(lines))
    if args.out and scaling:
        write_section(Path(args.out), f"{SECTION}_scaling", "\n".join(scaling))
    return 0


if __name__ == "__main__":
    sys.exit(main())
