"""Boot-repair tail classification (lifecycle R64–R65, D4; notesoup S73–S74), as pure
functions shared by pi-context and notesoup (whose repair is 0.25.1's, SAME as D4).

A reset window's tail is what follows its marker on the active branch. Repair may only
complete a tail that is still bare — the marker, perhaps its boot, and metadata — because
appending a boot after later conversation would move the window's boundary (failure mode
"repair after later work"). Each entry is first reduced to a :class:`TailKind`, so the
decision is a small function of a list of kinds that CrossHair can check exhaustively.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from pictx_fsm.extensions.shared.windows import WindowScheme
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
    "classify_boot_first",
    "classify_raw_tail",
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


def tail_kind(entry: object, window_id: str, scheme: WindowScheme) -> TailKind:
    """The role one tail entry plays for the repair decision of ``window_id``."""
    if scheme.boot_window_id(entry) == window_id:
        return TailKind.BOOT
    if scheme.is_continuation(entry):
        return TailKind.CONTINUATION
    if scheme.is_valid_marker(entry):
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


def classify_boot_first(kinds: Sequence[TailKind], boot_visible: bool) -> TailVerdict:
    """pi-context 0.25.0: a boot for the window anywhere in Pi's projection (R64 step 2)
    satisfies repair before the tail is looked at; otherwise only a bare tail gets a boot.

    post: __return__ is not TailVerdict.NEEDS_CONTINUATION
    post: __return__ is not TailVerdict.NEEDS_BOTH
    post: not _appends(__return__) or not any(k in _CONVERSATION for k in kinds)
    """
    if boot_visible:
        # A boot somewhere in the projection satisfies ensureBoot in 0.25.0, even one that
        # only survived as kept context; that check precedes the tail rules.
        return TailVerdict.INTACT
    if TailKind.BOOT in kinds:
        return TailVerdict.REFUSED  # a raw boot hidden by a context edit: never re-append
    if any(k in _CONVERSATION or k is TailKind.CONTINUATION for k in kinds):
        return TailVerdict.REFUSED
    return TailVerdict.NEEDS_BOOT


def classify_raw_tail(kinds: Sequence[TailKind]) -> TailVerdict:
    """D4 (pi-context 0.25.1, notesoup S73–S74): the raw tail alone decides — one boot, then
    one continuation, with only metadata around them; anything else refuses.

    post: __return__ is not TailVerdict.NEEDS_BOOT
    post: not _appends(__return__) or not any(k in _CONVERSATION for k in kinds)
    post: __return__ is not TailVerdict.NEEDS_CONTINUATION or TailKind.BOOT in kinds
    """
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
