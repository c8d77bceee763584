"""Keeps the Pi session tree in step with a pydantic-ai message history.

The tree is the durable record the lifecycle reads; the history is what pydantic-ai runs on.
:meth:`Mirror.sync` is called before every lifecycle hook with the run's history: messages
already mirrored (the same objects, with the same parts) cost nothing, new ones become
entries appended under the leaf. A history that no longer extends the branch (a run resumed
from an older history, a history rewritten by another capability) is aligned by content:
the tree moves its leaf back to the last entry both share (a new branch, as Pi's ``/tree``
does) and the rest is appended there; :attr:`Mirror.navigated` tells the lifecycle.

Entries the lifecycle itself adds (boundary drafts, boots) are appended with
:meth:`Mirror.append` and put into the history by the caller; the history's own copy of them
is recognised by content, since their ids travel in the messages.

A request mirrored before pydantic-ai completed its envelope (the tool results a turn ends
with, a boundary's request) gets its final envelope as a ``pydantic-ai/request`` entry when
the mirror sees it change; those entries are the tree's, not the branch the history aligns
with (:func:`~.history.is_envelope`).
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from attrs import define
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse

from pictx_fsm.hosts.pydantic_ai.history import (
    PART_ENTRY_TYPE,
    RESIDUAL_KEY,
    chain,
    envelope_entry,
    envelope_residual,
    is_envelope,
    messages_to_entries,
    recorded_envelopes,
    restamp,
)
from pictx_fsm.session.entries import Entry, SessionHeader, entry_from_json
from pictx_fsm.session.projection import Message, entry_messages
from pictx_fsm.session.tree import SessionTree

__all__ = ["JSON", "Converted", "Envelope", "Mirror", "View", "view"]

JSON: TypeAlias = Any
View: TypeAlias = str


@define(kw_only=True)
class Converted:
    """One request part (or response) as entries, their views and their Pi messages."""

    source: object
    entries: list[dict[str, JSON]]
    views: list[View]
    _messages: list[Message] | None = None

    @property
    def messages(self) -> list[Message]:
        """The Pi context messages of the entries (computed once)."""
        if self._messages is None:
            out: list[Message] = []
            for obj in self.entries:
                out += entry_messages(entry_from_json(obj)[0])
            self._messages = out
        return self._messages


class Mirror:
    """The tree's active branch as built from a history, and the history it was built from."""

    def __init__(self, tree: SessionTree, rng: random.Random) -> None:
        self.tree = tree
        self._rng = rng
        branch = tree.branch()
        self._branch: list[Entry] = [e for e in branch if not is_envelope(e)]
        self._recorded: dict[str, JSON] = recorded_envelopes(branch)
        """The envelope the tree records for each request, by the id of its first entry."""
        self._views: list[View] = [view(e.to_json()) for e in self._branch]
        self._messages: list[tuple[ModelMessage, tuple[object, ...], Envelope]] = []
        self._offsets: list[int] = []
        self._cache: dict[int, Converted] = {}
        """Each part or response converted once (keyed by identity; the object is kept)."""
        self._end = 0
        """The branch index after the last remembered message's entries (a history seen for
        the first time is aligned with the branch from its root)."""
        self.navigated = False
        """Set when a sync moved the leaf off the branch (cleared by the caller)."""

    @classmethod
    def detached(cls) -> Mirror:
        """A mirror of no session: converts messages, records nothing durable."""
        header = SessionHeader(id="detached", timestamp="", cwd="")
        return cls(SessionTree(header), random.Random(0))

    @property
    def branch(self) -> Sequence[Entry]:
        return self._branch

    def mint(self) -> str:
        return self.tree.mint_entry_id(self._rng)

    # -- appending ---------------------------------------------------------------------------

    def append(self, entries: Iterable[Mapping[str, JSON]]) -> list[Entry]:
        """Append entry objects (``id`` minted when missing) as a chain under the leaf."""
        objs = [dict(e) for e in entries]
        for obj in objs:
            if not obj.get("id") or obj["id"] in self.tree:
                obj["id"] = self.mint()
            residuals = obj.get(RESIDUAL_KEY)
            if isinstance(residuals, Mapping) and "request" in residuals:
                self._recorded[obj["id"]] = residuals["request"]
        return [self._add(obj) for obj in chain(objs, self.tree.leaf_id)]

    def adopt(self, entries: Iterable[Entry]) -> None:
        """Take entries the lifecycle appended to the tree itself (:func:`pictx_fsm.apply`):
        they extend the branch the mirror follows."""
        for entry in entries:
            if entry.id is not None:
                self._recorded.setdefault(entry.id, None)  # a request it starts: no envelope
            self._branch.append(entry)
            self._views.append(view(entry.to_json()))

    def _add(self, obj: Mapping[str, JSON]) -> Entry:
        entry, problems = entry_from_json(obj)
        if problems:
            raise ValueError(f"entry {obj.get('id')!r}: {problems[0].field}: {problems[0].message}")
        self.tree.append(entry)
        self._branch.append(entry)
        self._views.append(view(obj))
        return entry

    # -- syncing -----------------------------------------------------------------------------

    def sync(self, messages: Sequence[ModelMessage]) -> list[Entry]:
        """Mirror ``messages``; returns the entries appended."""
        first = self._first_changed(messages)
        start = self._offsets[first] if first < len(self._offsets) else self._end
        per_message = [self._units(m) for m in messages[first:]]
        views = [
            unit.views[i]
            for units in per_message
            for unit in units
            for i in range(len(unit.entries))
        ]
        shared = _common_prefix(self._views[start:], views)
        if start + shared < len(self._branch):
            self._navigate(start + shared)
        counts = [sum(len(unit.entries) for unit in units) for units in per_message]
        self._record_envelope(messages[first:], per_message, counts, start, shared)
        fresh = self._exact(messages[first:], per_message, shared)
        renamed = self._unique(fresh)
        if renamed:
            restamp(messages[first:], renamed)
            self._cache.clear()
        appended = self.append(fresh)
        self._remember(messages[first:], first, start, counts)
        return appended

    def _record_envelope(
        self,
        messages: Sequence[ModelMessage],
        per_message: list[list[Converted]],
        counts: list[int],
        start: int,
        shared: int,
    ) -> None:
        """Write the envelope of the request whose entries end the shared part of the branch,
        when the tree records another one for it (pydantic-ai completed it after its first
        entries were written, or it took in the lifecycle's request before it)."""
        end, offset, index = start + shared, start, 0
        while index < len(counts) and not offset < end <= offset + counts[index]:
            offset += counts[index]
            index += 1
        if index == len(counts) or not per_message[index]:
            return
        message = messages[index]
        own = offset + _own_index(per_message[index][0])
        first_id = self._branch[own].id if own < end else None
        if not isinstance(message, ModelRequest) or first_id not in self._recorded:
            return
        assert first_id is not None
        envelope = envelope_residual(message)
        if envelope == self._recorded[first_id]:
            return
        obj = envelope_entry(message)
        obj["id"], obj["parentId"] = self.mint(), self.tree.leaf_id
        entry, problems = entry_from_json(obj)
        assert not problems, problems
        self.tree.append(entry)
        self._recorded[first_id] = envelope

    def _exact(
        self, messages: Sequence[ModelMessage], per_message: list[list[Converted]], shared: int
    ) -> list[dict[str, JSON]]:
        """The entries after the first ``shared`` ones, with every residual (converting only
        the messages that hold them)."""
        for index, units in enumerate(per_message):
            count = sum(len(unit.entries) for unit in units)
            if shared < count:
                entries = messages_to_entries(messages[index:], parent_id=None, mint=lambda: "")
                return entries[shared:]
            shared -= count
        return []

    def units(self, message: ModelMessage) -> list[Converted]:
        """Each part of a request (or the response) with its entries and Pi messages."""
        return self._units(message)

    def _units(self, message: ModelMessage) -> list[Converted]:
        if isinstance(message, ModelResponse):
            return [self._converted(message, message)]
        return [self._converted(part, ModelRequest(parts=[part])) for part in message.parts]

    def _converted(self, key: object, message: ModelMessage) -> Converted:
        hit = self._cache.get(id(key))
        if hit is not None and hit.source is key:
            return hit
        # A placeholder id: a Pi entry needs one to be read back (views never compare it).
        entries = messages_to_entries([message], parent_id=None, mint=lambda: "unminted")
        converted = Converted(source=key, entries=entries, views=[view(e) for e in entries])
        self._cache[id(key)] = converted
        return converted

    def _unique(self, objs: list[dict[str, JSON]]) -> dict[str, str]:
        """New ids for lifecycle entries whose id is already in the tree (the history forked
        from the branch after them): Pi's tree keeps ids unique."""
        renamed = {}
        for obj in objs:
            if obj.get("id") and obj["id"] in self.tree:
                renamed[obj["id"]] = obj["id"] = self.mint()
        return renamed

    def _first_changed(self, messages: Sequence[ModelMessage]) -> int:
        for index, (message, parts, envelope) in enumerate(self._messages):
            if index >= len(messages) or messages[index] is not message:
                return index
            if not _same_parts(message, parts) or _envelope(message) != envelope:
                return index
        return len(self._messages)

    def _navigate(self, keep: int) -> None:
        leaf = self._branch[keep - 1].id if keep else None
        self.tree.navigate(leaf)
        del self._branch[keep:]
        del self._views[keep:]
        self.navigated = True

    def _remember(
        self, messages: Sequence[ModelMessage], first: int, start: int, counts: list[int]
    ) -> None:
        del self._messages[first:]
        del self._offsets[first:]
        for message, count in zip(messages, counts, strict=True):
            self._messages.append((message, _parts(message), _envelope(message)))
            self._offsets.append(start)
            start += count
        self._end = start


def _own_index(unit: Converted) -> int:
    """Where a request's first part has its own entry among the part's entries (after the
    entries it carries before it)."""
    for index, obj in enumerate(unit.entries):
        residuals = obj.get(RESIDUAL_KEY)
        if isinstance(residuals, Mapping) and "request" in residuals:
            return index
    return 0


def view(entry: Mapping[str, JSON]) -> View:
    """What makes two entries the same record: everything but the chain link, and but the
    id and time pydantic-ai does not keep for conversation messages."""
    minted = entry.get("type") == "message" or entry.get("customType") == PART_ENTRY_TYPE
    dropped = {"parentId", RESIDUAL_KEY, *(("id", "timestamp") if minted else ())}
    return json.dumps({k: v for k, v in entry.items() if k not in dropped}, sort_keys=True)


def _common_prefix(left: Sequence[View], right: Sequence[View]) -> int:
    count = 0
    for a, b in zip(left, right, strict=False):
        if a != b:
            break
        count += 1
    return count


def _parts(message: ModelMessage) -> tuple[object, ...]:
    return tuple(message.parts)


Envelope: TypeAlias = tuple[object, ...] | None


def _envelope(message: ModelMessage) -> Envelope:
    """A request's fields besides its parts, as they are now (``None`` for a response)."""
    if not isinstance(message, ModelRequest):
        return None
    return tuple(getattr(message, f.name) for f in dataclasses.fields(message) if f.name != "parts")


def _same_parts(message: ModelMessage, parts: tuple[object, ...]) -> bool:
    current = message.parts
    return len(current) == len(parts) and all(a is b for a, b in zip(current, parts, strict=True))
