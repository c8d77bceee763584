"""Auditing a session file read as a stream.

The file is read line by line through the reader's streaming API
(:func:`~pictx_fsm.session.jsonl.iter_session_lines`): each entry joins the tree as it is
read, and only three small things are kept beside the tree — each entry's line (for the
report), the boundary entries by line (for failure mode 20) and the reader's problems. No line
text is held, so memory is the tree's.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from attrs import frozen

from pictx_fsm.audit_sessions.context import AuditContext
from pictx_fsm.audit_sessions.engine import audit_shape
from pictx_fsm.audit_sessions.findings import Finding, sort_key
from pictx_fsm.audit_sessions.report import SessionAudit, Stats, Summary
from pictx_fsm.audit_sessions.structure import (
    damaged_boundaries,
    is_boundary_entry,
    problem_findings,
)
from pictx_fsm.audit_sessions.walk import Shape
from pictx_fsm.errors import UnreadableInputError
from pictx_fsm.protocol import DEFAULT_PROFILE, Profile
from pictx_fsm.session.entries import Entry, SessionHeader
from pictx_fsm.session.jsonl import SessionParser, iter_session_lines, open_regular, os_reason
from pictx_fsm.session.problems import Problem
from pictx_fsm.session.tree import SessionTree

Clock = Callable[[], float]

PLACEHOLDER_HEADER = SessionHeader(id="", timestamp="", cwd="")
"""Stands in for a missing header so the entries still form a tree (root ``pcw::root``)."""


@frozen(kw_only=True)
class StreamedSession:
    """What the audit keeps of a file: the tree, entry lines, boundaries by line, problems."""

    tree: SessionTree
    lines: Mapping[int, int]
    """``id(entry)`` → 1-based line (entries are kept alive by the tree)."""
    boundaries: Mapping[int, Sequence[Entry]]
    problems: Sequence[Problem]
    bytes: int
    is_session: bool

    def locate(self, entry: Entry) -> int | None:
        return self.lines.get(id(entry))


def read_streamed(path: str) -> StreamedSession:
    """Read one file; raises :class:`UnreadableInputError` only when it cannot be opened/read."""
    parser = SessionParser(path)
    tree: SessionTree | None = None
    lines: dict[int, int] = {}
    boundaries: defaultdict[int, list[Entry]] = defaultdict(list)
    try:
        with open_regular(path) as fp:
            for item in iter_session_lines(fp, parser):
                if tree is None:
                    tree = SessionTree(parser.header or PLACEHOLDER_HEADER)
                tree.add(item.entry)
                lines[id(item.entry)] = item.line
                if is_boundary_entry(item.entry):
                    boundaries[item.line].append(item.entry)
            size = fp.tell()
    except OSError as exc:
        raise UnreadableInputError(path, os_reason(exc)) from exc
    header = parser.header
    return StreamedSession(
        tree=tree if tree is not None else SessionTree(header or PLACEHOLDER_HEADER),
        lines=lines,
        boundaries=dict(boundaries),
        problems=parser.problems,
        bytes=size,
        is_session=header is not None or tree is not None,
    )


def audit_file(
    path: str | os.PathLike[str],
    profile: Profile | str = DEFAULT_PROFILE,
    *,
    clock: Clock = time.perf_counter,
) -> SessionAudit:
    """Audit one file; never raises on bad input (unreadable files become exit code 2).

    Findings come in two groups, each in line order: first the reader's structural problems
    (and the boundaries they swallow), then the lifecycle findings of every branch."""
    name = os.fspath(path)
    started = clock()
    try:
        session = read_streamed(name)
    except UnreadableInputError as exc:
        return SessionAudit(path=name, error=exc.reason)
    structure = [
        *problem_findings(session.problems),
        *damaged_boundaries(session.problems, session.boundaries),
    ]
    if not session.is_session:
        # Readable, but nothing in it is a session (a lock file, an empty or binary file):
        # its problems are the findings; exit code 2 is kept for files that cannot be read.
        note = "no session header and no entry"
        return SessionAudit(path=name, findings=tuple(sorted(structure, key=sort_key)), note=note)
    ctx = AuditContext(tree=session.tree, profile=Profile.parse(profile), locate=session.locate)
    shape = Shape(session.tree)
    findings: list[Finding] = [*sorted(structure, key=sort_key), *audit_shape(shape, ctx)]
    entries = len(session.tree.entries)
    stats = Stats(bytes=session.bytes, entries=entries, seconds=clock() - started)
    return SessionAudit(
        path=name,
        findings=tuple(findings),
        summary=Summary.of(shape, entries),
        stats=stats,
    )
