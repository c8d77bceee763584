"""What one hook accumulates while its machine events run: a frozen value, one per reducer.

A reducer (:mod:`._actions`) takes the facts of its machine event and the turn so far and
returns the next turn; nothing is mutated, so a hook that raises simply has no next state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from pictx_fsm.extensions.pi_context.lifecycle._state import LifecycleState
from pictx_fsm.host.effects import Draft, HookValue, HostEffect

__all__ = ["Raised", "Turn"]


@frozen(kw_only=True)
class Raised:
    """A follow-up machine event an action raised (data, run after the hook's own events)."""

    machine: str
    event: str
    extras: tuple[tuple[str, Any], ...] = ()

    @property
    def extras_map(self) -> Mapping[str, Any]:
        return dict(self.extras)


@frozen(kw_only=True)
class Turn:
    """The hook's state so far: the lifecycle state and what the hook will return."""

    state: LifecycleState
    value: HookValue | None = None
    effects: tuple[HostEffect, ...] = ()
    reminders: tuple[Draft, ...] = ()
    """Committed reminders: boundary drafts after the host's incoming ones (R22, R53)."""
    reset: tuple[Draft, ...] = ()
    """The reset tail (marker → boot → continuation), always closing the boundary (R28)."""
    continue_: bool = False
    build_failed: bool = False
    report_status: bool = False
    raised: tuple[Raised, ...] = ()
    planned_commits: frozenset[str] = frozenset()
    """Window ids whose complete tail this very hook writes (``/wipe-memory``): Pi appends
    them synchronously while idle, so the immediate notice check sees them (R59)."""

    def evolve(self, **changes: Any) -> Turn:
        fields: dict[str, Any] = {
            "state": self.state,
            "value": self.value,
            "effects": self.effects,
            "reminders": self.reminders,
            "reset": self.reset,
            "continue_": self.continue_,
            "build_failed": self.build_failed,
            "report_status": self.report_status,
            "raised": self.raised,
            "planned_commits": self.planned_commits,
        }
        fields.update(changes)
        return Turn(**fields)

    def emit(self, *effects: HostEffect) -> Turn:
        return self.evolve(effects=(*self.effects, *effects))

    def raise_(self, machine: str, event: str, **extras: Any) -> Turn:
        raised = Raised(machine=machine, event=event, extras=tuple(sorted(extras.items())))
        return self.evolve(raised=(*self.raised, raised))
