"""Window identity (lifecycle R8–R15): markers, root ids, minted ids, boots.

The predicates here are pure functions of one entry; the per-entry bookkeeping that answers
"which window is the leaf in" in O(1) lives in :mod:`pictx_fsm.session.tree`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from attrs import frozen

from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    MARKER_TYPE,
    ROOT_WINDOW_SUFFIX,
    WINDOW_ID_PREFIX,
)
from pictx_fsm.js import is_plain_object
from pictx_fsm.session.entries import CustomEntry, CustomMessageEntry


def is_valid_marker(entry: object) -> bool:
    """R8: a ``custom`` entry of the marker type whose ``data.windowId`` is a non-empty string."""
    return window_id_of_marker(entry) is not None


def window_id_of_marker(entry: object) -> str | None:
    """The window id a valid marker opens, else ``None`` (legacy ``reset-v2`` compactions,
    numeric or empty ids and foreign types are not markers)."""
    if not isinstance(entry, CustomEntry) or entry.custom_type != MARKER_TYPE:
        return None
    data = entry.data
    if not is_plain_object(data):
        return None
    window_id = data.get("windowId")
    return window_id if isinstance(window_id, str) and window_id else None


def boot_window_id(entry: object) -> str | None:
    """R14 (raw-entry form): the ``details.windowId`` of a boot ``custom_message``."""
    if not isinstance(entry, CustomMessageEntry) or entry.custom_type != BOOT_TYPE:
        return None
    details = entry.details
    if not is_plain_object(details):
        return None
    window_id = details.get("windowId")
    return window_id if isinstance(window_id, str) else None


def is_boot_for(entry: object, window_id: str) -> bool:
    """R14: a raw boot entry for exactly this window."""
    return boot_window_id(entry) == window_id


def is_continuation(entry: object) -> bool:
    return isinstance(entry, CustomMessageEntry) and entry.custom_type == CONTINUATION_TYPE


def is_boot_message(message: Mapping[str, Any], window_id: str | None = None) -> bool:
    """R14 (projection form): role ``custom``, boot type, and (if given) the same window id."""
    if message.get("role") != "custom" or message.get("customType") != BOOT_TYPE:
        return False
    if window_id is None:
        return True
    details = message.get("details")
    return is_plain_object(details) and details.get("windowId") == window_id


def session_prefix(session_id: str) -> str:
    return session_id[:8]


def root_window_id(session_id: str) -> str:
    """R10: ``pcw:<first 8 chars of the session id>:root``.

    post: __return__.startswith("pcw:") and __return__.endswith(":root")
    """
    return f"{WINDOW_ID_PREFIX}{session_prefix(session_id)}{ROOT_WINDOW_SUFFIX}"


def window_id_candidate(session_id: str, draw: str) -> str:
    """R12 shape: ``pcw:<8 chars of session id>:<first 8 hex digits of a random UUID>``."""
    return f"{WINDOW_ID_PREFIX}{session_prefix(session_id)}:{draw[:8]}"


def mint_window_id(session_id: str, draws: Iterable[str], taken: Iterable[str]) -> str:
    """R12: the first candidate, from a stream of random UUID hex draws, that no valid marker on
    the active branch already uses. ``draws`` must eventually yield a free candidate.

    post: __return__ not in set(taken)
    post: __return__.startswith("pcw:" + session_id[:8] + ":")
    raises: ValueError
    """
    taken_ids = taken if isinstance(taken, AbstractSet) else set(taken)
    for draw in draws:
        candidate = window_id_candidate(session_id, draw)
        if candidate not in taken_ids:
            return candidate
    raise ValueError("the random source ran out before a free window id was drawn")


def uuid_draws(rng: random.Random) -> Iterable[str]:
    """An endless stream of random UUID4 hex strings from an injected random source."""
    while True:  # ``uuid.UUID(int=…, version=4).hex``, without building the object
        value = rng.getrandbits(128) & _UUID4_KEEP | _UUID4_SET
        yield f"{value:032x}"


_UUID4_KEEP = ~((0xC000 << 48) | (0xF000 << 64))
"""Everything but the variant and version bits (RFC 4122)."""
_UUID4_SET = (0x8000 << 48) | (4 << 76)


@frozen(kw_only=True)
class Window:
    """One context window on a branch: opened by a valid marker, or the root window.

    ``previous`` links to the window that was current before this marker, so the chain is the
    list of windows on the path to any entry (R15 previous id, R12 collision set).
    """

    window_id: str
    marker_id: str | None
    marker_timestamp: str | None
    previous: Window | None
    depth: int
    """Number of markers on the path up to and including this window's marker (root: 0)."""

    @property
    def is_root(self) -> bool:
        return self.marker_id is None

    @property
    def previous_window_id(self) -> str | None:
        return None if self.previous is None else self.previous.window_id

    def chain(self) -> Iterable[Window]:
        """This window, then every earlier window on the branch, back to the root."""
        window: Window | None = self
        while window is not None:
            yield window
            window = window.previous

    def marker_window_ids(self) -> frozenset[str]:
        """The ids of every valid marker on the branch up to here (R12 collision set)."""
        return frozenset(w.window_id for w in self.chain() if not w.is_root)
