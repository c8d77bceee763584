"""``NotesoupExtension``: notesoup's hooks, tools and commands on any host that speaks the
host contract (:mod:`pictx_fsm.host.extension`), answered by a :class:`~.runtime.
NotesoupRuntime` made per session.

The adapter owns no lifecycle logic: it creates a runtime for the session's tree at bind time
and after every runtime replacement (Pi re-runs the factory on fork, resume and reload),
subscribes to every hook, registers the eleven tools of S4 (``notes_write`` and
``notes_update`` sequential, S91) and the commands ``/notesoup``, ``/clear-memory`` and
``/cm`` (S4, S15).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, Protocol

from pictx_fsm.extensions.notesoup.lifecycle import COMMANDS
from pictx_fsm.extensions.notesoup.tools.specs import TOOL_NAMES, TOOL_SPECS
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

__all__ = ["NOTESOUP_HOOKS", "NotesoupExtension", "RuntimeFactory", "RuntimeLike"]

NOTESOUP_HOOKS: Final = frozenset(HOOKS)
SEQUENTIAL_TOOLS: Final = frozenset(s.name for s in TOOL_SPECS if s.execution_mode == "sequential")


class RuntimeLike(Protocol):
    def handle(self, event: HookEvent, ctx: HostContext | None = None) -> HookResult: ...


RuntimeFactory = Callable[[SessionTree], RuntimeLike]


class NotesoupExtension:
    """notesoup's hooks, tools and commands, answered by a runtime per session."""

    name = "notesoup"
    hooks = NOTESOUP_HOOKS

    def __init__(self, runtime_factory: RuntimeFactory) -> None:
        self._factory = runtime_factory
        self.runtimes: list[RuntimeLike] = []

    @property
    def runtime(self) -> RuntimeLike:
        if not self.runtimes:
            raise RuntimeError("NotesoupExtension is not bound to a session yet")
        return self.runtimes[-1]

    @property
    def tools(self) -> Mapping[str, ToolHandler]:
        return dict.fromkeys(TOOL_NAMES, self._tool)

    @property
    def sequential_tools(self) -> frozenset[str]:
        return SEQUENTIAL_TOOLS

    @property
    def commands(self) -> Mapping[str, CommandHandler]:
        return {name: self._command(name) for name in COMMANDS}

    @property
    def idle_commands(self) -> frozenset[str]:
        """None: ``/clear-memory`` and ``/notesoup`` run at once, mid-run too (S16, S17)."""
        return frozenset()

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
