"""A seed generates the same runs wherever pictx_fsm is installed: Hypothesis's pool of
constants harvested from local modules (an editable install, a test run's helpers) cannot
answer any draw of verify's strategies, because every integer they draw lies between -99 and
99 (larger numbers come from tables drawn by index), where the harvest keeps nothing."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given, seed, settings
from hypothesis import strategies as st

from pictx_fsm.extensions.context_management.kit import strategies as cm
from pictx_fsm.extensions.pi_context.kit.kit import KIT
from pictx_fsm.extensions.pi_context.kit.strategies import GROUPS, SWARMS, world_configs
from pictx_fsm.extensions.pi_context.kit.tool_calls import tool_scripts
from pictx_fsm.testing.explore import ExploreOptions, explore, run_lengths
from pictx_fsm.testing.tables import TABLE_SIZE, table

OPTIONS = ExploreOptions(
    examples=12,
    steps=25,
    seed=7,
    scenarios=False,
    variants={"profile": ("0.25.1",)},
    time_budget=600,
)


@contextlib.contextmanager
def local_module_with_constants(directory: Path, first: int) -> Iterator[None]:
    """A module outside site-packages full of integers (from ``first`` on, up to 60,000) and
    strings, as an editable install of a project (or its helpers) brings into
    ``sys.modules``. Hypothesis's pool keeps what it harvested once: each test brings its own
    numbers."""
    source = directory / f"probe_pool_{first}" / "constants_probe.py"
    source.parent.mkdir()
    small, large = range(first, 4_000, 13), range(first + 4_000, 60_000, 250)
    numbers = ", ".join(str(n) for n in (*small, *large))
    words = ", ".join(f'"w{n}"' for n in range(200))  # 724 in all: Hypothesis reads <= 1024
    source.write_text(f"NUMBERS = ({numbers})\nWORDS = ({words})\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("constants_probe", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["constants_probe"] = module
    try:
        yield
    finally:
        del sys.modules["constants_probe"]


def _fingerprint(report: Any) -> tuple[int, int, list[tuple[str, int]]]:
    return report.examples, report.actions, sorted(report.counts.items())


def test_a_seed_generates_the_same_runs_whatever_local_modules_are_loaded(
    tmp_path: Path,
) -> None:
    # Given a seeded exploration
    before = explore(KIT, OPTIONS)
    # When the same seed runs again with a local module full of constants loaded
    with local_module_with_constants(tmp_path, first=100):
        after = explore(KIT, OPTIONS)
    # Then it generated the same runs
    assert _fingerprint(after) == _fingerprint(before)


STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "world_configs": world_configs(),
    "swarms": SWARMS,
    "tool_scripts": tool_scripts(),
    "cm world_configs": cm.world_configs(((), ("pi-context",)), None),
    "cm moves": cm.moves(),
    "run_lengths 40": run_lengths(40),
    "run_lengths 1000": run_lengths(1_000),
    **{f"group {name}": moves for name, (moves, _, _) in GROUPS.items()},
}
"""Every strategy verify draws from, both extensions."""


def _draws(examples: int = 150) -> list[Any]:
    """What every strategy draws over ``examples`` seeded test cases, five draws each."""
    drawn: list[Any] = []

    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate])
    @seed(0)
    @given(data=st.data())
    def collect(data: st.DataObject) -> None:
        for name, strategy in STRATEGIES.items():
            drawn.append((name, [data.draw(strategy) for _ in range(5)]))

    collect()
    return drawn


def test_every_strategy_draws_the_same_values_whatever_local_modules_are_loaded(
    tmp_path: Path,
) -> None:
    # Given every strategy of both extensions' explorations, drawn from under one seed
    before = _draws()
    # When they are drawn from again with a local module full of constants loaded
    with local_module_with_constants(tmp_path, first=101):
        after = _draws()
    # Then they drew the same values, draw for draw
    assert after == before


@pytest.mark.parametrize("size", [0, TABLE_SIZE + 1])
def test_a_table_drawn_by_index_holds_at_most_a_hundred_values(size: int) -> None:
    # Given a table too small or too large to be drawn by an index below 100
    # When a strategy is built over it / Then it is refused, naming the limit
    with pytest.raises(ValueError, match=f"a table holds 1 to {TABLE_SIZE} values, not {size}"):
        table(range(size))
