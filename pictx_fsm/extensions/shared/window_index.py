"""The window index: a scheme's window identity over one session tree, kept in step with it
entry by entry, so "which window is the leaf in" (R9, R11), "is a warning already in this
window" (R13) and "what follows the marker" (R65) cost O(1) per appended entry, not a walk of
the branch per hook.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from typing import Any, ClassVar

from attrs import frozen

from pictx_fsm.extensions.shared.windows import Window, WindowScheme, root_window_id
from pictx_fsm.session.entries import CustomEntry, CustomMessageEntry, MessageEntry
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = ["WindowFacts", "WindowIndex"]


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


_INDEXES: weakref.WeakKeyDictionary[SessionTree, dict[type[Any], WindowIndex]] = (
    weakref.WeakKeyDictionary()
)


class WindowIndex:
    """A scheme's window identity over one session tree, kept in step with it entry by entry.

    A subclass names its :attr:`scheme`; ``Subclass.of(tree)`` is the tree's one index of that
    kind (made and filled on first use, then told of every appended entry). Facts are kept per
    node by the node's file ``order``; a plain message shares its parent's facts.
    """

    scheme: ClassVar[WindowScheme]

    def __init__(self, tree: SessionTree) -> None:
        self._tree = tree
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
    def of(cls, tree: SessionTree) -> WindowIndex:
        """The tree's index of this kind (made, filled and subscribed on first use)."""
        per_tree = _INDEXES.setdefault(tree, {})
        found = per_tree.get(cls)
        if found is None:
            found = per_tree[cls] = cls(tree)
            tree.subscribe(found)
        return found

    # -- following the tree ------------------------------------------------------------------

    def on_add(self, node: TreeNode) -> None:
        facts = self._facts
        parent = node.parent
        if parent is not None and type(node.entry) is MessageEntry and len(facts) == node.order:
            known = facts[parent.order] if parent.order < len(facts) else None
            if known is not None:  # the common entry: its parent's facts as they are
                facts.append(known)
                return
        self.at(node)

    def at(self, node: TreeNode) -> WindowFacts:
        """The facts of ``node`` (computed now, with those of its unseen ancestors)."""
        facts = self._facts
        if node.order < len(facts) and (known := facts[node.order]) is not None:
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
        entry = node.entry
        window, types = parent.window, parent.message_types
        boot, continued = parent.boot_id, parent.continued
        opened = scheme.window_id_of_marker(entry)
        if opened is not None:
            assert isinstance(entry, CustomEntry)
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
        if boot is None and window.marker_id is not None:
            if scheme.boot_window_id(entry) == window.window_id:
                boot = node.id
        elif boot is not None and scheme.is_continuation(entry):
            continued = True
        if type(entry) is CustomMessageEntry and entry.custom_type not in types:
            types = types | {entry.custom_type}
        if (
            types is parent.message_types
            and boot is parent.boot_id
            and continued is parent.continued
        ):
            return parent
        return WindowFacts(window=window, message_types=types, boot_id=boot, continued=continued)

    # -- questions ----------------------------------------------------------------------------

    @property
    def root_window(self) -> Window:
        return self._root

    def window_of(self, node: TreeNode) -> Window:
        return self.at(node).window

    def window_at(self, entry_id: str | None = None) -> Window:
        """The window ``entry_id`` (default: the leaf) belongs to."""
        node = self._tree.leaf if entry_id is None else self._tree.node(entry_id)
        return self._root if node is None else self.at(node).window

    @property
    def current_window(self) -> Window:
        """R9/R11: the window of the last valid marker on the active branch, else the root."""
        return self.window_at()

    def window_ids_on_branch(self, window: Window | None = None) -> AbstractSet[str]:
        """R12's collision set: the ids of the valid markers on the branch up to ``window``
        (default: the leaf's)."""
        return _BranchWindowIds(window or self.current_window, self._marker_windows)

    def has_window_message(self, *custom_types: str) -> bool:
        """R13: a ``custom_message`` of one of these types on the active branch since the last
        marker."""
        leaf = self._tree.leaf
        if leaf is None:
            return False
        present = self.at(leaf).message_types
        return any(custom_type in present for custom_type in custom_types)

    def tail_since_marker(self, node: TreeNode) -> list[TreeNode]:
        """The nodes after the marker of ``node``'s window up to and including ``node``, in
        path order; O(tail)."""
        marker_id = self.at(node).window.marker_id
        nodes: list[TreeNode] = []
        for ancestor in node.ancestors():
            if ancestor.id == marker_id:
                break
            nodes.append(ancestor)
        nodes.reverse()
        return nodes

    def tail_after_marker(self) -> list[Any]:
        """Entries after the current marker on the active branch (empty in the root window)."""
        leaf = self._tree.leaf
        if leaf is None or self.at(leaf).window.marker_id is None:
            return []
        return [node.entry for node in self.tail_since_marker(leaf)]


class _BranchWindowIds(AbstractSet[str]):
    """The window ids on the chain of ``window`` (:meth:`WindowIndex.window_ids_on_branch`)."""

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
