"""Active-window token usage (lifecycle R47–R48), kept per tree node as entries arrive.

Two estimates exist for every node:

* the **window** estimate (R48): pi-ai's estimator over ``convertToLlm`` of the R67 projection
  of the node's marker window — folded system head + messages from the window's boot on;
  ``None`` when the boot is missing or the estimator would throw;
* the **branch** estimate (R47 for the model session): the host's ``getContextUsage`` over
  Pi's whole projection of the path (:mod:`pictx_fsm.session.usage`).

:func:`window_tokens_of` computes the first from scratch. :class:`UsageIndex` keeps both per
node (:class:`~pictx_fsm.session.usage.ContextUsageIndex` and a :class:`WindowEstimate` over
pi-context's window index): the window's tally follows from its parent's in O(1) plus the
cost of counting the new entry once; rare shapes recount that one node's window, cached on
the node: a compaction inside a marker window, an edit of the boot or of a trusted reply, an
edit while a reply is discounted by the timestamp rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pictx_fsm.extensions.pi_context.reset_projection import project_marker_window
from pictx_fsm.extensions.pi_context.windows import (
    Window,
    WindowIndex,
    is_boot_for,
    is_boot_message,
)
from pictx_fsm.session.entries import CompactionEntry, ContextEditEntry, Entry, MessageEntry
from pictx_fsm.session.estimate import EstimateError, TokenCounter, estimate_window
from pictx_fsm.session.projection import Message, convert_to_llm, message_of, project_branch
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.session.usage import ContextUsageIndex, Estimate, EstimateRules, branch_tokens_of
from pictx_fsm.session.usage_tally import Recount, SystemLink, Tally, recount

__all__ = ["UsageIndex", "WindowEstimate", "active_tokens_of", "window_tokens_of"]


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


def active_tokens_of(branch: Sequence[Entry], window: Window, counter: TokenCounter) -> int | None:
    """The usage the lifecycle reads: the host's in the root window (R47), else R48."""
    if window.is_root:
        return branch_tokens_of(branch, counter)
    return window_tokens_of(branch, window, counter)


# --------------------------------------------------------------------------------------------
# the index


class WindowEstimate(Estimate):
    """R48 per node: the window's R67 projection from its first boot on (``None`` in the root
    window, on the marker, or before the boot)."""

    def __init__(self, tree: SessionTree, rules: EstimateRules, windows: WindowIndex) -> None:
        super().__init__(tree, rules)
        self.windows = windows
        self._chains: dict[int, SystemLink | None] = {}

    def record(self, node: TreeNode) -> None:
        self._chains[node.order] = self._chain_step(node)
        super().record(node)

    def before(self, node: TreeNode) -> Tally | None:
        return None if node.parent is None else self.tally(node.parent)

    def step(self, node: TreeNode) -> Tally | None:
        facts = self.windows.at(node)
        window = facts.window
        if window.is_root or node.id == window.marker_id:
            return None
        parent = self.before(node)
        entry = node.entry
        if parent is None:
            if is_boot_for(entry, window.window_id):
                return self._open(node)
            if facts.boot_id is not None and isinstance(entry, ContextEditEntry | CompactionEntry):
                return self.recount(node)
            return None
        if isinstance(entry, CompactionEntry):
            return self.recount(node)
        if isinstance(entry, ContextEditEntry):
            return self.edit(parent, node)
        rules = self.rules
        message = rules.node_message(node)
        if message is None:
            return parent
        count = rules.node_count(node, message)
        return parent.appended(node, message, count, strict=True)

    def _open(self, boot: TreeNode) -> Tally:
        """The first visible boot of the window: head = fold of the system prefix (R67)."""
        chain = self._chain(boot.parent)
        head = None if chain is None else chain.head()
        rules = self.rules
        tally = Tally.opened(boot, head, rules)
        message = rules.node_message(boot)
        assert message is not None
        count = rules.node_count(boot, message)
        return tally.appended(boot, message, count, strict=True)

    def recount(self, node: TreeNode) -> Tally | None:
        window = self.windows.window_of(node)
        plan: Recount = recount(node, window.marker_id, self.rules)
        if not plan.compacted:
            marker = plan.nodes[0].parent if plan.nodes else node.parent
            prefix = self._chain(marker)
            plan = plan.with_prefix(() if prefix is None else prefix.messages())
        window_id = window.window_id

        def first_boot(messages: Sequence[Message]) -> int | None:
            return next((i for i, m in enumerate(messages) if is_boot_message(m, window_id)), None)

        return plan.tally(first_boot)

    # -- the system messages before a window -------------------------------------------------

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


class UsageIndex(ContextUsageIndex):
    """The host's and the window's usage per node, following a tree (a ``TreeListener``):
    ``active_window_tokens()`` at the leaf is a dictionary lookup; ``on_add`` costs the new
    entry's count (each entry is counted once per estimate) plus O(1) bookkeeping."""

    def __init__(self, tree: SessionTree, counter: TokenCounter) -> None:
        self._window_index = WindowIndex.of(tree)  # subscribed first: it sees a node before this
        self._window = WindowEstimate(tree, EstimateRules(counter, llm=True), self._window_index)
        super().__init__(tree, counter)

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
        tally = self._window.tally(node)
        return None if tally is None else tally.tokens()

    def on_add(self, node: TreeNode) -> None:
        super().on_add(node)
        self._window.record(node)
