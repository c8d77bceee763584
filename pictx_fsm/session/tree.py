"""The entry tree of one Pi session, maintained incrementally.

Every entry becomes a :class:`TreeNode` when it is added: its parent node, its depth, the
window it belongs to and the pi-context message types already present in that window are
computed from the parent in O(1). The lifecycle asks those questions on every hook (R9, R11,
R13), so they are answered from the leaf's node without walking the branch. Walking is only
needed for what genuinely depends on the path (the branch itself, the tail after a marker).

Pi semantics reproduced here (pi-host §8.6): ``parentId`` links entries; the leaf is not
persisted, so after a load it is the last entry in file order; a duplicate id replaces the
earlier entry for lookups (Pi's Map); an entry whose parent is unknown starts its own path.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import Final, Protocol

import attrs
from attrs import frozen

from pictx_fsm.extensions.pi_context.windows import (
    Window,
    boot_window_id,
    is_continuation,
    root_window_id,
    uuid_draws,
    window_id_of_marker,
)
from pictx_fsm.session.entries import (
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    OpaqueEntry,
    SessionHeader,
)
from pictx_fsm.session.slots import slot_setters
from pictx_fsm.session.transcript import TranscriptIndex


@frozen(kw_only=True)
class TreeNode:
    """An entry placed in the tree, with what the lifecycle needs to know about its path."""

    entry: Entry
    id: str
    parent: TreeNode | None
    depth: int
    order: int
    """Position in file (append) order, 0-based."""
    window: Window
    window_message_types: frozenset[str]
    """customTypes of ``custom_message`` entries on the path since the window opened (R13)."""
    window_boot_id: str | None
    """The first raw boot for this window after its marker, on this path (R14, R65)."""
    window_continued: bool
    """A continuation follows that boot on this path (the closed tail of D1/D3)."""

    def path(self) -> list[TreeNode]:
        """Root → this node."""
        nodes: list[TreeNode] = []
        node: TreeNode | None = self
        while node is not None:
            nodes.append(node)
            node = node.parent
        nodes.reverse()
        return nodes

    def ancestors(self) -> Iterator[TreeNode]:
        """This node, then its parent, back to the root."""
        node: TreeNode | None = self
        while node is not None:
            yield node
            node = node.parent

    def tail_since_marker(self) -> list[TreeNode]:
        """The nodes after this window's marker up to and including this node, in path order.

        O(tail): the walk stops at the marker. Empty for the root window's caller when the
        node is itself the marker.
        """
        marker_id = self.window.marker_id
        nodes: list[TreeNode] = []
        for node in self.ancestors():
            if node.id == marker_id:
                break
            nodes.append(node)
        nodes.reverse()
        return nodes


_NEW: Final = object.__new__
(
    _set_entry,
    _set_id,
    _set_parent,
    _set_depth,
    _set_order,
    _set_window,
    _set_window_message_types,
    _set_window_boot_id,
    _set_window_continued,
) = slot_setters(
    TreeNode,
    "entry",
    "id",
    "parent",
    "depth",
    "order",
    "window",
    "window_message_types",
    "window_boot_id",
    "window_continued",
)


def _new_node(
    entry: Entry,
    entry_id: str,
    parent: TreeNode | None,
    depth: int,
    order: int,
    window: Window,
    window_message_types: frozenset[str],
    window_boot_id: str | None,
    window_continued: bool,
) -> TreeNode:
    """A message's node (``_make_node``), its fields in declaration order: made for every
    entry a session reads, set slot by slot (:mod:`pictx_fsm.session.slots`)."""
    node: TreeNode = _NEW(TreeNode)
    _set_entry(node, entry)
    _set_id(node, entry_id)
    _set_parent(node, parent)
    _set_depth(node, depth)
    _set_order(node, order)
    _set_window(node, window)
    _set_window_message_types(node, window_message_types)
    _set_window_boot_id(node, window_boot_id)
    _set_window_continued(node, window_continued)
    return node


class TreeListener(Protocol):
    """An index kept in step with the tree (usage, projection caches)."""

    def on_add(self, node: TreeNode) -> None: ...


def _entry_id(entry: Entry) -> str | None:
    if isinstance(entry, OpaqueEntry):
        return entry.id
    return entry.id


class SessionTree:
    """Entries in file order plus the tree over them; the active branch ends at ``leaf_id``."""

    def __init__(self, header: SessionHeader) -> None:
        self._header = header
        self._root_window = Window(
            window_id=root_window_id(header.id),
            marker_id=None,
            marker_timestamp=None,
            previous=None,
            depth=0,
        )
        self._entries: list[Entry] = []
        self._nodes: dict[str, TreeNode] = {}
        self._parents_with_children: set[str] = set()
        self._leaf: TreeNode | None = None
        self._listeners: list[TreeListener] = []
        self._transcripts: TranscriptIndex | None = None
        self._marker_windows: dict[str, list[Window]] = {}

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_entries(cls, header: SessionHeader, entries: Iterable[Entry]) -> SessionTree:
        """Reload semantics: entries in file order; the leaf is the last entry with an id."""
        tree = cls(header)
        for entry in entries:
            tree.add(entry)
        return tree

    def add(self, entry: Entry) -> TreeNode | None:
        """Place an entry under its declared ``parentId`` and make it the leaf.

        Entries without an id are kept in file order but cannot join the tree (``None``).
        """
        self._entries.append(entry)
        entry_id = entry.id  # every entry class has one (``None``: an opaque entry without)
        if entry_id is None:
            return None
        parent = self._nodes.get(entry.parent_id) if entry.parent_id else None
        node = self._make_node(entry, entry_id, parent)
        self._nodes[entry_id] = node
        if parent is not None:
            self._parents_with_children.add(parent.id)
        self._leaf = node
        for listener in self._listeners:
            listener.on_add(node)
        return node

    def append(self, entry: Entry) -> TreeNode:
        """Append as Pi's ``append*`` does: the entry must be a child of the current leaf."""
        if entry.parent_id != self.leaf_id:
            raise ValueError(
                f"entry {_entry_id(entry)!r} has parent {entry.parent_id!r}, "
                f"but the leaf is {self.leaf_id!r}"
            )
        node = self.add(entry)
        if node is None:
            raise ValueError("an appended entry needs an id")
        return node

    def _make_node(self, entry: Entry, entry_id: str, parent: TreeNode | None) -> TreeNode:
        if parent is not None and type(entry) is MessageEntry:
            # the common entry: it opens no window, is no boot, no continuation, no custom
            # message, so it carries its parent's window facts as they are
            return _new_node(
                entry,
                entry_id,
                parent,
                parent.depth + 1,
                len(self._entries) - 1,
                parent.window,
                parent.window_message_types,
                parent.window_boot_id,
                parent.window_continued,
            )
        window = parent.window if parent is not None else self._root_window
        types = parent.window_message_types if parent is not None else frozenset()
        boot = parent.window_boot_id if parent is not None else None
        continued = parent.window_continued if parent is not None else False
        opened = window_id_of_marker(entry)
        if opened is not None:
            window = Window(
                window_id=opened,
                marker_id=entry_id,
                marker_timestamp=entry.timestamp,
                previous=window,
                depth=window.depth + 1,
            )
            types, boot, continued = frozenset(), None, False
            self._marker_windows.setdefault(opened, []).append(window)
        elif (
            boot is None
            and window.marker_id is not None
            and (boot_window_id(entry) == window.window_id)
        ):
            boot = entry_id
        elif boot is not None and is_continuation(entry):
            continued = True
        if (
            opened is None
            and isinstance(entry, CustomMessageEntry)
            and entry.custom_type not in types
        ):
            types = types | {entry.custom_type}
        node = TreeNode(
            entry=entry,
            id=entry_id,
            parent=parent,
            depth=0 if parent is None else parent.depth + 1,
            order=len(self._entries) - 1,
            window=window,
            window_message_types=types,
            window_boot_id=boot,
            window_continued=continued,
        )
        return node

    def subscribe(self, listener: TreeListener) -> None:
        """Attach an index; it first receives every node already present, in file order."""
        for entry in self._entries:
            entry_id = _entry_id(entry)
            node = self._nodes.get(entry_id) if entry_id is not None else None
            if node is not None and node.entry is entry:
                listener.on_add(node)
        self._listeners.append(listener)

    # -- reading ------------------------------------------------------------------------------

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def session_id(self) -> str:
        return self._header.id

    @property
    def root_window(self) -> Window:
        return self._root_window

    @property
    def entries(self) -> Sequence[Entry]:
        """Every entry in file order, including those outside the tree."""
        return self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._nodes

    @property
    def leaf_id(self) -> str | None:
        return None if self._leaf is None else self._leaf.id

    @property
    def leaf(self) -> TreeNode | None:
        return self._leaf

    def node(self, entry_id: str) -> TreeNode:
        try:
            return self._nodes[entry_id]
        except KeyError:
            raise KeyError(f"no entry {entry_id!r} in session {self.session_id}") from None

    def find(self, entry_id: str) -> TreeNode | None:
        return self._nodes.get(entry_id)

    def get(self, entry_id: str) -> Entry | None:
        node = self._nodes.get(entry_id)
        return None if node is None else node.entry

    def nodes(self) -> Iterator[TreeNode]:
        return iter(self._nodes.values())

    def branch(self, from_id: str | None = None) -> list[Entry]:
        """Pi's ``getBranch(fromId)``: the entries root → ``from_id`` (default: the leaf)."""
        node = self._leaf if from_id is None else self.node(from_id)
        return [] if node is None else [n.entry for n in node.path()]

    def branch_nodes(self, from_id: str | None = None) -> list[TreeNode]:
        """The nodes from the root to ``from_id`` (default: the leaf), each with its window."""
        node = self._leaf if from_id is None else self.node(from_id)
        return [] if node is None else node.path()

    def leaves(self) -> list[str]:
        """Ids of every branch tip (entries without children), in file order."""
        return [
            node.id
            for node in sorted(self._nodes.values(), key=lambda n: n.order)
            if node.id not in self._parents_with_children
        ]

    def children(self, entry_id: str) -> list[str]:
        return [
            n.id for n in self._nodes.values() if n.parent is not None and n.parent.id == entry_id
        ]

    @property
    def transcripts(self) -> TranscriptIndex:
        """Pi's projection of the active branch, kept for the leaf as it moves (created on
        first use; :mod:`pictx_fsm.session.transcript`)."""
        if self._transcripts is None:
            self._transcripts = TranscriptIndex(self)
        return self._transcripts

    # -- window identity at the leaf (R9, R11, R13) -------------------------------------------

    def window_at(self, entry_id: str | None = None) -> Window:
        """The window that ``entry_id`` (default: the leaf) belongs to."""
        node = self._leaf if entry_id is None else self.node(entry_id)
        return self._root_window if node is None else node.window

    @property
    def current_window(self) -> Window:
        """R9/R11: the window of the last valid marker on the active branch, else the root."""
        return self.window_at()

    def window_ids_on_branch(self, window: Window | None = None) -> AbstractSet[str]:
        """R12's collision set: the ids of the valid markers on the branch up to ``window``
        (default: the leaf's). ``in`` costs O(1) unless the id opens a window somewhere in the
        tree; the walk that then decides is bounded by the windows between the two."""
        return _BranchWindowIds(window or self.current_window, self._marker_windows)

    def has_window_message(self, custom_type: str) -> bool:
        """R13: a ``custom_message`` of this type on the active branch since the last marker."""
        return self._leaf is not None and custom_type in self._leaf.window_message_types

    def tail_after_marker(self) -> list[Entry]:
        """Entries after the current marker on the active branch (empty in the root window)."""
        if self._leaf is None or self._leaf.window.marker_id is None:
            return []
        return [n.entry for n in self._leaf.tail_since_marker()]

    # -- moving and copying ------------------------------------------------------------------

    def navigate(self, entry_id: str | None) -> None:
        """Move the leaf (Pi's ``branch(id)``; ``None`` = before the first entry)."""
        self._leaf = None if entry_id is None else self.node(entry_id)

    def mint_entry_id(self, rng: random.Random) -> str:
        """Pi's entry ids: the first 8 hex digits of a random UUID not used in this session."""
        for draw in uuid_draws(rng):
            candidate = draw[:8]
            if candidate not in self._nodes:
                return candidate
        raise AssertionError("unreachable")  # pragma: no cover

    def fork(
        self,
        at_id: str,
        header: SessionHeader,
        *,
        label_entry: Callable[[str, str, str | None], LabelEntry] | None = None,
    ) -> SessionTree:
        """Pi's ``createBranchedSession``: a new session whose entries are the path root →
        ``at_id`` with the same ids. Labels on the path are dropped and, when ``label_entry``
        is given, re-created at the end for targets the path retains (Pi re-creates them with
        fresh ids; the factory receives ``(target_id, label, parent_id)``)."""
        path = self.branch(at_id)
        kept = [e for e in path if not isinstance(e, LabelEntry)]
        forked = SessionTree(header)
        previous: str | None = None
        for entry in kept:
            entry_id = _entry_id(entry)
            if isinstance(entry, OpaqueEntry):
                raw = dict(entry.raw)
                raw["parentId"] = previous
                forked.add(OpaqueEntry(raw=raw))
            else:
                forked.add(attrs.evolve(entry, parent_id=previous))
            previous = entry_id
        if label_entry is not None:
            retained = {_entry_id(e) for e in kept}
            for target, label in self._labels_for(path, retained):
                forked.add(label_entry(target, label, forked.leaf_id))
        return forked

    def _labels_for(self, path: list[Entry], retained: set[str | None]) -> list[tuple[str, str]]:
        latest: dict[str, str | None] = {}
        for entry in self._entries:
            if isinstance(entry, LabelEntry):
                latest[entry.target_id] = entry.label if isinstance(entry.label, str) else None
        return [
            (target, label)
            for target, label in latest.items()
            if target in retained and label is not None
        ]


class _BranchWindowIds(AbstractSet[str]):
    """The window ids on the chain of ``window`` (:meth:`SessionTree.window_ids_on_branch`)."""

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
