"""Window identity (lifecycle R8–R15): markers, root ids, minted ids, boots.

pi-context's window scheme over the family's shared definitions
(:mod:`pictx_fsm.extensions.shared.windows`): the predicates here are the shared ones bound
to pi-context's custom types; the per-entry bookkeeping that answers "which window is the
leaf in" in O(1) lives in :mod:`pictx_fsm.session.tree`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE, CONTINUATION_TYPE, MARKER_TYPE
from pictx_fsm.extensions.shared.windows import (
    Window,
    WindowScheme,
    mint_window_id,
    root_window_id,
    session_prefix,
    uuid_draws,
    window_id_candidate,
)

__all__ = [
    "SCHEME",
    "Window",
    "boot_window_id",
    "is_boot_for",
    "is_boot_message",
    "is_continuation",
    "is_valid_marker",
    "mint_window_id",
    "root_window_id",
    "session_prefix",
    "uuid_draws",
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
    """The window id a valid marker opens, else ``None``."""
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
