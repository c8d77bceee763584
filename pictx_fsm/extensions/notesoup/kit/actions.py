"""notesoup's actions beside the host actions: its commands (``/clear-memory`` with or without
a prompt, ``/notesoup``) and the world actions of the family's kit (another extension voiding
a boundary, hiding a boot or queueing at settle; automatic compaction switched mid-run)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final, TypeAlias

from attrs import frozen

from pictx_fsm.extensions.notesoup.texts import (
    CLEAR_MEMORY_COMMAND,
    CLEAR_MEMORY_COMMAND_ALIAS,
    NOTESOUP_COMMAND,
)
from pictx_fsm.extensions.notesoup.tools.specs import TOOL_NAMES
from pictx_fsm.extensions.notesoup.windows import SCHEME
from pictx_fsm.extensions.shared.kit import actions as family
from pictx_fsm.extensions.shared.kit.actions import (
    HideBoot,
    QueueAtSettle,
    SetAutomatic,
    Toggle,
    VoidNextBoundary,
)
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.session.entries import CompactionEntry, CustomMessageEntry
from pictx_fsm.testing import actions as host

__all__ = [
    "ACTION_TYPES",
    "KNOWN_TOOLS",
    "WORLD_ACTIONS",
    "Action",
    "ClearMemory",
    "action_from_json",
    "apply_action",
    "is_boundary_entry",
]

KNOWN_TOOLS: Final = frozenset({"echo", *TOOL_NAMES})


@frozen(kw_only=True)
class ClearMemory:
    """``/clear-memory [prompt]`` (``/cm`` when ``alias``), at any time (S16)."""

    KIND: ClassVar[str] = "clear_memory"
    prompt: str = ""
    alias: bool = False


Action: TypeAlias = (
    host.Action | ClearMemory | Toggle | VoidNextBoundary | HideBoot | QueueAtSettle | SetAutomatic
)
ACTION_TYPES: Final[Mapping[str, type[Any]]] = family.action_types(ClearMemory)
WORLD_ACTIONS: Final = family.WORLD_ACTIONS


def action_from_json(obj: Mapping[str, Any]) -> Action:
    action: Action = host.action_from_json(obj, ACTION_TYPES)
    return action


def is_boundary_entry(entry: object) -> bool:
    """A marker, one of notesoup's boundary messages, or a reset checkpoint."""
    if SCHEME.window_id_of_marker(entry) is not None:
        return True
    if isinstance(entry, CompactionEntry):
        return entry.summary == "" and entry.first_kept_entry_id == entry.id
    return isinstance(entry, CustomMessageEntry) and entry.custom_type.startswith("notesoup/")


def apply_action(session: ModelSession, action: Action, serial: int) -> bool:
    """A host action or one of notesoup's commands; ``False`` when the state does not allow
    it (and for :data:`WORLD_ACTIONS`, which the world applies)."""
    if isinstance(action, ClearMemory):
        name = CLEAR_MEMORY_COMMAND_ALIAS if action.alias else CLEAR_MEMORY_COMMAND
        return family.run_command(session, name, action.prompt)
    if isinstance(action, Toggle):
        return family.run_command(session, NOTESOUP_COMMAND, action.arg)
    return host.apply_action(session, action, serial, is_boundary_entry)
