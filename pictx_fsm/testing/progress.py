"""Progress of an exploration, shaped for where it goes.

In a terminal it is one live line, rewritten in place (``\\r``, padded to clear the last
one). In a log — a file, a pipe, CI — it is one plain line per :data:`LOG_INTERVAL` seconds
and one at each phase change to a new extension, so a default ``verify`` writes a few dozen
lines, not one per run.
"""

from __future__ import annotations

from typing import TextIO

from pictx_fsm.testing.explore import Progress

__all__ = ["LOG_INTERVAL", "ProgressLine"]

LOG_INTERVAL = 10.0
"""Seconds between two progress lines written to a log."""


class ProgressLine:
    """Writes exploration progress to ``stream``: live when it is a terminal."""

    def __init__(self, stream: TextIO, *, interval: float = LOG_INTERVAL) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.interval = interval
        self._last_time: float | None = None
        self._last_extension: str | None = None
        self._width = 0

    def __call__(self, p: Progress) -> None:
        fresh = p.extension != self._last_extension
        quiet = self._last_time is not None and p.elapsed - self._last_time < self.interval
        if not self.tty and not fresh and quiet:
            return
        self._last_time = p.elapsed
        self._last_extension = p.extension
        line = (
            f"[{p.extension} · {p.phase}] {p.examples} runs · {p.actions:,} actions · "
            f"{p.covered}/{p.declared} transitions · {p.elapsed:.1f}s"
        )
        if self.tty:
            pad = max(0, self._width - len(line))
            self._width = len(line)
            self.stream.write("\r" + line + " " * pad)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self) -> None:
        """End the live line (a log needs nothing)."""
        if self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
        self._width = 0
