"""Boot construction for running resets, ``/wipe-memory`` and repair (R58, R64, R70–R74).

A boot needs the notes snapshot (read once, with the clock read once) and may warn the human
that a notes home was unavailable (R74); the lifecycle shows that warning once per window id
(the ids already warned about are part of its state). A notes failure that is not an
errno-style listing error propagates: for running resets the lifecycle reports it as "could
not build reset" (R29).
"""

from __future__ import annotations

from attrs import frozen

from pictx_fsm.extensions.pi_context.boot import BootIdentity, human_incomplete_notice, render_boot
from pictx_fsm.extensions.pi_context.notes import (
    FileNotesSource,
    InMemoryNotesSource,
    NotesSource,
    agent_slug,
    load_notes_snapshot,
    model_slug,
)
from pictx_fsm.extensions.pi_context.texts import Texts
from pictx_fsm.host.events import ModelInfo

__all__ = ["Boot", "BootWriter"]


@frozen(kw_only=True)
class Boot:
    """A rendered boot and the R74 warning for the human, when a notes home was unavailable."""

    content: str
    notes_warning: str | None = None


class BootWriter:
    """Renders boots from an injected notes source (default: an empty in-memory home)."""

    def __init__(
        self,
        *,
        texts: Texts,
        notes: NotesSource | None = None,
        agent_name: str | None = None,
    ) -> None:
        self.texts = texts
        self.notes: NotesSource = notes if notes is not None else InMemoryNotesSource()
        self.agent_name = agent_slug(agent_name)

    def notes_for(self, model: ModelInfo | None) -> NotesSource:
        """The notes source of a boot under ``model``: a source on disk lists the ``@model``
        home of the current model, as the notes tools write it (N9)."""
        if isinstance(self.notes, FileNotesSource):
            return self.notes.for_model(model.id if model else None)
        return self.notes

    def boot(
        self,
        *,
        root_window_id: str,
        window_id: str,
        previous_window_id: str | None,
        reset_boot: bool,
        model: ModelInfo | None,
        now_ms: int,
    ) -> Boot:
        """The boot for ``window_id``, read from the notes source once."""
        notes = self.notes_for(model)
        snapshot = load_notes_snapshot(notes, lambda: float(now_ms))
        identity = BootIdentity(
            agent_name=self.agent_name,
            model_name=model_slug(model.id if model else None),
            root_window_id=root_window_id,
            current_window_id=window_id,
            previous_window_id=previous_window_id,
        )
        return Boot(
            content=render_boot(identity, snapshot, self.texts, reset_boot),
            notes_warning=human_incomplete_notice(snapshot.unavailable_labels),
        )
