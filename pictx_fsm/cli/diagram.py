"""``pictx-fsm diagram``: render the declared machines as Mermaid, DOT, SVG or PNG.

Without ``--out`` the text formats go to stdout; with ``--out DIR`` each machine is written to
``DIR/<machine>.<ext>``. ``--trace AUDIT.jsonl`` and ``--coverage COVERAGE.json`` overlay how
often each transition fired (both may be given; counts add up) and mark the never-fired ones.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pictx_fsm.audit.store import check_log
from pictx_fsm.cli.machines import select_machines
from pictx_fsm.diagrams import (
    FORMATS,
    TEXT_FORMATS,
    counts_from_audit,
    counts_from_coverage,
    merge_counts,
    render,
    write_diagrams,
)
from pictx_fsm.diagrams.overlay import undeclared
from pictx_fsm.errors import UnreadableInputError, UsageError
from pictx_fsm.machines.document import MachineSpec

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--machine", metavar="NAME", default="all", help="a machine, or all")
    parser.add_argument("--format", choices=FORMATS, default="mermaid", help="default: mermaid")
    parser.add_argument("--out", metavar="DIR", type=Path, help="write <machine>.<ext> files")
    parser.add_argument("--trace", metavar="AUDIT.jsonl", type=Path, help="overlay an audit log")
    parser.add_argument(
        "--coverage", metavar="COVERAGE.json", type=Path, help="overlay {transition_id: count}"
    )
    parser.add_argument(
        "--allow-broken-log",
        action="store_true",
        help="draw a --trace log whose hash chain is broken (refused by default)",
    )
    parser.add_argument(
        "--models", metavar="DIR", type=Path, help="models directory (default: the package's)"
    )


def run(args: argparse.Namespace) -> int:
    if args.out is None and args.format not in TEXT_FORMATS:
        raise UsageError(f"--format {args.format} writes binary files; give --out DIR")
    specs = select_machines(args.models, args.machine)
    counts = _counts(args, specs)
    if args.out is not None:
        for path in write_diagrams(specs, args.out, args.format, counts):
            print(path)
        return 0
    text = b"\n".join(render(spec, args.format, counts) for spec in specs)
    sys.stdout.write(text.decode("utf-8"))
    return 0


def _counts(args: argparse.Namespace, specs: list[MachineSpec]) -> dict[str, int] | None:
    sources = []
    if args.trace is not None:
        _check_trace(args.trace, allow_broken=args.allow_broken_log)
        sources.append(counts_from_audit(args.trace, skip_damaged=args.allow_broken_log))
    if args.coverage is not None:
        sources.append(counts_from_coverage(args.coverage))
    if not sources:
        return None
    counts = merge_counts(*sources)
    unknown = undeclared(counts, specs if args.machine == "all" else _all(args))
    if unknown:
        print(
            f"pictx-fsm diagram: warning: {len(unknown)} counted transition id(s) match no "
            f"declared transition (other model version?): {', '.join(unknown[:5])}"
            + (" ..." if len(unknown) > 5 else ""),
            file=sys.stderr,
        )
    return counts


def _check_trace(path: Path, *, allow_broken: bool) -> None:
    """A damaged log is refused (its counts could be forged or lost) unless allowed; a log
    without its seal (a session still running) is drawn with a warning."""
    report = check_log(path)
    if report.damage and not allow_broken:
        first = report.damage[0]
        raise UnreadableInputError(
            str(path),
            f"line {first.first_line}: {first.reason}: the audit log is broken "
            "(give --allow-broken-log to draw it anyway)",
        )
    for damage in report.damage:
        print(f"pictx-fsm diagram: warning: {damage.text(str(path))}", file=sys.stderr)
    if not report.sealed:
        print(
            f"pictx-fsm diagram: warning: {path}: no seal at its end (still being written, or cut)",
            file=sys.stderr,
        )


def _all(args: argparse.Namespace) -> list[MachineSpec]:
    return select_machines(args.models, "all")
