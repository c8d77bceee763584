"""Numbers drawn by index from prebuilt tables, so a seed means the same runs on every install.

Hypothesis (since 6.131) sometimes answers an integer draw with a constant found in the source
of a *local* module (any module outside site-packages: an editable install of pictx_fsm, a
test run's helpers), so the same seed would draw other runs from an editable install than
from a wheel. It harvests no integer between -99 and 99, and its own constants all lie beyond
±50,000: verify's strategies draw every integer in that range, and a larger number as an
element of a table of at most :data:`TABLE_SIZE` values, by its index
(``tests/test_verify_constant_pool.py`` draws from every strategy with a local module full of
constants loaded and without, and compares).

:func:`spread` lays a table out as Hypothesis lays out its own bounded integers, denser at the
low end (about as many values below 10,000 as above it between 2,000 and 40,000), so the
worlds and actions are drawn about as often small as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from hypothesis import strategies as st

__all__ = ["TABLE_SIZE", "spread", "table"]

T = TypeVar("T")

TABLE_SIZE = 100
"""The most values a table drawn by index holds: its index stays below 100, where Hypothesis
draws no constant."""
OFFSET = 200
""":func:`spread` spaces ``value + OFFSET`` geometrically: ranges near zero come out nearly
even, wide ones denser at their low end, as Hypothesis's own integers are."""


def table(values: Iterable[T]) -> st.SearchStrategy[T]:
    """``st.sampled_from`` over prebuilt values, at most :data:`TABLE_SIZE` of them (shrinks
    towards the first)."""
    elements = tuple(values)
    if not 0 < len(elements) <= TABLE_SIZE:
        raise ValueError(f"a table holds 1 to {TABLE_SIZE} values, not {len(elements)}")
    return st.sampled_from(elements)


def spread(low: int, high: int, count: int = TABLE_SIZE) -> tuple[int, ...]:
    """Up to ``count`` distinct integers from ``low`` to ``high`` (both included), ascending,
    ``value + OFFSET`` geometrically spaced."""
    if not (-OFFSET < low < high and 2 <= count <= TABLE_SIZE):
        raise ValueError(f"spread({low}, {high}, {count}): needs -{OFFSET} < low < high, 2-100")
    first, ratio = low + OFFSET, (high + OFFSET) / (low + OFFSET)
    values = {round(first * ratio ** (step / (count - 1))) - OFFSET for step in range(count)}
    return tuple(sorted(values))
