"""notesoup's lifecycle as one pure step over a frozen state.

- :func:`step` — ``step(state, event, ctx, services) -> (state', HookResult)``;
- :class:`NotesoupState` — every machine's configuration plus the data its states hold;
- :class:`Services` — what a step reads besides them;
- :func:`load_machines` — the machines of ``models/notesoup/``, bound to :data:`FACTS` and
  :data:`ACTIONS`.

The package's declarations are loaded and validated on import ("fail at definition time").
"""

from __future__ import annotations

from pictx_fsm.extensions.notesoup.lifecycle.actions import ACTIONS, Action
from pictx_fsm.extensions.notesoup.lifecycle.facts import FACTS, STATE_FACTS, FactEnv, in_state
from pictx_fsm.extensions.notesoup.lifecycle.machines import (
    FAMILY,
    MACHINE_NAMES,
    build_machines,
    load_machines,
)
from pictx_fsm.extensions.notesoup.lifecycle.services import Clock, Services, SettingsFactory
from pictx_fsm.extensions.notesoup.lifecycle.state import NotesoupState, Request, Staged
from pictx_fsm.extensions.notesoup.lifecycle.step import (
    COMMANDS,
    HOOK_EVENTS,
    TOOL_EVENTS,
    machine_events,
    step,
    toggle_completions,
)
from pictx_fsm.extensions.notesoup.lifecycle.turn import Turn
from pictx_fsm.extensions.notesoup.notes.home import NotesHome

__all__ = [
    "ACTIONS",
    "COMMANDS",
    "FACTS",
    "FAMILY",
    "HOOK_EVENTS",
    "MACHINE_NAMES",
    "STATE_FACTS",
    "TOOL_EVENTS",
    "Action",
    "Clock",
    "FactEnv",
    "NotesHome",
    "NotesoupState",
    "Request",
    "Services",
    "SettingsFactory",
    "Staged",
    "Turn",
    "build_machines",
    "in_state",
    "load_machines",
    "machine_events",
    "step",
    "toggle_completions",
]

load_machines()
