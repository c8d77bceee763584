"""``pictx-fsm audit`` on large files: speed against a plain ``json.loads`` loop, peak memory,
and the start-up time of ``pictx-fsm --help``.

Inputs are built in a temporary directory, never kept in the repository:

- **corpus ×N**: the real session files of ``../shared/corpora/pi-sessions`` read with the
  project's reader and written again as one v3 session, copy after copy, each copy with fresh
  entry ids (``<id>-<copy>``; parents, ``fromId``, ``targetId`` and ``firstKeptEntryId``
  renamed with them), until the file reaches ``--corpus-mb``;
- **generated**: a deterministic pi-context session (bench_foundation's ``SessionMaker``:
  turns with tool calls, a reset every ~200 entries, guidance and warning per window) with
  tool results of realistic size, written up to ``--generated-mb``.

Rows (each printed with its target, the ratio taken within this one run):

1. audit throughput as a share of a ``json.loads`` loop over the same lines (and of an
   ``orjson.loads`` loop when orjson is installed) — target ≥ 50% of ``json.loads``;
2. peak RSS of ``pictx-fsm audit`` above the interpreter with the same modules imported, at
   10 MB and 100 MB inputs — target ≤ 64 MB at any size;
3. ``pictx-fsm --help`` wall time (median of runs) — target ≤ 60 ms.

Run: ``python bench/bench_audit.py [--corpus-mb 99] [--generated-mb 100]
[--out docs/performance.md]``.
Nothing here asserts a time; the script reports.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from attrs import frozen
from bench_foundation import SessionMaker, session_header
from doc_sections import write_section

from pictx_fsm.session.entries import Entry
from pictx_fsm.session.jsonl import dumps_entry, dumps_json, read_session

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "pi-sessions"
MB = 1_000_000
_ID_FIELDS = ("id", "parentId", "fromId", "targetId", "firstKeptEntryId")
_RSS_PROBE = """
import contextlib, io, sys
from pictx_fsm.cli import main
from pictx_fsm.cli import audit  # the modules the audit needs, imported in both runs
if sys.argv[1:] != ["--baseline"]:
    with contextlib.redirect_stdout(io.StringIO()):
        main(sys.argv[1:])
# VmHWM: the peak of this process's own memory (ru_maxrss would include the parent's image
# from before exec)
status = open("/proc/self/status").read().split("VmHWM:")[1]
print(int(status.split()[0]) * 1024)
"""


# --------------------------------------------------------------------------------------------
# Inputs


def corpus_files() -> list[Path]:
    """Every session file of the corpus (real first), in a fixed order."""
    return sorted(CORPUS.glob("real/*.jsonl")) + sorted(CORPUS.glob("synthetic/*.jsonl"))


def build_corpus(target: Path, size: int) -> int:
    """Copies of the corpus with fresh ids until ``size`` bytes; returns the entry count."""
    sessions = [read_session(path).entries for path in corpus_files()]
    if not any(sessions):
        raise SystemExit(f"bench_audit: the corpus is missing or empty ({CORPUS})")
    count = 0
    with target.open("w", encoding="utf-8") as out:
        out.write(dumps_entry(session_header()) + "\n")
        copy = 0
        while out.tell() < size:
            for entries in sessions:
                count += _write_copy(out, entries, copy)
            copy += 1
    return count


def _write_copy(out: TextIO, entries: tuple[Entry, ...], copy: int) -> int:
    known = {entry.id for entry in entries if entry.id is not None}
    for entry in entries:
        obj = entry.to_json()
        for key in _ID_FIELDS:
            value = obj.get(key)
            if isinstance(value, str) and value in known:
                obj[key] = f"{value}-{copy}"
        out.write(dumps_json(obj) + "\n")
    return len(entries)


class LargeSessionMaker(SessionMaker):
    """``SessionMaker`` with texts six times longer: lines of ~2.3 KB on average, as in the
    real corpus (17 MB in 7,640 lines)."""

    def text(self, low: int, high: int) -> str:
        return super().text(low * 6, high * 6)


def build_generated(target: Path, size: int) -> int:
    maker = LargeSessionMaker(seed=7)
    count = 0
    with target.open("w", encoding="utf-8") as out:
        out.write(dumps_entry(session_header()) + "\n")
        for entry in _generated_entries(maker):
            out.write(dumps_entry(entry) + "\n")
            count += 1
            if out.tell() >= size:
                break
    return count


def _generated_entries(maker: SessionMaker) -> Iterator[Entry]:
    from bench_foundation import RESET_EVERY

    yield from maker.start()
    while True:
        if maker.since_reset >= RESET_EVERY:
            yield from maker.reset()
        yield from maker.turn()
        yield from maker.budget_messages()


# --------------------------------------------------------------------------------------------
# Measurements


def best_of(runs: int, action: Callable[[], Any]) -> float:
    """The least CPU time of ``runs`` (both sides are single-threaded and CPU-bound, and the
    machine is shared: CPU time is what other load disturbs least)."""
    times = []
    for _ in range(runs):
        started = time.process_time()
        action()
        times.append(time.process_time() - started)
    return min(times)


def loads_loop(path: Path, loads: Callable[[bytes], Any]) -> None:
    with path.open("rb") as fp:
        for line in fp:
            if line.strip():
                loads(line)


def audit_in_process(path: Path, *, orjson: bool = True) -> None:
    """The whole ``pictx-fsm audit FILE`` command in this process — every check, the
    session-chain check and the report, printed to nowhere (orjson used where installed,
    unless not)."""
    import contextlib

    from pictx_fsm.cli import main
    from pictx_fsm.session import skeleton

    installed = skeleton._FAST_LOADS
    if not orjson:
        skeleton._FAST_LOADS = None
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            main(["audit", str(path)])
    finally:
        skeleton._FAST_LOADS = installed


def peak_rss(args: list[str]) -> int:
    """Peak RSS in bytes of a fresh interpreter running ``pictx-fsm ARGS``."""
    result = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE, *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    return int(result.stdout.strip().splitlines()[-1])


def help_time(runs: int) -> float:
    """Median wall time of the installed ``pictx-fsm --help`` console script."""
    script = Path(sys.executable).with_name("pictx-fsm")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([script, "--help"], capture_output=True, check=True, cwd=ROOT)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def interpreter_time(runs: int) -> float:
    """Median wall time of ``python -c pass``: the floor under any CLI start-up."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


# --------------------------------------------------------------------------------------------
# Figures


@frozen(kw_only=True)
class Speed:
    """Least CPU seconds of each side on one file (``orjson``: ``None`` when not installed)."""

    name: str
    size: int
    entries: int
    audit: float
    audit_std: float
    json: float
    orjson: float | None

    @property
    def ratio(self) -> float:
        """The audit's speed as a share of the ``json.loads`` loop's (issue 11's row)."""
        return self.json / self.audit


@frozen(kw_only=True)
class Memory:
    name: str
    size: int
    above: int
    """Peak RSS of ``pictx-fsm audit FILE`` above the same interpreter's without the audit."""
    baseline: int


@frozen(kw_only=True)
class Figures:
    speeds: tuple[Speed, ...]
    memory: tuple[Memory, ...]
    help: float
    floor: float
    """``python -c pass`` in the same run: the floor under any start-up."""


def measure_speed(name: str, path: Path, entries: int, runs: int) -> Speed:
    """Each side's best of ``runs``, the sides interleaved so load hits them alike."""
    sides: dict[str, Callable[[], Any]] = {
        "audit": lambda: audit_in_process(path),
        "audit_std": lambda: audit_in_process(path, orjson=False),
        "json": lambda: loads_loop(path, json.loads),
    }
    try:
        import orjson

        sides["orjson"] = lambda: loads_loop(path, orjson.loads)
    except ImportError:
        pass
    best = {side: float("inf") for side in sides}
    for _ in range(runs):
        for side, action in sides.items():
            best[side] = min(best[side], best_of(1, action))
    return Speed(
        name=name,
        size=path.stat().st_size,
        entries=entries,
        audit=best["audit"],
        audit_std=best["audit_std"],
        json=best["json"],
        orjson=best.get("orjson"),
    )


def measure(corpus_mb: float, generated_mb: float, runs: int, help_runs: int) -> Figures:
    """Every figure of this bench, its inputs built in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
        directory = Path(tmp)
        corpus, generated = directory / "corpus.jsonl", directory / "generated.jsonl"
        small = directory / "generated-small.jsonl"
        corpus_entries = build_corpus(corpus, int(corpus_mb * MB))
        generated_entries = build_generated(generated, int(generated_mb * MB))
        if generated_mb > SMALL_MB:
            build_generated(small, SMALL_MB * MB)
        speeds = (
            measure_speed("real corpus ×N", corpus, corpus_entries, runs),
            measure_speed("generated session", generated, generated_entries, runs),
        )
        baseline = peak_rss(["--baseline"])
        inputs = [("generated", generated), ("corpus", corpus)]
        if generated_mb > SMALL_MB:
            inputs.insert(0, ("generated", small))
        memory = tuple(
            Memory(
                name=name,
                size=path.stat().st_size,
                above=peak_rss(["audit", str(path)]) - baseline,
                baseline=baseline,
            )
            for name, path in inputs
        )
    floor = interpreter_time(help_runs)
    return Figures(speeds=speeds, memory=memory, help=help_time(help_runs), floor=floor)


# --------------------------------------------------------------------------------------------
# Report

Row = tuple[str, str, str, bool | None]
"""(row, measured, target, met; ``None``: reported, no target)."""
SMALL_MB = 10
TARGET_SHARE = 0.5
TARGET_RSS_MIB = 64
TARGET_HELP_MS = 60
SECTION = "bench_audit"
"""Its section of docs/performance.md (``doc_sections``)."""


def speed_rows(speed: Speed) -> list[Row]:
    mb_s = speed.size / MB
    rows: list[Row] = [
        (
            f"audit speed, {speed.name} ({mb_s:.0f} MB, {speed.entries:,} entries)",
            f"{mb_s / speed.audit:.1f} MB/s vs json.loads {mb_s / speed.json:.1f} MB/s: "
            f"**{speed.ratio:.0%}**",
            f"≥ {TARGET_SHARE:.0%}",
            speed.ratio >= TARGET_SHARE,
        ),
        (
            "same, the standard decoder only (no orjson)",
            f"{mb_s / speed.audit_std:.1f} MB/s: **{speed.json / speed.audit_std:.0%}** of "
            "json.loads",
            "(reported)",
            None,
        ),
    ]
    if speed.orjson is not None:
        rows.append(
            (
                "same, vs an orjson.loads loop",
                f"orjson.loads {mb_s / speed.orjson:.1f} MB/s: "
                f"**{speed.orjson / speed.audit:.0%}**",
                "(reported)",
                None,
            )
        )
    return rows


def memory_row(memory: Memory) -> Row:
    above = memory.above / 2**20
    return (
        f"audit peak RSS above the interpreter, {memory.name} ({memory.size / MB:.0f} MB)",
        f"**{above:.1f} MiB** (interpreter {memory.baseline / 2**20:.1f} MiB)",
        f"≤ {TARGET_RSS_MIB} MiB",
        above <= TARGET_RSS_MIB,
    )


def help_row(figures: Figures, runs: int) -> Row:
    above = (figures.help - figures.floor) * 1000
    return (
        f"`pictx-fsm --help` wall time (median of {runs})",
        f"**{figures.help * 1000:.0f} ms** (`python -c pass`: {figures.floor * 1000:.0f} ms; "
        f"{above:.0f} ms above it)",
        f"≤ {TARGET_HELP_MS} ms",
        figures.help * 1000 <= TARGET_HELP_MS,
    )


def rows(figures: Figures, help_runs: int) -> list[Row]:
    found = [row for speed in figures.speeds for row in speed_rows(speed)]
    found += [memory_row(memory) for memory in figures.memory]
    return [*found, help_row(figures, help_runs)]


def verdict(met: bool | None) -> str:
    return "" if met is None else ("met" if met else "NOT met")


def report(found: list[Row], command: str) -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return "\n".join(
        [
            "## Session audit and CLI start-up (`bench/bench_audit.py`)",
            "",
            f"- Command: `{command}`",
            f"- Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, load average {load} when written",
            "- Speeds are the least CPU time of the runs, the sides interleaved; each ratio",
            "  compares two measurements of the same run on the same file. Start-up is wall",
            "  time, beside the bare interpreter's in the same run.",
            "",
            "| row | measured | target | |",
            "|---|---|---|---|",
            *(f"| {r} | {m} | {t} | {verdict(ok)} |" for r, m, t, ok in found),
            "",
        ]
    )


def build_tree(target: Path, files: int) -> int:
    """A directory tree of ``files`` session files (the corpus's, copied round-robin into
    nested directories, 100 a directory); their total size."""
    sources = corpus_files()
    total = 0
    for index in range(files):
        source = sources[index % len(sources)]
        path = target / f"d{index // 1000}" / f"s{index // 100 % 10}" / f"{index}-{source.name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(source.read_bytes())
        total += path.stat().st_size
    return total


def measure_tree(files: int, workers: int) -> str:
    """``pictx-fsm audit --recursive`` over a tree of session files, in this process and on
    a local Ray with ``workers`` workers (its start-up included): the same findings, and
    each one's throughput."""
    import contextlib
    import io

    from pictx_fsm.cli import main as cli

    with tempfile.TemporaryDirectory(prefix="pictx-audit-tree-") as tmp:
        size = build_tree(Path(tmp), files)
        outputs, seconds = [], []
        cpu = time.process_time()
        for extra in ([], ["--ray", "--workers", str(workers)]):
            out = io.StringIO()
            started = time.perf_counter()
            with contextlib.redirect_stdout(out):
                cli(["audit", "--recursive", "--json", *extra, tmp])
            seconds.append(time.perf_counter() - started)
            outputs.append(out.getvalue())
            cpu = cpu if extra else time.process_time() - cpu
    same = "the same findings" if outputs[0] == outputs[1] else "DIFFERENT findings"
    serial, ray = seconds
    return (
        f"| {files:,} files, {size / MB:.0f} MB | serial {serial:.1f} s, {cpu:.1f} s of it on "
        f"the CPU ({size / MB / serial:.1f} MB/s, {files / serial:.0f} files/s) | `--ray --workers "
        f"{workers}` {ray:.1f} s ({size / MB / ray:.1f} MB/s, {files / ray:.0f} files/s), "
        f"Ray's start included | {same} |"
    )


def main(argv: list[str] | None = None) -> int:
    global CORPUS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus-mb", type=float, default=99)
    parser.add_argument("--generated-mb", type=float, default=100)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--help-runs", type=int, default=15)
    parser.add_argument("--out", type=Path, help="rewrite this bench's section of a markdown file")
    parser.add_argument("--corpus", type=Path, help="the pi-sessions corpus (default: ../shared)")
    parser.add_argument("--tree", type=int, metavar="FILES", help="only: audit a tree of FILES")
    parser.add_argument("--workers", type=int, default=2, help="Ray workers for --tree")
    args = parser.parse_args(argv)
    CORPUS = args.corpus or CORPUS
    if args.tree:
        print(measure_tree(args.tree, args.workers))
        return 0
    if not CORPUS.is_dir():
        sys.exit(f"bench_audit: the corpus is missing ({CORPUS})")
    figures = measure(args.corpus_mb, args.generated_mb, args.runs, args.help_runs)
    command = (
        f"python bench/bench_audit.py --corpus-mb {args.corpus_mb:g} "
        f"--generated-mb {args.generated_mb:g} --runs {args.runs} --help-runs {args.help_runs}"
    )
    text = report(rows(figures, args.help_runs), command)
    print(text)
    if args.out is not None:
        write_section(args.out, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
