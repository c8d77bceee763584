"""The role one entry plays for the audit, relative to the window it is in.

Shared by the tail, identity and tool-pair checks so that they agree on what a boot, a
continuation or "conversation" is (D4's list: any ``message``, any other ``custom_message``,
``compaction`` or ``branch_summary``; everything else is metadata).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    CUSTOM_TYPE_PREFIX,
    LEGACY_RESET_DETAILS_KEY,
    LEGACY_RESET_DETAILS_TAG,
)
from pictx_fsm.extensions.pi_context.windows import WindowIndex, boot_window_id
from pictx_fsm.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
)
from pictx_fsm.session.tree import TreeNode

__all__ = [
    "BOOT",
    "CONTINUATION",
    "CONVERSATION",
    "MARKER",
    "METADATA",
    "NOT_METADATA",
    "OTHER_BOOT",
    "Role",
    "is_boot",
    "is_legacy_reset",
    "is_native_compaction",
    "is_pi_context_message",
    "role_of",
    "windows_of",
]


class Role(enum.Enum):
    MARKER = "marker"
    """A valid marker (R8): it opens the node's window."""
    BOOT = "boot"
    """A boot for the node's own window (R14)."""
    OTHER_BOOT = "other_boot"
    """A boot for another window, or with no usable window id."""
    CONTINUATION = "continuation"
    CONVERSATION = "conversation"
    METADATA = "metadata"


# The members as module constants, for the walk's per-node comparisons: on Python 3.11
# ``Role.MARKER`` is looked up through ``EnumType.__getattr__``, several times slower.
MARKER: Final = Role.MARKER
BOOT: Final = Role.BOOT
OTHER_BOOT: Final = Role.OTHER_BOOT
CONTINUATION: Final = Role.CONTINUATION
CONVERSATION: Final = Role.CONVERSATION
METADATA: Final = Role.METADATA

NOT_METADATA: Final = frozenset(
    {MessageEntry, CustomEntry, CustomMessageEntry, CompactionEntry, BranchSummaryEntry}
)
"""The entry classes whose role can be other than metadata (a marker is a custom entry)."""


def windows_of(ctx: AuditContext) -> WindowIndex:
    """pi-context's window index over the audited tree."""
    return WindowIndex.of(ctx.tree)


def role_of(node: TreeNode, ctx: AuditContext) -> Role:
    entry = node.entry
    window = WindowIndex.of(ctx.tree).window_of(node)
    if window.marker_id == node.id:
        return MARKER
    if type(entry) is MessageEntry:  # most nodes: answered before the isinstance chain
        return CONVERSATION
    if isinstance(entry, CustomMessageEntry):
        if entry.custom_type == BOOT_TYPE:
            own = boot_window_id(entry) == window.window_id
            return BOOT if own else OTHER_BOOT
        if entry.custom_type == CONTINUATION_TYPE:
            return CONTINUATION
        return CONVERSATION
    if isinstance(entry, MessageEntry | CompactionEntry | BranchSummaryEntry):
        return CONVERSATION
    return METADATA


def is_boot(entry: Entry) -> bool:
    return isinstance(entry, CustomMessageEntry) and entry.custom_type == BOOT_TYPE


def is_pi_context_message(entry: Entry) -> bool:
    """A ``custom_message`` authored by pi-context (R6): boot, continuation, budget, …"""
    return isinstance(entry, CustomMessageEntry) and entry.custom_type.startswith(
        CUSTOM_TYPE_PREFIX
    )


def is_legacy_reset(entry: Entry) -> bool:
    """A ≤0.24 compaction-based reset (``details.piContext == "reset-v2"``, §19)."""
    if not isinstance(entry, CompactionEntry) or not isinstance(entry.details, Mapping):
        return False
    return entry.details.get(LEGACY_RESET_DETAILS_KEY) == LEGACY_RESET_DETAILS_TAG


def is_native_compaction(entry: Entry) -> bool:
    return isinstance(entry, CompactionEntry) and not is_legacy_reset(entry)
