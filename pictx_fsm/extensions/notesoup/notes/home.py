"""A session's notes home: the notes root and the session's identity in it (S84, S95, S120),
with the 0.25 migration of the agent's name."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import tzinfo
from pathlib import Path

from attrs import frozen

from pictx_fsm.extensions.notesoup.notes.store import NotesStore
from pictx_fsm.extensions.notesoup.texts import DEFAULT_AGENT_NAME
from pictx_fsm.extensions.shared.tools.homes import (
    LEGACY_AGENT_NAME,
    NotesIdentity,
    NotesPlace,
    agent_slug,
    model_slug,
    project_key,
)
from pictx_fsm.session.tree import SessionTree

__all__ = ["NotesHome"]


@frozen(kw_only=True)
class NotesHome:
    """The notes root and the session's identity in it (S84, S95, S120)."""

    root: Path
    session_id: str
    project_key: str
    configured_agent: str | None = None
    zone: tzinfo | None = None

    def identity(self, model_id: str | None) -> NotesIdentity:
        """The homes as they are named now: ``@model`` follows ``ctx.model`` (S84)."""
        return NotesIdentity(
            session_id=self.session_id,
            project_key=self.project_key,
            agent=self.agent(),
            model=model_slug(model_id, DEFAULT_AGENT_NAME),
        )

    def agent(self) -> str:
        """S84's agent: ``$PI_NOTES_AGENT`` slugged, default ``anonymous`` — except, for a
        0.25 home migrated (this port, docs/decisions.md), ``root`` when only ``agents/root/``
        exists: the 0.25 ``@self`` notes stay ``@self``."""
        if self.configured_agent is not None:
            return agent_slug(self.configured_agent, DEFAULT_AGENT_NAME)
        agents = self.root / "agents"
        if not os.path.lexists(agents / DEFAULT_AGENT_NAME) and os.path.isdir(
            agents / LEGACY_AGENT_NAME
        ):
            return LEGACY_AGENT_NAME
        return DEFAULT_AGENT_NAME

    def store(self, model_id: str | None, clock: Callable[[], float]) -> NotesStore:
        place = NotesPlace(root=self.root, identity=self.identity(model_id))
        return NotesStore(place, clock, self.zone)

    @classmethod
    def for_session(
        cls,
        root: Path,
        tree: SessionTree,
        configured_agent: str | None = None,
        zone: tzinfo | None = None,
    ) -> NotesHome:
        """The home of the session ``tree`` is: its id, the project of its ``cwd``."""
        return cls(
            root=root,
            session_id=tree.session_id,
            project_key=project_key(Path(tree.header.cwd or ".")),
            configured_agent=configured_agent,
            zone=zone,
        )
