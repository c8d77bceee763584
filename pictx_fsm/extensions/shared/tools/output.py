"""The family's tool-output budget: no tool result exceeds 32 KiB of UTF-8 (pi-context N48,
notesoup S92), and what does not fit is cut to its longest fitting code-point prefix."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final, TypeAlias

from pictx_fsm import js

__all__ = [
    "DEFAULT_READ_WINDOW_CHARS",
    "HISTORY_PREVIEW_CHARS",
    "MAX_READ_WINDOW_CHARS",
    "TOOL_OUTPUT_MAX_BYTES",
    "Fits",
    "prefix_fit",
    "text_fits",
]

TOOL_OUTPUT_MAX_BYTES: Final = 32 * 1024
DEFAULT_READ_WINDOW_CHARS: Final = 12000
MAX_READ_WINDOW_CHARS: Final = 50000
"""A read window's default and largest ``limit_chars`` (N36, S102)."""
HISTORY_PREVIEW_CHARS: Final = 1200
"""Characters of one history item shown before "read this item for the rest" (R79, S113)."""

Fits: TypeAlias = Callable[[str], bool]


def text_fits(text: str) -> bool:
    """True when ``text`` is at most 32 KiB of UTF-8 on the wire."""
    return js.utf8_length(text) <= TOOL_OUTPUT_MAX_BYTES


def prefix_fit(text: str, fits: Fits) -> str:
    """The longest code-point prefix of ``text`` that ``fits`` accepts (N48).

    Binary search, then a back-off: a size can dip by a byte at the end (a numeric cursor
    turning ``null``), so the predicate is only nearly monotone.
    """
    if fits(text):
        return text
    low, high = 0, len(text)
    while low < high:
        middle = math.ceil((low + high) / 2)
        if fits(text[:middle]):
            low = middle
        else:
            high = middle - 1
    while low > 0 and not fits(text[:low]):
        low -= 1
    return text[:low]
