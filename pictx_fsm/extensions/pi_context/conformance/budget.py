"""Once-per-turn and once-per-window rules: R30 (one reset per turn), R51/R56 (budget messages).

R30 as the file shows it: two markers with no message between them, followed by an
assistant message before any user message. A running reset (``turn_end`` or
``agent_before_settle`` with ``continue: true``) is followed by the host's continuation turn,
an assistant message; ``/wipe-memory`` runs while idle and is followed by the user's next
prompt. So two resets and then the continuation turn are two resets in one turn, while two
``/wipe-memory`` commands in a row (then a prompt) are not reported. Which marker was the
running one cannot be read from the file, hence a warning.

R56: guidance and warning each persist at most once per window on a branch; R51.1: once the
warning is in the window, not even guidance follows. Both are judged from durable entries, as
R13 does (the message types the window index knows of the parent node).
"""

from __future__ import annotations

from typing import Final

from attrs import frozen

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import Finding
from pictx_fsm.conformance.walk import NO_FINDINGS, EntryCheck, Step
from pictx_fsm.extensions.pi_context.conformance import kinds as K
from pictx_fsm.extensions.pi_context.conformance.roles import MARKER, role_of, windows_of
from pictx_fsm.extensions.pi_context.texts import GUIDANCE_TYPE, WARNING_TYPE
from pictx_fsm.session.entries import CustomEntry, CustomMessageEntry, MessageEntry
from pictx_fsm.session.tree import TreeNode

__all__ = ["NO_RESETS", "BudgetRepeatCheck", "MultipleResetsCheck", "Resets"]


@frozen(kw_only=True)
class Resets:
    """The last marker since the last message, and marker pairs awaiting the next message."""

    last: TreeNode | None = None
    pairs: tuple[tuple[TreeNode, TreeNode], ...] = ()


NO_RESETS: Final = Resets()


class MultipleResetsCheck:
    """R30 (module docstring)."""

    reads: Final = frozenset({MessageEntry, CustomEntry})

    def start(self, ctx: AuditContext) -> Resets:
        return NO_RESETS

    def step(self, state: Resets, node: TreeNode, ctx: AuditContext) -> Step:
        entry = node.entry
        if isinstance(entry, MessageEntry):
            if entry.message.role != "assistant" or not state.pairs:
                return NO_RESETS, NO_FINDINGS  # a prompt: the resets before it were commands
            return NO_RESETS, [_finding(first, second, ctx) for first, second in state.pairs]
        if role_of(node, ctx) is not MARKER:
            return state, []
        if state.last is None:
            return Resets(last=node, pairs=state.pairs), []
        return Resets(last=node, pairs=(*state.pairs, (state.last, node))), []

    def end(self, state: Resets, leaf: TreeNode, ctx: AuditContext) -> list[Finding]:
        return []


def _finding(first: TreeNode, second: TreeNode, ctx: AuditContext) -> Finding:
    message = (
        f"second reset (window {windows_of(ctx).window_of(second).window_id}) after the reset at "
        f"{ctx.ref(first).text()}, with no model turn between them and the continuation turn "
        "after both"
    )
    return ctx.finding(K.MULTIPLE_RESETS_IN_TURN, message, [second, first])


class BudgetRepeatCheck(EntryCheck):
    """R56 and R51.1 (module docstring)."""

    reads: Final = frozenset({CustomMessageEntry})

    def check(self, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        entry = node.entry
        if not isinstance(entry, CustomMessageEntry) or node.parent is None:
            return []
        windows = windows_of(ctx)
        seen = windows.at(node.parent).message_types  # a marker's node starts an empty set (R13)
        window = windows.window_of(node).window_id
        if entry.custom_type in (GUIDANCE_TYPE, WARNING_TYPE) and entry.custom_type in seen:
            name = entry.custom_type.removeprefix("pi-context/")
            earlier = _earlier(node, entry.custom_type, ctx)
            message = f"second {name} in window {window} on this branch"
            return [ctx.finding(K.BUDGET_MESSAGE_REPEATED, message, [node, *earlier])]
        if entry.custom_type == GUIDANCE_TYPE and WARNING_TYPE in seen:
            earlier = _earlier(node, WARNING_TYPE, ctx)
            message = f"guidance after the warning of window {window} (R51: nothing follows it)"
            nodes = [node, *earlier]
            return [ctx.finding(K.BUDGET_MESSAGE_REPEATED, message, nodes, rule="R51")]
        return []


def _earlier(node: TreeNode, custom_type: str, ctx: AuditContext) -> list[TreeNode]:
    """The first earlier message of this type in the node's window on its branch."""
    found: list[TreeNode] = []
    for ancestor in node.ancestors():
        if ancestor is node:
            continue
        if role_of(ancestor, ctx) is MARKER:
            break
        entry = ancestor.entry
        if isinstance(entry, CustomMessageEntry) and entry.custom_type == custom_type:
            found = [ancestor]
    return found
