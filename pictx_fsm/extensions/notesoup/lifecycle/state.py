"""notesoup's lifecycle state between hooks: one frozen, hashable value.

A machine's state says *that* a close-out is armed or a warning staged; this value also holds
*what* (the request's window and prompt, the staged window and content, the pending notices).
Every change of that data is an action named by a transition in ``models/notesoup/``, with
one structural rule the step keeps: the request's data exists exactly while the request region
is not ``none`` (a transition back to ``none`` forgets it, as the reducer's initial state
does, S22–S27).
"""

from __future__ import annotations

from typing import Any

import attrs
from attrs import frozen

from pictx_fsm.extensions.shared.machinery import MachineStates
from pictx_fsm.extensions.shared.policy import Policy
from pictx_fsm.machines import Configuration

__all__ = ["NotesoupState", "Request", "Staged"]


@frozen(kw_only=True)
class Request:
    """The reducer's request data (S23, S24): the window it was made in and, for a manual
    close-out, the prompt to continue with (trimmed, non-blank)."""

    window_id: str
    prompt: str | None = None


@frozen(kw_only=True)
class Staged:
    """A reminder staged at a provider request for ``window_id`` (S54)."""

    window_id: str
    content: str


@frozen(kw_only=True)
class NotesoupState(MachineStates):
    """Every machine's configuration plus the data the lifecycle's states hold."""

    configurations: tuple[tuple[str, Configuration], ...]
    request: Request | None = None
    guidance: Staged | None = None
    warning: Staged | None = None
    warning_notice: str | None = None
    """The window whose committed warning awaits its notice (S56, S57)."""
    pending_resets: tuple[str, ...] = ()
    """Window ids of built resets whose "memory cleared" notice is pending (S46)."""
    missing_boot: str | None = None
    """The window whose missing-boot notice was given (S79)."""
    notes_notified: frozenset[str] = frozenset()
    """Window ids whose boot already warned about unavailable notes homes (S89)."""
    policy: Policy | None = None
    warned: frozenset[str] = frozenset()

    def evolve(self, **changes: Any) -> NotesoupState:
        return attrs.evolve(self, **changes)
