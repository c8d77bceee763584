"""Auditing a session file read as a stream, in memory bounded by its structure.

The file is read once, line by line, into its skeleton
(:func:`~pictx_fsm.session.skeleton.read_skeleton`: the tree without content). While each
entry is read, whole, the content checks run on it and the boundary entries are noted by
line (failure mode 20); then the entry's content is dropped. The branch checks walk the
skeleton afterwards and the content findings join them at their nodes, so a file's findings
are exactly those :func:`~pictx_fsm.conformance.engine.audit_tree` finds on the whole
entries, and memory grows with the number of entries, not with their text.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.context_management import ChainLink, ContextMemoryCheck, receipt_link
from pictx_fsm.conformance.engine import (
    CONTENT_CHECKS,
    ContentStep,
    Found,
    audit_shape,
    content_findings,
    whole_types,
)
from pictx_fsm.conformance.findings import Finding, sort_key
from pictx_fsm.conformance.report import SessionAudit, Stats, Summary
from pictx_fsm.conformance.structure import (
    damaged_boundaries,
    is_boundary_entry,
    problem_findings,
)
from pictx_fsm.conformance.walk import ContentCheck, Shape
from pictx_fsm.errors import UnreadableInputError
from pictx_fsm.extensions.pi_context.texts import DEFAULT_PROFILE, Profile
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.session.skeleton import SkeletonReader, paused_collector
from pictx_fsm.session.tree import SessionTree, TreeNode

Clock = Callable[[], float]


def audit_file(
    path: str | os.PathLike[str],
    profile: Profile | str = DEFAULT_PROFILE,
    *,
    clock: Clock = time.perf_counter,
    content_checks: Sequence[ContentCheck] = CONTENT_CHECKS,
) -> SessionAudit:
    """Audit one file; never raises on bad input (unreadable files become exit code 2).

    Findings come in two groups, each in line order: first the reader's structural problems
    (and the boundaries they swallow), then the lifecycle findings of every branch."""
    with paused_collector():
        return _audit(os.fspath(path), Profile.parse(profile), clock, content_checks)


def _audit(
    name: str, profile: Profile, clock: Clock, content_checks: Sequence[ContentCheck]
) -> SessionAudit:
    started = clock()
    reader = SkeletonReader(
        name, whole=whole_types(content_checks) | ContextMemoryCheck.entry_types
    )
    try:
        found, boundaries, folded, link = _read(reader, profile, content_checks)
    except UnreadableInputError as exc:
        return SessionAudit(path=name, error=exc.reason)
    skeleton = reader.skeleton()
    structure = [
        *problem_findings(skeleton.problems),
        *damaged_boundaries(skeleton.problems, boundaries),
    ]
    if not skeleton.is_session:
        # Readable, but nothing in it is a session (a lock file, an empty or binary file):
        # its problems are the findings; exit code 2 is kept for files that cannot be read.
        note = "no session header and no entry"
        return SessionAudit(path=name, findings=tuple(sorted(structure, key=sort_key)), note=note)
    ctx = _context(skeleton.tree, profile, reader)
    shape = Shape(skeleton.tree)
    content = ContentStep(content_checks, found)
    lifecycle = audit_shape(shape, ctx, content, folded)
    findings: list[Finding] = [*sorted(structure, key=sort_key), *lifecycle]
    entries = len(skeleton.tree.entries)
    return SessionAudit(
        path=name,
        findings=tuple(findings),
        summary=Summary.of(shape, entries),
        stats=Stats(bytes=skeleton.bytes, entries=entries, seconds=clock() - started),
        link=link,
    )


def _read(
    reader: SkeletonReader, profile: Profile, checks: Sequence[ContentCheck]
) -> tuple[Found, Mapping[int, Sequence[Entry]], list[Finding], ChainLink | None]:
    """One pass over the file: the content checks on each whole entry, boundaries by line,
    the file-order fold of pi-context-management's persisted state and its handoff receipt
    (the session-chain check's link: no second read of the file)."""
    found: dict[int, tuple[TreeNode, list[Finding]]] = {}
    boundaries: defaultdict[int, list[Entry]] = defaultdict(list)
    ctx: AuditContext | None = None
    memory = ContextMemoryCheck()
    seen = memory.start()
    folded: list[Finding] = []
    read = whole_types(checks) | memory.entry_types  # most entries (messages): none reads them
    messages_read = MessageEntry.TYPE in read
    link: ChainLink | None = None
    for entry, node, line in reader.entries(messages=messages_read):
        if type(entry) is MessageEntry:  # never a boundary; its type known without a call
            if node is None or not messages_read:
                continue
        else:
            if is_boundary_entry(entry):
                boundaries[line].append(entry)
            if node is None or entry.type not in read:
                continue
        if ctx is None:
            assert reader.tree is not None  # the node was just added to it
            ctx = _context(reader.tree, profile, reader)
        hits = content_findings(entry, node, ctx, checks)
        if hits:
            found[id(node)] = (node, hits)
        if entry.type in memory.entry_types:
            seen, more = memory.step(seen, entry, node, ctx)
            folded.extend(more)
            if link is None:
                link = receipt_link(reader.path, (entry,), lambda _, at=line: at)
    return found, dict(boundaries), [*folded, *memory.end(seen)], link


def _context(tree: SessionTree, profile: Profile, reader: SkeletonReader) -> AuditContext:
    return AuditContext(tree=tree, profile=profile, locate=reader.line_of)
