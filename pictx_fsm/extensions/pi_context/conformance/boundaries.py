"""Boundaries in the wrong place: native summaries on marked branches, legacy resets, and any
boundary between a tool call and its result.

R62: with a marker on the branch pi-context cancels every native compaction, so a compaction
after a valid marker means the host compacted a marked branch anyway.

R75, decided from Pi's code: when pi-context suppresses a branch summary it returns
``{summary: {summary: ""}}``, and Pi writes a ``branch_summary`` entry only when the summary
text is non-empty (``if (summaryText)`` in ``navigateTree``), so a suppressed navigation
leaves *no* entry. Any ``branch_summary`` whose destination branch (its own path) or source
branch (the path to ``fromId``) holds a valid marker is therefore reported: an error when it
carries text (erased history summarised into the new branch), a warning when it is empty
(harmless, but no Pi writes it).

Failure mode 19 / rank 5: between an assistant message with ``toolCall`` blocks and the last
of its results, nothing may be appended that is a marker, a pi-context message (boot,
continuation, guidance, warning), a compaction or a branch summary. Other entries (custom
entries, context edits, foreign extension messages) do not reach the provider between the
pair and are not judged here.
"""

from __future__ import annotations

from typing import Final

from attrs import frozen

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import WARNING, Finding
from pictx_fsm.conformance.walk import NO_FINDINGS, EntryCheck, Step
from pictx_fsm.extensions.pi_context.conformance import kinds as K
from pictx_fsm.extensions.pi_context.conformance.roles import (
    MARKER,
    NOT_METADATA,
    is_legacy_reset,
    is_native_compaction,
    is_pi_context_message,
    role_of,
    windows_of,
)
from pictx_fsm.session.entries import BranchSummaryEntry, CompactionEntry, Entry, MessageEntry
from pictx_fsm.session.slots import slot_setters
from pictx_fsm.session.tree import TreeNode

__all__ = [
    "NOTHING_PENDING",
    "BranchSummaryCheck",
    "LegacyResetCheck",
    "NativeCompactionCheck",
    "Pending",
    "ToolPairCheck",
]


class NativeCompactionCheck(EntryCheck):
    """R62 (module docstring)."""

    reads: Final = frozenset({CompactionEntry})

    def check(self, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        window = windows_of(ctx).window_of(node) if is_native_compaction(node.entry) else None
        if window is None or window.is_root:
            return []
        marker = _marker_node(node, ctx)
        message = f"native compaction in reset window {window.window_id}; R62 cancels them"
        return [ctx.finding(K.NATIVE_COMPACTION_ON_MARKED_BRANCH, message, [node, *marker])]


class BranchSummaryCheck(EntryCheck):
    """R75 (module docstring)."""

    reads: Final = frozenset({BranchSummaryEntry})

    def check(self, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        entry = node.entry
        if not isinstance(entry, BranchSummaryEntry):
            return []
        windows = windows_of(ctx)
        source = ctx.tree.find(entry.from_id)
        sides = []
        window = windows.window_of(node)
        if not window.is_root:
            sides.append(f"its branch is in reset window {window.window_id}")
        left = None if source is None else windows.window_of(source)
        if left is not None and not left.is_root:
            sides.append(f"the branch it left is in reset window {left.window_id}")
        if not sides:
            return []
        if entry.summary.strip():
            message = "branch summary across a reset window (" + "; ".join(sides) + ")"
            return [ctx.finding(K.BRANCH_SUMMARY_ACROSS_RESET, message, [node])]
        message = "empty branch summary across a reset window; Pi writes none when R75 suppresses"
        return [ctx.finding(K.BRANCH_SUMMARY_ACROSS_RESET, message, [node], severity=WARNING)]


class LegacyResetCheck:
    """R6/§19: ``reset-v2`` compactions are reported, never interpreted."""

    entry_types: Final = frozenset({CompactionEntry.TYPE})

    def check(self, entry: Entry, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        if not is_legacy_reset(entry):
            return []
        message = "legacy reset-v2 compaction (pi-context ≤0.24); not interpreted"
        return [ctx.finding(K.LEGACY_RESET_COMPACTION, message, [node])]


def _marker_node(node: TreeNode, ctx: AuditContext) -> list[TreeNode]:
    marker_id = windows_of(ctx).window_of(node).marker_id
    marker = None if marker_id is None else ctx.tree.find(marker_id)
    return [] if marker is None else [marker]


# --------------------------------------------------------------------------------------------
# Tool pairs


@frozen(kw_only=True)
class Pending:
    """The assistant message whose tool results are still due, and their call ids."""

    call: TreeNode | None = None
    ids: frozenset[str] = frozenset()


NOTHING_PENDING = Pending()
_NEW: Final = object.__new__
_set_call, _set_ids = slot_setters(Pending, "call", "ids")


def _new_pending(call: TreeNode | None, ids: frozenset[str]) -> Pending:
    """``Pending(call=, ids=)``, made for every tool call of a session, slot by slot
    (:mod:`pictx_fsm.session.slots`)."""
    made: Pending = _NEW(Pending)
    _set_call(made, call)
    _set_ids(made, ids)
    return made


class ToolPairCheck:
    """FM19: no boundary between a tool call and its result (module docstring)."""

    reads: Final = NOT_METADATA

    def start(self, ctx: AuditContext) -> Pending:
        return NOTHING_PENDING

    def step(self, state: Pending, node: TreeNode, ctx: AuditContext) -> Step:
        entry = node.entry
        if isinstance(entry, MessageEntry):
            return _after_message(state, node, entry), NO_FINDINGS
        if state.call is None or not _is_boundary(node, ctx):
            return state, []
        calls = ", ".join(sorted(state.ids))
        message = (
            f"{_boundary_name(node, ctx)} between the tool call(s) {calls} of "
            f"{ctx.ref(state.call).text()} and their results"
        )
        return state, [ctx.finding(K.BOUNDARY_SPLITS_TOOL_PAIR, message, [node, state.call])]

    def end(self, state: Pending, leaf: TreeNode, ctx: AuditContext) -> list[Finding]:
        return []


def _after_message(state: Pending, node: TreeNode, entry: MessageEntry) -> Pending:
    message = entry.message
    ids = message.tool_call_ids()
    if ids:
        return _new_pending(node, ids)
    if message.role == "toolResult" and message.tool_call_id in state.ids:
        rest = state.ids - {message.tool_call_id}
        return _new_pending(state.call, rest) if rest else NOTHING_PENDING
    return NOTHING_PENDING  # the turn moved on; results that never came are not a boundary


def _is_boundary(node: TreeNode, ctx: AuditContext) -> bool:
    entry = node.entry
    if role_of(node, ctx) is MARKER or is_pi_context_message(entry):
        return True
    return isinstance(entry, CompactionEntry | BranchSummaryEntry)


def _boundary_name(node: TreeNode, ctx: AuditContext) -> str:
    if role_of(node, ctx) is MARKER:
        return "reset marker"
    return str(getattr(node.entry, "custom_type", None) or node.entry.type)
