"""pi-context's part of the session-file audit, as one :class:`CheckSet`.

The reset tail on every branch, window identity, budget messages once per window, native
summaries on marked branches, legacy resets, boundaries between a tool call and its result,
overflow storms, the shape and (profile 0.25.1) texts of pi-context's entries; the entries
whose loss on a damaged line changes the context (marker, boot, continuation); the windows,
markers and boots a file's summary counts; and what skeletons keep for all of that (a
marker's and a boot's window id, a compaction's legacy tag).
"""

from __future__ import annotations

from typing import Final

from pictx_fsm.conformance.checks import CheckSet
from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.walk import Shape
from pictx_fsm.extensions.pi_context.conformance.boundaries import (
    BranchSummaryCheck,
    LegacyResetCheck,
    NativeCompactionCheck,
    ToolPairCheck,
)
from pictx_fsm.extensions.pi_context.conformance.budget import (
    BudgetRepeatCheck,
    MultipleResetsCheck,
)
from pictx_fsm.extensions.pi_context.conformance.identity import (
    BootIdentityCheck,
    DuplicateWindowIdCheck,
)
from pictx_fsm.extensions.pi_context.conformance.kinds import KINDS
from pictx_fsm.extensions.pi_context.conformance.roles import (
    is_boot,
    is_pi_context_message,
    windows_of,
)
from pictx_fsm.extensions.pi_context.conformance.shapes import EntryShapeCheck, TextCheck
from pictx_fsm.extensions.pi_context.conformance.storms import EmptySummaryCheck, StormCheck
from pictx_fsm.extensions.pi_context.conformance.tail import TailCheck
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    DEFAULT_PROFILE,
    LEGACY_RESET_DETAILS_KEY,
    MARKER_TYPE,
    Profile,
)
from pictx_fsm.extensions.pi_context.windows import is_valid_marker
from pictx_fsm.host.overflow import PI_0_87, OverflowPatterns
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.session.skeleton import SkeletonKeep

__all__ = ["KEEP", "ResetBoundaries", "WindowCounts", "pi_context_checks"]

KEEP: Final = SkeletonKeep(
    custom_data={MARKER_TYPE: ("windowId",)},
    message_details={BOOT_TYPE: ("windowId",)},
    compaction_details=(LEGACY_RESET_DETAILS_KEY,),
)
"""What the branch checks read of pi-context's data once an entry's content is gone."""


class ResetBoundaries:
    """FM20: a valid marker and every pi-context message change the context when lost."""

    custom_types: Final = frozenset({MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE})

    def is_boundary(self, entry: Entry) -> bool:
        return is_valid_marker(entry) or is_pi_context_message(entry)

    def name(self, entry: Entry) -> str | None:
        return "reset marker" if is_valid_marker(entry) else None


class WindowCounts:
    """The root window plus one per valid marker, the markers, the boots (every branch)."""

    def counts(self, shape: Shape, ctx: AuditContext) -> list[tuple[str, int]]:
        markers = windows_of(ctx).markers_among(shape.nodes)  # R8
        boots = sum(
            is_boot(node.entry)
            for node in shape.nodes
            if type(node.entry) is not MessageEntry  # most nodes, never a boot
        )
        return [("windows", 1 + markers), ("markers", markers), ("boots", boots)]


def pi_context_checks(
    profile: Profile | str = DEFAULT_PROFILE, patterns: OverflowPatterns = PI_0_87
) -> CheckSet:
    """pi-context's checks for files written by the ``profile`` release, with Pi's overflow
    ``patterns`` (the model's context window is not in the file)."""
    profile = Profile.parse(profile)
    return CheckSet(
        kinds=KINDS,
        branch=(
            TailCheck(profile),
            BootIdentityCheck(),
            DuplicateWindowIdCheck(),
            MultipleResetsCheck(),
            BudgetRepeatCheck(),
            NativeCompactionCheck(),
            BranchSummaryCheck(),
            ToolPairCheck(),
            StormCheck(patterns),
        ),
        content=(EntryShapeCheck(), TextCheck(profile), LegacyResetCheck(), EmptySummaryCheck()),
        boundaries=(ResetBoundaries(),),
        summary=(WindowCounts(),),
        keep=KEEP,
    )
