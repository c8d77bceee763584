"""pi-context-management 0.6.0-beta.2 as declared machines (``models/context_management/``).

One frozen :class:`CmState` and a pure :func:`step` decide; :class:`ContextMemoryRuntime`
is the thin shell that carries the effects out on a host; model calls go through an injected
:class:`Generator`. See ``docs/context-management.md``.
"""

from __future__ import annotations

from pictx_fsm.context_management.machines import CmMachines, load_machines
from pictx_fsm.context_management.runtime import ContextMemoryRuntime, Generator
from pictx_fsm.context_management.state import CmState
from pictx_fsm.context_management.step import initial_state, step

__all__ = [
    "CmMachines",
    "CmState",
    "ContextMemoryRuntime",
    "Generator",
    "initial_state",
    "load_machines",
    "step",
]
