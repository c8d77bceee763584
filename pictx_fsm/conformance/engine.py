"""Auditing one session tree: every branch check on every branch, then the whole-tree checks.

:func:`audit_tree` is the entry point for in-memory sessions (the model session's files are
audited with it); :mod:`pictx_fsm.conformance.stream` adds the reader's problems and line
numbers for files. Which checks run is the caller's :class:`~.checks.CheckSet`; Pi's own
(out-of-band forks) always do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pictx_fsm.conformance.checks import CheckSet
from pictx_fsm.conformance.context import AuditContext, Locator, no_lines
from pictx_fsm.conformance.findings import Finding
from pictx_fsm.conformance.forks import out_of_band_forks
from pictx_fsm.conformance.walk import (
    READS_ALL,
    ContentCheck,
    EntryCheck,
    Shape,
    unique,
    walk,
)
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = [
    "ContentStep",
    "Found",
    "audit_shape",
    "audit_tree",
    "content_findings",
    "file_order_findings",
]

Found = Mapping[int, tuple[TreeNode, Sequence[Finding]]]
"""Content findings by ``id(node)``; the node is kept with them so the key stays its own."""


def content_findings(
    entry: Entry, node: TreeNode, ctx: AuditContext, checks: Sequence[ContentCheck]
) -> list[Finding]:
    kind = entry.type
    return [
        finding
        for check in checks
        if kind in check.entry_types
        for finding in check.check(entry, node, ctx)
    ]


class ContentStep(EntryCheck):
    """The content checks' place in the walk: their findings at each node, either found
    before (a file's, while it was read) or computed now from the node's whole entry."""

    def __init__(self, checks: Sequence[ContentCheck], found: Found | None = None) -> None:
        self._checks = checks
        self._found = found
        # the walk steps this check only on nodes of the classes that have findings
        self.reads = (
            READS_ALL
            if found is None
            else frozenset(type(node.entry) for node, _ in found.values())
        )

    def check(self, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        if self._found is None:
            return content_findings(node.entry, node, ctx, self._checks)
        hit = self._found.get(id(node))
        return [] if hit is None or hit[0] is not node else list(hit[1])


def file_order_findings(
    entries: Sequence[tuple[Entry, TreeNode]], ctx: AuditContext, checks: CheckSet
) -> list[Finding]:
    """The file-order checks over whole entries (with their nodes), in file order; entries of
    types no check reads are skipped without being looked at."""
    found: list[Finding] = []
    for check in checks.file_order:
        seen = check.start()
        for entry, node in entries:
            if entry.type in check.entry_types:
                seen, more = check.step(seen, entry, node, ctx)
                found.extend(more)
        found.extend(check.end(seen))
    return found


def audit_tree(tree: SessionTree, checks: CheckSet, *, locate: Locator = no_lines) -> list[Finding]:
    """Every finding of a session tree, on every branch, each reported once, in line order.
    ``locate`` gives entries their source lines (none for in-memory trees)."""
    ctx = AuditContext(tree=tree, locate=locate)
    entries = [(node.entry, node) for node in tree.nodes()]
    folded = file_order_findings(entries, ctx, checks)
    return audit_shape(Shape(tree), ctx, checks, ContentStep(checks.content), folded)


def audit_shape(
    shape: Shape,
    ctx: AuditContext,
    checks: CheckSet,
    content: ContentStep,
    folded: Sequence[Finding] = (),
) -> list[Finding]:
    """Every finding of a session's shape; ``folded`` are the findings of the file-order
    checks, found while the entries were whole."""
    found = [*walk(shape, (*checks.branch, content), ctx), *out_of_band_forks(shape, ctx)]
    found += folded
    return sorted(unique(found), key=checks.sort_key)
