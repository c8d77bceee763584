"""The reset tail on one branch: marker → boot → continuation, in order, nothing between.

Rules (R2, R3, R28, R58, R65, D1–D4): after a valid marker for window W the branch must carry
a boot for W, then (profile 0.25.1) one continuation, before any conversation — D4's list:
a ``message``, another ``custom_message``, a ``compaction``, a ``branch_summary`` or a later
marker. Metadata (custom entries, context edits, model changes, labels) may sit between.

Profile 0.25.0 (§2.4, R59): a ``/wipe-memory`` window legitimately has no continuation and a
running reset cannot be told from it in the file, so a missing continuation is never reported;
a continuation that *is* there must still follow the boot, once.

Where a branch ends inside the tail (only metadata after the marker or the boot), startup
repair would complete it (R64, D4): ``tail_incomplete``, a warning. Once conversation or
another marker follows, repair refuses, and the missing piece is an error.

The root window has no reset tail: a continuation there has no committed boot; a second root
boot is tolerated by the root projection (R69), so it is only a warning.
"""

from __future__ import annotations

from typing import Final

import attrs
from attrs import frozen

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import WARNING, Finding
from pictx_fsm.conformance.walk import NO_FINDINGS, Step
from pictx_fsm.extensions.pi_context.conformance import kinds as K
from pictx_fsm.extensions.pi_context.conformance.roles import (
    BOOT,
    CONTINUATION,
    CONVERSATION,
    MARKER,
    NOT_METADATA,
    Role,
    role_of,
    windows_of,
)
from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.session.tree import TreeNode

__all__ = ["Tail", "TailCheck", "close"]


@frozen(kw_only=True)
class Tail:
    """What the branch has shown of the current window's tail so far."""

    marker: TreeNode | None
    """``None`` in the root window."""
    boot: TreeNode | None = None
    continuation: TreeNode | None = None
    early_continuation: TreeNode | None = None
    """A continuation seen before the boot."""
    before_boot: TreeNode | None = None
    """The first conversation entry before the boot."""
    after_boot: TreeNode | None = None
    """The first conversation entry after the boot, while the continuation is still due."""


class TailCheck:
    """Marker → boot → continuation on every branch (see the module docstring)."""

    reads: Final = NOT_METADATA

    def __init__(self, profile: Profile) -> None:
        self.profile = profile

    def start(self, ctx: AuditContext) -> Tail:
        return Tail(marker=None)

    def step(self, state: Tail, node: TreeNode, ctx: AuditContext) -> Step:
        if type(node.entry) is MessageEntry:  # most nodes: their role without the index
            # A message opens no window: it is in the window ``state.marker`` opened (the
            # root window without one), so it is that window's marker only by sharing its id.
            marker = state.marker
            if marker is None:
                return state, NO_FINDINGS  # conversation in the root window: no tail
            if node.id != marker.id:
                return _conversation(state, node), NO_FINDINGS
        role = role_of(node, ctx)
        if role is MARKER:
            return Tail(marker=node), close(state, node, ctx, self.profile)
        if state.marker is None:
            return _root_step(state, node, role, ctx)
        if role is BOOT:
            return _boot(state, node, ctx)
        if role is CONTINUATION:
            return _continuation(state, node, ctx)
        if role is CONVERSATION:
            return _conversation(state, node), NO_FINDINGS
        return state, NO_FINDINGS

    def end(self, state: Tail, leaf: TreeNode, ctx: AuditContext) -> list[Finding]:
        return close(state, None, ctx, self.profile)


def _root_step(state: Tail, node: TreeNode, role: Role, ctx: AuditContext) -> Step:
    if role is CONTINUATION:
        message = "continuation in the root window: no reset, so no committed boot before it"
        return state, [ctx.finding(K.CONTINUATION_WITHOUT_BOOT, message, [node])]
    if role is not BOOT:
        return state, []
    if state.boot is None:
        return attrs.evolve(state, boot=node), []
    message = (
        f"second root boot for {_window_id(node, ctx)} (first at {ctx.ref(state.boot).text()}); "
        "the root projection keeps only the last (R69)"
    )
    found = ctx.finding(K.DUPLICATE_BOOT, message, [node, state.boot], severity=WARNING)
    return state, [found]


def _window_id(node: TreeNode, ctx: AuditContext) -> str:
    return windows_of(ctx).window_of(node).window_id


def _boot(state: Tail, node: TreeNode, ctx: AuditContext) -> Step:
    window = _window_id(node, ctx)
    if state.boot is not None:
        message = f"second boot for window {window} (first at {ctx.ref(state.boot).text()})"
        return state, [ctx.finding(K.DUPLICATE_BOOT, message, [node, state.boot])]
    found = []
    if state.before_boot is not None:
        message = f"conversation between the marker and the boot of window {window}"
        found.append(ctx.finding(K.TAIL_INTERRUPTED, message, [state.before_boot, node]))
    if state.early_continuation is not None:
        message = f"continuation before the boot of window {window}"
        nodes = [state.early_continuation, node]
        found.append(ctx.finding(K.CONTINUATION_BEFORE_BOOT, message, nodes))
    return attrs.evolve(state, boot=node, continuation=state.early_continuation), found


def _continuation(state: Tail, node: TreeNode, ctx: AuditContext) -> Step:
    window = _window_id(node, ctx)
    first = state.continuation or state.early_continuation
    if first is not None:
        message = f"second continuation in window {window} (first at {ctx.ref(first).text()})"
        return state, [ctx.finding(K.DUPLICATE_CONTINUATION, message, [node, first])]
    if state.boot is None:
        return attrs.evolve(state, early_continuation=node), []
    found = []
    if state.after_boot is not None:
        message = f"conversation between the boot and the continuation of window {window}"
        found.append(ctx.finding(K.TAIL_INTERRUPTED, message, [state.after_boot, node]))
    return attrs.evolve(state, continuation=node), found


def _conversation(state: Tail, node: TreeNode) -> Tail:
    if state.boot is None:
        return state if state.before_boot is not None else attrs.evolve(state, before_boot=node)
    if state.continuation is None and state.after_boot is None:
        return attrs.evolve(state, after_boot=node)
    return state


def close(
    state: Tail, next_marker: TreeNode | None, ctx: AuditContext, profile: Profile
) -> list[Finding]:
    """What the window's tail lacks when the window ends: at the next marker, or at the end
    of the branch (``next_marker`` is ``None``)."""
    if state.marker is None:
        return []
    if state.boot is None:
        return _close_without_boot(state, state.marker, next_marker, ctx)
    if state.continuation is None and profile is Profile.V0_25_1:
        return _close_without_continuation(state, state.marker, state.boot, next_marker, ctx)
    return []


def _close_without_boot(
    state: Tail, marker: TreeNode, next_marker: TreeNode | None, ctx: AuditContext
) -> list[Finding]:
    window = _window_id(marker, ctx)
    found = []
    if state.early_continuation is not None:
        message = f"continuation in window {window}, which never gets its boot"
        found.append(ctx.finding(K.CONTINUATION_WITHOUT_BOOT, message, [state.early_continuation]))
    intruder = state.before_boot or next_marker
    if intruder is None and state.early_continuation is None:
        message = f"branch ends after marker of window {window} without its boot (repairable)"
        return [*found, ctx.finding(K.TAIL_INCOMPLETE, message, [marker])]
    what = "the branch ends" if intruder is None else f"{_what(intruder, ctx)} follows"
    message = f"window {window} has no boot and {what}; every request is aborted (R68)"
    nodes = [marker] if intruder is None else [marker, intruder]
    return [*found, ctx.finding(K.BOOT_MISSING, message, nodes)]


def _close_without_continuation(
    state: Tail,
    marker: TreeNode,
    boot: TreeNode,
    next_marker: TreeNode | None,
    ctx: AuditContext,
) -> list[Finding]:
    window = _window_id(marker, ctx)
    intruder = state.after_boot or next_marker
    if intruder is None:
        message = f"branch ends after the boot of window {window} without the continuation"
        return [ctx.finding(K.TAIL_INCOMPLETE, message + " (repairable)", [marker, boot])]
    message = (
        f"reset to window {window} has no continuation; {_what(intruder, ctx)} follows the boot"
    )
    return [ctx.finding(K.CONTINUATION_MISSING, message, [marker, boot, intruder])]


def _what(node: TreeNode, ctx: AuditContext) -> str:
    if role_of(node, ctx) is MARKER:
        return "another marker"
    entry = node.entry
    role = getattr(getattr(entry, "message", None), "role", None)
    return f"a {role} message" if role else f"a {entry.type} entry"
