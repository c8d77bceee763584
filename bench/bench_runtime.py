"""The runtime's cost per hook as the session grows: 1k / 10k / 100k entries, audit off and on.

    python bench/bench_runtime.py [--sizes 1000 10000 100000] [--rounds 9]
                                  [--out docs/performance.md]

Each size is a deterministic session shaped like a long pi-context run (the session builder of
``bench_foundation.py``) whose last window is the same at every size, so a size differs from
another only in what lies before the current window. One :class:`LifecycleRuntime` per size
handles every hook kind, each call from the same lifecycle state, with the audit off and on
(a file-backed :class:`AuditLog`); the context hooks carry the transcript the session layer
keeps (``tree.transcripts``), as a host builds it. Sizes and kinds are interleaved in every
round, and each call with the audit on is paired with one with it off, back to back, so the
ratios compare figures taken side by side; each figure is the lower quartile of the per-call
thread CPU times over all rounds (the machine is shared: wall time counts other processes' time
slices, and some calls are slowed by them), and what the audit adds is the median of the pairs'
differences (a pair shares the machine's state of the moment); the medians and the wall-time
ratios are printed alongside.

It prints every row with its target and whether it is met, and writes its own section of
``docs/performance.md`` (between ``bench_runtime`` markers; the rest of the file is kept).
Nothing asserts a time: the tests assert behaviour, this script measures it.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from attrs import frozen
from bench_foundation import SESSION_ID, SessionMaker, session_header
from doc_sections import write_section

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    GET_CONTEXT_REMAINING_TOOL,
    PI_CONTEXT_COMMAND,
    WIPE_MEMORY_TOOL,
)
from pictx_fsm.extensions.pi_context.windows import root_window_id
from pictx_fsm.host.events import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    Command,
    Context,
    ContextUsage,
    ContextWithSystem,
    HookEvent,
    HostContext,
    ModelInfo,
    ModelSelect,
    SessionBeforeCompact,
    SessionBeforeTree,
    SessionShutdown,
    SessionStart,
    SessionTreeEvent,
    ToolCall,
    TurnEnd,
    TurnStart,
)
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.session.projection import project_branch
from pictx_fsm.session.tree import SessionTree

TAIL = 120
"""Entries of the current window (after its marker) at every size."""
CALLS = 12
"""Calls per kind, size and audit setting in one round."""
TARGET_RATIO = 1.5
TARGET_AUDIT_US = 25.0
KIND_GUARD = 3.0
"""A single kind's 100k/1k ratio carries the machine's noise (±0.5× here); a scan of the
session shows as ≥ 10×, so each kind is held to this looser line, the mean to the target."""
SECTION = "bench_runtime"
"""Its section of docs/performance.md (``doc_sections``)."""

# --------------------------------------------------------------------------------------------
# the session and the hooks


SHAPES = ("windows", "root")
"""``windows``: a reset every ~200 entries, the leaf ``TAIL`` entries into its window (a long
pi-context session); ``root``: no reset at all, the root boot at the start (a long session in
its root window, as before pi-context's first reset or with it switched off)."""


def shaped_session(size: int, shape: str) -> list[Entry]:
    """``size`` entries whose last ``TAIL`` entries (turns drawn from one fixed seed, after a
    reset for ``windows``) are the same at every size; only what precedes them grows."""
    maker = SessionMaker(seed=size)
    if shape == "windows":
        entries = maker.session(size - TAIL - 3)
        maker.leaf = entries[-1].id  # what follows hangs under the last entry kept
        maker.since_reset = 10**9  # the next turn starts with a reset
        entries.extend(maker.reset())
    else:
        entries = list(maker.start())
        root = {"windowId": root_window_id(SESSION_ID)}
        entries.append(maker.custom_message(BOOT_TYPE, maker.text(150, 250), details=root))
        maker.since_reset = -(10**9)  # never a reset, never a budget message
        while len(entries) < size - TAIL:
            entries.extend(maker.turn())
        entries = entries[: size - TAIL]
        maker.leaf = entries[-1].id
    maker.rng = random.Random(7)
    while len(entries) < size:
        entries.extend(maker.turn())
    return entries[:size]


def host_messages(tree: SessionTree) -> tuple[Any, Any]:
    """What a host passes to ``context_with_system`` and ``context``: the session layer's
    transcripts where the tree keeps them (plain tuples on code that has none)."""
    transcripts = getattr(tree, "transcripts", None)
    if transcripts is not None:
        return transcripts.transcript(), transcripts.conversation()
    full = project_branch(tree.branch()).messages
    return full, tuple(m for m in full if m.get("role") != "system")


@frozen(kw_only=True)
class Kind:
    """One hook kind: the event timed, after untimed setup events (from the same state)."""

    name: str
    event: HookEvent
    setup: tuple[HookEvent, ...] = ()


def hook_kinds(tree: SessionTree, entries: Sequence[Entry]) -> list[Kind]:
    full, conversation = host_messages(tree)
    reply = next(
        e.message.raw
        for e in reversed(entries)
        if isinstance(e, MessageEntry) and e.message.role == "assistant"
    )
    earlier = entries[len(entries) // 2].id
    wipe = ToolCall(name=WIPE_MEMORY_TOOL, tool_call_id="call-1")
    return [
        Kind(name="session_start", event=SessionStart(reason="resume")),
        Kind(name="session_tree", event=SessionTreeEvent(new_leaf_id=tree.leaf_id)),
        Kind(name="turn_start", event=TurnStart(turn_index=1)),
        Kind(name="context", event=Context(messages=conversation)),
        Kind(name="context_with_system", event=ContextWithSystem(messages=full)),
        Kind(name="turn_end", event=TurnEnd(message=reply, turn_index=1)),
        Kind(name="turn_end (commits a reset)", event=TurnEnd(message=reply), setup=(wipe,)),
        Kind(name="agent_before_settle", event=AgentBeforeSettle()),
        Kind(name="agent_end", event=AgentEnd()),
        Kind(name="agent_settled", event=AgentSettled()),
        Kind(name="model_select", event=ModelSelect()),
        Kind(name="session_before_compact", event=SessionBeforeCompact(reason="threshold")),
        Kind(
            name="session_before_tree",
            event=SessionBeforeTree(user_wants_summary=True, target_id=earlier),
        ),
        Kind(name="tool get_context_remaining", event=ToolCall(name=GET_CONTEXT_REMAINING_TOOL)),
        Kind(name="tool wipe_memory", event=wipe),
        Kind(name="command /pi-context", event=Command(name=PI_CONTEXT_COMMAND)),
        Kind(name="session_shutdown", event=SessionShutdown()),
    ]


HOST = HostContext(
    usage=ContextUsage(tokens=20_000, context_window=200_000),
    model=ModelInfo(provider="faux", id="faux-1", context_window=200_000),
)


class Subject:
    """One session of one size and shape: its tree, one runtime, its hook kinds, the base
    state."""

    def __init__(self, size: int, shape: str, audit_dir: Path) -> None:
        entries = shaped_session(size, shape)
        self.size, self.shape = size, shape
        self.tree = SessionTree.from_entries(session_header(), entries)
        assert self.tree.leaf is not None and self.tree.leaf.depth == size - 1, "one path"
        self.runtime = LifecycleRuntime(self.tree)
        self.log = AuditLog(audit_dir / f"audit-{shape}-{size}.jsonl")
        self.kinds = hook_kinds(self.tree, entries)
        self.runtime.handle(SessionStart(reason="startup"), HOST)
        self.base = self.runtime.state

    def run(self, kind: Kind, calls: int, audit_first: bool) -> list[tuple[Times, Times]]:
        """``(audit off, audit on)`` CPU and wall nanoseconds of each of ``calls`` pairs of
        ``kind`` calls, every call from the base state; the two calls of a pair run back to
        back (which first alternates), so a pair's difference is what the audit adds at one
        moment of the machine, whatever else it is doing."""
        pairs = []
        for number in range(calls):
            first = audit_first if number % 2 == 0 else not audit_first
            one = self.call(kind, first)
            other = self.call(kind, not first)
            pairs.append((other, one) if first else (one, other))
        return pairs

    def call(self, kind: Kind, audit: bool) -> Times:
        """CPU and wall nanoseconds of one call of ``kind`` from the base state."""
        runtime = self.runtime
        runtime.audit = self.log if audit else None
        runtime.state = self.base
        for event in kind.setup:
            runtime.handle(event, HOST)
        started_cpu, started_wall = time.thread_time_ns(), time.perf_counter_ns()
        runtime.handle(kind.event, HOST)
        cpu = time.thread_time_ns() - started_cpu
        wall = time.perf_counter_ns() - started_wall
        runtime.state = self.base
        return cpu, wall


# --------------------------------------------------------------------------------------------
# measuring


Key = tuple[str, int, str, bool]
Times = tuple[int, int]
ADDS: Final = "adds"
"""The figures' entry for what the audit adds: per (shape, size, kind, True), the median of the
paired differences, in both of its clocks."""


def measure(subjects: list[Subject], rounds: int) -> dict[str, dict[Key, tuple[float, float]]]:
    """Per (shape, size, kind, audit): the lower quartile and the median of the per-call
    times over all rounds, and per (shape, size, kind) the median of what the audit added
    within each pair of calls; shapes, sizes and kinds interleaved in every round. The
    sessions are frozen out of the garbage collector's sight (``gc.freeze``), which is paused
    while a batch runs (as ``timeit`` does) and collects between rounds."""
    samples: dict[Key, list[Times]] = {}
    added: dict[Key, list[Times]] = {}
    for subject in subjects:  # warm-up: caches, lazily built indexes, first file writes
        for kind in subject.kinds:
            subject.run(kind, 2, False)
    gc.collect()
    gc.freeze()
    for number in range(rounds):
        order = list(subjects) if number % 2 == 0 else list(reversed(subjects))
        for subject in order:
            for kind in subject.kinds:
                off, on = ((subject.shape, subject.size, kind.name, a) for a in (False, True))
                gc.disable()
                try:
                    pairs = subject.run(kind, CALLS, number % 2 == 1)
                finally:
                    gc.enable()
                samples.setdefault(off, []).extend(pair[0] for pair in pairs)
                samples.setdefault(on, []).extend(pair[1] for pair in pairs)
                added.setdefault(on, []).extend((b[0] - a[0], b[1] - a[1]) for a, b in pairs)
        gc.collect()
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    gc.unfreeze()
    adds = {key: _quantile(values, 0.5) for key, values in added.items()}
    return {
        "best": {key: _quantile(values, 0.25) for key, values in samples.items()},
        "median": {key: _quantile(values, 0.5) for key, values in samples.items()},
        ADDS: adds,
    }


def _quantile(values: list[Times], q: float) -> tuple[float, float]:
    """The ``q`` quantile of the CPU times and of the wall times."""
    cpu = sorted(v[0] for v in values)
    wall = sorted(v[1] for v in values)
    index = min(len(cpu) - 1, int(q * len(cpu)))
    return float(cpu[index]), float(wall[index])


@frozen(kw_only=True)
class Table:
    """The figures of one shape."""

    shape: str
    sizes: tuple[int, ...]
    kinds: tuple[str, ...]
    figures: dict[Key, tuple[float, float]]
    adds: dict[Key, tuple[float, float]]
    """What the audit adds per (shape, size, kind, True): the median of paired differences."""

    def cpu(self, size: int, kind: str, audit: bool) -> float:
        return self.figures[(self.shape, size, kind, audit)][0]

    def overall(self, size: int, audit: bool, clock: int = 0) -> float:
        """The mean cost of one hook of each kind."""
        figures = self.figures
        return statistics.fmean(figures[(self.shape, size, k, audit)][clock] for k in self.kinds)

    def ratio(self, audit: bool, kind: str | None = None) -> float:
        small, large = self.sizes[0], self.sizes[-1]
        if kind is None:
            return self.overall(large, audit) / self.overall(small, audit)
        return self.cpu(large, kind, audit) / self.cpu(small, kind, audit)

    def audit_adds(self, size: int, kind: str | None = None) -> float:
        """The median CPU time the audit added within a pair of calls (mean of the kinds)."""
        if kind is None:
            return statistics.fmean(self.audit_adds(size, k) for k in self.kinds)
        return self.adds[(self.shape, size, kind, True)][0]

    def difference(self, size: int) -> float:
        """Audit on minus audit off, of this table's figures (mean of the kinds)."""
        return self.overall(size, True) - self.overall(size, False)


# --------------------------------------------------------------------------------------------
# report


def us(ns: float) -> str:
    value = ns / 1000
    return f"{value:,.0f} µs" if value >= 100 else f"{value:.1f} µs"


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def target_rows(table: Table) -> list[tuple[str, str, str, bool]]:
    """(row, measured, target, met) for the issue's rows."""
    small, large = table.sizes[0], table.sizes[-1]
    off, on = table.ratio(False), table.ratio(True)
    worst_off = max(table.ratio(False, k) for k in table.kinds)
    worst_on = max(table.ratio(True, k) for k in table.kinds)
    adds = max(table.audit_adds(size) for size in table.sizes)
    scale = f"{large:,} vs {small:,} entries"
    return [
        (
            f"runtime per hook, {scale}, audit off (mean of the kinds)",
            f"{off:.2f}× ({us(table.overall(small, False))} → {us(table.overall(large, False))})",
            f"≤ {TARGET_RATIO}×",
            off <= TARGET_RATIO,
        ),
        (
            "  worst single kind, audit off",
            f"{worst_off:.2f}×",
            f"≤ {KIND_GUARD:.0f}×",
            worst_off <= KIND_GUARD,
        ),
        (
            f"runtime per hook, {scale}, audit on (mean of the kinds)",
            f"{on:.2f}× ({us(table.overall(small, True))} → {us(table.overall(large, True))})",
            f"≤ {TARGET_RATIO}×",
            on <= TARGET_RATIO,
        ),
        (
            "  worst single kind, audit on",
            f"{worst_on:.2f}×",
            f"≤ {KIND_GUARD:.0f}×",
            worst_on <= KIND_GUARD,
        ),
        (
            "the audit adds per hook (mean of the kinds, worst size)",
            us(adds),
            f"≤ {TARGET_AUDIT_US:.0f} µs",
            adds <= TARGET_AUDIT_US * 1000,
        ),
    ]


def kind_lines(table: Table) -> list[str]:
    sizes = table.sizes
    head = " | ".join(f"{s:,} off | {s:,} on" for s in sizes)
    lines = [
        f"| hook kind | {head} | off {sizes[-1]:,}/{sizes[0]:,} | on {sizes[-1]:,}/{sizes[0]:,} "
        f"| audit adds ({sizes[-1]:,}) |",
        "|---|" + "---:|" * (2 * len(sizes) + 3),
    ]
    for kind in (*table.kinds, None):
        name = kind or "**mean of the kinds**"
        cells = []
        for size in sizes:
            for audit in (False, True):
                value = table.overall(size, audit) if kind is None else table.cpu(size, kind, audit)
                cells.append(us(value))
        lines.append(
            f"| {name} | {' | '.join(cells)} | {table.ratio(False, kind):.2f}× "
            f"| {table.ratio(True, kind):.2f}× | {us(table.audit_adds(sizes[-1], kind))} |"
        )
    return lines


def machine() -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; load average {load} when written"
    )


def median_line(median: Table) -> str:
    """The same comparison from the medians (what a loaded machine shows)."""
    small, large = median.sizes[0], median.sizes[-1]
    return (
        f"Medians instead of lower quartiles: {large:,}/{small:,} audit off "
        f"{median.ratio(False):.2f}×, audit on {median.ratio(True):.2f}×; their difference on "
        f"− off {us(max(median.difference(size) for size in median.sizes))} per hook (worst size)."
    )


def section(tables: list[tuple[Table, Table]], command: str) -> str:
    lines = [
        "## Runtime per hook as the session grows (`bench/bench_runtime.py`)",
        "",
        f"- Command: `{command}`",
        f"- Machine: {machine()}",
        "- Each figure: the lower quartile of the thread CPU times of one `handle` call over all",
        f"  rounds ({CALLS} pairs of calls per kind and round, every call from the same lifecycle",
        "  state, the garbage collector paused; on a loaded shared machine some calls are slowed",
        "  by other processes, the quartile keeps those that ran undisturbed; medians are given",
        "  too). Shapes, sizes and kinds are interleaved in every round; each pair is one call",
        "  with the audit off and one with it on, back to back (which first alternates), and",
        f"  what the audit adds is the median of the pairs' differences. The last {TAIL} entries",
        "  are the same at every size. Audit on = a file-backed `AuditLog`. Context hooks carry",
        "  the session layer's transcripts (`tree.transcripts`) as a host builds them.",
    ]
    for table, median in tables:
        lines += ["", *shape_lines(table, median)]
    return "\n".join(lines) + "\n"


def shape_lines(table: Table, median: Table) -> list[str]:
    small, large = table.sizes[0], table.sizes[-1]
    wall_off = table.overall(large, False, 1) / table.overall(small, False, 1)
    wall_on = table.overall(large, True, 1) / table.overall(small, True, 1)
    return [
        f"### Shape `{table.shape}`",
        "",
        f"Wall-time ratios of the same run ({large:,}/{small:,}): audit off {wall_off:.2f}×,"
        f" audit on {wall_on:.2f}×. {median_line(median)}",
        "",
        "| row | measured | target | |",
        "|---|---|---|---|",
        *(f"| {r} | {m} | {t} | {verdict(ok)} |" for r, m, t, ok in target_rows(table)),
        "",
        *kind_lines(table),
    ]


def run(sizes: Sequence[int], rounds: int, shapes: Sequence[str]) -> list[tuple[Table, Table]]:
    """Measure every shape at every size: (lower quartiles, medians) per shape."""
    sizes = tuple(sorted(sizes))
    with tempfile.TemporaryDirectory() as directory:
        subjects = [Subject(size, shape, Path(directory)) for shape in shapes for size in sizes]
        figures = measure(subjects, rounds)
        for subject in subjects:
            subject.log.close()
    kinds = tuple(k.name for k in subjects[0].kinds)
    adds = figures[ADDS]
    return [
        (
            Table(shape=shape, sizes=sizes, kinds=kinds, figures=figures["best"], adds=adds),
            Table(shape=shape, sizes=sizes, kinds=kinds, figures=figures["median"], adds=adds),
        )
        for shape in shapes
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    tables = run(args.sizes, args.rounds, args.shapes)
    for table, median in tables:
        print(f"\nshape {table.shape}")
        print("\n".join(kind_lines(table)))
        print()
        for row, measured, target, met in target_rows(table):
            print(f"{row:<62} {measured:<28} target {target:<9} {verdict(met)}")
        print(median_line(median))
    if args.out is not None:
        shown = " ".join(sys.argv[1:] if argv is None else argv)
        command = f"python bench/bench_runtime.py {shown}".strip()
        write_section(args.out, SECTION, section(tables, command))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
