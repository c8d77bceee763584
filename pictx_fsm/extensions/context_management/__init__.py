"""pi-context-management 0.6.0-beta.2 as declared machines (``models/context_management/``).

One frozen :class:`CmState` and a pure :func:`step` decide; :class:`ContextMemoryRuntime`
is the thin shell that carries the effects out on a host; model calls go through an injected
:class:`Generator`. See ``docs/context-management.md``. Names are imported on first use, so
reading this package's data modules (the session audit does) does not load the machines.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from pictx_fsm.extensions.context_management._step import initial_state, step
    from pictx_fsm.extensions.context_management.machines import CmMachines, load_machines
    from pictx_fsm.extensions.context_management.runtime import ContextMemoryRuntime, Generator
    from pictx_fsm.extensions.context_management.state import CmState

_PUBLIC = {
    "CmMachines": "machines",
    "load_machines": "machines",
    "ContextMemoryRuntime": "runtime",
    "Generator": "runtime",
    "CmState": "state",
    "initial_state": "_step",
    "step": "_step",
}

__all__ = [
    "CmMachines",
    "CmState",
    "ContextMemoryRuntime",
    "Generator",
    "initial_state",
    "load_machines",
    "step",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
