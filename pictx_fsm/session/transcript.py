"""Message lists that know themselves: the provider transcript of a branch, kept as it grows.

``context`` and ``context_with_system`` carry the whole conversation on every request. Looking
at each message again on every hook (an extension's cut of the window, the audit digest) costs
O(session) per hook, although a request differs from the previous one by a few messages. Two
things here make those hooks cost O(what changed):

* :class:`Transcript` — a message tuple that knows, of exactly its own messages, the digest of
  each (so its list digest, :func:`pictx_fsm.session.digest.message_list_digest`), where its
  system messages are and where the messages an extension counts are (a :data:`Tag`: a key
  per message, such as the window a boot names). Everything it knows is derived from its own
  elements (at build time, or lazily by one scan), so using it is exact for any list; a host
  that hands an extension a transcript the session layer built gets the answers without a
  scan.
* :class:`TranscriptIndex` — Pi's projection of the active branch (``buildSessionContext``,
  :func:`~pictx_fsm.session.projection.project_branch`) kept for the tree's leaf: appends,
  context edits of recent entries and moves to a nearby leaf update it in O(what changed);
  a compaction, a move across a removed edit or a duplicate id rebuild it from the branch,
  with message digests reused per entry id. ``tree.transcripts`` is the tree's own index; an
  extension :meth:`~TranscriptIndex.track` s its tags there, and every transcript made after
  knows them.

Messages are read-only by convention (as everywhere in the session layer): a message mutated
after a transcript was built would make its digest stale.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from pictx_fsm.js import is_plain_object
from pictx_fsm.session.digest import message_digest
from pictx_fsm.session.entries import CompactionEntry, ContextEditEntry, Entry
from pictx_fsm.session.projection import (
    Message,
    build_context_entries,
    entry_contribution,
)

if TYPE_CHECKING:
    from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = ["Tag", "Transcript", "TranscriptIndex"]

_CHECKPOINT = 512
"""Digests between two saved hash states: a change at position p rehashes O(n - p + this)."""


def _is_system(message: Any) -> bool:
    return is_plain_object(message) and message.get("role") == "system"


Tag: TypeAlias = Callable[[Any], Hashable | None]
"""What an extension counts in a message list: a message's key (``None``: not counted). A
tag is known by its identity: pass the same function every time."""

Tagged: TypeAlias = tuple[tuple[int, ...], tuple[Hashable, ...], Mapping[Hashable, int]]
"""Of one tag in one list: the positions of the counted messages, their keys, and how many
messages have each key."""


def _scan_tag(messages: Iterable[Any], tag: Tag) -> Tagged:
    positions: list[int] = []
    keys: list[Hashable] = []
    counts: dict[Hashable, int] = {}
    for index, message in enumerate(messages):
        key = tag(message)
        if key is not None:
            positions.append(index)
            keys.append(key)
            counts[key] = counts.get(key, 0) + 1
    return tuple(positions), tuple(keys), counts


class Transcript(tuple[Any, ...]):
    """A provider message list that knows its digests, system messages and tagged messages.

    Equal to the plain tuple of its messages; slicing gives plain tuples. What it knows is
    computed from its own messages (eagerly by :class:`TranscriptIndex`, else on first use).
    """

    _digests: tuple[bytes, ...] | None
    _state: Any
    _systems: tuple[int, ...] | None
    _tags: dict[Tag, Tagged]

    def __new__(cls, messages: Iterable[Message] = ()) -> Transcript:
        self = super().__new__(cls, messages)
        self._digests = None
        self._state = None
        self._systems = None
        self._tags = {}
        return self

    @classmethod
    def _known(
        cls,
        messages: Iterable[Message],
        *,
        digests: tuple[bytes, ...] | None,
        state: Any = None,
        systems: tuple[int, ...] | None = None,
        tags: dict[Tag, Tagged] | None = None,
    ) -> Transcript:
        self = cls(messages)
        self._digests = digests
        self._state = state
        self._systems = systems
        if tags is not None:
            self._tags = tags
        return self

    # -- digests ------------------------------------------------------------------------------

    def message_digests(self) -> tuple[bytes, ...]:
        """:func:`~pictx_fsm.session.digest.message_digest` of each message, in order."""
        if self._digests is None:
            self._digests = tuple(message_digest(message) for message in self)
        return self._digests

    def list_digest(self) -> str:
        """The hash list digest of these messages
        (:func:`~pictx_fsm.session.digest.message_list_digest`)."""
        if self._state is None:
            self._state = hashlib.sha256(b"".join(self.message_digests()))
        return str(self._state.hexdigest())

    # -- positions ----------------------------------------------------------------------------

    def _positions(self) -> tuple[int, ...]:
        if self._systems is None:
            self._systems = tuple(i for i, message in enumerate(self) if _is_system(message))
        return self._systems

    def system_messages(self, before: int | None = None) -> list[Message]:
        """The system messages (of those before index ``before``), in order."""
        systems = self._positions()
        end = len(systems) if before is None else bisect_left(systems, before)
        return [self[index] for index in systems[:end]]

    def _tagged(self, tag: Tag) -> Tagged:
        known = self._tags.get(tag)
        if known is None:
            known = self._tags[tag] = _scan_tag(self, tag)
        return known

    def has_tagged(self, tag: Tag, key: Hashable) -> bool:
        """A message whose ``tag`` is ``key`` is among these messages."""
        return self._tagged(tag)[2].get(key, 0) > 0

    def tagged(self, tag: Tag, key: Hashable | None = None) -> tuple[int, ...]:
        """Indices of the messages ``tag`` counts (those whose key is ``key`` when given)."""
        positions, keys, counts = self._tagged(tag)
        if key is None:
            return positions
        if counts.get(key, 0) == 0:
            return ()
        return tuple(p for p, k in zip(positions, keys, strict=True) if k == key)

    def first_tagged(self, tag: Tag, key: Hashable | None = None) -> int | None:
        """The index of the first message ``tag`` counts (whose key is ``key`` when given)."""
        positions, keys, counts = self._tagged(tag)
        if key is None:
            return positions[0] if positions else None
        if counts.get(key, 0) == 0:
            return None
        return positions[keys.index(key)]

    # -- derived lists ------------------------------------------------------------------------

    def suffix(self, start: int, head: Message | None) -> Transcript:
        """``[head] + self[start:]`` (no head when ``None``); digests reused, O(len - start)."""
        prefix = () if head is None else (head,)
        digests = None
        if self._digests is not None:
            known = () if head is None else (message_digest(head),)
            digests = known + self._digests[start:]
        return Transcript._known((*prefix, *self[start:]), digests=digests)

    def appended(self, message: Message) -> Transcript:
        """``self + [message]`` with its list digest extended in O(1)."""
        digests, state = None, None
        if self._digests is not None:
            digest = message_digest(message)
            digests = (*self._digests, digest)
            if self._state is not None:
                state = self._state.copy()
                state.update(digest)
        return Transcript._known((*self, message), digests=digests, state=state)

    def without(self, positions: Sequence[int], insert_at: int, message: Message) -> Transcript:
        """These messages minus ``positions`` (sorted, none before ``insert_at``), with
        ``message`` inserted at index ``insert_at``; digests reused."""
        kept: list[tuple[int, int]] = []
        previous = insert_at
        for position in positions:
            kept.append((previous, position))
            previous = position + 1
        kept.append((previous, len(self)))
        messages = [*self[:insert_at], message]
        for start, stop in kept:
            messages += self[start:stop]
        digests = None
        if self._digests is not None:
            own = self._digests
            known = [*own[:insert_at], message_digest(message)]
            for start, stop in kept:
                known += own[start:stop]
            digests = tuple(known)
        return Transcript._known(messages, digests=digests)


class _Column:
    """A message list with per-message digests and saved hash states every ``_CHECKPOINT``."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.digests: list[bytes] | None = None
        self._states: list[Any] = [hashlib.sha256()]

    def splice(self, start: int, stop: int, messages: list[Message], digests: list[bytes]) -> None:
        self.messages[start:stop] = messages
        if self.digests is not None:
            self.digests[start:stop] = digests
            del self._states[start // _CHECKPOINT + 1 :]

    def state(self) -> Any:
        """The sha256 state after every digest (a copy: the caller may keep it)."""
        assert self.digests is not None
        digests = self.digests
        while len(self._states) * _CHECKPOINT <= len(digests):
            block = len(self._states) - 1
            state = self._states[-1].copy()
            state.update(b"".join(digests[block * _CHECKPOINT : (block + 1) * _CHECKPOINT]))
            self._states.append(state)
        state = self._states[-1].copy()
        state.update(b"".join(digests[(len(self._states) - 1) * _CHECKPOINT :]))
        return state

    def transcript(self, **known: Any) -> Transcript:
        digests = None if self.digests is None else tuple(self.digests)
        state = None if self.digests is None else self.state()
        return Transcript._known(self.messages, digests=digests, state=state, **known)


class TranscriptIndex:
    """Pi's projection of the active branch of one tree, kept for its leaf.

    ``transcript()`` is what ``context_with_system`` carries (system messages included),
    ``conversation()`` what ``context`` carries (without them); ``has_tagged`` answers for
    the projection itself (pi-context's R64 step 2: a boot for a window in it).
    """

    def __init__(self, tree: SessionTree) -> None:
        self._tree = tree
        self._digesting = False
        self._irregular = False
        self._synced = False
        self._made: dict[str, Transcript] = {}
        self._digest_cache: dict[tuple[str, bool], tuple[Entry, Any, tuple[bytes, ...]]] = {}
        self._tags: dict[Tag, _TagColumn] = {}
        self._reset(None)

    def _reset(self, node: TreeNode | None) -> None:
        self._node = node
        self._selected: list[Entry] = []
        self._rank_of: dict[str, int] = {}
        self._edits: dict[str, ContextEditEntry] = {}
        self._ranks: list[int] = []
        self._full, self._conv = _Column(), _Column()
        if self._digesting:
            self._full.digests, self._conv.digests = [], []
        self._systems: list[int] = []
        self._tags = {tag: _TagColumn(tag) for tag in self._tags}

    # -- answers ------------------------------------------------------------------------------

    def transcript(self) -> Transcript:
        """The provider transcript at the leaf (``context_with_system``), with its digests."""
        self._enable_digests()
        if "full" not in self._made:
            self._made["full"] = self._full.transcript(
                systems=tuple(self._systems),
                tags={tag: column.snapshot() for tag, column in self._tags.items()},
            )
        return self._made["full"]

    def conversation(self) -> Transcript:
        """The transcript without system messages (what ``context`` carries)."""
        self._enable_digests()
        if "conversation" not in self._made:
            self._made["conversation"] = self._conv.transcript()
        return self._made["conversation"]

    def track(self, tag: Tag) -> None:
        """Keep ``tag``'s positions from now on: every transcript made after knows them (an
        extension tracks what it asks of every request, so no request is scanned for it)."""
        if tag in self._tags:
            return
        column = self._tags[tag] = _TagColumn(tag)
        if self._synced:  # what is indexed already, scanned once
            column.replace(0, 0, self._full.messages, 0)
            self._made.pop("full", None)

    def has_tagged(self, tag: Tag, key: Hashable) -> bool:
        """Pi's projection of the active branch holds a message whose ``tag`` is ``key``."""
        self.track(tag)
        self._sync()
        return self._tags[tag].counts.get(key, 0) > 0

    def _enable_digests(self) -> None:
        if not self._digesting:
            self._digesting = True
            self._synced = False
        self._sync()

    # -- following the leaf -------------------------------------------------------------------

    def _sync(self) -> None:
        leaf = self._tree.leaf
        if self._synced and leaf is self._node:
            return
        self._made.clear()
        if not self._synced or self._irregular or not self._move(leaf):
            self._rebuild(leaf)
        self._synced = True

    def _move(self, leaf: TreeNode | None) -> bool:
        """Follow the leaf from the indexed node: back to the common ancestor, then forward.
        False when only a rebuild is exact (an edit or compaction taken back, a compaction
        added, a duplicate id, no common ancestor)."""
        removed, added = _path_change(self._node, leaf)
        if removed is None or not self._truncate(removed):
            return False
        for node in reversed(added):
            if not self._append(node):
                return False
        self._node = leaf
        return True

    def _truncate(self, removed: list[TreeNode]) -> bool:
        if not removed:
            return True
        if any(isinstance(n.entry, ContextEditEntry | CompactionEntry) for n in removed):
            return False
        keep = len(self._selected) - len(removed)
        tail = self._selected[keep:]
        if keep < 0 or any(e is not n.entry for e, n in zip(tail, reversed(removed), strict=True)):
            return False
        start = bisect_left(self._ranks, keep)
        self._replace(start, len(self._ranks), ([], []), keep)
        for entry in tail:
            del self._rank_of[str(entry.id)]
        del self._selected[keep:]
        return True

    def _append(self, node: TreeNode) -> bool:
        entry = node.entry
        if isinstance(entry, CompactionEntry) or node.id in self._rank_of:
            return False
        rank = len(self._selected)
        self._selected.append(entry)
        self._rank_of[node.id] = rank
        if isinstance(entry, ContextEditEntry):
            self._edits[entry.target_id] = entry
            target = self._rank_of.get(entry.target_id)
            if target is not None:
                start, stop = bisect_left(self._ranks, target), bisect_right(self._ranks, target)
                self._replace(start, stop, self._contribution(target), target)
        end = len(self._ranks)
        self._replace(end, end, self._contribution(rank), rank)
        return True

    def _rebuild(self, leaf: TreeNode | None) -> None:
        self._reset(leaf)
        self._irregular = False
        if leaf is None:
            return
        self._selected = build_context_entries([node.entry for node in leaf.path()])
        for rank, entry in enumerate(self._selected):
            if entry.id is not None:
                self._irregular |= entry.id in self._rank_of
                self._rank_of[entry.id] = rank
            if isinstance(entry, ContextEditEntry):
                self._edits[entry.target_id] = entry
        for rank in range(len(self._selected)):
            end = len(self._ranks)
            self._replace(end, end, self._contribution(rank), rank)

    # -- one change ---------------------------------------------------------------------------

    def _contribution(self, rank: int) -> tuple[list[Message], list[bytes]]:
        entry = self._selected[rank]
        edit = self._edits.get(entry.id) if entry.id is not None else None
        newest = rank == 0 and isinstance(entry, CompactionEntry)
        messages = entry_contribution(entry, edit, newest_compaction=newest)
        if not self._digesting or not messages:
            return messages, []
        key = (str(entry.id), newest)
        known = self._digest_cache.get(key)
        if known is not None and known[0] is entry and known[1] is edit:
            return messages, list(known[2])
        digests = tuple(message_digest(message) for message in messages)
        self._digest_cache[key] = (entry, edit, digests)
        return messages, list(digests)

    def _replace(
        self, start: int, stop: int, new: tuple[list[Message], list[bytes]], rank: int
    ) -> None:
        """Replace the messages at ``[start, stop)`` by ``new`` (all from the entry of ``rank``),
        shifting the later positions: O(positions after ``start``)."""
        messages, digests = new
        delta = len(messages) - (stop - start)
        self._ranks[start:stop] = [rank] * len(messages)
        low, high = bisect_left(self._systems, start), bisect_left(self._systems, stop)
        systems = [start + i for i, m in enumerate(messages) if _is_system(m)]
        self._systems[low:] = systems + [p + delta for p in self._systems[high:]]
        conversation = [i for i, m in enumerate(messages) if not _is_system(m)]
        self._conv.splice(
            start - low,
            stop - high,
            [messages[i] for i in conversation],
            [digests[i] for i in conversation] if digests else [],
        )
        self._full.splice(start, stop, messages, digests)
        for column in self._tags.values():
            column.replace(start, stop, messages, delta)


class _TagColumn:
    """One tag's positions in the indexed projection, kept through each splice."""

    def __init__(self, tag: Tag) -> None:
        self.tag = tag
        self.positions: list[int] = []
        self.keys: list[Hashable] = []
        self.counts: dict[Hashable, int] = {}

    def replace(self, start: int, stop: int, messages: Sequence[Message], delta: int) -> None:
        """The messages at ``[start, stop)`` became ``messages``; later positions move by
        ``delta``."""
        low, high = bisect_left(self.positions, start), bisect_left(self.positions, stop)
        counts = self.counts
        for key in self.keys[low:high]:
            counts[key] -= 1
        positions: list[int] = []
        keys: list[Hashable] = []
        tag = self.tag
        for offset, message in enumerate(messages):
            key = tag(message)
            if key is not None:
                positions.append(start + offset)
                keys.append(key)
                counts[key] = counts.get(key, 0) + 1
        self.positions[low:] = positions + [p + delta for p in self.positions[high:]]
        self.keys[low:] = keys + self.keys[high:]

    def snapshot(self) -> Tagged:
        return tuple(self.positions), tuple(self.keys), dict(self.counts)


def _path_change(
    old: TreeNode | None, new: TreeNode | None
) -> tuple[list[TreeNode] | None, list[TreeNode]]:
    """The nodes to take back from ``old`` (leaf first) and to add towards ``new`` (leaf first)
    to move between them through their common ancestor; ``None`` without a common node."""
    removed: list[TreeNode] = []
    added: list[TreeNode] = []
    a, b = old, new
    while a is not b:
        if a is None or (b is not None and b.depth > a.depth):
            assert b is not None
            added.append(b)
            b = b.parent
        elif b is None or a.depth > b.depth:
            removed.append(a)
            a = a.parent
        else:
            removed.append(a)
            added.append(b)
            a, b = a.parent, b.parent
    if a is None and old is not None and new is not None:
        return None, added
    return removed, added
