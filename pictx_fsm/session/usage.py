"""Pi's context usage estimate, kept per tree node as entries arrive.

The host's ``getContextUsage().tokens`` is pi-ai's estimator over Pi's whole projection of
the path (``None`` after a compaction until a settled reply): :func:`branch_tokens_of`
computes it from scratch. :class:`ContextUsageIndex` follows a :class:`SessionTree` and keeps,
per node, a small tally (usage anchor, sum after it, running timestamp maximum, edits seen)
derived from the parent's tally in O(1) plus the cost of counting the new entry once.
Context edits of the common kinds — a retry or overflow recovery hiding a failed reply, an
edit of an ordinary message — update the tally in O(distance to their target). Rare shapes
fall back to a recomputation of that one node, cached on the node: a compaction, an edit of a
trusted reply, an edit while a reply is discounted by the timestamp rule.

An :class:`Estimate` is one such per-node tally; an extension keeps estimates of its own the
same way (pi-context's window estimate, :mod:`pictx_fsm.extensions.pi_context.usage`), over
the provider's view of the messages (``convertToLlm``) and a span of the branch it defines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pictx_fsm.session.entries import CompactionEntry, ContextEditEntry, Entry
from pictx_fsm.session.estimate import (
    EstimateError,
    MessageText,
    TokenCounter,
    compaction_gate,
    estimate_host,
    host_text,
    is_settled_assistant,
    js_max,
    timestamp_of,
    usage_tokens,
    window_text,
)
from pictx_fsm.session.projection import (
    Message,
    context_messages,
    convert_message,
    edited_message,
    entry_messages,
    is_editable,
)
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.session.usage_tally import Tally, TallyRules, recount

__all__ = [
    "ContextUsageIndex",
    "Estimate",
    "EstimateRules",
    "HostEstimate",
    "branch_tokens_of",
]


def branch_tokens_of(branch: Sequence[Entry], counter: TokenCounter) -> int | None:
    """The host's ``getContextUsage().tokens`` for the path, from scratch."""
    if compaction_gate(branch) is False:
        return None
    return estimate_host(context_messages(branch), counter)


class EstimateRules(TallyRules):
    """How one estimate sees entries: the host's view (Pi's projection as it is), or the
    provider's (``llm``: ``convertToLlm`` of each message, pi-ai's strict estimator)."""

    def __init__(self, counter: TokenCounter, *, llm: bool) -> None:
        self.counter = counter
        self.llm = llm
        self.strict = llm
        self._counts: dict[int, int | None] = {}

    def view(self, message: Message) -> Message | None:
        return convert_message(message) if self.llm else message

    def count(self, message: Message) -> int | None:
        try:
            text: MessageText = window_text(message) if self.llm else host_text(message)
        except EstimateError:
            return None
        return self.counter.count(text)

    def node_message(self, node: TreeNode) -> Message | None:
        """What a non-compaction entry contributes, in this estimate's view."""
        produced = entry_messages(node.entry)
        return self.view(produced[0]) if produced else None

    def node_count(self, node: TreeNode, message: Message) -> int | None:
        if node.order not in self._counts:
            self._counts[node.order] = self.count(message)
        return self._counts[node.order]


class Estimate:
    """One estimate kept per node of a tree: its rules, a tally per node (``None``: no
    estimate there), how a node's tally follows from its parent's (:meth:`step`) and how it
    is recounted from scratch (:meth:`recount`). Context edits are applied here, for every
    estimate alike."""

    def __init__(self, tree: SessionTree, rules: EstimateRules) -> None:
        self.tree = tree
        self.rules = rules
        self._tallies: dict[int, Tally | None] = {}

    def record(self, node: TreeNode) -> None:
        """``node`` was just added: its tally follows from its parent's."""
        self._tallies[node.order] = self.step(node)

    def tally(self, node: TreeNode) -> Tally | None:
        if node.order not in self._tallies:
            self._tallies[node.order] = self.missing(node)
        return self._tallies[node.order]

    def missing(self, node: TreeNode) -> Tally | None:
        """The tally of a node the estimate was not told of (added before it existed)."""
        return self.step(node)

    def step(self, node: TreeNode) -> Tally | None:
        raise NotImplementedError

    def before(self, node: TreeNode) -> Tally | None:
        """The tally at ``node``'s parent (``None``: the estimate starts after it)."""
        raise NotImplementedError

    def recount(self, node: TreeNode) -> Tally | None:
        raise NotImplementedError

    # -- context edits -----------------------------------------------------------------------

    def edit(self, parent: Tally, node: TreeNode) -> Tally | None:
        """Apply a ``context_edit`` in O(distance to its target), or recount the node."""
        rules = self.rules
        entry = node.entry
        assert isinstance(entry, ContextEditEntry)
        tree = self.tree
        target = tree.node(entry.target_id) if entry.target_id in tree else None
        if target is None or target.depth >= node.depth or target.depth < parent.floor:
            return parent
        if not parent.exact or parent.blocked or parent.broken or target.depth == parent.floor:
            return self.recount(node) if _on_path(node, target) else parent
        found, between = _walk_up(node.parent, target.depth)
        if found is not target:
            return self.recount(node) if found and found.id == target.id else parent
        agent = _agent_message(target)
        if agent is None or not is_editable(target.entry):
            return parent
        if is_settled_assistant(agent):
            return self.recount(node)
        edited = edited_message(agent, entry.replacement)
        view = None if edited is None else rules.view(edited)
        before = parent.visibility(target, rules, agent)
        if view is not None and not before[0]:
            return self.recount(node)
        hidden_stamp = timestamp_of(agent) if before[0] and view is None else -math.inf
        latest = self._latest_without(parent, target, between, hidden_stamp)
        if latest is None:
            return self.recount(node)
        after = (view is not None, None if view is None else rules.count(view))
        return parent.edited(node, target, before, after, latest)

    def _latest_without(
        self, parent: Tally, target: TreeNode, between: list[TreeNode], hidden_stamp: float
    ) -> float | None:
        """The running timestamp maximum once the target is hidden; ``None`` = recount."""
        if math.isnan(parent.latest):
            return None
        if math.isnan(hidden_stamp) or hidden_stamp < parent.latest:
            return parent.latest
        if any(isinstance(n.entry, ContextEditEntry | CompactionEntry) for n in between):
            return None
        tally = self.before(target)
        if tally is None:
            return None
        latest = tally.latest
        for node in between:
            message = self.rules.node_message(node)
            if message is not None:
                latest = js_max(latest, timestamp_of(message))
        return latest


class HostEstimate(Estimate):
    """The host's ``getContextUsage().tokens``: Pi's whole projection of the path."""

    def tally(self, node: TreeNode) -> Tally:
        found = self._tallies.get(node.order)  # a branch always has a tally: None = missing
        if found is None:
            found = self._tallies[node.order] = self.recount(node)
        return found

    def before(self, node: TreeNode) -> Tally:
        return Tally.empty() if node.parent is None else self.tally(node.parent)

    def step(self, node: TreeNode) -> Tally:
        parent = self.before(node)
        entry = node.entry
        if isinstance(entry, CompactionEntry):
            return self.recount(node)
        if isinstance(entry, ContextEditEntry):
            return self.edit(parent, node) or Tally.empty()
        rules = self.rules
        message = rules.node_message(node)
        if message is None:
            return parent
        count = rules.node_count(node, message)
        tally = parent.appended(node, message, count, strict=False)
        if tally.gate is not None and is_settled_assistant(message):
            tally.gate = usage_tokens(message, strict=False) is not None
        return tally

    def recount(self, node: TreeNode) -> Tally:
        return recount(node, None, self.rules).tally() or Tally.empty()


class ContextUsageIndex:
    """The host's usage per node, following a tree (a :class:`TreeListener`):
    ``branch_tokens()`` at the leaf is a dictionary lookup; ``on_add`` costs the new entry's
    count (each entry is counted once) plus O(1) bookkeeping."""

    def __init__(self, tree: SessionTree, counter: TokenCounter) -> None:
        self._tree = tree
        self._host = HostEstimate(tree, EstimateRules(counter, llm=False))
        tree.subscribe(self)

    @property
    def counter(self) -> TokenCounter:
        """What turns a message into tokens (a lease bounds chars/4 and a tokenizer apart)."""
        return self._host.rules.counter

    def branch_tokens(self, entry_id: str | None = None) -> int | None:
        """The host's ``getContextUsage().tokens`` at an entry (default: the leaf)."""
        node = self._node(entry_id)
        return 0 if node is None else self._host.tally(node).tokens()

    def _node(self, entry_id: str | None) -> TreeNode | None:
        return self._tree.leaf if entry_id is None else self._tree.node(entry_id)

    def on_add(self, node: TreeNode) -> None:
        self._host.record(node)


def _on_path(node: TreeNode, target: TreeNode) -> bool:
    found, _ = _walk_up(node.parent, target.depth)
    return found is not None and found.id == target.id


def _walk_up(start: TreeNode | None, depth: int) -> tuple[TreeNode | None, list[TreeNode]]:
    """The ancestor of ``start`` at ``depth`` and the nodes passed on the way (path order)."""
    between: list[TreeNode] = []
    node = start
    while node is not None and node.depth > depth:
        between.append(node)
        node = node.parent
    between.reverse()
    return node, between


def _agent_message(node: TreeNode) -> Message | None:
    produced = entry_messages(node.entry)
    return produced[0] if produced else None


def __getattr__(name: str) -> object:
    """pi-context's window estimate moved to :mod:`pictx_fsm.extensions.pi_context.usage` (0.2)."""
    from pictx_fsm._moved import moved_attribute

    return moved_attribute(__name__, name)
