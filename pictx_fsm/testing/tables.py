"""Numbers drawn by index from prebuilt tables, so a seed means the same runs on every install.

Hypothesis (since 6.131) sometimes answers an integer draw with a constant found in the source
of a *local* module (any module outside site-packages: an editable install of pictx_fsm, a
test run's helpers), so the same seed would draw other runs from an editable install than
from a wheel. It harvests no integer between -99 and 99, and its own constants all lie beyond
±50,000: verify's strategies draw every integer in that range, and a larger number as an
element of a table of at most :data:`TABLE_SIZE` values, by its index
(``tests/test_verify_constant_pool.py`` draws from every strategy with a local module full of
constants loaded and without, and compares).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from hypothesis import strategies as st

__all__ = ["TABLE_SIZE", "table"]

T = TypeVar("T")

TABLE_SIZE = 100
"""The most values a table drawn by index holds: its index stays below 100, where Hypothesis
draws no constant."""


def table(values: Iterable[T]) -> st.SearchStrategy[T]:
    """``st.sampled_from`` over prebuilt values, at most :data:`TABLE_SIZE` of them (shrinks
    towards the first)."""
    elements = tuple(values)
    if not 0 < len(elements) <= TABLE_SIZE:
        raise ValueError(f"a table holds 1 to {TABLE_SIZE} values, not {len(elements)}")
    return st.sampled_from(elements)
