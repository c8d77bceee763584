"""The exhaustive check's figures: every alphabet of every kit to a depth, and its scaling.

    python bench/bench_check.py [--depth 8] [--extension NAME …] [--ray [--workers N]]
                                [--scaling DEPTH] [--out docs/performance.md]

For each kit (or ``--extension``) it runs ``pictx-fsm check``'s search (:func:`check`) on
every alphabet to ``--depth`` and prints one row per search: distinct states, transitions,
depth reached, seconds and states per second. ``--ray`` runs them on a local Ray with
``--workers`` workers. ``--scaling DEPTH`` measures one search (pi-context's ``turns``) to
DEPTH on 1 and on 2 Ray workers and reports the speed-up and the efficiency (speed-up over
workers). ``--out`` writes the searches' table as section ``bench_check`` of the file and the
scaling table as ``bench_check_scaling`` (``doc_sections``: ``docs/check.md`` and
``docs/performance.md`` hold them). Nothing asserts a time: the bench reports.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from doc_sections import write_section

from pictx_fsm.testing.check import CheckOptions, check, expand, serial_expander
from pictx_fsm.testing.kit import kit_named, kit_names

SECTION = "bench_check"
TURN_BELL = (
    Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "extensions" / "turn_bell"
)


def _searches(names: list[str], depth: int, expander: object) -> list[str]:
    rows = []
    for name in names:
        kit = kit_named(name)
        started = time.perf_counter()
        report = check(
            kit,
            CheckOptions(depth=depth),
            progress=_show,
            expander=expander,  # type: ignore[arg-type]
        )
        total = time.perf_counter() - started
        for search in report.searches:
            rows.append(
                f"| {kit.name} | `{search.alphabet}` ({len(search.actions)}) | "
                f"{search.depth}{'' if search.complete else ' (cut)'} | {search.states:,} | "
                f"{search.transitions:,} | {search.elapsed:.0f} s | {search.cpu:.0f} s | "
                f"{search.states_per_second:,.1f} | {search.states / max(search.cpu, 1e-9):,.1f} |"
            )
            print(rows[-1], file=sys.stderr, flush=True)
        rows.append(
            f"| {kit.name} | all | | {report.states:,} | {report.transitions:,} | {total:.0f} s | |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


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
    parser.add_argument("--scaling", type=int, metavar="DEPTH")
    parser.add_argument("--snapshot", action="store_true", help="replay against copy")
    parser.add_argument("--out")
    args = parser.parse_args()
    sys.path.insert(0, str(TURN_BELL))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, (str(TURN_BELL), os.environ.get("PYTHONPATH")))
    )
    names = args.extension or [*kit_names(), "turn_bell:KIT"]
    expander: object = serial_expander
    if args.ray:
        from pictx_fsm.testing.ray_check import ray_expander
        from pictx_fsm.testing.ray_support import connect

        connect("local", args.workers)
        expander = ray_expander(args.workers)
    load = lambda: ", ".join(f"{x:.1f}" for x in os.getloadavg())  # noqa: E731
    where = (
        f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} cores shared with other work"
    )
    lines = []
    if args.snapshot:
        lines += ["| expanding a state by | cost |", "|---|---|", *_snapshot(), ""]
    if (not args.scaling and not args.snapshot) or args.extension:
        rows = _searches(names, args.depth, expander)
        ray = f" --ray --workers {args.workers}" if args.ray else ""
        lines += [
            f"Measured with `python bench/bench_check.py --depth {args.depth}{ray}` on {where} "
            f"(load average at the end: {load()}).",
            "",
            "| extension | alphabet (actions) | depth | distinct states | transitions | wall time "
            "| CPU time | states/s (wall) | states/CPU s |",
            "|---|---|---|---|---|---|---|---|---|",
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
