"""What pi-context's session-file checks report: its :class:`FindingKind` s, in report order.

Each names the lifecycle rule (``R…``, ``D…``) or failure mode (``FM…``) it enforces and a
default severity (:mod:`pictx_fsm.conformance.findings` says what the severities mean).
"""

from __future__ import annotations

from typing import Final

from pictx_fsm.conformance.findings import ERROR, INFO, WARNING, FindingKind

__all__ = [
    "BOOT_MISSING",
    "BOOT_WRONG_WINDOW",
    "BOUNDARY_SPLITS_TOOL_PAIR",
    "BRANCH_SUMMARY_ACROSS_RESET",
    "BUDGET_MESSAGE_REPEATED",
    "CONTINUATION_BEFORE_BOOT",
    "CONTINUATION_MISSING",
    "CONTINUATION_WITHOUT_BOOT",
    "DUPLICATE_BOOT",
    "DUPLICATE_CONTINUATION",
    "DUPLICATE_WINDOW_ID",
    "EMPTY_COMPACTION_SUMMARY",
    "ENTRY_SHAPE",
    "INEFFECTIVE_COMPACTION",
    "INHERITED_ROOT_BOOT",
    "INVALID_MARKER",
    "KINDS",
    "LEGACY_RESET_COMPACTION",
    "MULTIPLE_RESETS_IN_TURN",
    "NATIVE_COMPACTION_ON_MARKED_BRANCH",
    "OVERFLOW_STORM",
    "REPEATED_OVERFLOW_RECOVERY",
    "STRAY_BOOT",
    "TAIL_INCOMPLETE",
    "TAIL_INTERRUPTED",
    "TEXT_MISMATCH",
]

# -- the reset tail: marker → boot → continuation -----------------------------------------------
BOOT_MISSING: Final = FindingKind(
    name="boot_missing",
    rule="R65",
    severity=ERROR,
    meaning="a reset window without its boot, and conversation follows (R68 aborts every request)",
)
BOOT_WRONG_WINDOW: Final = FindingKind(
    name="boot_wrong_window",
    rule="R14",
    severity=ERROR,
    meaning="a boot for another window inside a reset window",
)
TAIL_INTERRUPTED: Final = FindingKind(
    name="tail_interrupted",
    rule="D4",
    severity=ERROR,
    meaning="conversation between the marker and its boot, or between the boot and the "
    "continuation",
)
CONTINUATION_MISSING: Final = FindingKind(
    name="continuation_missing",
    rule="D1",
    severity=ERROR,
    meaning="a committed reset without its continuation (0.25.1)",
)
TAIL_INCOMPLETE: Final = FindingKind(
    name="tail_incomplete",
    rule="D4",
    severity=WARNING,
    meaning="the branch ends inside a reset tail; startup repair completes it",
)
DUPLICATE_BOOT: Final = FindingKind(
    name="duplicate_boot",
    rule="D4",
    severity=ERROR,
    meaning="a second boot for the same window on one branch",
)
DUPLICATE_CONTINUATION: Final = FindingKind(
    name="duplicate_continuation",
    rule="D4",
    severity=ERROR,
    meaning="a second continuation in one window",
)
CONTINUATION_BEFORE_BOOT: Final = FindingKind(
    name="continuation_before_boot",
    rule="D4",
    severity=ERROR,
    meaning="the continuation precedes the window's boot",
)
CONTINUATION_WITHOUT_BOOT: Final = FindingKind(
    name="continuation_without_boot",
    rule="R3",
    severity=ERROR,
    meaning="a continuation with no committed boot before it",
)
# -- window identity ----------------------------------------------------------------------------
STRAY_BOOT: Final = FindingKind(
    name="stray_boot",
    rule="R14",
    severity=WARNING,
    meaning="a boot whose window id matches no marker on its branch and is not this session's "
    "root id",
)
INHERITED_ROOT_BOOT: Final = FindingKind(
    name="inherited_root_boot",
    rule="R66",
    severity=INFO,
    meaning="a root boot copied from the parent session by a fork or clone",
)
DUPLICATE_WINDOW_ID: Final = FindingKind(
    name="duplicate_window_id",
    rule="R12",
    severity=ERROR,
    meaning="a marker reuses a window id of its branch",
)
INVALID_MARKER: Final = FindingKind(
    name="invalid_marker",
    rule="R8",
    severity=WARNING,
    meaning="a reset-marker entry that is not a valid marker and opens no window",
)
ENTRY_SHAPE: Final = FindingKind(
    name="entry_shape",
    rule="R7",
    severity=WARNING,
    meaning="a pi-context entry with the wrong display flag, details or data keys",
)
TEXT_MISMATCH: Final = FindingKind(
    name="text_mismatch",
    rule="D1",
    severity=WARNING,
    meaning="a pi-context text differs from the profile's",
)
# -- turns and budget ---------------------------------------------------------------------------
MULTIPLE_RESETS_IN_TURN: Final = FindingKind(
    name="multiple_resets_in_turn",
    rule="R30",
    severity=WARNING,
    meaning="two resets at one turn end: no message between the markers, and the continuation "
    "turn after both",
)
BUDGET_MESSAGE_REPEATED: Final = FindingKind(
    name="budget_message_repeated",
    rule="R56",
    severity=WARNING,
    meaning="guidance or warning twice in one window, or guidance after the warning",
)
# -- native boundaries on marked branches, legacy -----------------------------------------------
NATIVE_COMPACTION_ON_MARKED_BRANCH: Final = FindingKind(
    name="native_compaction_on_marked_branch",
    rule="R62",
    severity=ERROR,
    meaning="a native compaction after a reset marker",
)
BRANCH_SUMMARY_ACROSS_RESET: Final = FindingKind(
    name="branch_summary_across_reset",
    rule="R75",
    severity=ERROR,
    meaning="a branch summary across a reset window",
)
LEGACY_RESET_COMPACTION: Final = FindingKind(
    name="legacy_reset_compaction",
    rule="R6",
    severity=INFO,
    meaning="a ≤0.24 reset-v2 compaction, reported and never interpreted",
)
# -- tool pairs ---------------------------------------------------------------------------------
BOUNDARY_SPLITS_TOOL_PAIR: Final = FindingKind(
    name="boundary_splits_tool_pair",
    rule="FM19",
    severity=ERROR,
    meaning="a marker, boot, continuation, budget message or summary between a tool call and "
    "its result",
)
# -- overflow -----------------------------------------------------------------------------------
OVERFLOW_STORM: Final = FindingKind(
    name="overflow_storm",
    rule="FM1",
    severity=ERROR,
    meaning="repeated overflows and recoveries without progress",
)
REPEATED_OVERFLOW_RECOVERY: Final = FindingKind(
    name="repeated_overflow_recovery",
    rule="FM5",
    severity=INFO,
    meaning="a later overflow recovery on a branch that already recovered once, after progress "
    "(each recovery did its job; the session keeps reaching the limit)",
)
INEFFECTIVE_COMPACTION: Final = FindingKind(
    name="ineffective_compaction",
    rule="FM1",
    severity=WARNING,
    meaning="an overflow recovery compaction that cannot cure the overflow",
)
EMPTY_COMPACTION_SUMMARY: Final = FindingKind(
    name="empty_compaction_summary",
    rule="FM1",
    severity=WARNING,
    meaning="a compaction whose summary is empty or a template",
)

KINDS: Final = (
    BOOT_MISSING,
    BOOT_WRONG_WINDOW,
    TAIL_INTERRUPTED,
    CONTINUATION_MISSING,
    TAIL_INCOMPLETE,
    DUPLICATE_BOOT,
    DUPLICATE_CONTINUATION,
    CONTINUATION_BEFORE_BOOT,
    CONTINUATION_WITHOUT_BOOT,
    STRAY_BOOT,
    INHERITED_ROOT_BOOT,
    DUPLICATE_WINDOW_ID,
    INVALID_MARKER,
    ENTRY_SHAPE,
    TEXT_MISMATCH,
    MULTIPLE_RESETS_IN_TURN,
    BUDGET_MESSAGE_REPEATED,
    NATIVE_COMPACTION_ON_MARKED_BRANCH,
    BRANCH_SUMMARY_ACROSS_RESET,
    LEGACY_RESET_COMPACTION,
    BOUNDARY_SPLITS_TOOL_PAIR,
    OVERFLOW_STORM,
    REPEATED_OVERFLOW_RECOVERY,
    INEFFECTIVE_COMPACTION,
    EMPTY_COMPACTION_SUMMARY,
)
"""Every kind above, in report order."""
