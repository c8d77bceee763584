"""``pictx-fsm inspect FILE…``: the structure and problems of Pi session files.

For each file: the header, entry counts by type (and message role), the branches (every leaf
with its depth), the windows on the active branch (root window, then one per valid marker,
R8–R10) with their boots (R14), and every problem with its line number.

Exit codes, per file, the overall code being the highest:

- 0: clean (only ``info`` problems, such as a migrated v1 file);
- 1: problems found (any warning or error) — including a readable file in which nothing is a
  session (no header and no entry: an empty file, binary data, a lock file);
- 2: unreadable input: the file cannot be read (missing, a directory, no permission). The
  other files are still inspected.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Final

from attrs import frozen

from pictx_fsm.cli.audit import session_checks
from pictx_fsm.errors import UnreadableInputError
from pictx_fsm.extensions.pi_context.windows import (
    boot_window_id,
    root_window_id,
    window_id_of_marker,
)
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.session.problems import Problem, Severity
from pictx_fsm.session.skeleton import Skeleton, read_skeleton

__all__ = [
    "EXIT_CLEAN",
    "EXIT_PROBLEMS",
    "EXIT_UNREADABLE",
    "FileReport",
    "Leaf",
    "Located",
    "Structure",
    "WindowReport",
    "configure",
    "describe",
    "inspect_file",
    "render_text",
    "run",
]

EXIT_CLEAN: Final = 0
EXIT_PROBLEMS: Final = 1
EXIT_UNREADABLE: Final = 2


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="Pi session files (.jsonl)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document: a list with one object per file",
    )


def run(args: argparse.Namespace) -> int:
    reports = [inspect_file(path) for path in args.files]
    if args.json:
        print(json.dumps([r.to_json() for r in reports], ensure_ascii=False, indent=2))
    else:
        print("\n\n".join("\n".join(render_text(r)) for r in reports))
    return max(r.exit_code for r in reports)


# --------------------------------------------------------------------------------------------
# The report


@frozen(kw_only=True)
class Located:
    """An entry id with its 1-based source line (and timestamp, for markers)."""

    id: str
    line: int | None
    timestamp: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "line": self.line}
        if self.timestamp is not None:
            out["timestamp"] = self.timestamp
        return out

    def text(self) -> str:
        at = f" at {self.timestamp}" if self.timestamp else ""
        return f"{self.id} (line {self.line}){at}"


@frozen(kw_only=True)
class Leaf:
    id: str
    depth: int
    line: int | None
    active: bool


@frozen(kw_only=True)
class WindowReport:
    """One window on the active branch: its marker (``None`` for the root) and boots."""

    window_id: str
    marker: Located | None
    boots: tuple[Located, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "windowId": self.window_id,
            "root": self.marker is None,
            "marker": None if self.marker is None else self.marker.to_json(),
            "boots": [boot.to_json() for boot in self.boots],
        }


@frozen(kw_only=True)
class Structure:
    """What a readable session file contains."""

    types: dict[str, int]
    roles: dict[str, int]
    leaves: tuple[Leaf, ...]
    windows: tuple[WindowReport, ...]
    stray_boots: tuple[tuple[str, Located], ...]
    """Boots on the active branch whose ``details.windowId`` names no earlier window there."""


@frozen(kw_only=True)
class FileReport:
    path: str
    exit_code: int
    error: str | None = None
    note: str | None = None
    loaded: Skeleton | None = None
    structure: Structure | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "exitCode": self.exit_code}
        if self.error is not None:
            out["error"] = self.error
        if self.note is not None:
            out["note"] = self.note
        if self.loaded is not None:
            out.update(_loaded_json(self.loaded))
        if self.structure is not None:
            out.update(_structure_json(self.structure))
        if self.loaded is not None:
            out["problems"] = [p.to_json() for p in self.loaded.problems]
        return out


def _loaded_json(loaded: Skeleton) -> dict[str, Any]:
    header = loaded.header
    return {
        "header": None if header is None else header.to_json(),
        "originalVersion": loaded.original_version,
        "entryCount": len(loaded.tree),
    }


def _structure_json(structure: Structure) -> dict[str, Any]:
    active = next((leaf.id for leaf in structure.leaves if leaf.active), None)
    return {
        "types": structure.types,
        "roles": structure.roles,
        "branches": {
            "leafCount": len(structure.leaves),
            "activeLeaf": active,
            "leaves": [
                {"id": f.id, "depth": f.depth, "line": f.line, "active": f.active}
                for f in structure.leaves
            ],
        },
        "windows": [w.to_json() for w in structure.windows],
        "strayBoots": [{"windowId": wid, **b.to_json()} for wid, b in structure.stray_boots],
    }


# --------------------------------------------------------------------------------------------
# Building the report


def inspect_file(path: str) -> FileReport:
    """Read and summarise one file (its skeleton: no content is kept); never raises on bad
    input."""
    try:
        loaded = read_skeleton(path, keep=session_checks().keep)
    except UnreadableInputError as exc:
        return FileReport(path=path, exit_code=EXIT_UNREADABLE, error=exc.reason)
    if not loaded.is_session:
        # Readable but holding no session (a lock file, an empty or binary file): its
        # problems are reported (exit 1); exit 2 is kept for files that cannot be read.
        return FileReport(
            path=path,
            exit_code=EXIT_PROBLEMS,
            note="not a Pi session file (no session header and no entry)",
            loaded=loaded,
        )
    code = EXIT_PROBLEMS if loaded.has_defects else EXIT_CLEAN
    return FileReport(path=path, exit_code=code, loaded=loaded, structure=describe(loaded))


def describe(loaded: Skeleton) -> Structure:
    entries = loaded.tree.entries
    windows, stray = _windows(loaded)
    return Structure(
        types=dict(Counter(entry.type for entry in entries).most_common()),
        roles=dict(Counter(_roles(entries)).most_common()),
        leaves=tuple(_leaves(loaded)),
        windows=windows,
        stray_boots=stray,
    )


def _roles(entries: Sequence[Entry]) -> Iterator[str]:
    for entry in entries:
        if isinstance(entry, MessageEntry):
            yield entry.message.role


def _leaves(loaded: Skeleton) -> Iterator[Leaf]:
    tree = loaded.tree
    for leaf_id in tree.leaves():
        node = tree.node(leaf_id)
        yield Leaf(
            id=leaf_id,
            depth=node.depth,
            line=loaded.line_of(node),
            active=leaf_id == tree.leaf_id,
        )


def _windows(
    loaded: Skeleton,
) -> tuple[tuple[WindowReport, ...], tuple[tuple[str, Located], ...]]:
    """Walk the active branch: each valid marker opens a window (R8, R76); each boot joins
    the latest window with its ``details.windowId`` (R14), else it is stray."""
    tree = loaded.tree
    order = [root_window_id(tree.session_id)]
    markers: dict[str, Located | None] = {order[0]: None}
    boots: dict[str, list[Located]] = {order[0]: []}
    stray: list[tuple[str, Located]] = []
    for node in tree.branch_nodes():
        entry = node.entry
        where = Located(id=node.id, line=loaded.line_of(node), timestamp=entry.timestamp)
        opened = window_id_of_marker(entry)
        if opened is not None:
            order.append(opened)
            markers[opened] = where
            boots[opened] = []
            continue
        booted = boot_window_id(entry)
        if booted is None:
            continue
        boot = Located(id=where.id, line=where.line)
        if booted in boots:
            boots[booted].append(boot)
        else:
            stray.append((booted, boot))
    reports = _window_reports(order, markers, boots)
    return reports, tuple(stray)


def _window_reports(
    order: list[str], markers: dict[str, Located | None], boots: dict[str, list[Located]]
) -> tuple[WindowReport, ...]:
    """One report per opened window; a marker id reused on the branch is reported twice
    (its boots listed under the latest use)."""
    seen: dict[str, int] = Counter(order)
    reports = []
    for window_id in order:
        seen[window_id] -= 1
        latest = seen[window_id] == 0
        reports.append(
            WindowReport(
                window_id=window_id,
                marker=markers[window_id],
                boots=tuple(boots[window_id]) if latest else (),
            )
        )
    return tuple(reports)


# --------------------------------------------------------------------------------------------
# Text rendering


def render_text(report: FileReport) -> Iterator[str]:
    yield f"== {report.path}"
    if report.error is not None:
        yield f"unreadable: {report.error}"
    if report.note is not None:
        yield report.note
    if report.loaded is not None and report.structure is not None:
        yield from _render_header(report.loaded)
        yield from _render_structure(report.structure, len(report.loaded.tree))
    if report.loaded is not None:
        yield from _render_problems(report.path, report.loaded.problems)


def _render_header(loaded: Skeleton) -> Iterator[str]:
    header = loaded.header
    if header is None:
        yield "header: none"
        return
    version = f"v{header.version}"
    if loaded.original_version is not None and loaded.original_version != header.version:
        version += f" (file: v{loaded.original_version}, migrated in memory)"
    yield f"header: id {header.id}  version {version}"
    yield f"  cwd {header.cwd}  timestamp {header.timestamp}"
    if header.parent_session is not None:
        yield f"  parentSession {header.parent_session}"


def _render_structure(structure: Structure, total: int) -> Iterator[str]:
    yield f"entries: {total}" + _counts(structure.types)
    if structure.roles:
        yield "  message roles:" + _counts(structure.roles)
    count = len(structure.leaves)
    yield f"branches: {count} {'leaf' if count == 1 else 'leaves'}"
    for leaf in structure.leaves:
        active = "  (active)" if leaf.active else ""
        yield f"  leaf {leaf.id}  depth {leaf.depth}  line {leaf.line}{active}"
    yield f"windows on the active branch: {len(structure.windows)}"
    for window in structure.windows:
        yield from _render_window(window)
    for window_id, boot in structure.stray_boots:
        yield f"  stray boot {boot.text()} for window {window_id} (no such window before it)"


def _render_window(window: WindowReport) -> Iterator[str]:
    opener = "root" if window.marker is None else f"marker {window.marker.text()}"
    yield f"  {window.window_id}  {opener}"
    if not window.boots:
        yield "    boot: none"
    for boot in window.boots:
        yield f"    boot {boot.text()}"


def _counts(counts: dict[str, int]) -> str:
    return "".join(f"  {name} {n}" for name, n in counts.items())


def _render_problems(path: str, problems: Sequence[Problem]) -> Iterator[str]:
    by_severity = Counter(p.severity for p in problems)
    counts = ", ".join(f"{by_severity[s]} {s.value}" for s in Severity)
    yield f"problems: {len(problems)} ({counts})"
    for problem in problems:
        yield "  " + problem.render(path)
