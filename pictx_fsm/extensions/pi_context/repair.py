"""Boot-repair tail classification (lifecycle R64–R65, D4), as pure functions.

A reset window's tail is what follows its marker on the active branch. Repair may only
complete a tail that is still bare — the marker, perhaps its boot, and metadata — because
appending a boot after later conversation would move the window's boundary (failure mode
"repair after later work"). Each entry is first reduced to a :class:`TailKind`, so the
decision is a small function of a list of kinds that CrossHair can check exhaustively.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.extensions.pi_context.windows import boot_window_id, is_continuation, is_valid_marker
from pictx_fsm.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
)

__all__ = [
    "REFUSED",
    "TailKind",
    "TailVerdict",
    "classify_tail",
    "repair_twice",
    "repaired_tail",
    "tail_kind",
]


class TailKind(enum.Enum):
    BOOT = "boot"
    """A raw boot for this window (counted even when a later context_edit hides it)."""
    CONTINUATION = "continuation"
    MARKER = "marker"
    MESSAGE = "message"
    OTHER_CUSTOM_MESSAGE = "other_custom_message"
    SUMMARY = "summary"
    """A compaction or branch summary."""
    METADATA = "metadata"
    """model/thinking changes, plain custom entries, labels, context edits, session info."""


class TailVerdict(enum.Enum):
    INTACT = "intact"
    NEEDS_BOOT = "needs_boot"
    NEEDS_CONTINUATION = "needs_continuation"
    NEEDS_BOTH = "needs_both"
    REFUSED = "refused"

    @property
    def needs_boot(self) -> bool:
        return self in (TailVerdict.NEEDS_BOOT, TailVerdict.NEEDS_BOTH)

    @property
    def needs_continuation(self) -> bool:
        return self in (TailVerdict.NEEDS_CONTINUATION, TailVerdict.NEEDS_BOTH)


def tail_kind(entry: object, window_id: str) -> TailKind:
    """The role one tail entry plays for the repair decision of ``window_id``."""
    if boot_window_id(entry) == window_id:
        return TailKind.BOOT
    if is_continuation(entry):
        return TailKind.CONTINUATION
    if is_valid_marker(entry):
        return TailKind.MARKER
    if isinstance(entry, MessageEntry):
        return TailKind.MESSAGE
    if isinstance(entry, CustomMessageEntry):
        return TailKind.OTHER_CUSTOM_MESSAGE
    if isinstance(entry, CompactionEntry | BranchSummaryEntry):
        return TailKind.SUMMARY
    return TailKind.METADATA


_CONVERSATION = frozenset(
    {TailKind.MESSAGE, TailKind.OTHER_CUSTOM_MESSAGE, TailKind.SUMMARY, TailKind.MARKER}
)


REFUSED = TailVerdict.REFUSED


def _appends(verdict: TailVerdict) -> bool:
    """Repair would append something (a boot, a continuation or both)."""
    return verdict.needs_boot or verdict.needs_continuation


def classify_tail(
    kinds: Sequence[TailKind], profile: Profile, boot_visible: bool = False
) -> TailVerdict:
    """What repair should append for a reset window whose tail has these kinds.

    ``boot_visible`` is R64 step 2 (a boot for the window in Pi's projection), which 0.25.0
    checks first; 0.25.1 judges the raw tail only (D4).

    post: profile is not Profile.V0_25_0 or not __return__.needs_continuation
    post: profile is Profile.V0_25_0 or __return__ is not TailVerdict.NEEDS_BOOT
    post: not _appends(__return__) or not any(k in _CONVERSATION for k in kinds)
    post: __return__ is not TailVerdict.NEEDS_CONTINUATION or TailKind.BOOT in kinds
    """
    if profile is Profile.V0_25_0:
        return _classify_0_25_0(kinds, boot_visible)
    return _classify_0_25_1(kinds)


def _classify_0_25_0(kinds: Sequence[TailKind], boot_visible: bool) -> TailVerdict:
    if boot_visible:
        # A boot somewhere in the projection satisfies ensureBoot in 0.25.0, even one that
        # only survived as kept context; that check precedes the tail rules.
        return TailVerdict.INTACT
    if TailKind.BOOT in kinds:
        return TailVerdict.REFUSED  # a raw boot hidden by a context edit: never re-append
    if any(k in _CONVERSATION or k is TailKind.CONTINUATION for k in kinds):
        return TailVerdict.REFUSED
    return TailVerdict.NEEDS_BOOT


def _classify_0_25_1(kinds: Sequence[TailKind]) -> TailVerdict:
    boot = continuation = False
    for kind in kinds:
        if kind in _CONVERSATION:
            return TailVerdict.REFUSED
        if kind is TailKind.BOOT:
            if boot or continuation:
                return TailVerdict.REFUSED
            boot = True
        elif kind is TailKind.CONTINUATION:
            if continuation or not boot:
                return TailVerdict.REFUSED
            continuation = True
    if boot and continuation:
        return TailVerdict.INTACT
    return TailVerdict.NEEDS_CONTINUATION if boot else TailVerdict.NEEDS_BOTH


def repaired_tail(kinds: Sequence[TailKind], verdict: TailVerdict) -> list[TailKind]:
    """The tail after repair appended what ``verdict`` asks for, in order."""
    tail = list(kinds)
    if verdict.needs_boot:
        tail.append(TailKind.BOOT)
    if verdict.needs_continuation:
        tail.append(TailKind.CONTINUATION)
    return tail


def repair_twice(kinds: Sequence[TailKind], profile: Profile) -> TailVerdict:
    """The verdict of a second repair right after a first one ran on ``kinds`` (R64: a
    reload, or navigating back, appends nothing; D4: "complete tail → nothing").

    post: __return__ in (TailVerdict.INTACT, TailVerdict.REFUSED)
    post: (__return__ is TailVerdict.REFUSED) == (classify_tail(kinds, profile) is REFUSED)
    """
    first = classify_tail(kinds, profile)
    # A boot the first repair appended is visible in the projection (0.25.0 checks that).
    return classify_tail(repaired_tail(kinds, first), profile, boot_visible=first.needs_boot)
