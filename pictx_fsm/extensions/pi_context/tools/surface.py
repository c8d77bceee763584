"""pi-context 0.25's nine notes and history tools for a host outside Pi (``pictx-fsm mcp``),
run by the same :func:`~pictx_fsm.extensions.pi_context.tools.execute.execute_tool` as in Pi."""

from __future__ import annotations

from collections.abc import Callable
from datetime import tzinfo
from pathlib import Path

from pictx_fsm.extensions.pi_context.tools.context import ToolContext
from pictx_fsm.extensions.pi_context.tools.execute import execute_tool
from pictx_fsm.extensions.pi_context.tools.schema import TOOL_SPECS
from pictx_fsm.extensions.shared.tools.homes import NotesIdentity
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
    call), named as pi-context names its homes (N6–N9)."""

    def context() -> ToolContext:
        tree = session()
        identity = NotesIdentity.of_session(
            tree.session_id, tree.header.cwd or ".", agent=agent, model=model_id
        )
        return ToolContext(
            notes_root=notes_root, identity=identity, history=tree, clock=clock, zone=zone
        )

    specs = [spec for spec in TOOL_SPECS if spec.runs_in == "tools"]
    return surface("pi-context", specs, execute_tool, context)
