"""pi-context-management 0.6.0-beta.2's shared policy object (spec §0.1): every constant and
every budget derived from the model's context window, in one place.

Budgets are UTF-8 bytes; ``W × p%`` applies the percentage to the token window number and
rounds down (Q4, ``docs/decisions.md``). Times are milliseconds.
"""

from __future__ import annotations

from typing import Final

from attrs import frozen

__all__ = [
    "AUTO_COOLDOWN_MS",
    "AUTO_FORECAST_FLOOR",
    "AUTO_FORECAST_TARGET",
    "AUTO_MAX_PER_HOUR",
    "AUTO_THRESHOLD",
    "BACKGROUND_REQUEST_CAP",
    "BATCH_CAP",
    "BG_FAILURE_COOLDOWN_MS",
    "BG_MAX_TRIES",
    "BG_SELECT_BYTES",
    "BG_SUCCESS_COOLDOWN_MS",
    "BG_THRESHOLD_CAP",
    "CHECKPOINT_MAX_BYTES_CAP",
    "EXCERPT_MAX_BYTES",
    "FOREGROUND_REQUEST_CAP",
    "GENERATION_POLICY",
    "GEN_TARGET_RATIO",
    "GEN_TIMEOUT_MS",
    "HANDOFF_MAX_BYTES_CAP",
    "HOUR_MS",
    "LOG_BACKUPS",
    "LOG_MAX_BYTES",
    "NOTE_MAX_BYTES_CAP",
    "NOTE_MAX_ITEMS",
    "NOTE_STATE_VERSION",
    "PARENT_READ_CAP",
    "READ_MAX_BYTES",
    "RECALL_TURN_BYTES_CAP",
    "REPAIRS_PER_GENERATION",
    "SAFETY_MARGIN_FLOOR",
    "SEARCH_PAGE_HITS",
    "VERSION",
    "Budgets",
    "percent_of",
    "request_cap",
]

VERSION: Final = "0.6.0-beta.2"
NOTE_STATE_VERSION: Final = 2
"""M7: note state is written as version 2; older versions are read."""

NOTE_MAX_ITEMS: Final = 32
NOTE_MAX_BYTES_CAP: Final = 8000
CHECKPOINT_MAX_BYTES_CAP: Final = 16384
GEN_TARGET_RATIO: Final = 0.80
RECALL_TURN_BYTES_CAP: Final = 4000
SAFETY_MARGIN_FLOOR: Final = 16384
READ_MAX_BYTES: Final = 3000
EXCERPT_MAX_BYTES: Final = 1100
GEN_TIMEOUT_MS: Final = 300_000
FOREGROUND_REQUEST_CAP: Final = 16
"""Plugin compaction and manual handoff."""
BACKGROUND_REQUEST_CAP: Final = 4
"""Background notes and automatic handoff."""
BATCH_CAP: Final = 16
REPAIRS_PER_GENERATION: Final = 1
BG_THRESHOLD_CAP: Final = 16384
BG_SELECT_BYTES: Final = 64 * 1024
BG_SUCCESS_COOLDOWN_MS: Final = 60_000
BG_FAILURE_COOLDOWN_MS: Final = 60_000
BG_MAX_TRIES: Final = 2
HANDOFF_MAX_BYTES_CAP: Final = 16384
PARENT_READ_CAP: Final = 32 * 1024 * 1024
AUTO_THRESHOLD: Final = 0.80
AUTO_FORECAST_FLOOR: Final = 0.65
AUTO_FORECAST_TARGET: Final = 0.90
AUTO_COOLDOWN_MS: Final = 5 * 60_000
AUTO_MAX_PER_HOUR: Final = 3
HOUR_MS: Final = 3_600_000
LOG_MAX_BYTES: Final = 2 * 1024 * 1024
LOG_BACKUPS: Final = 2
SEARCH_PAGE_HITS: Final = 8
"""Hits per ``context_history_search`` page (not given by the package; decisions.md)."""
GENERATION_POLICY: Final = "v0.5.3"
"""Part of the background retry key (M43): the 300 s budget policy since 0.5.3."""


def percent_of(window: int, percent: int) -> int:
    """``W × p%`` rounded down (Q4)."""
    return (window * percent) // 100


@frozen(kw_only=True)
class Budgets:
    """The byte budgets of one context window ``W`` (spec §0.1)."""

    context_window: int

    @property
    def note_max_bytes(self) -> int:
        return min(NOTE_MAX_BYTES_CAP, percent_of(self.context_window, 5))

    @property
    def checkpoint_max_bytes(self) -> int:
        return min(CHECKPOINT_MAX_BYTES_CAP, percent_of(self.context_window, 10))

    @property
    def generation_target_bytes(self) -> int:
        """M29: generation aims at 80 % of the actual notes budget."""
        return (self.note_max_bytes * 4) // 5

    @property
    def safety_margin(self) -> int:
        return max(SAFETY_MARGIN_FLOOR, percent_of(self.context_window, 20))

    @property
    def background_threshold(self) -> int:
        return min(BG_THRESHOLD_CAP, percent_of(self.context_window, 10))

    @property
    def handoff_max_bytes(self) -> int:
        return min(HANDOFF_MAX_BYTES_CAP, percent_of(self.context_window, 10))

    def recall_turn_bytes(self, tokens: int | None) -> int:
        """M23: min(4000, W×5 %, safe remaining space); 0 when usage is unknown.

        Safe remaining space = W − current tokens − safety margin (inferred)."""
        if tokens is None:
            return 0
        safe = self.context_window - tokens - self.safety_margin
        return max(0, min(RECALL_TURN_BYTES_CAP, percent_of(self.context_window, 5), safe))

    @property
    def batch_bytes(self) -> int:
        """M27: one request's serialized JSON bytes: the window (a token count, bytes being
        the conservative unit) less the safety margin and the reserved output (a whole
        checkpoint). System prompt, carried notes and sources share it."""
        return max(0, self.context_window - self.safety_margin - self.checkpoint_max_bytes)


def request_cap(kind: str) -> int:
    """M28: 16 requests on foreground paths, 4 on background and automatic ones."""
    if kind in ("background", "handoff_auto"):
        return BACKGROUND_REQUEST_CAP
    return FOREGROUND_REQUEST_CAP
