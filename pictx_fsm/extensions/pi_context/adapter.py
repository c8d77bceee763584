"""``LifecycleExtension``: plugs a
:class:`~pictx_fsm.extensions.pi_context.runtime.LifecycleRuntime` into the
model session as Pi would load pi-context.

The adapter owns no lifecycle logic: it creates a runtime for the session's tree at bind time
and again after every runtime replacement (Pi re-runs the factory on fork, resume and reload,
so the new session gets a fresh runtime that sees ``session_start``), subscribes to the hooks
the lifecycle reads (lifecycle §6), registers all eleven tools of
:data:`~pictx_fsm.extensions.pi_context.tools.TOOL_SPECS` with their execution modes (R18, N1, N2),
and forwards
tool calls and commands as :class:`~pictx_fsm.host.events.ToolCall` /
:class:`~pictx_fsm.host.events.Command` events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from pictx_fsm.extensions.pi_context.texts import PI_CONTEXT_COMMAND, WIPE_MEMORY_COMMAND
from pictx_fsm.extensions.pi_context.tools import TOOL_NAMES, TOOL_SPECS
from pictx_fsm.host.effects import HookResult
from pictx_fsm.host.events import HOOKS, Command, HookEvent, HostContext, ToolCall
from pictx_fsm.host.extension import (
    CommandHandler,
    Reply,
    ToolHandler,
    ToolInvocation,
    ToolOutput,
)
from pictx_fsm.session.tree import SessionTree

SEQUENTIAL_TOOLS: frozenset[str] = frozenset(
    spec.name for spec in TOOL_SPECS if spec.execution_mode == "sequential"
)

LIFECYCLE_HOOKS: frozenset[str] = frozenset(HOOKS)
"""The hooks pi-context subscribes to (lifecycle §6): every hook the lifecycle handles."""


class RuntimeLike(Protocol):
    """The one method of :class:`~pictx_fsm.extensions.pi_context.runtime.LifecycleRuntime` the
    host calls."""

    def handle(self, event: HookEvent, ctx: HostContext | None = None) -> HookResult: ...


RuntimeFactory = Callable[[SessionTree], RuntimeLike]


class LifecycleExtension:
    """pi-context's hooks, tools and commands, answered by a lifecycle runtime."""

    name = "pi-context"
    hooks = LIFECYCLE_HOOKS

    def __init__(self, runtime_factory: RuntimeFactory) -> None:
        self._factory = runtime_factory
        self.runtimes: list[RuntimeLike] = []
        """Every runtime created, oldest first (one per bind)."""

    @property
    def runtime(self) -> RuntimeLike:
        if not self.runtimes:
            raise RuntimeError("LifecycleExtension is not bound to a session yet")
        return self.runtimes[-1]

    @property
    def tools(self) -> Mapping[str, ToolHandler]:
        return dict.fromkeys(TOOL_NAMES, self._tool)

    @property
    def sequential_tools(self) -> frozenset[str]:
        return SEQUENTIAL_TOOLS

    @property
    def idle_commands(self) -> frozenset[str]:
        """``/wipe-memory`` waits for idle (pi-context's handler calls ``ctx.waitForIdle()``)."""
        return frozenset({WIPE_MEMORY_COMMAND})

    @property
    def commands(self) -> Mapping[str, CommandHandler]:
        return {
            WIPE_MEMORY_COMMAND: self._command(WIPE_MEMORY_COMMAND),
            PI_CONTEXT_COMMAND: self._command(PI_CONTEXT_COMMAND),
        }

    def bind(self, tree: SessionTree) -> None:
        self.runtimes.append(self._factory(tree))

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        return self.runtime.handle(event, ctx)

    def _tool(self, call: ToolInvocation, ctx: HostContext) -> HookResult | ToolOutput:
        call_event = ToolCall(name=call.name, arguments=call.arguments, tool_call_id=call.call_id)
        return self.runtime.handle(call_event, ctx)

    def _command(self, name: str) -> CommandHandler:
        def run(args: str, ctx: HostContext) -> HookResult | None:
            return self.runtime.handle(Command(name=name, args=args), ctx)

        return run
