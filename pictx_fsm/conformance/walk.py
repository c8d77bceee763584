"""Running branch checks over every branch of a tree, each entry visited once.

A branch check is a fold over one root→leaf path: ``start`` gives the state before the first
entry, ``step`` consumes one entry (and may report), ``end`` reports what only the end of a
path reveals (a tail still open at the leaf). States are immutable, so the state after an
entry is shared by every branch through it: one depth-first walk checks all branches in
O(entries × checks) instead of O(leaves × depth), and a finding on a shared prefix is found
once. Findings are deduplicated by (kind, faulty entry) all the same, because ``end``
findings of sibling leaves can name the same entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from operator import attrgetter
from typing import Any, Final, Protocol

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import Finding
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = [
    "NO_FINDINGS",
    "READS_ALL",
    "BranchCheck",
    "ContentCheck",
    "EntryCheck",
    "Shape",
    "Step",
    "unique",
    "walk",
]

Step = tuple[Any, Sequence[Finding]]

NO_FINDINGS: Final[tuple[Finding, ...]] = ()
"""What most steps find: one shared empty value, not a new list a node and a check."""


class BranchCheck(Protocol):
    """A fold over one branch. ``state`` values must be immutable (shared by siblings).

    A check may declare ``reads``, the entry classes whose nodes can change its state or
    report (see :data:`READS_ALL`); the walk then steps it only on those."""

    def start(self, ctx: AuditContext) -> Any: ...

    def step(self, state: Any, node: TreeNode, ctx: AuditContext) -> Step: ...

    def end(self, state: Any, leaf: TreeNode, ctx: AuditContext) -> list[Finding]: ...


class ContentCheck(Protocol):
    """A check of one entry's own content (texts, flags, data keys), with its node (its place
    in the tree). It runs once per entry while a file is read, on the whole entry; the
    walk then only hands out what it found (the tree keeps no content). ``entry_types`` are
    the entry types (``"custom_message"``…) it reads: only those are built whole for it. An
    extension plugs its content checks in its :class:`~pictx_fsm.conformance.checks.CheckSet`."""

    @property
    def entry_types(self) -> frozenset[str]: ...

    def check(self, entry: Entry, node: TreeNode, ctx: AuditContext) -> list[Finding]: ...


class EntryCheck:
    """A check of one entry that needs nothing but the entry's own node (parent, indexes)."""

    def start(self, ctx: AuditContext) -> None:
        return None

    def step(self, state: None, node: TreeNode, ctx: AuditContext) -> Step:
        return None, self.check(node, ctx)

    def end(self, state: None, leaf: TreeNode, ctx: AuditContext) -> list[Finding]:
        return []

    def check(self, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        raise NotImplementedError


# --------------------------------------------------------------------------------------------
# The tree as the walk sees it


_ORDER: Final = attrgetter("order")


def _all_nodes(listed: list[TreeNode]) -> list[TreeNode]:
    """The listed nodes and those they shadow (the parents they name), in file order."""
    nodes: dict[int, TreeNode] = {}
    for node in listed:
        ancestor: TreeNode | None = node
        while ancestor is not None and id(ancestor) not in nodes:
            nodes[id(ancestor)] = ancestor
            ancestor = ancestor.parent
    return sorted(nodes.values(), key=_ORDER)


class Shape:
    """Every node of a tree with its children in file order.

    ``SessionTree.nodes()`` lists one node per id; a node shadowed by a later duplicate id is
    still the parent of the entries appended under it, so it is recovered from their parent
    links and walked too.
    """

    def __init__(self, tree: SessionTree) -> None:
        self.nodes: list[TreeNode] = list(tree.nodes())
        if len(self.nodes) != len(tree):  # a duplicate id, or an entry without one
            self.nodes = _all_nodes(self.nodes)
        # else every entry is a node, each id once: none is shadowed, and they are in file order
        # A node's only child is kept as is, several in a list: most nodes of a session have
        # exactly one child, and a list each would double the shape's memory.
        children: dict[int, TreeNode | list[TreeNode]] = {}
        self.roots: list[TreeNode] = []
        for node in self.nodes:
            parent = node.parent
            if parent is None:
                self.roots.append(node)
                continue
            known = children.setdefault(id(parent), node)
            if known is not node:
                if isinstance(known, list):
                    known.append(node)
                else:
                    children[id(parent)] = [known, node]
        self._children = children

    def children(self, node: TreeNode) -> Sequence[TreeNode]:
        found = self._children.get(id(node), ())
        return (found,) if isinstance(found, TreeNode) else found

    def only_child(self, node: TreeNode) -> TreeNode | None:
        """The node's child when it has exactly one (``None``: none, or several)."""
        found = self._children.get(id(node))
        return found if type(found) is TreeNode else None

    def is_leaf(self, node: TreeNode) -> bool:
        return id(node) not in self._children

    def leaves(self) -> list[TreeNode]:
        children = self._children  # is_leaf, inline
        return [node for node in self.nodes if id(node) not in children]


def walk(shape: Shape, checks: Sequence[BranchCheck], ctx: AuditContext) -> Iterator[Finding]:
    """Every finding of every check on every branch (in depth-first, file order).

    A branch's check states are one list, updated in place along a run of only children (most
    nodes) and copied where the branch forks: each child goes on from its own copy."""
    initial = [check.start(ctx) for check in checks]
    plans: dict[type[Any], tuple[tuple[int, Any], ...]] = {}
    stack: list[tuple[TreeNode, list[Any]]] = [
        (root, list(initial)) for root in reversed(shape.roots)
    ]
    children_of = shape._children.get  # only_child, inline: one call less per node
    while stack:
        node, states = stack.pop()
        while True:
            plan = plans.get(type(node.entry))
            if plan is None:
                plan = plans[type(node.entry)] = _plan(checks, type(node.entry))
            for index, step in plan:
                states[index], found = step(states[index], node, ctx)
                if found:
                    yield from found
            child = children_of(id(node))
            if type(child) is not TreeNode:
                break
            node = child  # most nodes: one child, the same states go on
        children = shape.children(node)
        if children:
            stack.extend((child, list(states)) for child in reversed(children))
        else:
            for check, state in zip(checks, states, strict=True):
                yield from check.end(state, node, ctx)


READS_ALL: Any = None
"""``reads`` of a check that must see every node (the default)."""


def _plan(checks: Sequence[BranchCheck], kind: type[Any]) -> tuple[tuple[int, Any], ...]:
    """The checks a node of this entry class can concern: their indexes and steps."""
    return tuple(
        (index, check.step)
        for index, check in enumerate(checks)
        if (reads := getattr(check, "reads", READS_ALL)) is READS_ALL or kind in reads
    )


def unique(findings: Iterable[Finding]) -> list[Finding]:
    """The first finding of each (kind, faulty entry) key."""
    seen: dict[tuple[str, str, int | None], Finding] = {}
    for finding in findings:
        seen.setdefault(finding.key, finding)
    return list(seen.values())
