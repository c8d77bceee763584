"""A clock that tests advance: cooldowns, deadlines and the rolling hour on injected time.

Like :class:`~pictx_fsm.hosts.model.messages.TickClock` every reading moves time on by
``step`` ms (entries get distinct timestamps); :meth:`ManualClock.advance` lets minutes pass
between two host actions or while a model request runs.
"""

from __future__ import annotations

from pictx_fsm.hosts.model.messages import TickClock

__all__ = ["ManualClock"]


class ManualClock(TickClock):
    """Milliseconds since the epoch, advanced by readings and by :meth:`advance`."""

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"time cannot go back ({ms} ms)")
        self._now += ms

    def advance_to(self, ms: int) -> None:
        self._now = max(self._now, ms)
