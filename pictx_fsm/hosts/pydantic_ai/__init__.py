"""pi-context's reset lifecycle inside any pydantic-ai ``Agent``.

``pip install 'pictx-fsm[pydantic-ai]'``, then give an agent the capability::

    session = PiSession.create("session.jsonl")
    agent = Agent(model, capabilities=[PiContext(session, context_window=200_000)])
    agent.run_sync("...")      # each run continues the durable session

:class:`PiSession` is the durable record (a Pi session file and its audit log beside it);
:class:`PiContext` plugs it into the agent loop. ``docs/pydantic-ai.md`` walks through it.
"""

from pictx_fsm.hosts.pydantic_ai.capability import PiContext
from pictx_fsm.hosts.pydantic_ai.errors import (
    CapabilityConflictError,
    RequestCancelledError,
    SessionBusyError,
    SettingsError,
    WindowTooSmallError,
)
from pictx_fsm.hosts.pydantic_ai.history import entries_to_messages, messages_to_entries
from pictx_fsm.hosts.pydantic_ai.session import PiSession, audit_path_of
from pictx_fsm.hosts.pydantic_ai.settings import LifecycleSettings

__all__ = [
    "CapabilityConflictError",
    "LifecycleSettings",
    "PiContext",
    "PiSession",
    "RequestCancelledError",
    "SessionBusyError",
    "SettingsError",
    "WindowTooSmallError",
    "audit_path_of",
    "entries_to_messages",
    "messages_to_entries",
]
