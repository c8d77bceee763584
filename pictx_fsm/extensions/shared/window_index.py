"""The window index: a scheme's window identity over one session tree, kept in step with it
entry by entry, so "which window is the leaf in" (R9, R11), "is a warning already in this
window" (R13) and "what follows the marker" (R65) cost O(1) per appended entry, not a walk of
the branch per hook.

The session layer knows Pi's format only; what an extension knows per node is an index it
registers on the tree (:meth:`SessionTree.index <pictx_fsm.session.tree.SessionTree.index>`).
The family's extensions share one scheme of windows and differ in their custom types, so the
index is written once here, parametrized by a :class:`~pictx_fsm.extensions.shared.windows.
WindowScheme`; each extension's index is a subclass naming its scheme (pi-context's
:class:`~pictx_fsm.extensions.pi_context.windows.WindowIndex`, notesoup's
``NotesoupWindows``), registered on the tree by its type.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from typing import ClassVar, Self

from attrs import frozen

from pictx_fsm.extensions.shared.windows import Window, WindowScheme, root_window_id
from pictx_fsm.session.entries import CustomEntry, CustomMessageEntry, Entry, MessageEntry
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = ["SchemeWindowIndex", "WindowFacts"]


@frozen(kw_only=True)
class WindowFacts:
    """What a scheme knows of one node: its window and that window's tail on the path."""

    window: Window
    message_types: frozenset[str]
    """customTypes of ``custom_message`` entries on the path since the window opened (R13)."""
    boot_id: str | None
    """The first raw boot for this window after its marker, on this path (R14, R65)."""
    continued: bool
    """A continuation follows that boot on this path (the closed tail of D1/D3)."""


class SchemeWindowIndex:
    """A scheme's window identity over one session tree, kept in step with it.

    A subclass names its :attr:`scheme`; ``Subclass.of(tree)`` is the tree's one index of that
    type (:meth:`SessionTree.index <pictx_fsm.session.tree.SessionTree.index>`: made and
    filled on first use, then told of every entry added and of the leaf). Facts are kept per
    node in a list by the node's ``order`` — an entry that opens no window and is no boot,
    continuation or custom message (a plain message: most of a session) shares its parent's
    facts, one list append. A node of another tree must not be asked about. The index holds
    its tree weakly: the tree holds the index, and a skeleton dropped after an audit is freed
    at once, not left to the cycle collector.
    """

    scheme: ClassVar[WindowScheme]

    def __init__(self, tree: SessionTree) -> None:
        self._tree = weakref.ref(tree)
        self._leaf: TreeNode | None = tree.leaf
        self._root = Window(
            window_id=root_window_id(tree.session_id),
            marker_id=None,
            marker_timestamp=None,
            previous=None,
            depth=0,
        )
        self._root_facts = WindowFacts(
            window=self._root, message_types=frozenset(), boot_id=None, continued=False
        )
        self._facts: list[WindowFacts | None] = []
        self._marker_windows: dict[str, list[Window]] = {}

    @classmethod
    def of(cls, tree: SessionTree) -> Self:
        """The tree's index of this type (made and filled on first use)."""
        return tree.index(cls)

    # -- following the tree ------------------------------------------------------------------

    def on_leaf(self, node: TreeNode | None) -> None:
        self._leaf = node

    def on_add(self, node: TreeNode) -> None:
        self._leaf = node
        facts = self._facts
        parent = node.parent
        if parent is not None and type(node.entry) is MessageEntry and len(facts) == node.order:
            known = facts[parent.order]
            if known is not None:  # the common entry: its parent's facts as they are
                facts.append(known)
                return
        self.at(node)

    def at(self, node: TreeNode) -> WindowFacts:
        """The facts of ``node`` (computed now, with those of its ancestors, when the index
        has not seen it: a node shadowed by a duplicate id before the index was made)."""
        facts = self._facts
        order = node.order
        if order < len(facts):
            known = facts[order]
            if known is not None:
                return known
        pending: list[TreeNode] = []
        current: TreeNode | None = node
        base = self._root_facts
        while current is not None:
            if current.order < len(facts) and (found := facts[current.order]) is not None:
                base = found
                break
            pending.append(current)
            current = current.parent
        for step in reversed(pending):
            base = self._step(step, base)
            if step.order >= len(facts):
                facts.extend([None] * (step.order + 1 - len(facts)))
            facts[step.order] = base
        return base

    def _step(self, node: TreeNode, parent: WindowFacts) -> WindowFacts:
        scheme = self.scheme
        entry: Entry = node.entry
        window, types = parent.window, parent.message_types
        boot, continued = parent.boot_id, parent.continued
        opened = scheme.window_id_of_marker(entry)
        if opened is not None:
            assert isinstance(entry, CustomEntry)  # a marker is one (R8)
            window = Window(
                window_id=opened,
                marker_id=node.id,
                marker_timestamp=entry.timestamp,
                previous=window,
                depth=window.depth + 1,
                marker_type=entry.custom_type,
            )
            self._marker_windows.setdefault(opened, []).append(window)
            return WindowFacts(
                window=window, message_types=frozenset(), boot_id=None, continued=False
            )
        if (
            boot is None
            and window.marker_id is not None
            and scheme.boot_window_id(entry) == window.window_id
        ):
            boot = node.id
        elif boot is not None and scheme.is_continuation(entry):
            continued = True
        if isinstance(entry, CustomMessageEntry) and entry.custom_type not in types:
            types = types | {entry.custom_type}
        if (
            window is parent.window
            and types is parent.message_types
            and boot is parent.boot_id
            and continued is parent.continued
        ):
            return parent
        return WindowFacts(window=window, message_types=types, boot_id=boot, continued=continued)

    # -- questions at a node -----------------------------------------------------------------

    def window_of(self, node: TreeNode) -> Window:
        return self._facts_of(node).window

    def _facts_of(self, node: TreeNode) -> WindowFacts:
        """:meth:`at`, its common case inline (the questions every hook asks)."""
        facts, order = self._facts, node.order
        known = facts[order] if order < len(facts) else None
        return known if known is not None else self.at(node)

    def markers_among(self, nodes: Iterable[TreeNode]) -> int:
        """How many of ``nodes`` are their window's marker (R8: a node whose id is its
        window's marker id), in one pass."""
        facts, at = self._facts, self.at
        count = 0
        for node in nodes:
            order = node.order
            known = facts[order] if order < len(facts) else None
            count += (known or at(node)).window.marker_id == node.id
        return count

    def tail_since_marker(self, node: TreeNode) -> list[TreeNode]:
        """The nodes after the marker of ``node``'s window up to and including ``node``, in
        path order; O(tail): the walk stops at the marker."""
        return _tail(node, self._facts_of(node).window.marker_id)

    # -- window identity at the leaf (R9, R11, R13) ------------------------------------------

    @property
    def root_window(self) -> Window:
        """R10: the session's root window."""
        return self._root

    def window_at(self, entry_id: str | None = None) -> Window:
        """The window that ``entry_id`` (default: the leaf) belongs to."""
        node = self._leaf if entry_id is None else self._tree_of().node(entry_id)
        return self._root if node is None else self.at(node).window

    def _tree_of(self) -> SessionTree:
        tree = self._tree()
        if tree is None:  # pragma: no cover - the tree holds its indexes
            raise ReferenceError("the session tree of this window index is gone")
        return tree

    @property
    def current_window(self) -> Window:
        """R9/R11: the window of the last valid marker on the active branch, else the root."""
        leaf = self._leaf
        if leaf is None:
            return self._root
        facts, order = self._facts, leaf.order  # _facts_of, inline: asked on every hook
        known = facts[order] if order < len(facts) else None
        return (known if known is not None else self.at(leaf)).window

    def window_ids_on_branch(self, window: Window | None = None) -> AbstractSet[str]:
        """R12's collision set: the ids of the valid markers on the branch up to ``window``
        (default: the leaf's). ``in`` costs O(1) unless the id opens a window somewhere in the
        tree; the walk that then decides is bounded by the windows between the two."""
        return _BranchWindowIds(window or self.current_window, self._marker_windows)

    def has_window_message(self, *custom_types: str) -> bool:
        """R13: a ``custom_message`` of one of these types on the active branch since the last
        marker."""
        leaf = self._leaf
        if leaf is None:
            return False
        facts, order = self._facts, leaf.order  # _facts_of, inline: asked on every hook
        known = facts[order] if order < len(facts) else None
        present = (known if known is not None else self.at(leaf)).message_types
        return any(custom_type in present for custom_type in custom_types)

    def tail_after_marker(self) -> list[Entry]:
        """Entries after the current marker on the active branch (empty in the root window)."""
        leaf = self._leaf
        marker_id = None if leaf is None else self._facts_of(leaf).window.marker_id
        if leaf is None or marker_id is None:
            return []
        return [n.entry for n in _tail(leaf, marker_id)]


def _tail(node: TreeNode, marker_id: str | None) -> list[TreeNode]:
    """``node`` and its ancestors after the one with ``marker_id``, in path order."""
    nodes: list[TreeNode] = []
    current: TreeNode | None = node
    while current is not None and current.id != marker_id:
        nodes.append(current)
        current = current.parent
    nodes.reverse()
    return nodes


class _BranchWindowIds(AbstractSet[str]):
    """The window ids on the chain of ``window``
    (:meth:`SchemeWindowIndex.window_ids_on_branch`)."""

    def __init__(self, window: Window, by_id: dict[str, list[Window]]) -> None:
        self._window = window
        self._by_id = by_id

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, str):
            return False
        return any(_on_chain(opened, self._window) for opened in self._by_id.get(item, ()))

    def __iter__(self) -> Iterator[str]:
        return iter(self._window.marker_window_ids())

    def __len__(self) -> int:
        return len(self._window.marker_window_ids())


def _on_chain(window: Window, last: Window) -> bool:
    """``window`` is ``last`` or one of the windows before it (depths fall by one per step)."""
    node: Window | None = last
    while node is not None and node.depth > window.depth:
        node = node.previous
    return node is window
