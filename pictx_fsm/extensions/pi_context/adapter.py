"""``LifecycleExtension``: plugs a
:class:`~pictx_fsm.extensions.pi_context.runtime.LifecycleRuntime` into a host as Pi would
load pi-context (the family's adapter, :mod:`pictx_fsm.extensions.shared.adapter`): every
hook the lifecycle handles (lifecycle §6), all eleven tools of
:data:`~pictx_fsm.extensions.pi_context.tools.TOOL_SPECS` with their execution modes (R18,
N1, N2), ``/wipe-memory`` (which waits for idle) and ``/pi-context``.
"""

from __future__ import annotations

from pictx_fsm.extensions.pi_context.texts import PI_CONTEXT_COMMAND, WIPE_MEMORY_COMMAND
from pictx_fsm.extensions.pi_context.tools import TOOL_SPECS
from pictx_fsm.extensions.shared.adapter import (
    ALL_HOOKS,
    RuntimeExtension,
    RuntimeFactory,
    RuntimeLike,
)

__all__ = [
    "LIFECYCLE_HOOKS",
    "SEQUENTIAL_TOOLS",
    "LifecycleExtension",
    "RuntimeFactory",
    "RuntimeLike",
]

SEQUENTIAL_TOOLS: frozenset[str] = frozenset(
    spec.name for spec in TOOL_SPECS if spec.execution_mode == "sequential"
)

LIFECYCLE_HOOKS: frozenset[str] = ALL_HOOKS
"""The hooks pi-context subscribes to (lifecycle §6): every hook the lifecycle handles."""


class LifecycleExtension(RuntimeExtension):
    """pi-context's hooks, tools and commands, answered by a lifecycle runtime."""

    name = "pi-context"
    tool_specs = TOOL_SPECS
    command_names = (WIPE_MEMORY_COMMAND, PI_CONTEXT_COMMAND)
    idle_command_names = frozenset({WIPE_MEMORY_COMMAND})
    """``/wipe-memory`` waits for idle (pi-context's handler calls ``ctx.waitForIdle()``)."""
