"""verify's lean ``builds``, ``map``, ``flatmap``, ``lists`` and ``one_of`` draw exactly what
Hypothesis's own draw (issue 11).

They drop bookkeeping only verify never reads; an exploration must still draw the very same
runs. Each case draws from Hypothesis's strategy and from the lean one under the same random
source, and the two must make the same choices, open the same spans with the same labels and
return equal values.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.strategies._internal.core import BuildsStrategy
from hypothesis.strategies._internal.lazy import unwrap_strategies

from pictx_fsm.extensions.pi_context.kit.actions import Advance, Prompt, Script
from pictx_fsm.testing import lean
from pictx_fsm.testing.lean import (
    LEAN,
    builds,
    draws_as_hypothesis,
    flatmapped,
    lists,
    mapped,
    one_of,
    sampled_from,
)


def _plain_tools(n: int) -> st.SearchStrategy[Any]:
    return st.lists(st.just("echo"), min_size=n, max_size=n).map(tuple)


def _lean_tools(n: int) -> st.SearchStrategy[Any]:
    return mapped(st.lists(st.just("echo"), min_size=n, max_size=n), tuple)


def _expanded(tools: Callable[[int], st.SearchStrategy[Any]]) -> Callable[[int], Any]:
    """One expand function's source for both sides: a flatmap's label names its function."""
    return lambda n: tools(n)


_BRANCHES = (st.integers(0, 3), st.just("x"), st.booleans(), st.integers(0, 3))


def _itself(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return strategy


_NO_TOOLS: st.SearchStrategy[tuple[str, ...]] = st.just(())
_CHARS = st.one_of(st.integers(8, 400), st.integers(2_000, 40_000))
CASES: dict[str, tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]] = {
    "builds, keywords": (st.builds(Prompt, chars=_CHARS), builds(Prompt, chars=_CHARS)),
    "builds, positional": (
        st.builds(lambda a, b: (a, b), st.integers(-3, 3), st.booleans()),
        builds(lambda a, b: (a, b), st.integers(-3, 3), st.booleans()),
    ),
    "builds inside builds": (
        st.builds(Script, reply=st.just("tools"), tools=st.lists(st.just("echo")).map(tuple)),
        builds(Script, reply=st.just("tools"), tools=mapped(st.lists(st.just("echo")), tuple)),
    ),
    "map of a list": (
        st.lists(st.sampled_from("abc"), max_size=6).map(tuple),
        mapped(st.lists(st.sampled_from("abc"), max_size=6), tuple),
    ),
    "map of a sampled_from (no span of its own)": (
        st.sampled_from((1, 2, 3)).map(lambda x: (x,)),
        mapped(st.sampled_from((1, 2, 3)), lambda x: (x,)),
    ),
    "map of builds": (
        st.builds(Advance, steps=st.integers(1, 4)).map(lambda a: (a,)),
        mapped(builds(Advance, steps=st.integers(1, 4)), lambda a: (a,)),
    ),
    "flatmap to a chosen strategy": (
        st.sampled_from((_CHARS, st.just(5), st.booleans())).flatmap(lambda s: s),
        flatmapped(st.sampled_from((_CHARS, st.just(5), st.booleans())), lambda s: s),
    ),
    "flatmap of lean ones inside builds": (
        st.builds(
            Script,
            reply=st.just("tools"),
            tools=st.sampled_from((0, 1, 2)).flatmap(_expanded(_plain_tools)),
        ),
        builds(
            Script,
            reply=st.just("tools"),
            tools=flatmapped(st.sampled_from((0, 1, 2)), _expanded(_lean_tools)),
        ),
    ),
    "lists of a fixed size": (
        st.lists(st.booleans(), min_size=7, max_size=7),
        lists(st.booleans(), min_size=7, max_size=7),
    ),
    "lists of lean ones, mapped": (
        st.lists(st.builds(Advance, steps=st.integers(1, 4)), min_size=1, max_size=3).map(tuple),
        mapped(lists(builds(Advance, steps=st.integers(1, 4)), min_size=1, max_size=3), tuple),
    ),
    "lean one_of": (
        st.one_of(st.integers(8, 400), st.integers(2_000, 40_000)),
        one_of(st.integers(8, 400), st.integers(2_000, 40_000)),
    ),
    "lean one_of of lists and a repeated branch inside builds": (
        st.builds(
            Script,
            reply=st.just("tools"),
            tools=st.one_of(st.lists(st.just("echo")).map(tuple), _NO_TOOLS, _NO_TOOLS),
        ),
        builds(
            Script,
            reply=st.just("tools"),
            tools=one_of(mapped(lists(st.just("echo")), tuple), _NO_TOOLS, _NO_TOOLS),
        ),
    ),
    "sampled_from of values": (
        st.sampled_from(("a", "b", 3, None)),
        sampled_from(("a", "b", 3, None)),
    ),
    "sampled_from of one value (a just)": (st.sampled_from(("a",)), sampled_from(("a",))),
    "sampled_from, mapped": (
        st.sampled_from((1, 2, 3)).map(lambda x: (x,)),
        sampled_from((1, 2, 3)).map(lambda x: (x,)),
    ),
    "weighted branches: a sampled strategy drawn": (
        st.sampled_from(_BRANCHES).flatmap(_itself),
        flatmapped(sampled_from(_BRANCHES), _itself),
    ),
    "one_of of lean ones": (
        st.one_of(st.builds(Advance, steps=st.integers(1, 4)), st.just(Advance(steps=9))),
        st.one_of(builds(Advance, steps=st.integers(1, 4)), st.just(Advance(steps=9))),
    ),
}


_drawn = lean.drawn
"""Value, choices, spans and note of one draw (the module's own comparison)."""


def test_the_lean_strategies_are_in_use_with_this_hypothesis() -> None:
    # Given the installed Hypothesis / When the module checked its draws at import
    # Then they drew what Hypothesis's own draw, and the lean strategies are on
    assert LEAN
    assert draws_as_hypothesis(seeds=40)


def test_a_draw_that_differs_from_hypothesis_own_turns_the_lean_strategies_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a Hypothesis whose map strategies carry another label than the one lean knows
    monkeypatch.setattr(lean, "_MAPPED_LABEL", 0x5EED)
    # When the import-time check runs / Then it finds the spans differ: plain strategies
    assert not draws_as_hypothesis()


def test_an_internal_gone_turns_the_lean_strategies_off_without_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a Hypothesis without an internal the lean strategies call
    def gone(strategy: object) -> object:
        raise AttributeError("unwrap_strategies")

    monkeypatch.setattr(lean, "unwrap_strategies", gone)
    # When the import-time check runs / Then it says no instead of raising
    assert not draws_as_hypothesis()


def test_with_the_lean_strategies_off_each_wrapper_is_hypothesis_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the lean strategies turned off (another Hypothesis)
    monkeypatch.setattr(lean, "LEAN", False)
    # When a strategy is built / Then it is Hypothesis's own, drawing as Hypothesis does
    built = builds(Advance, steps=st.integers(1, 4))
    assert type(unwrap_strategies(built)) is BuildsStrategy  # type: ignore[no-untyped-call]
    assert _drawn(built, 3) == _drawn(st.builds(Advance, steps=st.integers(1, 4)), 3)


@pytest.mark.parametrize("case", list(CASES))
def test_a_lean_strategy_draws_the_choices_spans_and_value_of_hypothesis_own(case: str) -> None:
    plain, lean = CASES[case]
    for seed in range(60):
        assert _drawn(lean, seed) == _drawn(plain, seed), seed


@pytest.mark.parametrize("case", list(CASES))
def test_an_untimed_top_level_draw_makes_the_choices_spans_and_value_of_data_draw(
    case: str,
) -> None:
    # Given Hypothesis's strategy and the lean one of a case
    for strategy in CASES[case]:
        for seed in range(30):
            # When each is drawn at the top level untimed and by data.draw
            # Then both make the same choices, open the same spans and give equal values
            assert _drawn(strategy, seed, untimed=True) == _drawn(strategy, seed), seed


@pytest.mark.parametrize("value", [(1, 2), [1], {"a": 1}])
def test_a_span_records_nothing_for_a_container_value(value: object) -> None:
    # Given a span of a test case
    data = ConjectureData(random=random.Random(0))
    record = data._ConjectureData__span_record  # type: ignore[attr-defined]
    # When Hypothesis records a tuple, list or dict as its value (what the lean draw skips)
    record.record_value_for_span(0, value)
    # Then nothing is recorded: such a value can be neither kept nor weakly referenced
    assert 0 not in record.span_values
