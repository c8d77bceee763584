"""Active-window token usage (lifecycle R47–R48), kept per tree node as entries arrive.

Two estimates exist for every node:

* the **window** estimate (R48): pi-ai's estimator over ``convertToLlm`` of the R67 projection
  of the node's marker window — folded system head + messages from the window's boot on;
  ``None`` when the boot is missing or the estimator would throw;
* the **branch** estimate (R47 for the model session): the host's ``getContextUsage`` over
  Pi's whole projection of the path (``None`` after a compaction until a settled reply).

:func:`window_tokens_of` and :func:`branch_tokens_of` compute them from scratch.
:class:`UsageIndex` follows a :class:`SessionTree` and keeps, per node, a small tally (usage
anchor, sum after it, running timestamp maximum, edits seen) derived from the parent's tally
in O(1) plus the cost of counting the new entry once. Context edits of the common kinds — a
retry or overflow recovery hiding a failed reply, an edit of an ordinary message — update
the tally in O(distance to their target). Rare shapes fall back to a recomputation of that
one node's window, cached on the node: a compaction inside a marker window, an edit of the
boot or of a trusted reply, an edit while a reply is discounted by the timestamp rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pictx_fsm.extensions.pi_context.reset_projection import project_marker_window
from pictx_fsm.extensions.pi_context.usage_tally import (
    Recount,
    SystemLink,
    Tally,
    TallyRules,
    recount,
)
from pictx_fsm.extensions.pi_context.windows import Window, WindowIndex, is_boot_for
from pictx_fsm.session.entries import (
    CompactionEntry,
    ContextEditEntry,
    Entry,
    MessageEntry,
)
from pictx_fsm.session.estimate import (
    EstimateError,
    MessageText,
    TokenCounter,
    compaction_gate,
    estimate_host,
    estimate_window,
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
    convert_to_llm,
    edited_message,
    entry_messages,
    is_editable,
    message_of,
    project_branch,
)
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = [
    "UsageIndex",
    "active_tokens_of",
    "branch_tokens_of",
    "window_tokens_of",
]


# --------------------------------------------------------------------------------------------
# from scratch (the reference, and what pi-context does on every call)


def window_tokens_of(branch: Sequence[Entry], window: Window, counter: TokenCounter) -> int | None:
    """R48 for a marker window: the estimate of its R67 projection, or ``None``."""
    reset = project_marker_window(project_branch(branch).messages, window.window_id)
    if reset.missing_boot:
        return None
    try:
        return estimate_window(convert_to_llm(reset.messages), counter)
    except EstimateError:
        return None


def branch_tokens_of(branch: Sequence[Entry], counter: TokenCounter) -> int | None:
    """The host's ``getContextUsage().tokens`` for the path (R47 in the model session)."""
    if compaction_gate(branch) is False:
        return None
    return estimate_host(context_messages(branch), counter)


def active_tokens_of(branch: Sequence[Entry], window: Window, counter: TokenCounter) -> int | None:
    """The usage the lifecycle reads: the host's in the root window (R47), else R48."""
    if window.is_root:
        return branch_tokens_of(branch, counter)
    return window_tokens_of(branch, window, counter)


# --------------------------------------------------------------------------------------------
# the index


class _Rules(TallyRules):
    """How one of the two estimates sees entries (the window's LLM view, or the host's)."""

    def __init__(self, counter: TokenCounter, *, window: bool) -> None:
        self.counter = counter
        self.window = window
        self.strict = window
        self._counts: dict[int, int | None] = {}

    def view(self, message: Message) -> Message | None:
        return convert_message(message) if self.window else message

    def count(self, message: Message) -> int | None:
        try:
            text: MessageText = window_text(message) if self.window else host_text(message)
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


class UsageIndex:
    """Per-node usage tallies that follow a tree (a :class:`TreeListener`).

    ``active_window_tokens()`` at the leaf is a dictionary lookup; ``on_add`` costs the new
    entry's count (each entry is counted once per estimate) plus O(1) bookkeeping.
    """

    def __init__(self, tree: SessionTree, counter: TokenCounter) -> None:
        self._tree = tree
        self._window_index = WindowIndex.of(tree)  # subscribed first: it sees a node before this
        self._window_rules = _Rules(counter, window=True)
        self._branch_rules = _Rules(counter, window=False)
        self._chains: dict[int, SystemLink | None] = {}
        self._windows: dict[int, Tally | None] = {}
        self._branches: dict[int, Tally] = {}
        tree.subscribe(self)

    # -- queries ------------------------------------------------------------------------------

    @property
    def counter(self) -> TokenCounter:
        """What turns a message into tokens (a lease bounds chars/4 and a tokenizer apart)."""
        return self._window_rules.counter

    def active_window_tokens(self) -> int | None:
        """R47/R48 at the leaf: the host estimate in the root window, else the window's."""
        if self._window_index.current_window.is_root:
            return self.branch_tokens()
        return self.window_tokens()

    def window_tokens(self, entry_id: str | None = None) -> int | None:
        """R48 at an entry (default: the leaf); ``None`` in the root window or without boot."""
        node = self._node(entry_id)
        if node is None:
            return None
        tally = self._window_tally(node)
        return None if tally is None else tally.tokens()

    def branch_tokens(self, entry_id: str | None = None) -> int | None:
        """The host's ``getContextUsage().tokens`` at an entry (default: the leaf)."""
        node = self._node(entry_id)
        return 0 if node is None else self._branch_tally(node).tokens()

    def _node(self, entry_id: str | None) -> TreeNode | None:
        return self._tree.leaf if entry_id is None else self._tree.node(entry_id)

    # -- following the tree ------------------------------------------------------------------

    def on_add(self, node: TreeNode) -> None:
        self._chains[node.order] = self._chain_step(node)
        self._branches[node.order] = self._branch_step(node)
        self._windows[node.order] = self._window_step(node)

    def _chain_step(self, node: TreeNode) -> SystemLink | None:
        """The system messages of the projection up to ``node`` (a compaction restarts them
        from its checkpoint: its kept range carries no system message entries)."""
        entry = node.entry
        if isinstance(entry, MessageEntry) and entry.message.role == "system":
            return SystemLink(message_of(entry), self._chain(node.parent))
        if isinstance(entry, CompactionEntry):
            checkpoint = entry.system_message
            return SystemLink(checkpoint, None) if isinstance(checkpoint, Mapping) else None
        return self._chain(node.parent)

    def _chain(self, node: TreeNode | None) -> SystemLink | None:
        if node is None:
            return None
        if node.order not in self._chains:
            self._chains[node.order] = self._chain_step(node)
        return self._chains[node.order]

    def _branch_tally(self, node: TreeNode) -> Tally:
        if node.order not in self._branches:
            self._branches[node.order] = self._recount(node, window=False) or Tally.empty()
        return self._branches[node.order]

    def _window_tally(self, node: TreeNode) -> Tally | None:
        if node.order not in self._windows:
            self._windows[node.order] = self._window_step(node)
        return self._windows[node.order]

    def _branch_step(self, node: TreeNode) -> Tally:
        parent = Tally.empty() if node.parent is None else self._branch_tally(node.parent)
        entry = node.entry
        if isinstance(entry, CompactionEntry):
            return self._recount(node, window=False) or Tally.empty()
        if isinstance(entry, ContextEditEntry):
            return self._edit(parent, node, window=False) or Tally.empty()
        message = self._branch_rules.node_message(node)
        if message is None:
            return parent
        count = self._branch_rules.node_count(node, message)
        tally = parent.appended(node, message, count, strict=False)
        if tally.gate is not None and is_settled_assistant(message):
            tally.gate = usage_tokens(message, strict=False) is not None
        return tally

    def _window_step(self, node: TreeNode) -> Tally | None:
        facts = self._window_index.at(node)
        window = facts.window
        if window.is_root or node.id == window.marker_id:
            return None
        parent = None if node.parent is None else self._window_tally(node.parent)
        entry = node.entry
        if parent is None:
            if is_boot_for(entry, window.window_id):
                return self._open_window(node)
            if facts.boot_id is not None and isinstance(entry, ContextEditEntry | CompactionEntry):
                return self._recount(node, window=True)
            return None
        if isinstance(entry, CompactionEntry):
            return self._recount(node, window=True)
        if isinstance(entry, ContextEditEntry):
            return self._edit(parent, node, window=True)
        message = self._window_rules.node_message(node)
        if message is None:
            return parent
        count = self._window_rules.node_count(node, message)
        return parent.appended(node, message, count, strict=True)

    def _open_window(self, boot: TreeNode) -> Tally:
        """The first visible boot of the window: head = fold of the system prefix (R67)."""
        chain = self._chain(boot.parent)
        head = None if chain is None else chain.head()
        tally = Tally.opened(boot, head, self._window_rules)
        message = self._window_rules.node_message(boot)
        assert message is not None
        count = self._window_rules.node_count(boot, message)
        return tally.appended(boot, message, count, strict=True)

    # -- context edits -----------------------------------------------------------------------

    def _edit(self, parent: Tally, node: TreeNode, *, window: bool) -> Tally | None:
        """Apply a ``context_edit`` in O(distance to its target), or recount the node."""
        rules = self._window_rules if window else self._branch_rules
        entry = node.entry
        assert isinstance(entry, ContextEditEntry)
        target = self._tree.node(entry.target_id) if entry.target_id in self._tree else None
        if target is None or target.depth >= node.depth or target.depth < parent.floor:
            return parent
        if not parent.exact or parent.blocked or parent.broken or target.depth == parent.floor:
            return self._recount(node, window=window) if self._on_path(node, target) else parent
        found, between = _walk_up(node.parent, target.depth)
        if found is not target:
            return self._recount(node, window=window) if found and found.id == target.id else parent
        agent = _agent_message(target)
        if agent is None or not is_editable(target.entry):
            return parent
        if is_settled_assistant(agent):
            return self._recount(node, window=window)
        edited = edited_message(agent, entry.replacement)
        view = None if edited is None else rules.view(edited)
        before = parent.visibility(target, rules, agent)
        if view is not None and not before[0]:
            return self._recount(node, window=window)
        hidden_stamp = timestamp_of(agent) if before[0] and view is None else -math.inf
        latest = self._latest_without(parent, target, between, hidden_stamp, rules)
        if latest is None:
            return self._recount(node, window=window)
        after = (view is not None, None if view is None else rules.count(view))
        return parent.edited(node, target, before, after, latest)

    def _latest_without(
        self,
        parent: Tally,
        target: TreeNode,
        between: list[TreeNode],
        hidden_stamp: float,
        rules: _Rules,
    ) -> float | None:
        """The running timestamp maximum once the target is hidden; ``None`` = recount."""
        if math.isnan(parent.latest):
            return None
        if math.isnan(hidden_stamp) or hidden_stamp < parent.latest:
            return parent.latest
        if any(isinstance(n.entry, ContextEditEntry | CompactionEntry) for n in between):
            return None
        tally = self._tally_before(target, window=rules.window)
        if tally is None:
            return None
        latest = tally.latest
        for node in between:
            message = rules.node_message(node)
            if message is not None:
                latest = js_max(latest, timestamp_of(message))
        return latest

    def _tally_before(self, node: TreeNode, *, window: bool) -> Tally | None:
        if node.parent is None:
            return None if window else Tally.empty()
        return self._window_tally(node.parent) if window else self._branch_tally(node.parent)

    def _on_path(self, node: TreeNode, target: TreeNode) -> bool:
        found, _ = _walk_up(node.parent, target.depth)
        return found is not None and found.id == target.id

    # -- recount -----------------------------------------------------------------------------

    def _recount(self, node: TreeNode, *, window: bool) -> Tally | None:
        rules = self._window_rules if window else self._branch_rules
        node_window = self._window_index.window_of(node)
        stop = node_window.marker_id if window else None
        plan: Recount = recount(node, stop, rules)
        if window and not plan.compacted:
            marker = plan.nodes[0].parent if plan.nodes else node.parent
            prefix = self._chain(marker)
            plan = plan.with_prefix(() if prefix is None else prefix.messages())
        return plan.tally(window=window, boot_window=node_window.window_id if window else None)


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
