"""What one tool call sees: the notes root and identity, the session branch, the clock.

A host builds a :class:`ToolContext` for every call (pi-context reads ``$PI_NOTES_HOME``,
``$PI_NOTES_AGENT``, the model and the session live on every call, N6/N9), so a model
switch or a new session retargets ``@model`` and the session home at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import tzinfo
from pathlib import Path
from typing import Protocol

from attrs import field, frozen

from pictx_fsm.extensions.pi_context.texts import NOTES_AGENT_ENV
from pictx_fsm.extensions.pi_context.tools.homes import (
    NotesIdentity,
    NotesPlace,
    agent_slug,
    default_notes_home,
    model_slug,
    project_key,
)
from pictx_fsm.extensions.pi_context.tools.store import NotesStore
from pictx_fsm.extensions.shared.tools.surface import wall_clock_ms
from pictx_fsm.session.entries import Entry

__all__ = ["NO_NOTES_HOME", "NO_SESSION", "HistorySource", "ToolContext", "ToolContextError"]


class HistorySource(Protocol):
    """The session the history tools read: its id and its active branch (a
    :class:`~pictx_fsm.session.tree.SessionTree` is one)."""

    @property
    def session_id(self) -> str: ...

    def branch(self) -> Sequence[Entry]: ...


class ToolContextError(RuntimeError):
    """The host did not give the call what it needs (a history tool without a session)."""


NO_NOTES_HOME = (
    "the notes tools need a notes home on disk (LifecycleRuntime(notes_home=...) or a "
    "BootWriter reading a FileNotesSource)"
)
NO_SESSION = "the history tools need the session (ToolContext.history)"


@frozen(kw_only=True)
class ToolContext:
    """Injected services of one call. ``zone`` is the zone note timestamps are written in
    (``None``: the host's local zone, as Node's ``Date`` does). A host without a notes home
    leaves ``notes_root`` and ``identity`` out: the history tools still run, a notes tool
    answers with an error result naming what is missing."""

    notes_root: Path | None = None
    identity: NotesIdentity | None = None
    history: HistorySource | None = None
    clock: Callable[[], float] = field(default=wall_clock_ms)
    zone: tzinfo | None = None

    @classmethod
    def for_host(
        cls,
        *,
        env: Mapping[str, str],
        user_home: Path,
        cwd: Path,
        session_id: str,
        model_id: str | None,
        history: HistorySource | None = None,
        clock: Callable[[], float] = wall_clock_ms,
        zone: tzinfo | None = None,
    ) -> ToolContext:
        """The context pi-context derives from Pi's ``ctx`` and the environment (N6–N9)."""
        identity = NotesIdentity(
            session_id=session_id,
            project_key=project_key(cwd),
            agent=agent_slug(env.get(NOTES_AGENT_ENV)),
            model=model_slug(model_id),
        )
        return cls(
            notes_root=default_notes_home(env, user_home),
            identity=identity,
            history=history,
            clock=clock,
            zone=zone,
        )

    @property
    def place(self) -> NotesPlace:
        if self.notes_root is None or self.identity is None:
            raise ToolContextError(NO_NOTES_HOME)
        return NotesPlace(root=self.notes_root, identity=self.identity)

    @property
    def store(self) -> NotesStore:
        return NotesStore(place=self.place, clock=self.clock, zone=self.zone)

    def session(self) -> HistorySource:
        if self.history is None:
            raise ToolContextError(NO_SESSION)
        return self.history
