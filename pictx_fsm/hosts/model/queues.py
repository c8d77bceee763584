"""Pi's message queues (pi-host §5, §7 "Queues"; observed in ``f_queue``).

* ``steering``: ``steer()`` texts (and ``sendMessage`` custom messages that trigger a turn
  while streaming), delivered one at a time at the next turn start, after the current tool
  results;
* ``follow_up``: ``followUp()`` texts, delivered one at a time when the agent would otherwise
  stop, in the same low-level run;
* ``held``: ``sendMessage(..., {triggerTurn: false})`` while streaming, appended at the current
  turn's end (after the boundary drafts) or before ``agent_settled``;
* ``next_turn``: ``sendMessage(..., {deliverAs: "nextTurn"})``, sent after the next prompt's
  user message.

``hasPendingMessages()`` counts queued *user* texts until their ``message_start`` (a taken
message is "in flight" until then); custom messages never count (pi-host §11.6).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, TypeAlias

from attrs import define, field, frozen

from pictx_fsm.hosts.model.messages import message_text
from pictx_fsm.hosts.model.records import DeliveryKind

__all__ = ["JSON", "Queued", "Queues"]

JSON: TypeAlias = Any


@frozen(kw_only=True)
class Queued:
    """A message waiting for delivery, built (and time-stamped) when it was queued."""

    kind: DeliveryKind
    message: Mapping[str, JSON]

    @property
    def is_user(self) -> bool:
        return self.message.get("role") == "user"

    @property
    def text(self) -> str:
        return message_text(self.message)


@define
class Queues:
    steering: deque[Queued] = field(factory=deque)
    follow_up: deque[Queued] = field(factory=deque)
    held: list[Queued] = field(factory=list)
    next_turn: list[Queued] = field(factory=list)
    in_flight: list[Queued] = field(factory=list)

    def take_steering(self) -> list[Queued]:
        """One steering message (Pi's default ``one-at-a-time`` mode), or none."""
        return self._take(self.steering)

    def take_follow_up(self) -> list[Queued]:
        """One follow-up message (``one-at-a-time``), or none."""
        return self._take(self.follow_up)

    def _take(self, queue: deque[Queued]) -> list[Queued]:
        if not queue:
            return []
        item = queue.popleft()
        self.in_flight.append(item)
        return [item]

    def started(self, item: Queued) -> None:
        """The message's ``message_start`` is being emitted: it no longer counts as pending."""
        if item in self.in_flight:
            self.in_flight.remove(item)

    def take_held(self) -> list[Queued]:
        held, self.held = self.held, []
        return held

    def take_next_turn(self) -> list[Queued]:
        items, self.next_turn = self.next_turn, []
        return items

    @property
    def queued(self) -> bool:
        """Steering or follow-up work is waiting (what lets a continuation run)."""
        return bool(self.steering or self.follow_up)

    def user_pending(self) -> int:
        """``pendingMessageCount``: queued or in-flight user texts."""
        if not (self.steering or self.follow_up or self.in_flight):
            return 0  # most hooks: every queue empty (the host asks at each of them)
        items = [*self.steering, *self.follow_up, *self.in_flight]
        return sum(1 for item in items if item.is_user)

    def pending_messages(self) -> int:
        """``context.pendingMessages`` of a boundary: steering if any, else follow-ups, plus
        the held custom messages."""
        queued = len(self.steering) if self.steering else len(self.follow_up)
        return queued + len(self.held)
