"""pi-context's tool surface as a host-neutral library: the notes and history tools.

Hosts register :data:`TOOL_SPECS` (all eleven tools, with ``wipe_memory`` and
``get_context_remaining``, which the lifecycle runtime runs) and call
:func:`execute_tool` for the other nine with a :class:`ToolContext` built per call.
``tools.json`` carries the same registrations for hosts that are not Python.
"""

from __future__ import annotations

from pictx_fsm.extensions.pi_context.tools.address import (
    AddressError,
    NoteAddress,
    Scope,
    decode_address,
)
from pictx_fsm.extensions.pi_context.tools.arguments import ToolArgumentError
from pictx_fsm.extensions.pi_context.tools.context import (
    HistorySource,
    ToolContext,
    ToolContextError,
)
from pictx_fsm.extensions.pi_context.tools.execute import (
    HANDLERS,
    UnknownTool,
    execute_tool,
    run_tools,
)
from pictx_fsm.extensions.pi_context.tools.homes import (
    NotesIdentity,
    NotesPlace,
    OutsideNotesRoot,
    agent_slug,
    default_notes_home,
    migrate_legacy_homes,
    model_slug,
    project_key,
)
from pictx_fsm.extensions.pi_context.tools.output import TOOL_OUTPUT_MAX_BYTES
from pictx_fsm.extensions.pi_context.tools.schema import (
    SCHEMA_FILE,
    TOOL_NAMES,
    TOOL_SPECS,
    ToolSpec,
    schema_document,
    tool_spec,
)
from pictx_fsm.extensions.pi_context.tools.store import NoteError, NoteRow, NotesStore
from pictx_fsm.host.tool_outcome import ToolOutcome, ToolStatus

__all__ = [
    "HANDLERS",
    "SCHEMA_FILE",
    "TOOL_NAMES",
    "TOOL_OUTPUT_MAX_BYTES",
    "TOOL_SPECS",
    "AddressError",
    "HistorySource",
    "NoteAddress",
    "NoteError",
    "NoteRow",
    "NotesIdentity",
    "NotesPlace",
    "NotesStore",
    "OutsideNotesRoot",
    "Scope",
    "ToolArgumentError",
    "ToolContext",
    "ToolContextError",
    "ToolOutcome",
    "ToolSpec",
    "ToolStatus",
    "UnknownTool",
    "agent_slug",
    "decode_address",
    "default_notes_home",
    "execute_tool",
    "migrate_legacy_homes",
    "model_slug",
    "project_key",
    "run_tools",
    "schema_document",
    "tool_spec",
]
