"""The family's host adapter: an extension whose every hook, tool and command is answered by
a runtime made per session (pi-context's ``LifecycleRuntime``, notesoup's
``NotesoupRuntime``).

The adapter owns no lifecycle logic: it creates a runtime for the session's tree at bind time
and again after every runtime replacement (Pi re-runs the factory on fork, resume and reload,
so the new session gets a fresh runtime that sees ``session_start``), subscribes to every
hook, registers the extension's tools with their execution modes and forwards tool calls and
commands as :class:`~pictx_fsm.host.events.ToolCall` / :class:`~pictx_fsm.host.events.
Command` events. Each extension names its tools and commands in a subclass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, Protocol

from pictx_fsm.extensions.shared.tools.schema import ToolSpec
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

__all__ = ["ALL_HOOKS", "RuntimeExtension", "RuntimeFactory", "RuntimeLike"]

ALL_HOOKS: frozenset[str] = frozenset(HOOKS)


class RuntimeLike(Protocol):
    """The one method of a runtime the host calls."""

    def handle(self, event: HookEvent, ctx: HostContext | None = None) -> HookResult: ...


RuntimeFactory = Callable[[SessionTree], RuntimeLike]


class RuntimeExtension:
    """An extension answered by a runtime per session; subclasses name it, its tools and its
    commands."""

    name: ClassVar[str]
    hooks: ClassVar[frozenset[str]] = ALL_HOOKS
    tool_specs: ClassVar[Sequence[ToolSpec]]
    command_names: ClassVar[Sequence[str]]
    idle_command_names: ClassVar[frozenset[str]] = frozenset()
    """Commands whose handler first waits for idle (``ctx.waitForIdle()``)."""

    def __init__(self, runtime_factory: RuntimeFactory) -> None:
        self._factory = runtime_factory
        self.runtimes: list[RuntimeLike] = []
        """Every runtime created, oldest first (one per bind)."""

    @property
    def runtime(self) -> RuntimeLike:
        if not self.runtimes:
            raise RuntimeError(f"{type(self).__name__} is not bound to a session yet")
        return self.runtimes[-1]

    @property
    def tools(self) -> Mapping[str, ToolHandler]:
        return {spec.name: self._tool for spec in self.tool_specs}

    @property
    def sequential_tools(self) -> frozenset[str]:
        return frozenset(s.name for s in self.tool_specs if s.execution_mode == "sequential")

    @property
    def idle_commands(self) -> frozenset[str]:
        return self.idle_command_names

    @property
    def commands(self) -> Mapping[str, CommandHandler]:
        return {name: self._command(name) for name in self.command_names}

    def bind(self, tree: SessionTree) -> None:
        self.runtimes.append(self._factory(tree))

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        return self.runtime.handle(event, ctx)

    def _tool(self, call: ToolInvocation, ctx: HostContext) -> HookResult | ToolOutput:
        event = ToolCall(name=call.name, arguments=call.arguments, tool_call_id=call.call_id)
        return self.runtime.handle(event, ctx)

    def _command(self, name: str) -> CommandHandler:
        def run(args: str, ctx: HostContext) -> HookResult | None:
            return self.runtime.handle(Command(name=name, args=args), ctx)

        return run
