"""Out-of-band forks (failure mode 19): an entry appended while a tool call was pending.

Pi appends every entry under the current leaf. When something is appended between an
assistant ``toolUse`` message and its results (OpenClaw's mirrored ``delivery-mirror`` or
``gateway-injected`` messages, or any extension append), and the results are then written
under the tool-call message anyway, the tree forks there and the out-of-band entry is left as
an abandoned leaf whose branch ends with an unanswered tool call (a provider 400 if ever
resumed there). Rule: a child of an assistant message with ``toolCall`` blocks that is a leaf,
is not one of that message's tool results, and has a sibling (the branch that went on).

This is a whole-tree check: it needs the children of a node, which no single branch shows.
"""

from __future__ import annotations

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import OUT_OF_BAND_FORK, Finding
from pictx_fsm.conformance.walk import Shape
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.session.tree import TreeNode

__all__ = ["out_of_band_forks"]


def out_of_band_forks(shape: Shape, ctx: AuditContext) -> list[Finding]:
    found: list[Finding] = []
    for node in shape.nodes:
        entry = node.entry
        if not isinstance(entry, MessageEntry) or entry.message.role != "assistant":
            continue
        children = shape.children(node)
        if len(children) < 2:
            continue
        ids = entry.message.tool_call_ids()
        if not ids:
            continue
        for child in children:
            if shape.is_leaf(child) and not _answers(child, ids):
                found.append(_finding(child, node, ids, ctx))
    return found


def _answers(node: TreeNode, ids: frozenset[str]) -> bool:
    entry = node.entry
    if not isinstance(entry, MessageEntry) or entry.message.role != "toolResult":
        return False
    return entry.message.tool_call_id in ids


def _finding(child: TreeNode, call: TreeNode, ids: frozenset[str], ctx: AuditContext) -> Finding:
    message = (
        f"{_describe(child)} appended while tool call(s) {', '.join(sorted(ids))} of "
        f"{ctx.ref(call).text()} were pending; the results continue from the tool call, "
        "leaving this entry an abandoned leaf"
    )
    return ctx.finding(OUT_OF_BAND_FORK, message, [child, call])


def _describe(node: TreeNode) -> str:
    entry = node.entry
    if not isinstance(entry, MessageEntry):
        return f"{entry.type} entry"
    message = entry.message
    parts = [message.role]
    if message.stop_reason:
        parts.append(f"'{message.stop_reason}'")
    text = " ".join(parts) + " message"
    return f"{text} from model {message.model}" if message.model else text
