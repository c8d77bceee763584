"""What every check may read besides the branch itself: the tree, its header, source lines."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from attrs import frozen

from pictx_fsm.conformance.findings import EntryRef, Finding, FindingKind, make_finding
from pictx_fsm.session.problems import Severity
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = ["AuditContext", "Locator", "no_lines"]

Locator = Callable[[TreeNode], int | None]
"""The 1-based source line of a node's entry (``None`` for entries built in memory)."""


def no_lines(node: TreeNode) -> int | None:
    return None


@frozen(kw_only=True)
class AuditContext:
    """The facts a check needs about the whole session, fixed for one audit. What an
    extension knows of the tree (pi-context's windows) is the tree's index
    (``ctx.tree.index(...)``); what it is configured with (a profile), the check's own."""

    tree: SessionTree
    locate: Locator = no_lines

    @property
    def parent_session(self) -> str | None:
        """The source file of a fork or clone (R66), from the header."""
        return self.tree.header.parent_session

    def ref(self, node: TreeNode) -> EntryRef:
        return EntryRef(id=node.id, line=self.locate(node))

    def finding(
        self,
        kind: FindingKind,
        message: str,
        nodes: Iterable[TreeNode],
        *,
        severity: Severity | None = None,
        rule: str | None = None,
    ) -> Finding:
        """A finding about ``nodes`` (the first is the entry at fault)."""
        refs = tuple(self.ref(node) for node in nodes)
        return make_finding(kind, message, refs, severity=severity, rule=rule)
