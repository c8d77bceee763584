"""The entry tree of one Pi session, maintained incrementally.

Every entry becomes a :class:`TreeNode` when it is added: its parent node, its depth and its
position in the file, computed from the parent in O(1). What an extension knows per node (the
window it is in, the usage it shows) is not a field of the node: it is an *index* over the
tree (:meth:`SessionTree.index`), told of every node as it is added and keeping its facts in
step, typically in a list by the node's ``order`` (O(1) per append).

Pi semantics reproduced here (pi-host §8.6): ``parentId`` links entries; the leaf is not
persisted, so after a load it is the last entry in file order; a duplicate id replaces the
earlier entry for lookups (Pi's Map); an entry whose parent is unknown starts its own path.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final, Protocol, TypeVar

import attrs
from attrs import frozen

from pictx_fsm.session.entries import (
    Entry,
    LabelEntry,
    OpaqueEntry,
    SessionHeader,
)
from pictx_fsm.session.ids import uuid_draws
from pictx_fsm.session.slots import slot_setters
from pictx_fsm.session.transcript import TranscriptIndex

__all__ = ["SessionTree", "TreeIndex", "TreeListener", "TreeNode"]


@frozen(kw_only=True)
class TreeNode:
    """An entry placed in the tree: its parent, its depth and its position in the file."""

    entry: Entry
    id: str
    parent: TreeNode | None
    depth: int
    order: int
    """Position in file (append) order, 0-based: the key an index keeps a node's facts by."""

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


_NEW: Final = object.__new__
_set_entry, _set_id, _set_parent, _set_depth, _set_order = slot_setters(
    TreeNode, "entry", "id", "parent", "depth", "order"
)


def _new_node(
    entry: Entry, entry_id: str, parent: TreeNode | None, depth: int, order: int
) -> TreeNode:
    """A node, its fields in declaration order: made for every entry a session reads, set
    slot by slot (:mod:`pictx_fsm.session.slots`)."""
    node: TreeNode = _NEW(TreeNode)
    _set_entry(node, entry)
    _set_id(node, entry_id)
    _set_parent(node, parent)
    _set_depth(node, depth)
    _set_order(node, order)
    return node


class TreeListener(Protocol):
    """An index kept in step with the tree (usage, projection caches). One that follows the
    leaf as well has ``on_leaf(node)``: told where the leaf is when it subscribes and
    whenever the leaf moves but by an add (an added node is the leaf)."""

    def on_add(self, node: TreeNode) -> None: ...


class TreeIndex(TreeListener, Protocol):
    """An index :meth:`SessionTree.index` makes from the tree alone, one per tree."""

    def __init__(self, tree: SessionTree) -> None: ...


IndexT = TypeVar("IndexT", bound=TreeIndex)


def _entry_id(entry: Entry) -> str | None:
    if isinstance(entry, OpaqueEntry):
        return entry.id
    return entry.id


class SessionTree:
    """Entries in file order plus the tree over them; the active branch ends at ``leaf_id``."""

    def __init__(self, header: SessionHeader) -> None:
        self._header = header
        self._entries: list[Entry] = []
        self._nodes: dict[str, TreeNode] = {}
        self._parents_with_children: set[str] = set()
        self._leaf: TreeNode | None = None
        self._listeners: list[TreeListener] = []
        self._leaf_listeners: list[Callable[[TreeNode | None], None]] = []
        self._transcripts: TranscriptIndex | None = None
        self._indexes: dict[type[Any], Any] = {}

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
        depth = 0 if parent is None else parent.depth + 1
        node = _new_node(entry, entry_id, parent, depth, len(self._entries) - 1)
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

    def subscribe(self, listener: TreeListener) -> None:
        """Attach an index; it first receives every node already present, in file order
        (a node a later duplicate id replaced is not among them), then the leaf
        (:class:`TreeListener`)."""
        on_add = listener.on_add
        if len(self._nodes) == len(self._entries):  # one node per entry: already in file order
            for node in self._nodes.values():
                on_add(node)
        else:
            for entry in self._entries:
                entry_id = entry.id
                found = self._nodes.get(entry_id) if entry_id is not None else None
                if found is not None and found.entry is entry:
                    on_add(found)
        self._listeners.append(listener)
        on_leaf = getattr(listener, "on_leaf", None)
        if on_leaf is not None:
            on_leaf(self._leaf)
            self._leaf_listeners.append(on_leaf)

    def index(self, kind: type[IndexT]) -> IndexT:
        """The tree's one index of this type, made (``kind(tree)``) and filled with every node
        already present on first use, then kept in step entry by entry."""
        found = self._indexes.get(kind)
        if found is None:
            found = self._indexes[kind] = kind(self)
            self.subscribe(found)
        return found  # type: ignore[no-any-return]  # made by this very type

    # -- reading ------------------------------------------------------------------------------

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def session_id(self) -> str:
        return self._header.id

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
        """The nodes from the root to ``from_id`` (default: the leaf)."""
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

    # -- moving and copying ------------------------------------------------------------------

    def navigate(self, entry_id: str | None) -> None:
        """Move the leaf (Pi's ``branch(id)``; ``None`` = before the first entry)."""
        self._leaf = None if entry_id is None else self.node(entry_id)
        for on_leaf in self._leaf_listeners:
            on_leaf(self._leaf)

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
