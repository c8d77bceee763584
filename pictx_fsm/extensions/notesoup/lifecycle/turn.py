"""What one hook accumulates while its machine events run: a frozen value, one per reducer."""

from __future__ import annotations

from typing import Any

import attrs
from attrs import frozen

from pictx_fsm.extensions.notesoup.lifecycle.state import NotesoupState
from pictx_fsm.extensions.shared.machinery import Raised
from pictx_fsm.host.effects import Draft, HookValue, HostEffect

__all__ = ["Raised", "Turn"]


@frozen(kw_only=True)
class Turn:
    """The hook's state so far: the lifecycle state and what the hook will return."""

    state: NotesoupState
    value: HookValue | None = None
    effects: tuple[HostEffect, ...] = ()
    reminders: tuple[Draft, ...] = ()
    """Committed reminders: boundary drafts after the host's incoming ones (S29, S56)."""
    reset: tuple[Draft, ...] = ()
    """The reset drafts (checkpoint → marker → boot → continuation [→ prompt], S38)."""
    continue_: bool | None = None
    """The boundary's ``continue``: ``True``/``False`` as the commit says, ``None`` unset."""
    settle_stop: bool = False
    """S31's ``stop``: ``{entries: event.entries, continue: false}`` at settlement."""
    build_failed: bool = False
    report_status: bool = False
    raised: tuple[Raised, ...] = ()

    def evolve(self, **changes: Any) -> Turn:
        return attrs.evolve(self, **changes)

    def emit(self, *effects: HostEffect) -> Turn:
        return self.evolve(effects=(*self.effects, *effects))

    def raise_(self, machine: str, event: str, **extras: Any) -> Turn:
        raised = Raised(machine=machine, event=event, extras=tuple(sorted(extras.items())))
        return self.evolve(raised=(*self.raised, raised))
