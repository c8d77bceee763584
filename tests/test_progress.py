"""verify's progress fits where it goes: one live line in a terminal, one line per interval
in a log (a default verify wrote 584 KB of progress into a CI log before)."""

from __future__ import annotations

import io

from pictx_fsm.testing.explore import Progress
from pictx_fsm.testing.progress import LOG_INTERVAL, ProgressLine


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _tick(extension: str, elapsed: float, runs: int = 1) -> Progress:
    return Progress(
        extension=extension,
        phase="explore",
        examples=runs,
        actions=runs * 10,
        covered=3,
        declared=9,
        elapsed=elapsed,
    )


def test_in_a_log_progress_is_one_line_per_interval_and_per_extension() -> None:
    # Given a log (not a terminal)
    log = io.StringIO()
    progress = ProgressLine(log)
    # When a thousand runs of two extensions report over 45 seconds each
    for extension in ("pi-context", "context-management"):
        for run in range(1000):
            progress(_tick(extension, elapsed=run * 0.045, runs=run))
    progress.done()
    # Then each extension wrote its first line and one per interval, no carriage returns
    lines = log.getvalue().splitlines()
    per_extension = 1 + int(999 * 0.045 // LOG_INTERVAL)
    assert len(lines) == 2 * per_extension
    assert "\r" not in log.getvalue()
    assert lines[0].startswith("[pi-context · explore] 0 runs")


def test_in_a_terminal_progress_is_one_live_line_rewritten_in_place() -> None:
    # Given a terminal
    terminal = _Terminal()
    progress = ProgressLine(terminal)
    # When runs report, a long line then a shorter one
    progress(_tick("pi-context", 0.1, runs=123456))
    progress(_tick("pi-context", 0.2, runs=1))
    progress.done()
    # Then every report rewrote the same line, the shorter one clearing what remained,
    # and the line ended once
    text = terminal.getvalue()
    assert text.count("\r") == 2 and text.count("\n") == 1
    first, second = text.strip("\n").split("\r")[1:]
    assert len(second) == len(first)
