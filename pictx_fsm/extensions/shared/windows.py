"""Reset windows, as pi-context 0.25 and notesoup 0.38 both define them (lifecycle R8–R15,
notesoup S10): which entries open a window, which message is a window's boot, how ids look
and how new ones are minted, and an index that answers "which window is this node in" in
O(1) per appended entry.

The two extensions differ only in their custom type names (``pi-context/*`` against
``notesoup/*``), so the predicates are methods of a :class:`WindowScheme` naming them; an
extension binds its scheme once (and notesoup's migration binds one that knows both). The
index over a session tree is :mod:`pictx_fsm.extensions.shared.window_index`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final

from attrs import frozen

from pictx_fsm.js import is_plain_object, string_property
from pictx_fsm.session.entries import CustomEntry, CustomMessageEntry

__all__ = [
    "ROOT_WINDOW_SUFFIX",
    "WINDOW_ID_PREFIX",
    "Window",
    "WindowScheme",
    "mint_window_id",
    "root_window_id",
    "session_prefix",
    "window_id_candidate",
]

WINDOW_ID_PREFIX: Final = "pcw:"
ROOT_WINDOW_SUFFIX: Final = ":root"


@frozen(kw_only=True)
class WindowScheme:
    """The custom types that make windows: markers open them (``custom`` entries with a
    non-empty string ``data.windowId``, R8), boots name them (``custom_message`` with
    ``details.windowId``, R14), continuations close a reset tail (D1)."""

    marker_types: frozenset[str]
    boot_types: frozenset[str]
    continuation_types: frozenset[str]

    def window_id_of_marker(self, entry: object) -> str | None:
        """R8: the window id a valid marker opens, else ``None`` (foreign types, numeric or
        empty ids, legacy ``reset-v2`` compactions are not markers)."""
        if not isinstance(entry, CustomEntry) or entry.custom_type not in self.marker_types:
            return None
        return string_property(entry.data, "windowId") or None

    def is_valid_marker(self, entry: object) -> bool:
        return self.window_id_of_marker(entry) is not None

    def boot_window_id(self, entry: object) -> str | None:
        """R14 (raw-entry form): the ``details.windowId`` of a boot ``custom_message``."""
        if not isinstance(entry, CustomMessageEntry) or entry.custom_type not in self.boot_types:
            return None
        return string_property(entry.details, "windowId")

    def is_boot_for(self, entry: object, window_id: str) -> bool:
        return self.boot_window_id(entry) == window_id

    def is_continuation(self, entry: object) -> bool:
        return (
            isinstance(entry, CustomMessageEntry) and entry.custom_type in self.continuation_types
        )

    def is_boot_message(self, message: Mapping[str, Any], window_id: str | None = None) -> bool:
        """R14 (projection form): role ``custom``, a boot type and (if given) the window id."""
        if message.get("role") != "custom" or message.get("customType") not in self.boot_types:
            return False
        if window_id is None:
            return True
        details = message.get("details")
        return is_plain_object(details) and details.get("windowId") == window_id


def session_prefix(session_id: str) -> str:
    return session_id[:8]


def root_window_id(session_id: str) -> str:
    """R10/S10: ``pcw:<first 8 chars of the session id>:root``.

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
    marker_type: str | None = None
    """The custom type of the marker that opened it (a migrated session holds two kinds)."""

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
