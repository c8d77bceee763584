"""pictx_fsm: the context-window lifecycle of an AI coding agent as declared, verified machines.

What an embedder needs, all importable from here (``docs/embedding.md`` uses nothing else):

- the lifecycle: :class:`LifecycleRuntime` (one session: hook events in, results out), the
  pure :func:`step` it runs over a frozen :class:`LifecycleState`, :func:`load_lifecycle`
  (the machines declared in ``models/``), :data:`HOOKS` and :data:`HOOK_EVENTS`;
- hook events (:class:`TurnEnd` … :class:`Command`) with the :class:`HostContext` facts;
- results and effects as data (:class:`HookResult`, :class:`Notify`, :class:`SendMessage`,
  :class:`BoundaryResult` …) and :func:`apply`, which carries one out on a session;
- sessions: :class:`SessionTree`, :class:`SessionWriter` (entries with fresh ids and
  timestamps), :func:`read_session`, :func:`project_branch`;
- settings and notes: :class:`StaticSettingsSource`, :func:`pi_file_settings`,
  :class:`BootWriter`, :class:`FileNotesSource`, :class:`InMemoryNotesSource`;
- the tool surface: :data:`TOOL_SPECS` (all eleven registrations: names, descriptions, JSON
  schemas, execution modes; :data:`SCHEMA_FILE` is the same as JSON), :class:`ToolOutcome`
  (what a notes or history tool call answers), :func:`execute_tool` and :class:`ToolContext`
  for a host that runs the nine tools without a runtime;
- the hash-chained :class:`AuditLog` and :func:`verify_chain`.
"""

from __future__ import annotations

from pictx_fsm import _moved

TYPE_CHECKING = False  # not ``typing.TYPE_CHECKING``: ``pictx-fsm --help`` need not import typing
if TYPE_CHECKING:
    from typing import Any

    from pictx_fsm.audit.log import AuditLog, verify_chain
    from pictx_fsm.errors import IllegalEventError, ModelDocumentError, PictxError
    from pictx_fsm.extensions.pi_context.boot_writer import BootWriter
    from pictx_fsm.extensions.pi_context.lifecycle import (
        HOOK_EVENTS,
        Lifecycle,
        LifecycleState,
        Services,
        load_lifecycle,
        pi_file_settings,
        step,
    )
    from pictx_fsm.extensions.pi_context.notes import FileNotesSource, InMemoryNotesSource
    from pictx_fsm.extensions.pi_context.policy import Policy
    from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
    from pictx_fsm.extensions.pi_context.texts import Profile, Texts
    from pictx_fsm.extensions.pi_context.tools import (
        SCHEMA_FILE,
        TOOL_NAMES,
        TOOL_SPECS,
        ToolContext,
        ToolOutcome,
        ToolSpec,
        execute_tool,
        tool_spec,
    )
    from pictx_fsm.host.apply import Applied, apply
    from pictx_fsm.host.effects import (
        AbortRun,
        AppendEntry,
        BoundaryResult,
        CancelResult,
        CustomDraft,
        CustomMessageDraft,
        HookResult,
        MessagesResult,
        Notify,
        SendMessage,
        ToolResult,
        TreeSummaryResult,
    )
    from pictx_fsm.host.events import (
        HOOKS,
        AgentBeforeSettle,
        AgentEnd,
        AgentSettled,
        Command,
        Context,
        ContextUsage,
        ContextWithSystem,
        HookEvent,
        HostContext,
        ModelInfo,
        ModelSelect,
        SessionBeforeCompact,
        SessionBeforeTree,
        SessionShutdown,
        SessionStart,
        SessionTreeEvent,
        ToolCall,
        TurnEnd,
        TurnStart,
    )
    from pictx_fsm.host.settings import StaticSettingsSource
    from pictx_fsm.session.entries import SessionHeader
    from pictx_fsm.session.jsonl import read_session
    from pictx_fsm.session.projection import project_branch
    from pictx_fsm.session.tree import SessionTree
    from pictx_fsm.session.writer import SessionWriter

__version__ = "0.1.0"

_moved.install()

# Imported on first use: importing the lifecycle loads and validates models/, and a command
# line tool must be able to report a broken model instead of failing on its own import.
_PUBLIC = {
    **dict.fromkeys(("Applied", "apply"), "pictx_fsm.host.apply"),
    **dict.fromkeys(("AuditLog", "verify_chain"), "pictx_fsm.audit.log"),
    **dict.fromkeys(
        (
            "AbortRun",
            "AppendEntry",
            "BoundaryResult",
            "CancelResult",
            "CustomDraft",
            "CustomMessageDraft",
            "HookResult",
            "MessagesResult",
            "Notify",
            "SendMessage",
            "ToolResult",
            "TreeSummaryResult",
        ),
        "pictx_fsm.host.effects",
    ),
    **dict.fromkeys(("IllegalEventError", "ModelDocumentError", "PictxError"), "pictx_fsm.errors"),
    **dict.fromkeys(
        (
            "HOOKS",
            "AgentBeforeSettle",
            "AgentEnd",
            "AgentSettled",
            "Command",
            "Context",
            "ContextUsage",
            "ContextWithSystem",
            "HookEvent",
            "HostContext",
            "ModelInfo",
            "ModelSelect",
            "SessionBeforeCompact",
            "SessionBeforeTree",
            "SessionShutdown",
            "SessionStart",
            "SessionTreeEvent",
            "ToolCall",
            "TurnEnd",
            "TurnStart",
        ),
        "pictx_fsm.host.events",
    ),
    **dict.fromkeys(
        (
            "HOOK_EVENTS",
            "Lifecycle",
            "LifecycleState",
            "Services",
            "load_lifecycle",
            "pi_file_settings",
            "step",
        ),
        "pictx_fsm.extensions.pi_context.lifecycle",
    ),
    **dict.fromkeys(
        ("FileNotesSource", "InMemoryNotesSource"), "pictx_fsm.extensions.pi_context.notes"
    ),
    "Policy": "pictx_fsm.extensions.pi_context.policy",
    "StaticSettingsSource": "pictx_fsm.host.settings",
    **dict.fromkeys(("Profile", "Texts"), "pictx_fsm.extensions.pi_context.texts"),
    "BootWriter": "pictx_fsm.extensions.pi_context.boot_writer",
    "LifecycleRuntime": "pictx_fsm.extensions.pi_context.runtime",
    "SessionHeader": "pictx_fsm.session.entries",
    "read_session": "pictx_fsm.session.jsonl",
    "project_branch": "pictx_fsm.session.projection",
    "SessionTree": "pictx_fsm.session.tree",
    "SessionWriter": "pictx_fsm.session.writer",
    **dict.fromkeys(
        (
            "SCHEMA_FILE",
            "TOOL_NAMES",
            "TOOL_SPECS",
            "ToolContext",
            "ToolOutcome",
            "ToolSpec",
            "execute_tool",
            "tool_spec",
        ),
        "pictx_fsm.extensions.pi_context.tools",
    ),
}

__all__ = [
    "HOOKS",
    "HOOK_EVENTS",
    "SCHEMA_FILE",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "AbortRun",
    "AgentBeforeSettle",
    "AgentEnd",
    "AgentSettled",
    "AppendEntry",
    "Applied",
    "AuditLog",
    "BootWriter",
    "BoundaryResult",
    "CancelResult",
    "Command",
    "Context",
    "ContextUsage",
    "ContextWithSystem",
    "CustomDraft",
    "CustomMessageDraft",
    "FileNotesSource",
    "HookEvent",
    "HookResult",
    "HostContext",
    "IllegalEventError",
    "InMemoryNotesSource",
    "Lifecycle",
    "LifecycleRuntime",
    "LifecycleState",
    "MessagesResult",
    "ModelDocumentError",
    "ModelInfo",
    "ModelSelect",
    "Notify",
    "PictxError",
    "Policy",
    "Profile",
    "SendMessage",
    "Services",
    "SessionBeforeCompact",
    "SessionBeforeTree",
    "SessionHeader",
    "SessionShutdown",
    "SessionStart",
    "SessionTree",
    "SessionTreeEvent",
    "SessionWriter",
    "StaticSettingsSource",
    "Texts",
    "ToolCall",
    "ToolContext",
    "ToolOutcome",
    "ToolResult",
    "ToolSpec",
    "TreeSummaryResult",
    "TurnEnd",
    "TurnStart",
    "__version__",
    "apply",
    "execute_tool",
    "load_lifecycle",
    "pi_file_settings",
    "project_branch",
    "read_session",
    "step",
    "tool_spec",
    "verify_chain",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'pictx_fsm' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
