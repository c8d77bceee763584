"""Run one of notesoup's nine notes and history tools: the host-neutral entry point the Pi
adapter, the model session and the MCP server all call.

``execute_tool(name, arguments, context)`` gives the host's result (:class:`~pictx_fsm.host.
tool_outcome.ToolOutcome`): the rendered text, the structured content, and ``isError`` on a
refusal (S92). Arguments a schema would reject are an error result naming the argument (Pi
validates before ``execute``); a store refusal is a typed refusal; a filesystem error is
``io_error`` (S93). Calls run one at a time in this process (S106: read-modify-write per file
is serialized; one lock is the simplest such order), so a threaded host needs no lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import tzinfo
from pathlib import Path
from typing import Final

from attrs import frozen

from pictx_fsm.extensions.notesoup.notes.home import NotesHome
from pictx_fsm.extensions.notesoup.notes.store import NoteRefusal, NotesStore
from pictx_fsm.extensions.notesoup.tools.history import HISTORY_OPERATIONS
from pictx_fsm.extensions.notesoup.tools.notes import NOTES_OPERATIONS, io_failure, refusal
from pictx_fsm.extensions.notesoup.tools.outcome import Outcome, Render, tool_outcome
from pictx_fsm.extensions.shared.tools.arguments import Arguments, ToolArgumentError
from pictx_fsm.extensions.shared.tools.homes import NotesIdentity, NotesPlace
from pictx_fsm.host.tool_outcome import ToolOutcome
from pictx_fsm.session.tree import SessionTree

__all__ = [
    "NO_NOTES_HOME",
    "NO_SESSION",
    "RUN_HERE",
    "ToolContext",
    "UnknownTool",
    "execute_tool",
    "tool_context",
]

NO_NOTES_HOME: Final = "the notes tools need a notes home on disk (NotesoupRuntime(notes_home=...))"
NO_SESSION: Final = "the history tools need the session"
RUN_HERE: Final = frozenset(NOTES_OPERATIONS) | frozenset(HISTORY_OPERATIONS)
"""The nine tools run here (``clear_memory`` and ``get_context_remaining`` are the
lifecycle's)."""
_SERIAL: Final = threading.Lock()


class UnknownTool(LookupError):
    """A name that is not one of the nine tools run here."""


@frozen(kw_only=True)
class ToolContext:
    """What one call sees: the notes root and identity, the session, the clock and zone."""

    notes_root: Path | None = None
    identity: NotesIdentity | None = None
    history: SessionTree | None = None
    clock: Callable[[], float] = lambda: 0.0
    zone: tzinfo | None = None

    def store(self) -> NotesStore:
        if self.notes_root is None or self.identity is None:
            raise ToolArgumentError(NO_NOTES_HOME)
        place = NotesPlace(root=self.notes_root, identity=self.identity)
        return NotesStore(place, self.clock, self.zone)

    def session(self) -> SessionTree:
        if self.history is None:
            raise ToolArgumentError(NO_SESSION)
        return self.history


def tool_context(
    home: NotesHome | None,
    tree: SessionTree | None,
    model_id: str | None,
    clock: Callable[[], float],
) -> ToolContext:
    """A call's context: ``home`` (none: the notes tools answer that there is no notes home)
    with ``@model`` named for ``model_id``, the session, the clock."""
    if home is None:
        return ToolContext(history=tree, clock=clock)
    return ToolContext(
        notes_root=home.root,
        identity=home.identity(model_id),
        history=tree,
        clock=clock,
        zone=home.zone,
    )


def execute_tool(name: str, arguments: object, context: ToolContext) -> ToolOutcome:
    """Run tool ``name`` with the call's ``arguments`` (the JSON object the model sent)."""
    if name not in RUN_HERE:
        raise UnknownTool(f"{name!r} is not one of notesoup's notes and history tools")
    try:
        with _SERIAL:
            outcome, render = _run(name, Arguments(arguments), context)
    except ToolArgumentError as error:
        return ToolOutcome.error(str(error))
    return tool_outcome(outcome, render)


def _run(name: str, args: Arguments, context: ToolContext) -> tuple[Outcome, Render]:
    if name in HISTORY_OPERATIONS:
        history = HISTORY_OPERATIONS[name]
        return history.run(args, context.session()), history.render
    notes = NOTES_OPERATIONS[name]
    try:
        return notes.run(args, context.store()), notes.render
    except NoteRefusal as error:
        return refusal(error), notes.render
    except OSError:
        return io_failure(), notes.render
