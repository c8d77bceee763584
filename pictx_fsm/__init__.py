"""pictx_fsm: the context-window lifecycle of an AI coding agent as declared, verified machines.

The root holds what ``docs/embedding.md`` and the README use to embed pi-context in a host, and
nothing else; everything else is imported from the module that owns it (``docs/architecture.md``
maps the packages):

- the lifecycle: :class:`LifecycleRuntime` (one session: hook events in, results out) and the
  pure :func:`step` it runs over a frozen :class:`LifecycleState`;
- the hook events a host raises (:class:`SessionStart`, :class:`TurnStart`, :class:`TurnEnd`,
  :class:`ToolCall`, :class:`AgentSettled`, :class:`ContextWithSystem`; :data:`HOOKS` names
  them all) with the :class:`HostContext` facts (:class:`ContextUsage`, :class:`ModelInfo`),
  and :func:`apply`, which carries a result out on a session;
- Pi's session format: :class:`SessionTree`, :class:`SessionHeader`, :class:`SessionWriter`,
  :func:`read_session`, :func:`project_branch`; Pi's settings: :class:`StaticSettingsSource`;
- the tools: :data:`TOOL_SPECS` and :class:`ToolOutcome`;
- the hash-chained decision log: :class:`AuditLog` and :func:`verify_chain`;
- the errors every input problem raises: :class:`PictxError`, :class:`ModelDocumentError`,
  :class:`IllegalEventError`.

Names the root exported in 0.1 and no longer does still import from here for one release,
with a :class:`DeprecationWarning` naming their home (CHANGELOG.md lists them).
"""

from __future__ import annotations

from pictx_fsm import _moved

TYPE_CHECKING = False  # not ``typing.TYPE_CHECKING``: ``pictx-fsm --help`` need not import typing
if TYPE_CHECKING:
    from typing import Any

    from pictx_fsm.audit.log import AuditLog, verify_chain
    from pictx_fsm.errors import IllegalEventError, ModelDocumentError, PictxError
    from pictx_fsm.extensions.pi_context.lifecycle import LifecycleState, step
    from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
    from pictx_fsm.extensions.pi_context.tools import TOOL_SPECS, ToolOutcome
    from pictx_fsm.host.apply import apply
    from pictx_fsm.host.events import (
        HOOKS,
        AgentSettled,
        ContextUsage,
        ContextWithSystem,
        HostContext,
        ModelInfo,
        SessionStart,
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
    "apply": "pictx_fsm.host.apply",
    **dict.fromkeys(("AuditLog", "verify_chain"), "pictx_fsm.audit.log"),
    **dict.fromkeys(("IllegalEventError", "ModelDocumentError", "PictxError"), "pictx_fsm.errors"),
    **dict.fromkeys(
        (
            "HOOKS",
            "AgentSettled",
            "ContextUsage",
            "ContextWithSystem",
            "HostContext",
            "ModelInfo",
            "SessionStart",
            "ToolCall",
            "TurnEnd",
            "TurnStart",
        ),
        "pictx_fsm.host.events",
    ),
    **dict.fromkeys(("LifecycleState", "step"), "pictx_fsm.extensions.pi_context.lifecycle"),
    "LifecycleRuntime": "pictx_fsm.extensions.pi_context.runtime",
    **dict.fromkeys(("TOOL_SPECS", "ToolOutcome"), "pictx_fsm.extensions.pi_context.tools"),
    "StaticSettingsSource": "pictx_fsm.host.settings",
    "SessionHeader": "pictx_fsm.session.entries",
    "read_session": "pictx_fsm.session.jsonl",
    "project_branch": "pictx_fsm.session.projection",
    "SessionTree": "pictx_fsm.session.tree",
    "SessionWriter": "pictx_fsm.session.writer",
}

__all__ = [
    "HOOKS",
    "TOOL_SPECS",
    "AgentSettled",
    "AuditLog",
    "ContextUsage",
    "ContextWithSystem",
    "HostContext",
    "IllegalEventError",
    "LifecycleRuntime",
    "LifecycleState",
    "ModelDocumentError",
    "ModelInfo",
    "PictxError",
    "SessionHeader",
    "SessionStart",
    "SessionTree",
    "SessionWriter",
    "StaticSettingsSource",
    "ToolCall",
    "ToolOutcome",
    "TurnEnd",
    "TurnStart",
    "__version__",
    "apply",
    "project_branch",
    "read_session",
    "step",
    "verify_chain",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        return _moved.moved_attribute(__name__, name)
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return __all__
