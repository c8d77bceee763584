"""Which extensions serve notes and history tools, and the session file they read."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

from attrs import define, field

from pictx_fsm.errors import UsageError
from pictx_fsm.extensions.notesoup.tools import surface as notesoup_surface
from pictx_fsm.extensions.pi_context.tools import surface as pi_context_surface
from pictx_fsm.host.tool_surface import ToolSurface
from pictx_fsm.session.entries import ModelChangeEntry
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.tree import SessionTree

__all__ = ["EXTENSIONS", "SessionFile", "surface_for"]

SurfaceFactory = Callable[..., ToolSurface]

EXTENSIONS: Final[Mapping[str, SurfaceFactory]] = {
    "notesoup": notesoup_surface.tool_surface,
    "pi-context": pi_context_surface.tool_surface,
}
"""Every extension with notes and history tools (pi-context-management's tools read its
own checkpoints and live in its runtime; it has no notes home to serve)."""


@define
class SessionFile:
    """A Pi session file, read again whenever it changed (Pi appends to it while the MCP
    client digs through it)."""

    path: Path
    _stamp: tuple[int, int] | None = field(default=None, init=False)
    _tree: SessionTree | None = field(default=None, init=False)

    def tree(self) -> SessionTree:
        try:
            status = os.stat(self.path)
        except OSError as error:
            raise UsageError(f"{self.path}: {error.strerror or error}") from None
        stamp = (status.st_mtime_ns, status.st_size)
        if self._tree is None or stamp != self._stamp:
            loaded = read_session(self.path)
            if loaded.header is None:
                raise UsageError(f"{self.path}: not a Pi session file (no session header)")
            self._tree = SessionTree.from_entries(loaded.header, loaded.entries)
            self._stamp = stamp
        return self._tree

    def model_id(self) -> str | None:
        """The model the session last switched to (``@model``'s default)."""
        for entry in reversed(self.tree().branch()):
            if isinstance(entry, ModelChangeEntry):
                return entry.model_id
        return None


def surface_for(
    extension: str,
    notes_root: Path,
    session: SessionFile,
    *,
    agent: str | None = None,
    model_id: str | None = None,
) -> ToolSurface:
    """``extension``'s notes and history tools over ``notes_root`` and ``session``."""
    try:
        factory = EXTENSIONS[extension]
    except KeyError:
        known = ", ".join(EXTENSIONS)
        raise UsageError(f"no notes and history tools in {extension!r}; choose {known}") from None
    session.tree()  # a session that cannot be read is refused at start, not at the first call
    model = model_id if model_id is not None else session.model_id()
    return factory(notes_root, session.tree, agent=agent, model_id=model)
