"""What the model session records, in order, so a test can check invariants after every step.

The event log holds one :class:`EventRecord` per hook the host emits, whether or not an
extension subscribes to it (Pi's recording extension in ``../shared/pi-traces`` subscribes to
everything, so its ``ext`` lines are exactly the host's emission points).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from attrs import define, field, frozen

from pictx_fsm.session.entries import Entry

__all__ = [
    "JSON",
    "DeliveryKind",
    "DeliveryRecord",
    "EventRecord",
    "ExtensionErrorRecord",
    "HostLog",
    "NoticeRecord",
    "ProviderRequestRecord",
    "Step",
    "StepKind",
    "step_at",
]

JSON: TypeAlias = Any
StepKind: TypeAlias = Literal["hook", "persist", "pause"]
DeliveryKind: TypeAlias = Literal["prompt", "steer", "follow_up", "next_turn", "held", "sent"]


def _empty() -> Mapping[str, JSON]:
    return {}


@frozen(kw_only=True)
class Step:
    """Where the host paused: after a hook, after persisting an entry, or inside a wait
    (``streaming``, ``tools_running``, ``retry_wait``) where a test may abort or queue."""

    kind: StepKind
    name: str


@functools.cache
def step_at(kind: StepKind, name: str) -> Step:
    """The :class:`Step` of ``kind`` and ``name``, one value per pair (the host yields one at
    every hook, persisted entry and wait)."""
    return Step(kind=kind, name=name)


@frozen(kw_only=True)
class EventRecord:
    """One emitted hook; ``turn_index`` is the low-level run's turn (``None`` outside);
    ``signal`` and ``pending`` are what ``ctx.signal`` (``None``, ``"live"``, ``"aborted"``)
    and ``ctx.hasPendingMessages()`` showed at that moment."""

    name: str
    turn_index: int | None = None
    detail: Mapping[str, JSON] = field(factory=_empty)
    signal: str | None = None
    pending: bool = False


@frozen(kw_only=True)
class ExtensionErrorRecord:
    """Pi's ``extension_error``: ``extension`` is the extension's name, or ``<boundary>``
    for a refused continuation."""

    event: str
    extension: str
    error: str


@frozen(kw_only=True)
class NoticeRecord:
    """A ``ctx.ui.notify`` call, with the hook (or ``tool:``/``command:`` name) it came from."""

    source: str
    message: str
    level: str
    leaf_id: str | None = None
    """The session's leaf when the notice was given (what the notice could see)."""


@frozen(kw_only=True)
class ProviderRequestRecord:
    """One agent request as the provider received it (after ``context``,
    ``context_with_system`` and ``convertToLlm``); ``tokens`` is the scripted provider's
    estimate."""

    roles: tuple[str, ...]
    messages: tuple[JSON, ...]
    tokens: int
    turn_index: int
    leaf_id: str | None = None
    """The session's leaf when the request was built (its window is the request's window)."""


@frozen(kw_only=True)
class DeliveryRecord:
    """A queued, held or sent message that reached the session as an entry (``sent`` = a
    ``sendMessage`` appended at once because the host was not streaming)."""

    kind: DeliveryKind
    text: str
    entry_id: str


@define
class HostLog:
    """Everything observable, in order of occurrence."""

    events: list[EventRecord] = field(factory=list)
    errors: list[ExtensionErrorRecord] = field(factory=list)
    notices: list[NoticeRecord] = field(factory=list)
    requests: list[ProviderRequestRecord] = field(factory=list)
    deliveries: list[DeliveryRecord] = field(factory=list)
    persisted: list[Entry] = field(factory=list)

    def event_names(self) -> list[str]:
        return [record.name for record in self.events]
