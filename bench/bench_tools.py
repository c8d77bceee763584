"""The notes tools on large inputs: paging cost and whole-call latency.

pi-context builds a page by serializing the whole page again for every item it adds
(quadratic in the page); ``pictx_fsm.extensions.pi_context.tools.output.page`` adds each item's
exact size to a
running total (linear). This benchmark times both on the same items in the same run, checks
that they choose the same pages, times whole tool calls on a notes home of N notes and on
a 1 MB note, and what the runtime's shell adds to a call (routing, the context, an audit
record with the arguments' and result's digests) over ``execute_tool`` alone.

Run: ``python bench/bench_tools.py [--notes 100 1000]``. Timings are medians of repeats
(``time.perf_counter_ns``); the script asserts equal answers, never how fast they are.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

from pictx_fsm import AuditLog, HostContext, LifecycleRuntime, SessionHeader, SessionTree, ToolCall
from pictx_fsm.extensions.pi_context.tools import NotesIdentity, ToolContext, execute_tool
from pictx_fsm.extensions.pi_context.tools.output import page, within_budget


def naive_page(items: Sequence[Any], cursor: int, key: str) -> dict[str, Any]:
    """The anchor's loop: serialize the candidate page for every item added."""
    selected: list[Any] = []
    next_cursor: int | None = None
    for index in range(cursor, len(items)):
        candidate = index + 1 if index + 1 < len(items) else None
        if not within_budget({key: [*selected, items[index]], "next_cursor": candidate}):
            next_cursor = index
            break
        selected.append(items[index])
    return {key: selected, "next_cursor": next_cursor}


def median_ms(action: Callable[[], object], repeats: int = 5) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        action()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(samples)


def bench_paging(rows: int) -> tuple[float, float]:
    items = [
        {"address": f"notes/topic-{i:05d}.md", "stale": i % 7 == 0, "updated_at": "2026-01-01"}
        for i in range(rows)
    ]
    assert page(items, 0, "files") == naive_page(items, 0, "files")
    return median_ms(lambda: naive_page(items, 0, "files")), median_ms(
        lambda: page(items, 0, "files")
    )


def bench_calls(notes: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp()) / "notes"
    context = ToolContext(
        notes_root=root,
        identity=NotesIdentity(session_id="bench", project_key="bench-0000"),
        clock=lambda: 1_800_000_000_000,
        zone=UTC,
    )
    for index in range(notes):
        body = f"topic {index}\n" + "detail line\n" * 20
        execute_tool("notes_write", {"address": f"t/{index:05d}.md", "content": body}, context)
    execute_tool("notes_write", {"address": "big.md", "content": "é" * 400_000}, context)
    return {
        "notes_list (first page)": median_ms(lambda: execute_tool("notes_list", {}, context)),
        "notes_search (one hit per note)": median_ms(
            lambda: execute_tool("notes_search", {"query": "topic"}, context)
        ),
        "notes_read 1 MB note (first window)": median_ms(
            lambda: execute_tool("notes_read", {"address": "big.md"}, context)
        ),
    }


def bench_runtime() -> list[tuple[str, float, float]]:
    """``(call, execute_tool ms, runtime.handle ms)`` for the same calls on one notes home."""
    home = Path(tempfile.mkdtemp())
    tree = SessionTree(SessionHeader(id="bench", timestamp="t", cwd=str(home)))
    runtime = LifecycleRuntime(
        tree, notes_home=home / "notes", clock=lambda: 1_800_000_000_000, audit=AuditLog()
    )
    ctx = HostContext()
    context = runtime.services.tool_context(ctx)
    calls = (
        ("notes_write 1 KB", "notes_write", {"address": "a.md", "content": "x" * 1_000}),
        ("notes_write 1 MB", "notes_write", {"address": "b.md", "content": "é" * 400_000}),
        ("notes_read 1 MB note (first window)", "notes_read", {"address": "b.md"}),
        ("history_windows", "history_windows", {}),
    )
    rows = []
    for label, name, arguments in calls:
        direct = median_ms(lambda: execute_tool(name, arguments, context))  # noqa: B023
        call = ToolCall(name=name, arguments=arguments)
        shell = median_ms(lambda: runtime.handle(call, ctx))  # noqa: B023
        rows.append((label, direct, shell))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, nargs="+", default=[100, 1000])
    args = parser.parse_args(argv)
    print(f"Python {platform.python_version()} on {platform.machine()}\n")
    print("| page of N rows | anchor's loop (ms) | running size (ms) | ratio |")
    print("|---:|---:|---:|---:|")
    for rows in (100, 300, 1000):
        naive, ours = bench_paging(rows)
        print(f"| {rows} | {naive:.1f} | {ours:.1f} | {naive / ours:.1f}x |")
    print("\n| call | " + " | ".join(f"{n} notes (ms)" for n in args.notes) + " |")
    print("|---|" + "---:|" * len(args.notes))
    results = [bench_calls(n) for n in args.notes]
    for name in results[0]:
        print(f"| {name} | " + " | ".join(f"{r[name]:.1f}" for r in results) + " |")
    print("\n| call | execute_tool (ms) | runtime.handle, audited (ms) | ratio |")
    print("|---|---:|---:|---:|")
    for label, direct, shell in bench_runtime():
        print(f"| {label} | {direct:.2f} | {shell:.2f} | {shell / direct:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
