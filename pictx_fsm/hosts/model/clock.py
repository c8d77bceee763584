"""A clock that tests advance: cooldowns, deadlines and the rolling hour on injected time.

Like :class:`~pictx_fsm.hosts.model.messages.TickClock` every reading moves time on by
``step`` ms (entries get distinct timestamps); :meth:`ManualClock.advance` lets minutes pass
between two host actions or while a model request runs.
"""

from __future__ import annotations


class ManualClock:
    """Milliseconds since the epoch, advanced by readings and by :meth:`advance`."""

    def __init__(self, start: int = 1_796_007_840_000, step: int = 1) -> None:
        self._now = start
        self._step = step

    def __call__(self) -> int:
        now = self._now
        self._now += self._step
        return now

    def peek(self) -> int:
        """The current time without moving it."""
        return self._now

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"time cannot go back ({ms} ms)")
        self._now += ms

    def advance_to(self, ms: int) -> None:
        self._now = max(self._now, ms)
