"""Auditing one session tree: every branch check on every branch, then the whole-tree checks.

:func:`audit_tree` is the entry point for in-memory sessions (the model session's files are
audited with it); :mod:`pictx_fsm.conformance.stream` adds the reader's problems and line
numbers for files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from pictx_fsm.conformance.boundaries import (
    BranchSummaryCheck,
    LegacyResetCheck,
    NativeCompactionCheck,
    ToolPairCheck,
)
from pictx_fsm.conformance.budget import BudgetRepeatCheck, MultipleResetsCheck
from pictx_fsm.conformance.context import AuditContext, Locator, no_lines
from pictx_fsm.conformance.context_management import check_entries
from pictx_fsm.conformance.findings import Finding, sort_key
from pictx_fsm.conformance.forks import out_of_band_forks
from pictx_fsm.conformance.identity import BootIdentityCheck, DuplicateWindowIdCheck
from pictx_fsm.conformance.shapes import EntryShapeCheck, TextCheck
from pictx_fsm.conformance.storms import EmptySummaryCheck, StormCheck
from pictx_fsm.conformance.tail import TailCheck
from pictx_fsm.conformance.walk import (
    READS_ALL,
    BranchCheck,
    ContentCheck,
    EntryCheck,
    Shape,
    unique,
    walk,
)
from pictx_fsm.extensions.pi_context.texts import DEFAULT_PROFILE, Profile
from pictx_fsm.host.overflow import PI_0_87, OverflowPatterns
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.tree import SessionTree, TreeNode

BRANCH_CHECKS: Final[Sequence[BranchCheck]] = (
    TailCheck(),
    BootIdentityCheck(),
    DuplicateWindowIdCheck(),
    MultipleResetsCheck(),
    BudgetRepeatCheck(),
    NativeCompactionCheck(),
    BranchSummaryCheck(),
    ToolPairCheck(),
    StormCheck(),
)
"""Folds over every branch; they read only an entry's skeleton (ids, types, windows)."""

CONTENT_CHECKS: Final[Sequence[ContentCheck]] = (
    EntryShapeCheck(),
    TextCheck(),
    LegacyResetCheck(),
    EmptySummaryCheck(),
)
"""Checks of one entry's content, run once per entry (while a file is read)."""

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


def whole_types(checks: Sequence[ContentCheck]) -> frozenset[str]:
    """The entry types the content checks read, so a reader keeps those whole."""
    return frozenset().union(*(check.entry_types for check in checks))


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


def audit_tree(
    tree: SessionTree,
    profile: Profile | str = DEFAULT_PROFILE,
    *,
    locate: Locator = no_lines,
    patterns: OverflowPatterns = PI_0_87,
) -> list[Finding]:
    """Every lifecycle finding of a session tree, on every branch, each reported once, in
    line order. ``locate`` gives entries their source lines (none for in-memory trees)."""
    ctx = AuditContext(tree=tree, profile=Profile.parse(profile), locate=locate, patterns=patterns)
    folded = check_entries(((node.entry, node) for node in tree.nodes()), ctx)
    return audit_shape(Shape(tree), ctx, ContentStep(CONTENT_CHECKS), folded)


def audit_shape(
    shape: Shape, ctx: AuditContext, content: ContentStep, folded: Sequence[Finding] = ()
) -> list[Finding]:
    """Every finding of a session's shape; ``folded`` are the findings of the file-order
    checks (pi-context-management's persisted state), found while the entries were whole."""
    found = [*walk(shape, (*BRANCH_CHECKS, content), ctx), *out_of_band_forks(shape, ctx)]
    found += folded
    return sorted(unique(found), key=sort_key)
