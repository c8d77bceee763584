"""Window identity (lifecycle R8–R15): markers, root ids, minted ids, boots, and the index.

pi-context's window scheme over the family's shared definitions
(:mod:`pictx_fsm.extensions.shared.windows`): the predicates here are the shared ones bound
to pi-context's custom types. :class:`WindowIndex` is pi-context's index over a session tree
(``WindowIndex.of(tree)``, kept in step with it entry by entry): the family's index
(:mod:`pictx_fsm.extensions.shared.window_index`) over pi-context's scheme. Each node's
window, the pi-context message types already in that window on its path, the window's first
boot and whether a continuation followed are derived from the parent's in O(1). The lifecycle
asks those questions on every hook (R9, R11, R13), so they are answered from the leaf's facts
without walking the branch; walking is only needed for what genuinely depends on the path
(the tail after a marker).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, ClassVar, Final

from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE, CONTINUATION_TYPE, MARKER_TYPE
from pictx_fsm.extensions.shared.window_index import SchemeWindowIndex, WindowFacts
from pictx_fsm.extensions.shared.windows import (
    Window,
    WindowScheme,
    mint_window_id,
    root_window_id,
    session_prefix,
    window_id_candidate,
)
from pictx_fsm.js import is_plain_object, string_property

__all__ = [
    "NO_WINDOW_ID",
    "SCHEME",
    "Window",
    "WindowFacts",
    "WindowIndex",
    "boot_key",
    "boot_window_id",
    "is_boot_for",
    "is_boot_message",
    "is_continuation",
    "is_valid_marker",
    "mint_window_id",
    "root_window_id",
    "session_prefix",
    "window_id_candidate",
    "window_id_of_marker",
]

SCHEME: Final = WindowScheme(
    marker_types=frozenset({MARKER_TYPE}),
    boot_types=frozenset({BOOT_TYPE}),
    continuation_types=frozenset({CONTINUATION_TYPE}),
)
"""pi-context 0.25's windows: ``pi-context/reset-marker``, ``pi-context/boot``,
``pi-context/continuation``."""


def is_valid_marker(entry: object) -> bool:
    """R8: a ``custom`` entry of the marker type whose ``data.windowId`` is a non-empty string."""
    return SCHEME.window_id_of_marker(entry) is not None


def window_id_of_marker(entry: object) -> str | None:
    """The window id a valid marker opens, else ``None`` (legacy ``reset-v2`` compactions,
    numeric or empty ids and foreign types are not markers)."""
    return SCHEME.window_id_of_marker(entry)


def boot_window_id(entry: object) -> str | None:
    """R14 (raw-entry form): the ``details.windowId`` of a boot ``custom_message``."""
    return SCHEME.boot_window_id(entry)


def is_boot_for(entry: object, window_id: str) -> bool:
    """R14: a raw boot entry for exactly this window."""
    return SCHEME.is_boot_for(entry, window_id)


def is_continuation(entry: object) -> bool:
    return SCHEME.is_continuation(entry)


def is_boot_message(message: Mapping[str, Any], window_id: str | None = None) -> bool:
    """R14 (projection form): role ``custom``, boot type, and (if given) the same window id."""
    return SCHEME.is_boot_message(message, window_id)


NO_WINDOW_ID: Final = object()
""":func:`boot_key` of a boot whose ``details.windowId`` is not a string: it names no window."""


def boot_key(message: Any) -> Hashable | None:
    """R14 (projection form) as a transcript tag
    (:data:`~pictx_fsm.session.transcript.Tag`): a boot's window id (:data:`NO_WINDOW_ID`
    when it has none), ``None`` for any other message. The tree's transcripts track it, so
    R64 and R67 find a window's boot in a request without scanning it."""
    if not is_plain_object(message):
        return None
    if message.get("role") != "custom" or message.get("customType") != BOOT_TYPE:
        return None
    window_id = string_property(message.get("details"), "windowId")
    return NO_WINDOW_ID if window_id is None else window_id


class WindowIndex(SchemeWindowIndex):
    """pi-context's window identity over one session tree, kept in step with it: the family's
    index over pi-context's :data:`SCHEME`, registered on the tree by this type
    (``WindowIndex.of(tree)``)."""

    scheme: ClassVar[WindowScheme] = SCHEME


def __getattr__(name: str) -> object:
    """``uuid_draws`` moved to :mod:`pictx_fsm.session.ids` (0.2)."""
    from pictx_fsm._moved import moved_attribute

    return moved_attribute(__name__, name)
