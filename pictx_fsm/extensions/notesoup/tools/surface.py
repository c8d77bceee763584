"""notesoup's nine notes and history tools for a host outside Pi (``pictx-fsm mcp``): the
same registrations, texts, budgets and root confinement as in Pi, because the same
:func:`~pictx_fsm.extensions.notesoup.tools.execute.execute_tool` runs every call."""

from __future__ import annotations

from collections.abc import Callable
from datetime import tzinfo
from pathlib import Path

from pictx_fsm.extensions.notesoup.notes.home import NotesHome
from pictx_fsm.extensions.notesoup.tools.execute import (
    RUN_HERE,
    ToolContext,
    execute_tool,
    tool_context,
)
from pictx_fsm.extensions.notesoup.tools.specs import TOOL_SPECS
from pictx_fsm.extensions.shared.tools.surface import surface, wall_clock_ms
from pictx_fsm.host.tool_surface import ToolSurface
from pictx_fsm.session.tree import SessionTree

__all__ = ["tool_surface"]


def tool_surface(
    notes_root: Path,
    session: Callable[[], SessionTree],
    *,
    agent: str | None = None,
    model_id: str | None = None,
    clock: Callable[[], float] = wall_clock_ms,
    zone: tzinfo | None = None,
) -> ToolSurface:
    """The tools over ``notes_root`` for the session ``session()`` returns (read on every
    call): the homes are that session's (its id, its project), ``@self`` is ``agent`` (as
    ``$PI_NOTES_AGENT``), ``@model`` is ``model_id``."""

    def context() -> ToolContext:
        tree = session()
        home = NotesHome.for_session(notes_root, tree, agent, zone)
        return tool_context(home, tree, model_id, clock)

    specs = [spec for spec in TOOL_SPECS if spec.name in RUN_HERE]
    return surface("notesoup", specs, execute_tool, context)
