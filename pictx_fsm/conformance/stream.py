"""Auditing a session file read as a stream, in memory bounded by its structure.

The file is read once, line by line, into its skeleton
(:func:`~pictx_fsm.session.skeleton.read_skeleton`: the tree without content). While each
entry is read, whole, the content and file-order checks run on it and the boundary entries
are noted by line (failure mode 20); then the entry's content is dropped. The branch checks
walk the skeleton afterwards and the content findings join them at their nodes, so a file's
findings are exactly those :func:`~pictx_fsm.conformance.engine.audit_tree` finds on the
whole entries, and memory grows with the number of entries, not with their text.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from pictx_fsm.conformance.checks import CheckSet
from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.engine import ContentStep, Found, audit_shape, content_findings
from pictx_fsm.conformance.findings import Finding
from pictx_fsm.conformance.report import Folds, SessionAudit, Stats, Summary
from pictx_fsm.conformance.structure import (
    damaged_boundaries,
    is_boundary_entry,
    problem_findings,
)
from pictx_fsm.conformance.walk import Shape
from pictx_fsm.errors import UnreadableInputError
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.session.skeleton import SkeletonReader, paused_collector
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = ["Clock", "audit_file", "audit_files"]

Clock = Callable[[], float]


def audit_files(
    paths: Sequence[str], checks: CheckSet, *, clock: Clock = time.perf_counter
) -> list[SessionAudit]:
    """Audit each file, then the run's checks across files; never raises on bad input."""
    audits = [audit_file(path, checks, clock=clock) for path in paths]
    return checks.finish(audits, paths)


def audit_file(
    path: str | os.PathLike[str], checks: CheckSet, *, clock: Clock = time.perf_counter
) -> SessionAudit:
    """Audit one file; never raises on bad input (unreadable files become exit code 2).

    Findings come in two groups, each in line order: first the reader's structural problems
    (and the boundaries they swallow), then the findings of every branch."""
    with paused_collector():
        return _audit(os.fspath(path), checks, clock)


def _audit(name: str, checks: CheckSet, clock: Clock) -> SessionAudit:
    started = clock()
    reader = SkeletonReader(name, whole=checks.whole_types, keep=checks.keep)
    try:
        found, boundaries, folded, ends = _read(reader, checks)
    except UnreadableInputError as exc:
        return SessionAudit(path=name, error=exc.reason)
    skeleton = reader.skeleton()
    structure = [
        *problem_findings(skeleton.problems),
        *damaged_boundaries(skeleton.problems, boundaries, checks.boundaries),
    ]
    if not skeleton.is_session:
        # Readable, but nothing in it is a session (a lock file, an empty or binary file):
        # its problems are the findings; exit code 2 is kept for files that cannot be read.
        note = "no session header and no entry"
        damage = tuple(sorted(structure, key=checks.sort_key))
        return SessionAudit(path=name, findings=damage, note=note)
    ctx = _context(skeleton.tree, reader)
    shape = Shape(skeleton.tree)
    content = ContentStep(checks.content, found)
    lifecycle = audit_shape(shape, ctx, checks, content, folded)
    findings: list[Finding] = [*sorted(structure, key=checks.sort_key), *lifecycle]
    entries = len(skeleton.tree.entries)
    return SessionAudit(
        path=name,
        findings=tuple(findings),
        summary=Summary.of(shape, entries, checks.summary_counts(shape, ctx)),
        stats=Stats(bytes=skeleton.bytes, entries=entries, seconds=clock() - started),
        folds=ends,
    )


def _read(
    reader: SkeletonReader, checks: CheckSet
) -> tuple[Found, Mapping[int, Sequence[Entry]], list[Finding], Folds]:
    """One pass over the file: the content checks on each whole entry, boundaries by line,
    and the file-order checks (an extension's persisted state), whose last states the checks
    across files read (no second read of the file)."""
    found: dict[int, tuple[TreeNode, list[Finding]]] = {}
    boundaries: defaultdict[int, list[Entry]] = defaultdict(list)
    ctx: AuditContext | None = None
    content = checks.content
    folds = [(check, check.entry_types) for check in checks.file_order]
    states = [check.start() for check in checks.file_order]
    folded: list[Finding] = []
    rules = checks.boundaries
    read = checks.whole_types  # most entries (messages): none reads them
    messages_read = MessageEntry.TYPE in read
    for entry, node, line in reader.entries(messages=messages_read):
        if type(entry) is MessageEntry:  # never a boundary; its type known without a call
            if node is None or not messages_read:
                continue
        else:
            if is_boundary_entry(entry, rules):
                boundaries[line].append(entry)
            if node is None or entry.type not in read:
                continue
        if ctx is None:
            assert reader.tree is not None  # the node was just added to it
            ctx = _context(reader.tree, reader)
        hits = content_findings(entry, node, ctx, content)
        if hits:
            found[id(node)] = (node, hits)
        for index, (check, types) in enumerate(folds):
            if entry.type in types:
                states[index], more = check.step(states[index], entry, node, ctx)
                folded.extend(more)
    for (check, _), state in zip(folds, states, strict=True):
        folded.extend(check.end(state))
    ends = tuple((check, state) for (check, _), state in zip(folds, states, strict=True))
    return found, dict(boundaries), folded, ends


def _context(tree: SessionTree, reader: SkeletonReader) -> AuditContext:
    return AuditContext(tree=tree, locate=reader.line_of)
