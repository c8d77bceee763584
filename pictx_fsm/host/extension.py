"""The host-neutral extension protocol of the model session.

An extension declares the hooks it subscribes to (the ``HOOK`` names of
:mod:`pictx_fsm.host.events`), its tools and its commands. The session binds every extension to the
session tree at startup and again after each runtime replacement (fork, resume, reload: Pi
re-runs the extension factory then, pi-host §2), and calls subscribed extensions in load order
with a hook event and the ``ctx`` facts. A handler returns what Pi's handler would return:
a :class:`~pictx_fsm.host.effects.HookResult` (value + side effects), a
:class:`SuppliedCompaction` (Pi's ``{compaction}`` answer to ``session_before_compact``, which
the lifecycle never gives), or ``None`` (``undefined``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeAlias

from attrs import field, frozen

from pictx_fsm.host.effects import HookResult
from pictx_fsm.host.events import HOOKS, HookEvent, HostContext
from pictx_fsm.session.entries import ABSENT
from pictx_fsm.session.tree import SessionTree

__all__ = [
    "HOST_HOOKS",
    "JSON",
    "BaseExtension",
    "CommandHandler",
    "Extension",
    "Reply",
    "SuppliedCompaction",
    "ToolHandler",
    "ToolInvocation",
    "ToolOutput",
]

JSON: TypeAlias = Any

HOST_HOOKS: frozenset[str] = frozenset(HOOKS)
"""Hooks delivered to extensions as typed events; every other hook is only logged."""


@frozen(kw_only=True)
class SuppliedCompaction:
    """``{compaction: {summary, firstKeptEntryId, details?}}`` from ``session_before_compact``:
    the host writes this compaction (``fromHook: true``) instead of summarizing."""

    summary: str
    first_kept_entry_id: str
    details: JSON = ABSENT


Reply: TypeAlias = HookResult | SuppliedCompaction | None


@frozen(kw_only=True)
class ToolInvocation:
    """One ``toolCall`` block of an assistant message."""

    call_id: str
    name: str
    arguments: Mapping[str, JSON] = field(factory=dict)
    parent_call_id: str | None = None
    """The calling tool call's id when another tool ran this one (``ctx.executeTool()``)."""


@frozen(kw_only=True)
class ToolOutput:
    """A tool's result as Pi stores it: text content, ``isError``, ``terminate``, details."""

    text: str
    is_error: bool = False
    terminate: bool = False
    details: JSON = ABSENT
    nested_calls: tuple[JSON, ...] = ()
    """The calls this tool ran through ``ctx.executeTool()`` (Pi's ``nestedCalls`` record)."""


ToolHandler: TypeAlias = Callable[[ToolInvocation, HostContext], "HookResult | ToolOutput"]
"""A tool's ``execute``; a :class:`HookResult` carries a ``ToolResult`` value plus effects."""
CommandHandler: TypeAlias = Callable[[str, HostContext], "HookResult | None"]
"""A command's handler, called with the argument text."""


class Extension(Protocol):
    """What the model session needs from an extension."""

    @property
    def name(self) -> str: ...

    @property
    def hooks(self) -> frozenset[str]: ...

    @property
    def tools(self) -> Mapping[str, ToolHandler]: ...

    @property
    def sequential_tools(self) -> frozenset[str]:
        """Tools registered with ``executionMode: "sequential"``: a batch holding one of
        them runs one call at a time (pi-agent-core ``executeToolCalls``)."""

    @property
    def commands(self) -> Mapping[str, CommandHandler]: ...

    @property
    def idle_commands(self) -> frozenset[str]:
        """Commands whose handler first waits for the agent to be idle
        (``ctx.waitForIdle()``): a host runs them only between runs."""

    def bind(self, tree: SessionTree) -> None:
        """Called at startup and after every runtime replacement, before ``session_start``."""

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        """Handle one subscribed hook event."""


class BaseExtension:
    """An extension that subscribes to nothing; subclass and override what you need."""

    name: str = "extension"
    hooks: frozenset[str] = frozenset()

    @property
    def tools(self) -> Mapping[str, ToolHandler]:
        return {}

    @property
    def sequential_tools(self) -> frozenset[str]:
        return frozenset()

    @property
    def commands(self) -> Mapping[str, CommandHandler]:
        return {}

    @property
    def idle_commands(self) -> frozenset[str]:
        return frozenset()

    def bind(self, tree: SessionTree) -> None:
        """Nothing to rebuild by default."""

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        return None
