"""Boundary values: the numeric lines an extension's guards compare, met at −1, exactly and +1.

A guard that compares with ``≤`` where the rule says ``<`` (or a line one off) decides like the
right one everywhere but on the line itself; random draws almost never land there. A kit
therefore names its lines (read from its policy and its guards:
:meth:`~pictx_fsm.testing.kit.Kit.boundary_names`), its generator draws values at each line
−1, exactly and +1 besides the random ones (:func:`offsets`), and it counts, from what its
decisions compared, which of those values a run met (:func:`hit`, tallied under
:data:`TALLY`). ``verify`` reports the count per extension (:func:`summary`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Final

from hypothesis import strategies as st

__all__ = ["DELTAS", "TALLY", "hit", "offsets", "summary"]

DELTAS: Final = (-1, 0, 1)
"""Where a boundary value lies: one below the line, on it, one above."""
TALLY: Final = "boundaries"
"""The name of the tally (:meth:`~pictx_fsm.testing.kit.Kit.tally`) that counts the hits."""
_SIGNS: Final = {-1: "−1", 0: "=", 1: "+1"}


def offsets() -> st.SearchStrategy[int]:
    """One of :data:`DELTAS`."""
    return st.sampled_from(DELTAS)


def hit(name: str, value: float, line: float) -> str | None:
    """The tally key when ``value`` lies on ``line`` or one from it (``reserve:-1``), else
    ``None``."""
    offset = value - line
    if offset not in DELTAS:
        return None
    return f"{name}:{int(offset)}"


def summary(names: Sequence[str], hits: Mapping[str, int] | None) -> list[str]:
    """The report lines: how many of the lines' boundary values decisions met, and which."""
    if not names:
        return []
    counts = Counter(hits or {})
    parts = []
    met = 0
    for name in names:
        signs = [_SIGNS[d] for d in DELTAS if counts[f"{name}:{d}"]]
        met += len(signs)
        parts.append(f"{name} {' '.join(signs) if signs else '–'}")
    total = len(names) * len(DELTAS)
    lines = [f"boundaries     {met}/{total} boundary values met (line −1, =, +1) by a decision"]
    lines += [f"  {part}" for part in parts]
    return lines
