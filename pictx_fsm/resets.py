"""Boot construction for running resets, ``/wipe-memory`` and repair (R58, R64, R70–R74).

The runtime asks for a boot's content here. A boot needs the notes snapshot (read once, with
the clock read once) and may warn the human, once per window id, that a notes home was
unavailable (R74). A notes failure that is not an errno-style listing error propagates: for
running resets the runtime reports it as "could not build reset" (R29).
"""

from __future__ import annotations

from collections.abc import MutableSequence, MutableSet

from pictx_fsm.boot import BootIdentity, human_incomplete_notice, render_boot
from pictx_fsm.effects import HostEffect, Notify
from pictx_fsm.hooks import ModelInfo
from pictx_fsm.notes import (
    InMemoryNotesSource,
    NotesSource,
    agent_slug,
    load_notes_snapshot,
    model_slug,
)
from pictx_fsm.protocol import Texts


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

    def boot(
        self,
        *,
        turn: MutableSequence[HostEffect],
        notified: MutableSet[str],
        root_window_id: str,
        window_id: str,
        previous_window_id: str | None,
        reset_boot: bool,
        model: ModelInfo | None,
        now_ms: int,
    ) -> str:
        """The boot content for ``window_id``; appends the R74 notice to ``turn`` once."""
        snapshot = load_notes_snapshot(self.notes, lambda: float(now_ms))
        notice = human_incomplete_notice(snapshot.unavailable_labels)
        if notice is not None and window_id not in notified:
            notified.add(window_id)
            turn.append(Notify(message=notice, level="warning"))
        identity = BootIdentity(
            agent_name=self.agent_name,
            model_name=model_slug(model.id if model else None),
            root_window_id=root_window_id,
            current_window_id=window_id,
            previous_window_id=previous_window_id,
        )
        return render_boot(identity, snapshot, self.texts, reset_boot)
