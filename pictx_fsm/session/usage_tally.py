"""The per-node state behind the usage estimates (:mod:`pictx_fsm.session.usage`).

A :class:`Tally` summarises, for one node, the message list an estimate would see at that
node (the host's whole projection, or a span of it an extension estimates: pi-context's
window) in the few numbers Pi's estimator needs: where the trusted usage anchor is, what it
reports, the counted tokens after it, the running timestamp maximum the anchor rule compares
against, and the edits already applied. A tally is never mutated once stored: every step
copies.

:func:`recount` is the from-scratch path for one node (walking back only as far as a span's
start, or a compaction's kept range), used for the rare shapes the incremental step does not
handle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final, Protocol

from attrs import evolve, frozen

from pictx_fsm.session.entries import CompactionEntry, ContextEditEntry, Entry
from pictx_fsm.session.estimate import (
    EstimateError,
    TokenCounter,
    compaction_gate_after,
    is_settled_assistant,
    js_max,
    timestamp_of,
    usage_tokens,
)
from pictx_fsm.session.projection import (
    Message,
    build_context_entries,
    edited_message,
    entry_messages,
    fold_system,
    is_editable,
    latest_edits,
    project_entries,
)
from pictx_fsm.session.tree import TreeNode

__all__ = [
    "Cut",
    "EditLink",
    "Recount",
    "SystemLink",
    "Tally",
    "TallyRules",
    "Visibility",
    "recount",
]

Cut = Callable[[Sequence[Message]], int | None]
"""Where a span's estimate starts in the projection (``None``: nowhere, no estimate)."""


class TallyRules(Protocol):
    """How an estimate sees entries and counts messages."""

    counter: TokenCounter
    strict: bool

    def view(self, message: Message) -> Message | None: ...

    def count(self, message: Message) -> int | None: ...

    def node_message(self, node: TreeNode) -> Message | None: ...

    def node_count(self, node: TreeNode, message: Message) -> int | None: ...


class SystemLink:
    """One system message of the projection prefix, linked to the ones before it."""

    __slots__ = ("_head", "_head_done", "message", "prev")

    def __init__(self, message: Message, prev: SystemLink | None) -> None:
        self.message = message
        self.prev = prev
        self._head: Message | None = None
        self._head_done = False

    def messages(self) -> list[Message]:
        chain: list[Message] = []
        link: SystemLink | None = self
        while link is not None:
            chain.append(link.message)
            link = link.prev
        chain.reverse()
        return chain

    def head(self) -> Message | None:
        """The folded current system message of this prefix (computed once)."""
        if not self._head_done:
            self._head = fold_system(self.messages())
            self._head_done = True
        return self._head


class EditLink:
    """An edit applied inside the tally's span: how its target now counts."""

    __slots__ = ("count", "depth", "prev", "target_order", "visible")

    def __init__(
        self, target_order: int, depth: int, visible: bool, count: int | None, prev: EditLink | None
    ) -> None:
        self.target_order = target_order
        self.depth = depth
        self.visible = visible
        self.count = count
        self.prev = prev


Visibility = tuple[bool, int | None]
"""(visible, tokens); tokens ``None`` = the estimator cannot count this message."""


class Tally:
    """What an estimate needs to know about the message list at one node."""

    __slots__ = (
        "after",
        "after_poison",
        "anchor",
        "anchor_tokens",
        "blocked",
        "broken",
        "edits",
        "exact",
        "floor",
        "floor_order",
        "gate",
        "head",
        "head_poison",
        "latest",
        "total",
        "total_poison",
    )

    def __init__(self) -> None:
        self.floor = -1
        """Depth of the first counted node (a span's start: pi-context's window boot); -1 for a
        whole branch."""
        self.floor_order = -1
        self.head = 0
        self.head_poison = False
        self.anchor = -1
        """Depth of the trusted assistant reply, -1 without one."""
        self.anchor_tokens = 0
        self.after = 0
        """Counted tokens after the anchor (of every message while there is none)."""
        self.after_poison = 0
        self.total = 0
        self.total_poison = 0
        self.latest = -math.inf
        """Running ``Math.max`` of timestamps; a reply older than this is not trusted."""
        self.blocked = False
        """A settled reply was passed over by the timestamp rule (an edit may change that)."""
        self.broken = 0
        """Trusted-looking replies without usage: pi-ai's estimator throws."""
        self.edits: EditLink | None = None
        self.exact = True
        """False after a compaction inside the span: edits then recount."""
        self.gate: bool | None = None
        """Branch only: Pi's post-compaction usage gate (``None``: no compaction)."""

    @classmethod
    def empty(cls) -> Tally:
        return cls()

    @classmethod
    def opened(cls, start: TreeNode, head: Message | None, rules: TallyRules) -> Tally:
        """A span's tally at its first node, before that node itself is counted; ``head``:
        the folded system messages before it."""
        tally = cls()
        tally.floor = start.depth
        tally.floor_order = start.order
        if head is not None:
            count = rules.count(head)
            tally.head = 0 if count is None else count
            tally.head_poison = count is None
            tally.latest = js_max(-math.inf, timestamp_of(head))
        return tally

    def copy(self) -> Tally:
        return _copy_tally(self)

    def tokens(self) -> int | None:
        """Pi's estimate for this node, ``None`` when unknown."""
        if self.gate is False or self.broken:
            return None
        if self.anchor >= 0:
            return None if self.after_poison else self.anchor_tokens + self.after
        if self.head_poison or self.total_poison:
            return None
        return self.head + self.total

    # -- steps -------------------------------------------------------------------------------

    def appended(self, node: TreeNode, message: Message, count: int | None, strict: bool) -> Tally:
        """The tally once ``message`` (from ``node``) ends the list."""
        tally = self.copy()
        tally._add_total(count, +1)
        stamp = timestamp_of(message)
        if is_settled_assistant(message):
            if stamp >= self.latest:
                tokens = tally._trusted_usage(message, strict)
                if tokens is not None:
                    tally.anchor, tally.anchor_tokens = node.depth, tokens
                    tally.after, tally.after_poison = 0, 0
                    tally.latest = js_max(self.latest, stamp)
                    return tally
            else:
                tally.blocked = True
        tally._add_after(count, +1)
        tally.latest = js_max(self.latest, stamp)
        return tally

    def _trusted_usage(self, message: Message, strict: bool) -> int | None:
        try:
            return usage_tokens(message, strict=strict)
        except EstimateError:
            self.broken += 1
            return None

    def _add_total(self, count: int | None, sign: int) -> None:
        if count is None:
            self.total_poison += sign
        else:
            self.total += sign * count

    def _add_after(self, count: int | None, sign: int) -> None:
        if count is None:
            self.after_poison += sign
        else:
            self.after += sign * count

    def visibility(self, target: TreeNode, rules: TallyRules, agent: Message) -> Visibility:
        """How ``target`` counts now: its latest edit inside the span, else as persisted."""
        link = self.edits
        while link is not None and link.depth > target.depth:
            if link.target_order == target.order:
                return link.visible, link.count
            link = link.prev
        view = rules.view(agent)
        return (False, 0) if view is None else (True, rules.node_count(target, view))

    def edited(
        self, node: TreeNode, target: TreeNode, before: Visibility, after: Visibility, latest: float
    ) -> Tally:
        """The tally once an edit at ``node`` changes how ``target`` counts."""
        tally = self.copy()
        for (visible, count), sign in ((before, -1), (after, +1)):
            if not visible:
                continue
            tally._add_total(count, sign)
            if target.depth > self.anchor:
                tally._add_after(count, sign)
        tally.latest = latest
        tally.edits = EditLink(target.order, node.depth, after[0], after[1], self.edits)
        return tally


def _copy_tally(tally: Tally) -> Tally:
    """A copy of every slot by plain attribute reads and writes: a ``getattr``/``setattr``
    loop over the names cost six times as much, and a tally is copied for every message
    appended to a branch or window (``tests/test_usage.py`` holds it to every slot)."""
    twin: Tally = _NEW(Tally)
    twin.after = tally.after
    twin.after_poison = tally.after_poison
    twin.anchor = tally.anchor
    twin.anchor_tokens = tally.anchor_tokens
    twin.blocked = tally.blocked
    twin.broken = tally.broken
    twin.edits = tally.edits
    twin.exact = tally.exact
    twin.floor = tally.floor
    twin.floor_order = tally.floor_order
    twin.gate = tally.gate
    twin.head = tally.head
    twin.head_poison = tally.head_poison
    twin.latest = tally.latest
    twin.total = tally.total
    twin.total_poison = tally.total_poison
    return twin


_NEW: Final = object.__new__


# --------------------------------------------------------------------------------------------
# recount


@frozen(kw_only=True)
class Recount:
    """The span one node's estimate depends on, ready to be counted from scratch."""

    nodes: tuple[TreeNode, ...]
    compacted: bool
    rules: TallyRules
    prefix: tuple[Message, ...] = ()

    def with_prefix(self, prefix: Sequence[Message]) -> Recount:
        """System messages of the projection before the span (a window's pre-marker part)."""
        return evolve(self, prefix=tuple(prefix))

    def tally(self, span: Cut | None = None) -> Tally | None:
        """The tally of the whole branch (``span`` ``None``), or of the span that starts
        where ``span`` cuts the projection, with the folded system messages before the cut
        as its head (``None`` when it cuts nowhere)."""
        entries = [node.entry for node in self.nodes]
        selected = build_context_entries(entries)
        projection = project_entries(selected)
        by_id = {node.id: node for node in self.nodes}
        messages, sources = projection.messages, projection.sources
        start = 0
        if span is not None:
            cut = span(messages)
            if cut is None:
                return None
            head = fold_system([*self.prefix, *messages[:cut]])
            tally = Tally.opened(by_id[sources[cut]], head, self.rules)
            start = cut
        else:
            tally = Tally.empty()
            tally.gate = _gate(entries) if self.compacted else None
        edits = latest_edits(selected)
        for message, source in zip(messages[start:], sources[start:], strict=True):
            tally = self._count_into(tally, by_id[source], message, source in edits)
        tally.exact = not self.compacted
        tally.edits = self._edit_links(tally, edits, by_id)
        return tally

    def _count_into(self, tally: Tally, node: TreeNode, message: Message, edited: bool) -> Tally:
        view = self.rules.view(message)
        if view is None:
            return tally
        fresh = edited or isinstance(node.entry, CompactionEntry)
        count = self.rules.count(view) if fresh else self.rules.node_count(node, view)
        return tally.appended(node, view, count, self.rules.strict)

    def _edit_links(
        self, tally: Tally, edits: dict[str, ContextEditEntry], by_id: dict[str, TreeNode]
    ) -> EditLink | None:
        links: EditLink | None = None
        ordered = sorted(
            (by_id[edit.id].depth, target_id, edit)
            for target_id, edit in edits.items()
            if edit.id in by_id
        )
        for depth, target_id, edit in ordered:
            target = by_id.get(target_id)
            if target is None or target.depth <= tally.floor or not is_editable(target.entry):
                continue
            produced = entry_messages(target.entry)
            if not produced:
                continue
            edited = edited_message(produced[0], edit.replacement)
            view = None if edited is None else self.rules.view(edited)
            count = None if view is None else self.rules.count(view)
            links = EditLink(target.order, depth, view is not None, count, links)
        return links


def _gate(entries: Sequence[Entry]) -> bool:
    index = max(i for i, entry in enumerate(entries) if isinstance(entry, CompactionEntry))
    return compaction_gate_after(entries[index + 1 :])


def recount(node: TreeNode, stop_id: str | None, rules: TallyRules) -> Recount:
    """Collect the span ending at ``node``: back to ``stop_id`` (exclusive) or the root; past
    a compaction met on the way, back to its first kept entry (inclusive)."""
    nodes: list[TreeNode] = []
    compaction: CompactionEntry | None = None
    current: TreeNode | None = node
    while current is not None:
        if compaction is None and stop_id is not None and current.id == stop_id:
            break
        nodes.append(current)
        entry = current.entry
        if compaction is None and isinstance(entry, CompactionEntry):
            compaction = entry
            if entry.retains_nothing:
                break
        elif compaction is not None and current.id == compaction.first_kept_entry_id:
            break
        current = current.parent
    nodes.reverse()
    return Recount(nodes=tuple(nodes), compacted=compaction is not None, rules=rules)
