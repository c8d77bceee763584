"""Window identity (lifecycle R8–R15): markers, root ids, minted ids, boots, and the index.

The predicates are pure functions of one entry. :class:`WindowIndex` is pi-context's index
over a session tree (``WindowIndex.of(tree)``, kept in step with it entry by entry): each
node's window, the pi-context message types already in that window on its path, the window's
first boot and whether a continuation followed, each derived from the parent's in O(1). The
lifecycle asks those questions on every hook (R9, R11, R13), so they are answered from the
leaf's facts without walking the branch; walking is only needed for what genuinely depends on
the path (the tail after a marker).
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final

from attrs import frozen

from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    MARKER_TYPE,
    ROOT_WINDOW_SUFFIX,
    WINDOW_ID_PREFIX,
)
from pictx_fsm.js import is_plain_object
from pictx_fsm.session.entries import CustomEntry, CustomMessageEntry, Entry, MessageEntry
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = [
    "NO_WINDOW_ID",
    "Window",
    "WindowFacts",
    "WindowIndex",
    "boot_key",
    "boot_window_id",
    "is_boot_for",
    "is_boot_message",
    "is_continuation",
    "is_valid_marker",
    "mint_window_id",
    "root_window_id",
    "session_prefix",
    "window_id_candidate",
    "window_id_of_marker",
]


def is_valid_marker(entry: object) -> bool:
    """R8: a ``custom`` entry of the marker type whose ``data.windowId`` is a non-empty string."""
    return window_id_of_marker(entry) is not None


def window_id_of_marker(entry: object) -> str | None:
    """The window id a valid marker opens, else ``None`` (legacy ``reset-v2`` compactions,
    numeric or empty ids and foreign types are not markers)."""
    if not isinstance(entry, CustomEntry) or entry.custom_type != MARKER_TYPE:
        return None
    data = entry.data
    if not is_plain_object(data):
        return None
    window_id = data.get("windowId")
    return window_id if isinstance(window_id, str) and window_id else None


def boot_window_id(entry: object) -> str | None:
    """R14 (raw-entry form): the ``details.windowId`` of a boot ``custom_message``."""
    if not isinstance(entry, CustomMessageEntry) or entry.custom_type != BOOT_TYPE:
        return None
    details = entry.details
    if not is_plain_object(details):
        return None
    window_id = details.get("windowId")
    return window_id if isinstance(window_id, str) else None


def is_boot_for(entry: object, window_id: str) -> bool:
    """R14: a raw boot entry for exactly this window."""
    return boot_window_id(entry) == window_id


def is_continuation(entry: object) -> bool:
    return isinstance(entry, CustomMessageEntry) and entry.custom_type == CONTINUATION_TYPE


def is_boot_message(message: Mapping[str, Any], window_id: str | None = None) -> bool:
    """R14 (projection form): role ``custom``, boot type, and (if given) the same window id."""
    if message.get("role") != "custom" or message.get("customType") != BOOT_TYPE:
        return False
    if window_id is None:
        return True
    details = message.get("details")
    return is_plain_object(details) and details.get("windowId") == window_id


NO_WINDOW_ID: Final = object()
""":func:`boot_key` of a boot whose ``details.windowId`` is not a string: it names no window."""


def boot_key(message: Any) -> Hashable | None:
    """R14 (projection form) as a transcript tag
    (:data:`~pictx_fsm.session.transcript.Tag`): a boot's window id (:data:`NO_WINDOW_ID`
    when it has none), ``None`` for any other message. The tree's transcripts track it, so
    R64 and R67 find a window's boot in a request without scanning it."""
    if not is_plain_object(message):
        return None
    if message.get("role") != "custom" or message.get("customType") != BOOT_TYPE:
        return None
    details = message.get("details")
    window_id = details.get("windowId") if is_plain_object(details) else None
    return window_id if isinstance(window_id, str) else NO_WINDOW_ID


def session_prefix(session_id: str) -> str:
    return session_id[:8]


def root_window_id(session_id: str) -> str:
    """R10: ``pcw:<first 8 chars of the session id>:root``.

    post: __return__.startswith("pcw:") and __return__.endswith(":root")
    """
    return f"{WINDOW_ID_PREFIX}{session_prefix(session_id)}{ROOT_WINDOW_SUFFIX}"


def window_id_candidate(session_id: str, draw: str) -> str:
    """R12 shape: ``pcw:<8 chars of session id>:<first 8 hex digits of a random UUID>``."""
    return f"{WINDOW_ID_PREFIX}{session_prefix(session_id)}:{draw[:8]}"


def mint_window_id(session_id: str, draws: Iterable[str], taken: Iterable[str]) -> str:
    """R12: the first candidate, from a stream of random UUID hex draws, that no valid marker on
    the active branch already uses. ``draws`` must eventually yield a free candidate.

    post: __return__ not in set(taken)
    post: __return__.startswith("pcw:" + session_id[:8] + ":")
    raises: ValueError
    """
    taken_ids = taken if isinstance(taken, AbstractSet) else set(taken)
    for draw in draws:
        candidate = window_id_candidate(session_id, draw)
        if candidate not in taken_ids:
            return candidate
    raise ValueError("the random source ran out before a free window id was drawn")


@frozen(kw_only=True)
class Window:
    """One context window on a branch: opened by a valid marker, or the root window.

    ``previous`` links to the window that was current before this marker, so the chain is the
    list of windows on the path to any entry (R15 previous id, R12 collision set).
    """

    window_id: str
    marker_id: str | None
    marker_timestamp: str | None
    previous: Window | None
    depth: int
    """Number of markers on the path up to and including this window's marker (root: 0)."""

    @property
    def is_root(self) -> bool:
        return self.marker_id is None

    @property
    def previous_window_id(self) -> str | None:
        return None if self.previous is None else self.previous.window_id

    def chain(self) -> Iterable[Window]:
        """This window, then every earlier window on the branch, back to the root."""
        window: Window | None = self
        while window is not None:
            yield window
            window = window.previous

    def marker_window_ids(self) -> frozenset[str]:
        """The ids of every valid marker on the branch up to here (R12 collision set)."""
        return frozenset(w.window_id for w in self.chain() if not w.is_root)


@frozen(kw_only=True)
class WindowFacts:
    """What pi-context knows of one node: its window and that window's tail on the path."""

    window: Window
    message_types: frozenset[str]
    """customTypes of ``custom_message`` entries on the path since the window opened (R13)."""
    boot_id: str | None
    """The first raw boot for this window after its marker, on this path (R14, R65)."""
    continued: bool
    """A continuation follows that boot on this path (the closed tail of D1/D3)."""


class WindowIndex:
    """pi-context's window identity over one session tree, kept in step with it.

    Made once per tree by :meth:`SessionTree.index <pictx_fsm.session.tree.SessionTree.index>`
    (``WindowIndex.of(tree)``): it then follows every entry added and the leaf. Facts are
    kept per node in a list by the node's ``order`` — an entry that opens no window and is no
    boot, continuation or custom message (a plain message: most of a session) shares its
    parent's facts, one list append. A node of another tree must not be asked about. The
    index holds its tree weakly: the tree holds the index, and a skeleton dropped after an
    audit is freed at once, not left to the cycle collector.
    """

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
    def of(cls, tree: SessionTree) -> WindowIndex:
        """The tree's window index (made and filled on first use)."""
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
        entry: Entry = node.entry
        window, types = parent.window, parent.message_types
        boot, continued = parent.boot_id, parent.continued
        opened = window_id_of_marker(entry)
        if opened is not None:
            window = Window(
                window_id=opened,
                marker_id=node.id,
                marker_timestamp=entry.timestamp,
                previous=window,
                depth=window.depth + 1,
            )
            self._marker_windows.setdefault(opened, []).append(window)
            return WindowFacts(
                window=window, message_types=frozenset(), boot_id=None, continued=False
            )
        if (
            boot is None
            and window.marker_id is not None
            and boot_window_id(entry) == window.window_id
        ):
            boot = node.id
        elif boot is not None and is_continuation(entry):
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

    def has_window_message(self, custom_type: str) -> bool:
        """R13: a ``custom_message`` of this type on the active branch since the last marker."""
        leaf = self._leaf
        if leaf is None:
            return False
        facts, order = self._facts, leaf.order  # _facts_of, inline: asked on every hook
        known = facts[order] if order < len(facts) else None
        return custom_type in (known if known is not None else self.at(leaf)).message_types

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


def __getattr__(name: str) -> object:
    """``uuid_draws`` moved to :mod:`pictx_fsm.session.ids` (0.2)."""
    from pictx_fsm._moved import moved_attribute

    return moved_attribute(__name__, name)
