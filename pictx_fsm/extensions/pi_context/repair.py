"""Boot-repair tail classification for pi-context's two profiles (lifecycle R64–R65, D4).

The tail kinds and both decision tables are the family's
(:mod:`pictx_fsm.extensions.shared.repair`); here they are bound to pi-context's window
scheme and chosen by profile: 0.25.0 checks Pi's projection for a boot first, 0.25.1 (D4)
judges the raw tail alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.extensions.pi_context.windows import SCHEME
from pictx_fsm.extensions.shared import repair as shared
from pictx_fsm.extensions.shared.repair import (
    REFUSED,
    TailKind,
    TailVerdict,
    classify_boot_first,
    classify_raw_tail,
    repaired_tail,
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


def tail_kind(entry: object, window_id: str) -> TailKind:
    """The role one tail entry plays for the repair decision of ``window_id``."""
    return shared.tail_kind(entry, window_id, SCHEME)


def classify_tail(
    kinds: Sequence[TailKind], profile: Profile, boot_visible: bool = False
) -> TailVerdict:
    """What repair should append for a reset window whose tail has these kinds.

    ``boot_visible`` is R64 step 2 (a boot for the window in Pi's projection), which 0.25.0
    checks first; 0.25.1 judges the raw tail only (D4).

    post: profile is not Profile.V0_25_0 or not __return__.needs_continuation
    post: profile is Profile.V0_25_0 or __return__ is not TailVerdict.NEEDS_BOOT
    post: __return__ is not TailVerdict.NEEDS_CONTINUATION or TailKind.BOOT in kinds
    """
    if profile is Profile.V0_25_0:
        return classify_boot_first(kinds, boot_visible)
    return classify_raw_tail(kinds)


def repair_twice(kinds: Sequence[TailKind], profile: Profile) -> TailVerdict:
    """The verdict of a second repair right after a first one ran on ``kinds`` (R64: a
    reload, or navigating back, appends nothing; D4: "complete tail → nothing").

    post: __return__ in (TailVerdict.INTACT, TailVerdict.REFUSED)
    post: (__return__ is TailVerdict.REFUSED) == (classify_tail(kinds, profile) is REFUSED)
    """
    first = classify_tail(kinds, profile)
    # A boot the first repair appended is visible in the projection (0.25.0 checks that).
    return classify_tail(repaired_tail(kinds, first), profile, boot_visible=first.needs_boot)
