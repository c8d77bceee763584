"""notesoup's windows (S10, S40, S47) and the migration of pi-context 0.25's (S133).

Window identity is the family's (:mod:`pictx_fsm.extensions.shared.windows`) over notesoup's
types. Two schemes are kept:

- :data:`REFERENCE_SCHEME` — notesoup 0.38 as released: only ``notesoup/*`` entries make
  windows, so a 0.25 session's markers are foreign and its whole transcript is one root window
  (S133). The session-file audit uses it to say what the reference would leak.
- :data:`SCHEME` — this port: a ``pi-context/reset-marker`` still opens a window and a
  ``pi-context/boot`` still names it, so a 0.25 session resumed under notesoup keeps its
  windows — no provider request carries anything behind a 0.25 marker (docs/decisions.md,
  "Migration"). A 0.25 window has no checkpoint, so it is projected as a legacy marker window,
  cut at its boot (S78).

New here: a notesoup reset writes a native empty compaction (a retain-none checkpoint) right
before its marker. :func:`checkpoint_backed` recognizes it (S40) and
:func:`boundary_committed` says whether a reset's whole tail is on the branch (S47).
"""

from __future__ import annotations

from typing import ClassVar, Final

from pictx_fsm.extensions.notesoup.texts import (
    BOOT_TYPE,
    CHECKPOINT_SUMMARY,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    LEGACY_BOOT_TYPE,
    LEGACY_CONTINUATION_TYPE,
    LEGACY_GUIDANCE_TYPE,
    LEGACY_MARKER_TYPE,
    LEGACY_WARNING_TYPE,
    MARKER_TYPE,
    WARNING_TYPE,
)
from pictx_fsm.extensions.shared.window_index import SchemeWindowIndex
from pictx_fsm.extensions.shared.windows import Window, WindowScheme, root_window_id
from pictx_fsm.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
)
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = [
    "GUIDANCE_TYPES",
    "REFERENCE_SCHEME",
    "SCHEME",
    "WARNING_TYPES",
    "NotesoupWindows",
    "ReferenceWindows",
    "boundary_committed",
    "checkpoint_backed",
    "is_checkpoint",
    "marker_node",
    "warning_in_segment",
]

REFERENCE_SCHEME: Final = WindowScheme(
    marker_types=frozenset({MARKER_TYPE}),
    boot_types=frozenset({BOOT_TYPE}),
    continuation_types=frozenset({CONTINUATION_TYPE}),
)
"""notesoup 0.38 as released (S5, S10, S133)."""

SCHEME: Final = WindowScheme(
    marker_types=frozenset({MARKER_TYPE, LEGACY_MARKER_TYPE}),
    boot_types=frozenset({BOOT_TYPE, LEGACY_BOOT_TYPE}),
    continuation_types=frozenset({CONTINUATION_TYPE, LEGACY_CONTINUATION_TYPE}),
)
"""This port: notesoup's windows and, migrated, pi-context 0.25's."""

WARNING_TYPES: Final = (WARNING_TYPE, LEGACY_WARNING_TYPE)
"""A final warning of this window, notesoup's or a migrated 0.25 one (S62)."""
GUIDANCE_TYPES: Final = (GUIDANCE_TYPE, LEGACY_GUIDANCE_TYPE)


class NotesoupWindows(SchemeWindowIndex):
    """notesoup's (migrating) window identity over one session tree."""

    scheme: ClassVar[WindowScheme] = SCHEME


class ReferenceWindows(SchemeWindowIndex):
    """The windows notesoup 0.38 itself would see (no migration)."""

    scheme: ClassVar[WindowScheme] = REFERENCE_SCHEME


def is_checkpoint(node: TreeNode) -> bool:
    """S40's shape: an empty compaction that keeps nothing (``firstKeptEntryId`` = its id)."""
    entry = node.entry
    return (
        isinstance(entry, CompactionEntry)
        and entry.summary == CHECKPOINT_SUMMARY
        and entry.first_kept_entry_id == node.id
    )


def checkpoint_backed(tree: SessionTree, window: Window) -> bool:
    """S40: the window's marker has a parent and that parent (the entry right before it on
    the branch) is a retain-none empty compaction. Any other compaction does not qualify."""
    marker = marker_node(tree, window)
    return marker is not None and marker.parent is not None and is_checkpoint(marker.parent)


def marker_node(tree: SessionTree, window: Window) -> TreeNode | None:
    return None if window.marker_id is None else tree.find(window.marker_id)


def boundary_committed(
    tree: SessionTree, window: Window, leaf: TreeNode | None, scheme: WindowScheme = SCHEME
) -> bool:
    """S47 ``resetBoundaryCommitted``: the window's marker is checkpoint-backed and, on the
    path from it to ``leaf``, its hidden boot is followed by a hidden continuation before any
    other marker, message, custom message, compaction or branch summary. Later conversation
    after the continuation does not undo the commit."""
    if window.is_root or leaf is None or not checkpoint_backed(tree, window):
        return False
    path: list[TreeNode] = []
    for node in leaf.ancestors():
        if node.id == window.marker_id:
            break
        path.append(node)
    else:
        return False  # the marker is not on this path
    boot_seen = False
    for node in reversed(path):
        entry = node.entry
        if scheme.boot_window_id(entry) == window.window_id and not boot_seen:
            if not (isinstance(entry, CustomMessageEntry) and entry.display is False):
                return False
            boot_seen = True
            continue
        if SCHEME.is_continuation(entry):
            return boot_seen and isinstance(entry, CustomMessageEntry) and entry.display is False
        if _interrupts(entry):
            return False
    return False


def _interrupts(entry: object) -> bool:
    return SCHEME.is_valid_marker(entry) or isinstance(
        entry, MessageEntry | CustomMessageEntry | CompactionEntry | BranchSummaryEntry
    )


def warning_in_segment(
    tree: SessionTree, leaf: TreeNode | None, window_id: str, scheme: WindowScheme = SCHEME
) -> bool:
    """S57: walking the active branch, a final warning lies in the segment of ``window_id``
    (the root segment up to the first marker, then each marker's own)."""
    if leaf is None:
        return False
    found = False
    segment = root_window_id(tree.session_id)
    for node in leaf.path():
        opened = scheme.window_id_of_marker(node.entry)
        if opened is not None:
            segment = opened
            continue
        entry = node.entry
        if (
            segment == window_id
            and isinstance(entry, CustomMessageEntry)
            and entry.custom_type in WARNING_TYPES
        ):
            found = True
    return found
