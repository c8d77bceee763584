"""pi-context's lifecycle as one pure step over a frozen state.

- :func:`step` — ``step(state, event, ctx, services) -> (state', HookResult)``;
- :class:`LifecycleState` — every machine's configuration plus the data its states hold;
- :class:`Services` — what a step reads besides them (tree, usage, settings, notes, clock, rng);
- :func:`load_lifecycle` — the machines declared in ``models/``, bound to :data:`FACTS` (the
  guards) and :data:`ACTIONS` (the reducers the transitions name);
- :data:`HOOKS` — the host hooks the lifecycle handles; :data:`HOOK_EVENTS` — the machine
  events each raises.

The package's own declarations are loaded and validated on import ("fail at definition
time"): a broken model stops the import with a message naming the document, the transition
and the reference.
"""

from __future__ import annotations

from pictx_fsm.extensions.pi_context.lifecycle._actions import ACTIONS, Action
from pictx_fsm.extensions.pi_context.lifecycle._facts import (
    FACTS,
    STATE_FACTS,
    Fact,
    FactEnv,
    FactError,
    Facts,
    in_state,
)
from pictx_fsm.extensions.pi_context.lifecycle._machines import (
    MACHINE_NAMES,
    Lifecycle,
    LifecycleMachine,
    build_lifecycle,
    load_lifecycle,
)
from pictx_fsm.extensions.pi_context.lifecycle._services import (
    Clock,
    Services,
    SettingsFactory,
    pi_file_settings,
)
from pictx_fsm.extensions.pi_context.lifecycle._state import LifecycleState, Staged
from pictx_fsm.extensions.pi_context.lifecycle._step import (
    HOOK_EVENTS,
    TOOL_EVENTS,
    machine_events,
    step,
    toggle_completions,
)
from pictx_fsm.extensions.pi_context.lifecycle._turn import Raised, Turn
from pictx_fsm.host.events import HOOKS

__all__ = [
    "ACTIONS",
    "FACTS",
    "HOOKS",
    "HOOK_EVENTS",
    "MACHINE_NAMES",
    "STATE_FACTS",
    "TOOL_EVENTS",
    "Action",
    "Clock",
    "Fact",
    "FactEnv",
    "FactError",
    "Facts",
    "Lifecycle",
    "LifecycleMachine",
    "LifecycleState",
    "Raised",
    "Services",
    "SettingsFactory",
    "Staged",
    "Turn",
    "build_lifecycle",
    "in_state",
    "load_lifecycle",
    "machine_events",
    "pi_file_settings",
    "step",
    "toggle_completions",
]

load_lifecycle()
