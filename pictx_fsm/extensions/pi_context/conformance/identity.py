"""Window identity on a branch: which window each boot and marker names (R10–R14, R66).

A boot names its window in ``details.windowId``. Inside a reset window a boot for an earlier
window of the branch (or for the root) is in the wrong place; a boot whose id matches no
marker before it on the branch and is not this session's root id is stray.

Fork rule (R66, decided here): a fork or clone gets a new session id, so the root boot it
copied names the *old* root id (``pcw:<old 8 chars>:root``). Such a root-shaped boot in the
root window is explained — reported as ``inherited_root_boot`` (info) — when the header has
``parentSession`` (the file is a fork/clone), or when a boot for this session's own root id
follows it in the root window (what ensureBoot appends after a fork). Otherwise it is stray.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Final

from attrs import frozen

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import Finding
from pictx_fsm.conformance.walk import Step
from pictx_fsm.extensions.pi_context.conformance import kinds as K
from pictx_fsm.extensions.pi_context.conformance.roles import (
    BOOT,
    MARKER,
    OTHER_BOOT,
    role_of,
    windows_of,
)
from pictx_fsm.extensions.pi_context.texts import ROOT_WINDOW_SUFFIX, WINDOW_ID_PREFIX
from pictx_fsm.extensions.pi_context.windows import boot_window_id, window_id_of_marker
from pictx_fsm.session.entries import CustomEntry, CustomMessageEntry, MessageEntry
from pictx_fsm.session.tree import TreeNode

__all__ = ["BootIdentityCheck", "DuplicateWindowIdCheck", "Inherited", "is_root_shaped"]


def is_root_shaped(window_id: str) -> bool:
    """``pcw:<anything>:root``: the root id of some session (R10)."""
    return window_id.startswith(WINDOW_ID_PREFIX) and window_id.endswith(ROOT_WINDOW_SUFFIX)


@frozen(kw_only=True)
class Inherited:
    """Root-shaped foreign boots in the root window still waiting for an explanation."""

    pending: tuple[TreeNode, ...] = ()


class BootIdentityCheck:
    """Stray boots, boots for the wrong window, inherited root boots (module docstring)."""

    reads: Final = frozenset({CustomEntry, CustomMessageEntry})

    def start(self, ctx: AuditContext) -> Inherited:
        return Inherited()

    def step(self, state: Inherited, node: TreeNode, ctx: AuditContext) -> Step:
        role = role_of(node, ctx)
        if role is MARKER:
            return Inherited(), _unexplained(state, ctx)
        if role is BOOT:
            return Inherited(), _explained(state, node, ctx)
        if role is not OTHER_BOOT:
            return state, []
        window_id = boot_window_id(node.entry)
        if window_id is None:
            return state, []  # a boot without a usable id: the shape check reports it
        return _foreign_boot(state, node, window_id, ctx)

    def end(self, state: Inherited, leaf: TreeNode, ctx: AuditContext) -> list[Finding]:
        return _unexplained(state, ctx)


def _root_id(ctx: AuditContext) -> str:
    return windows_of(ctx).root_window.window_id


def _foreign_boot(state: Inherited, node: TreeNode, window_id: str, ctx: AuditContext) -> Step:
    window = windows_of(ctx).window_of(node)
    if window_id in window.marker_window_ids() or window_id == _root_id(ctx):
        message = f"boot for window {window_id} inside window {window.window_id}"
        return state, [ctx.finding(K.BOOT_WRONG_WINDOW, message, [node])]
    if window.is_root and is_root_shaped(window_id):
        if ctx.parent_session is not None:
            message = f"root boot {window_id} copied from the parent session (fork/clone)"
            return state, [ctx.finding(K.INHERITED_ROOT_BOOT, message, [node])]
        return Inherited(pending=(*state.pending, node)), []
    message = (
        f"boot for window {window_id}: no marker before it on this branch opens that window, "
        f"and it is not this session's root id {_root_id(ctx)}"
    )
    return state, [ctx.finding(K.STRAY_BOOT, message, [node])]


def _explained(state: Inherited, own_boot: TreeNode, ctx: AuditContext) -> list[Finding]:
    if not windows_of(ctx).window_of(own_boot).is_root:
        return []
    where = ctx.ref(own_boot).text()
    return [
        ctx.finding(
            K.INHERITED_ROOT_BOOT,
            f"root boot {boot_window_id(node.entry)} of another session, followed by this "
            f"session's root boot at {where} (fork, R66)",
            [node, own_boot],
        )
        for node in state.pending
    ]


def _unexplained(state: Inherited, ctx: AuditContext) -> list[Finding]:
    return [
        ctx.finding(
            K.STRAY_BOOT,
            f"root boot of another session ({boot_window_id(node.entry)}) with no parentSession "
            f"in the header and no root boot for {_root_id(ctx)} after it (R66)",
            [node],
        )
        for node in state.pending
    ]


class DuplicateWindowIdCheck:
    reads: Final = frozenset({CustomEntry})

    """R12: a minted window id never equals a marker id already on the branch.

    The state is the number of markers per window id in the whole file, built once: only an
    id used by several markers needs the walk up its branch's window chain.
    """

    def start(self, ctx: AuditContext) -> Mapping[str, int]:
        return Counter(
            window_id
            for entry in ctx.tree.entries
            if type(entry) is not MessageEntry  # most entries, never a marker
            and (window_id := window_id_of_marker(entry)) is not None
        )

    def step(self, state: Mapping[str, int], node: TreeNode, ctx: AuditContext) -> Step:
        window = windows_of(ctx).window_of(node)
        window_id = window.window_id
        if role_of(node, ctx) is not MARKER or state.get(window_id, 0) < 2:
            return state, []
        previous = window.previous
        if previous is None or window_id not in previous.marker_window_ids():
            return state, []
        earlier = _earlier_marker(node, window_id, ctx)
        message = f"marker reuses window id {window_id} of an earlier marker on this branch"
        nodes = [node] if earlier is None else [node, earlier]
        return state, [ctx.finding(K.DUPLICATE_WINDOW_ID, message, nodes)]

    def end(self, state: Mapping[str, int], leaf: TreeNode, ctx: AuditContext) -> list[Finding]:
        return []


def _earlier_marker(node: TreeNode, window_id: str, ctx: AuditContext) -> TreeNode | None:
    windows = windows_of(ctx)
    for ancestor in node.ancestors():
        window = windows.window_of(ancestor)
        opens = window.marker_id == ancestor.id
        if ancestor is not node and opens and window.window_id == window_id:
            return ancestor
    return None
