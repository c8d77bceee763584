"""Per-hook questions on large sessions: incremental tree/index vs pi-context's rescans.

pi-context answers every hook by walking the whole branch from the leaf (``getBranch``) and,
for usage, rebuilding Pi's projection of it. pictx_fsm keeps window identity on each tree
node and usage in a :class:`UsageIndex`. This benchmark builds realistic sessions of
several sizes and times both answers to the same questions in the same run.

Run: ``python bench/bench_foundation.py [--sizes 1000 10000 100000]
[--out docs/performance.md]`` (rewrites only its own section). Timings are medians of
batches (``time.perf_counter_ns``); the script asserts that both sides give the same answers,
never how fast they are.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from attrs import frozen
from doc_sections import write_section

from pictx_fsm.extensions.pi_context.reset_projection import project_marker_window
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    WARNING_TYPE,
)
from pictx_fsm.extensions.pi_context.usage import UsageIndex
from pictx_fsm.extensions.pi_context.windows import (
    WindowIndex,
    is_valid_marker,
    mint_window_id,
    root_window_id,
    window_id_of_marker,
)
from pictx_fsm.session.entries import (
    CustomMessageEntry,
    Entry,
    SessionHeader,
    entry_from_json,
    header_from_json,
)
from pictx_fsm.session.estimate import (
    EstimateError,
    TiktokenCounter,
    TokenCounter,
    estimate_window,
)
from pictx_fsm.session.ids import uuid_draws
from pictx_fsm.session.projection import convert_to_llm, project_branch
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import branch_tokens_of

SESSION_ID = "01a22a68-d3ef-7474-9fd4-4c634fe3ee81"
RESET_EVERY = 200
SECTION = "bench_foundation"
"""Its section of docs/performance.md (``doc_sections``): the rest of the file is kept."""
SAMPLE_TEXT = "the quick brown fox jumps over a lazy dog while tests run and notes grow"
WORDS = tuple(SAMPLE_TEXT.split())

# --------------------------------------------------------------------------------------------
# a realistic session


class SessionMaker:
    """Entries shaped like a long Pi session under pi-context: turns with tool calls, a reset
    (marker → boot → continuation) every ~200 entries, guidance and warning once per window,
    and now and then a failed reply hidden by Pi's retry (``context_edit`` null)."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.serial = 0
        self.leaf: str | None = None
        self.window_ids: set[str] = set()
        self.since_reset = 0
        self.usage = 2000

    def text(self, low: int, high: int) -> str:
        count = self.rng.randint(low, high)
        return " ".join(self.rng.choice(WORDS) for _ in range(count))

    def entry(self, kind: str, **fields: Any) -> Entry:
        self.serial += 1
        entry_id = f"{self.serial:08x}"
        stamp = 1_796_000_000_000 + self.serial * 1000
        iso = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(stamp / 1000))
        obj = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": iso, **fields}
        if kind == "message":
            obj["message"] = {**fields["message"], "timestamp": stamp}
        self.leaf = entry_id
        self.since_reset += 1
        parsed, problems = entry_from_json(obj)
        assert not problems, problems
        return parsed

    def message(self, role: str, **fields: Any) -> Entry:
        return self.entry("message", message={"role": role, **fields})

    def reply(self, text: str, calls: int, stop: str = "stop") -> Entry:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for index in range(calls):
            arguments = {"path": f"src/{self.text(1, 2)}.py", "limit": 200}
            content.append(
                {"type": "toolCall", "id": f"c{index}", "name": "read", "arguments": arguments}
            )
        self.usage += self.rng.randint(200, 900)
        usage = {"input": self.usage, "output": 120, "cacheRead": 0, "cacheWrite": 0}
        usage["totalTokens"] = self.usage + 120
        reason = "toolUse" if calls else stop
        return self.message("assistant", content=content, usage=usage, stopReason=reason)

    def start(self) -> Iterator[Entry]:
        yield self.entry("model_change", provider="faux", modelId="faux-1")
        yield self.entry("thinking_level_change", thinkingLevel="off")
        sections = {"preamble": self.text(200, 300), "tools": self.text(100, 200)}
        tools = [{"name": name, "description": self.text(10, 20)} for name in ("read", "bash")]
        yield self.message("system", content="", sections=sections, toolsAdded=tools)

    def turn(self) -> Iterator[Entry]:
        yield self.message("user", content=[{"type": "text", "text": self.text(10, 80)}])
        if self.rng.random() < 0.03:  # a transient error, then Pi's retry hides it
            failed = self.message(
                "assistant", content=[], usage={"totalTokens": 0}, stopReason="error"
            )
            yield failed
            yield self.entry("context_edit", targetId=failed.id, replacement=None)
        for _ in range(self.rng.randint(0, 2)):
            yield self.reply(self.text(5, 30), calls=1)
            yield self.message(
                "toolResult",
                toolCallId="c0",
                toolName="read",
                content=[{"type": "text", "text": self.text(20, 300)}],
                isError=False,
            )
        yield self.reply(self.text(20, 120), calls=0)

    def budget_messages(self) -> Iterator[Entry]:
        if self.since_reset == int(RESET_EVERY * 0.7):
            yield self.custom_message(GUIDANCE_TYPE, self.text(60, 80))
        if self.since_reset == int(RESET_EVERY * 0.85):
            yield self.custom_message(WARNING_TYPE, self.text(60, 80))

    def custom_message(self, custom_type: str, content: str, **fields: Any) -> Entry:
        return self.entry(
            "custom_message", customType=custom_type, content=content, display=False, **fields
        )

    def reset(self) -> Iterator[Entry]:
        taken = frozenset(self.window_ids)
        window_id = mint_window_id(SESSION_ID, uuid_draws(self.rng), taken)
        self.window_ids.add(window_id)
        self.since_reset = 0
        self.usage = 2000
        yield self.entry("custom", customType=MARKER_TYPE, data={"windowId": window_id})
        yield self.custom_message(BOOT_TYPE, self.text(150, 250), details={"windowId": window_id})
        yield self.custom_message(CONTINUATION_TYPE, self.text(15, 20))

    def session(self, size: int) -> list[Entry]:
        entries = list(self.start())
        while len(entries) < size:
            if self.since_reset >= RESET_EVERY:
                entries.extend(self.reset())
            entries.extend(self.turn())
            entries.extend(self.budget_messages())
        return entries[:size]


def session_header() -> SessionHeader:
    header, _ = header_from_json(
        {"type": "session", "version": 3, "id": SESSION_ID, "timestamp": "t", "cwd": "/w"}
    )
    assert header is not None
    return header


# --------------------------------------------------------------------------------------------
# the two ways to answer


def rescan_current_window(tree: SessionTree) -> str:
    """pi-context ``currentWindowId``: ``getBranch()`` then the last valid marker."""
    branch = tree.branch()
    for entry in reversed(branch):
        window_id = window_id_of_marker(entry)
        if window_id is not None:
            return window_id
    return root_window_id(tree.session_id)


def rescan_has_window_message(tree: SessionTree, custom_type: str) -> bool:
    """pi-context ``hasWindowMessage``: scan back from the leaf to the last marker."""
    for entry in reversed(tree.branch()):
        if is_valid_marker(entry):
            return False
        if isinstance(entry, CustomMessageEntry) and entry.custom_type == custom_type:
            return True
    return False


def rescan_tail(tree: SessionTree) -> list[Entry]:
    """What follows the current marker, found by a scan of the whole branch."""
    branch = tree.branch()
    marker = max((i for i, e in enumerate(branch) if is_valid_marker(e)), default=None)
    return [] if marker is None else branch[marker + 1 :]


def rescan_usage(tree: SessionTree, counter: TokenCounter) -> int | None:
    """pi-context ``windowUsage``: find the marker, rebuild the projection, cut, estimate."""
    window_id = rescan_current_window(tree)
    if window_id == root_window_id(tree.session_id):
        return branch_tokens_of(tree.branch(), counter)
    projected = project_marker_window(project_branch(tree.branch()).messages, window_id)
    if projected.missing_boot:
        return None
    try:
        return estimate_window(convert_to_llm(projected.messages), counter)
    except EstimateError:
        return None


# --------------------------------------------------------------------------------------------
# measuring


@frozen(kw_only=True)
class Row:
    size: int
    question: str
    incremental_ns: float
    rescan_ns: float

    @property
    def ratio(self) -> float:
        return self.rescan_ns / self.incremental_ns


def median_ns(call: Callable[[], object], *, batches: int, per_batch: int) -> float:
    """Median over batches of the mean time of one call."""
    samples = []
    for _ in range(batches):
        start = time.perf_counter_ns()
        for _ in range(per_batch):
            call()
        samples.append((time.perf_counter_ns() - start) / per_batch)
    return statistics.median(samples)


class Appender:
    """Appends a fresh user message under a tree's leaf."""

    def __init__(self) -> None:
        self.serial = 0

    def __call__(self, tree: SessionTree) -> None:
        self.serial += 1
        obj = {
            "type": "message",
            "id": f"b{self.serial:07x}",
            "parentId": tree.leaf_id,
            "timestamp": "2026-12-01T00:00:00.000Z",
            "message": {
                "role": "user",
                "content": f"follow-up {self.serial}",
                "timestamp": 1_800_000_000_000,
            },
        }
        parsed, _ = entry_from_json(obj)
        tree.append(parsed)


@frozen(kw_only=True)
class Subject:
    """One session loaded twice: plain (for rescans) and followed by a usage index."""

    plain: SessionTree
    indexed: SessionTree
    index: UsageIndex
    counter: TokenCounter
    """The rescans' own counter (its text cache makes re-estimating cheap, as chars/4 is)."""


def load(size: int) -> tuple[Subject, dict[str, float]]:
    entries = SessionMaker(seed=size).session(size)
    header = session_header()
    started = time.perf_counter_ns()
    plain = SessionTree.from_entries(header, entries)
    tree_ns = (time.perf_counter_ns() - started) / size
    windowed = SessionTree(header)
    WindowIndex.of(windowed)
    started = time.perf_counter_ns()
    for entry in entries:
        windowed.add(entry)
    windows_ns = (time.perf_counter_ns() - started) / size
    indexed = SessionTree(header)
    index = UsageIndex(indexed, TiktokenCounter())
    started = time.perf_counter_ns()
    for entry in entries:
        indexed.add(entry)
    index_ns = (time.perf_counter_ns() - started) / size
    subject = Subject(plain=plain, indexed=indexed, index=index, counter=TiktokenCounter())
    build = {"tree_add_ns": tree_ns, "tree_and_windows_add_ns": windows_ns}
    return subject, {**build, "tree_and_index_add_ns": index_ns}


def bench_size(size: int) -> tuple[list[Row], dict[str, float]]:
    subject, build = load(size)
    check_agreement(subject.indexed, subject.index, subject.counter)
    rows = [*question_rows(size, subject), usage_row(size, subject)]
    check_agreement(subject.indexed, subject.index, subject.counter)
    return rows, build


def question_rows(size: int, subject: Subject) -> list[Row]:
    """The window-identity questions, asked of the same leaf again and again (of the tree's
    window index, held as the lifecycle holds it)."""
    indexed, plain = subject.indexed, subject.plain
    windows = WindowIndex.of(indexed)
    rescans = max(1, 500_000 // size)  # a rescan costs O(branch): fewer repetitions
    questions: list[tuple[str, Callable[[], object], Callable[[], object], int]] = [
        (
            "current window id",
            lambda: windows.current_window.window_id,
            lambda: rescan_current_window(plain),
            2000,
        ),
        (
            "guidance already in this window (R13)",
            lambda: windows.has_window_message(GUIDANCE_TYPE),
            lambda: rescan_has_window_message(plain, GUIDANCE_TYPE),
            2000,
        ),
        (
            "entries after the marker",
            windows.tail_after_marker,
            lambda: rescan_tail(plain),
            200,
        ),
    ]
    return [
        Row(
            size=size,
            question=question,
            incremental_ns=median_ns(fast, batches=15, per_batch=repeat),
            rescan_ns=median_ns(slow, batches=7, per_batch=rescans),
        )
        for question, fast, slow, repeat in questions
    ]


def usage_row(size: int, subject: Subject) -> Row:
    """The acceptance question: a new entry arrives, then window and usage are asked."""
    indexed, plain = subject.indexed, subject.plain
    windows = WindowIndex.of(indexed)
    append = Appender()

    def incremental() -> object:
        append(indexed)
        return windows.current_window.window_id, subject.index.active_window_tokens()

    def rescan() -> object:
        append(plain)
        return rescan_current_window(plain), rescan_usage(plain, subject.counter)

    return Row(
        size=size,
        question="append one entry, then current window + active usage",
        incremental_ns=median_ns(incremental, batches=15, per_batch=200),
        rescan_ns=median_ns(rescan, batches=5, per_batch=max(1, 50_000 // size)),
    )


def check_agreement(tree: SessionTree, index: UsageIndex, counter: TokenCounter) -> None:
    """Both ways must give the same answers on the same tree, or the timings compare nothing."""
    windows = WindowIndex.of(tree)
    assert windows.current_window.window_id == rescan_current_window(tree)
    assert windows.has_window_message(GUIDANCE_TYPE) == rescan_has_window_message(
        tree, GUIDANCE_TYPE
    )
    assert [e.id for e in windows.tail_after_marker()] == [e.id for e in rescan_tail(tree)]
    assert index.active_window_tokens() == rescan_usage(tree, counter)


# --------------------------------------------------------------------------------------------
# report


def human(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.0f} ns"


def report(rows: list[Row], builds: dict[int, dict[str, float]], command: str) -> str:
    lines = [
        "## Per-hook questions, incremental vs rescan (`bench/bench_foundation.py`)",
        "",
        "Produced by `bench/bench_foundation.py` (see `bench/README.md`). Each value is the",
        "median, over batches, of the mean time of one call (`time.perf_counter_ns`); both",
        "sides were measured in the same run and checked to give the same answers.",
        "",
        f"- Command: `{command}`",
        f"- Machine: {machine()}",
        "",
        "| entries | question | incremental | rescan (pi-context style) | rescan / incremental |",
        "|---:|---|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.size:,} | {row.question} | {human(row.incremental_ns)} "
            f"| {human(row.rescan_ns)} | {row.ratio:,.0f}× |"
        )
    lines += ["", "Cost of adding one entry while loading (mean over the whole session):", ""]
    lines += [
        "| entries | tree only | tree + window index | tree + window and usage indexes |",
        "|---:|---:|---:|---:|",
    ]
    for size, build in builds.items():
        tree_only, windows = build["tree_add_ns"], build["tree_and_windows_add_ns"]
        with_index = build["tree_and_index_add_ns"]
        lines.append(f"| {size:,} | {human(tree_only)} | {human(windows)} | {human(with_index)} |")
    lines += acceptance(rows)
    return "\n".join(lines) + "\n"


def acceptance(rows: list[Row]) -> list[str]:
    usage_rows = [r for r in rows if r.question.startswith("append one entry")]
    if not usage_rows:
        return []
    largest = max(usage_rows, key=lambda r: r.size)
    return [
        "",
        f"Acceptance (issue 2): at {largest.size:,} entries, appending one entry and then asking",
        f"for the current window and its active usage costs {human(largest.incremental_ns)} with",
        f"the incremental index against {human(largest.rescan_ns)} for the rescan: "
        f"**{largest.ratio:,.0f}×** (required: ≥ 100×).",
    ]


def machine() -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()} ({platform.python_implementation()}); "
        f"load average when the report was written: {load} (other work shares the machine, "
        f"so absolute times are noisy; the ratios are what the run compares)"
    )


def run(sizes: list[int]) -> tuple[list[Row], dict[int, dict[str, float]]]:
    """Every question at every size, printed as it is measured."""
    rows: list[Row] = []
    builds: dict[int, dict[str, float]] = {}
    for size in sizes:
        size_rows, builds[size] = bench_size(size)
        rows += size_rows
        for row in size_rows:
            times = f"{human(row.incremental_ns):>10} {human(row.rescan_ns):>10}"
            print(f"{size:>7,}  {row.question:<55} {times} {row.ratio:>9,.0f}×")
    return rows, builds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--out", type=Path, default=Path("docs/performance.md"))
    args = parser.parse_args(argv)
    rows, builds = run(args.sizes)
    command = "python bench/bench_foundation.py " + " ".join(sys.argv[1:] if argv is None else argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_section(args.out, SECTION, report(rows, builds, command.strip()))
    print(f"wrote {args.out} (its {SECTION} section)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
