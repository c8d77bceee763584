"""Run one of the nine tools: the host-neutral entry point every host calls.

``execute_tool(name, arguments, context)`` does what pi-context's ``execute`` does and
what Pi makes of it: a result (``ok``), a JSON refusal the model reads (``refusal``,
N4a), or, for a thrown error, an error result whose text is the message (``error``, N4b).
Store calls run one at a time in this process (N49: a JS tool body never interleaves with
another), so a threaded or async host needs no lock of its own.
"""

from __future__ import annotations

import errno as errno_codes
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

from pictx_fsm.extensions.pi_context.tools.address import AddressError
from pictx_fsm.extensions.pi_context.tools.context import ToolContext, ToolContextError
from pictx_fsm.extensions.pi_context.tools.history_tools import (
    history_list,
    history_read,
    history_search,
    history_windows_tool,
)
from pictx_fsm.extensions.pi_context.tools.homes import OutsideNotesRoot
from pictx_fsm.extensions.pi_context.tools.notes_tools import (
    notes_edit,
    notes_list,
    notes_read,
    notes_search,
    notes_write,
)
from pictx_fsm.extensions.pi_context.tools.schema import TOOLS_BY_NAME
from pictx_fsm.extensions.shared.tools.arguments import Arguments, ToolArgumentError
from pictx_fsm.host.tool_outcome import Reply, ToolOutcome

__all__ = ["HANDLERS", "Handler", "UnknownTool", "error_message", "execute_tool", "run_tools"]

Handler = Callable[[Arguments, ToolContext], Reply]

HANDLERS: Final[Mapping[str, Handler]] = {
    "history_windows": history_windows_tool,
    "history_list": history_list,
    "history_read": history_read,
    "history_search": history_search,
    "notes_write": notes_write,
    "notes_edit": notes_edit,
    "notes_read": notes_read,
    "notes_list": notes_list,
    "notes_search": notes_search,
}
"""The nine tools this package runs (``wipe_memory`` and ``get_context_remaining`` are the
lifecycle runtime's)."""

_SERIAL: Final = threading.Lock()

# libuv's texts for the codes a notes call can meet (Node's error messages use them).
_NODE_DESCRIPTIONS: Final = {
    "ENOENT": "no such file or directory",
    "ENOTDIR": "not a directory",
    "EISDIR": "illegal operation on a directory",
    "EACCES": "permission denied",
    "EPERM": "operation not permitted",
    "EEXIST": "file already exists",
    "ENAMETOOLONG": "name too long",
    "ELOOP": "too many symbolic links encountered",
    "EIO": "i/o error",
    "ENOSPC": "no space left on device",
    "EROFS": "read-only file system",
    "EMFILE": "too many open files",
}


class UnknownTool(LookupError):
    """A name that is not one of the nine tools run here."""


def execute_tool(name: str, arguments: object, context: ToolContext) -> ToolOutcome:
    """Run tool ``name`` with the call's ``arguments`` (the JSON object the model sent)."""
    handler = HANDLERS.get(name)
    if handler is None:
        owner = "the lifecycle runtime" if name in TOOLS_BY_NAME else "no one"
        raise UnknownTool(
            f"{name!r} is not run by pictx_fsm.extensions.pi_context.tools (it belongs to {owner})"
        )
    try:
        with _SERIAL:
            return ToolOutcome.of(handler(Arguments(arguments), context))
    except (AddressError, ToolArgumentError, ToolContextError) as error:
        return ToolOutcome.error(str(error))
    except OSError as error:
        return ToolOutcome.error(error_message(error))


def error_message(error: OSError) -> str:
    """A filesystem error as Node words it: ``<CODE>: <description>, '<path>'``."""
    if isinstance(error, OutsideNotesRoot):
        return str(error)
    code = errno_codes.errorcode.get(error.errno or 0)
    if code is None:
        return str(error)
    description = _NODE_DESCRIPTIONS.get(code, (error.strerror or code).lower())
    where = f", '{error.filename}'" if error.filename is not None else ""
    return f"{code}: {description}{where}"


def run_tools(calls: list[tuple[str, Any]], context: ToolContext) -> list[ToolOutcome]:
    """Run a batch in call order (what Pi's sequential mode does; the results of a parallel
    batch are the same because store calls never interleave)."""
    return [execute_tool(name, arguments, context) for name, arguments in calls]
