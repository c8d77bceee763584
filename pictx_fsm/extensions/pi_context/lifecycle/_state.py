"""The lifecycle's state between hooks: one frozen, hashable value.

A machine's state says *that* a reminder is staged or a reset notice is pending; this value
also holds *what* (the window id and content, the pending ids), and every change of that data
is an action named by a transition in ``models/`` (:mod:`._actions`). Two equal states are
interchangeable: the next step depends on the state, the event, ``ctx`` and the services only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from pictx_fsm.extensions.pi_context import policy
from pictx_fsm.extensions.shared.machinery import MachineStates
from pictx_fsm.machines import Configuration

__all__ = ["LifecycleState", "Staged"]


@frozen(kw_only=True)
class Staged:
    """A reminder staged at a provider request for ``window_id`` (R51)."""

    window_id: str
    content: str


def _pairs(items: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(items.items()))


@frozen(kw_only=True)
class LifecycleState(MachineStates):
    """Every machine's configuration plus the data the lifecycle's states hold.

    ``policy`` and ``warned`` are the R40/R46 settings cache: the resolved policy (while
    caching) and the warnings already shown since the last transition (R55).
    """

    configurations: tuple[tuple[str, Configuration], ...]
    staged: tuple[tuple[str, Staged], ...] = ()
    """Reminder kind → the staged reminder."""
    notices: tuple[tuple[str, str], ...] = ()
    """Reminder kind → the window whose committed reminder awaits its notice (R54)."""
    pending_resets: tuple[str, ...] = ()
    """Window ids of built resets whose "memory cleared" notice is pending (R63)."""
    missing_boot: str | None = None
    """The window whose missing-boot notice was given (R68)."""
    notes_notified: frozenset[str] = frozenset()
    """Window ids whose boot already warned about unavailable notes homes (R74)."""
    policy: policy.Policy | None = None
    warned: frozenset[str] = frozenset()

    def staged_for(self, kind: str) -> Staged | None:
        return dict(self.staged).get(kind)

    def staged_window(self, kind: str) -> str | None:
        staged = self.staged_for(kind)
        return None if staged is None else staged.window_id

    def notice_window(self, kind: str) -> str | None:
        return dict(self.notices).get(kind)

    # -- the next state ---------------------------------------------------------------------
    # Each returns a new value; the reducers in ._actions are the only callers besides the
    # step (configurations) and the policy cache.

    def with_staged(self, kind: str, staged: Staged | None) -> LifecycleState:
        return self.evolve(staged=_pairs(_put(dict(self.staged), kind, staged)))

    def with_notice(self, kind: str, window_id: str | None) -> LifecycleState:
        return self.evolve(notices=_pairs(_put(dict(self.notices), kind, window_id)))

    def evolve(self, **changes: Any) -> LifecycleState:
        """A copy with ``changes`` (field names as above)."""
        fields: dict[str, Any] = {
            "configurations": self.configurations,
            "staged": self.staged,
            "notices": self.notices,
            "pending_resets": self.pending_resets,
            "missing_boot": self.missing_boot,
            "notes_notified": self.notes_notified,
            "policy": self.policy,
            "warned": self.warned,
        }
        fields.update(changes)
        return LifecycleState(**fields)


def _put(items: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    if value is None:
        items.pop(key, None)
    else:
        items[key] = value
    return items
