"""pi-context's scripted tool calls: placeholders for history windows and items.

Scripted tool calls are written before the run, so they cannot know the ids of history
windows and items; :func:`resolve_arguments` fills placeholders (``{"$window": i}``,
``{"$item": [i, j]}``, indices modulo what exists) when the model's reply is generated. The
notes sandbox and its invariant are the family's (:mod:`pictx_fsm.extensions.shared.kit.
notes_sandbox`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

from pictx_fsm.extensions.pi_context.history import HistoryWindow, history_windows
from pictx_fsm.extensions.shared.kit.notes_sandbox import (
    ESCAPES,
    SECRET,
    SENTINEL,
    NotesConfined,
    NotesSandbox,
    sandbox_parent,
)
from pictx_fsm.session.tree import SessionTree

__all__ = [
    "ESCAPES",
    "ITEM_REF",
    "SECRET",
    "SENTINEL",
    "WINDOW_REF",
    "NotesConfined",
    "NotesSandbox",
    "resolve_arguments",
    "sandbox_parent",
]

JSON: TypeAlias = Any
WINDOW_REF: Final = "$window"
ITEM_REF: Final = "$item"


def resolve_arguments(arguments: Mapping[str, JSON], tree: SessionTree) -> Mapping[str, JSON]:
    """The call's arguments with every window/item placeholder replaced by a real id of the
    session's active branch (R76): ``{"$window": i}`` → the i-th window id,
    ``{"$item": [i, j]}`` → the j-th item id of the i-th window (modulo the counts)."""
    if not any(_is_ref(value) for value in arguments.values()):
        return arguments
    windows = history_windows(tree.branch(), tree.session_id)
    return {name: _resolved(value, windows) for name, value in arguments.items()}


def _is_ref(value: JSON) -> bool:
    return isinstance(value, Mapping) and (WINDOW_REF in value or ITEM_REF in value)


def _resolved(value: JSON, windows: Sequence[HistoryWindow]) -> JSON:
    if not _is_ref(value):
        return value
    if WINDOW_REF in value:
        return windows[int(value[WINDOW_REF]) % len(windows)].window_id
    window_index, item_index = value[ITEM_REF]
    items = windows[int(window_index) % len(windows)].items
    return items[int(item_index) % len(items)].item_id if items else "no-item"
