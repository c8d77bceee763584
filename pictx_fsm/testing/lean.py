"""``st.builds`` and ``.map`` without the bookkeeping verify never reads.

Hypothesis's own ``builds`` records every argument's span and every built value's call for
its failure report (an explain phase, a pretty-printed example), and ``map`` enters a
``warnings.catch_warnings()`` block on every draw; verify writes its own trace and runs
neither phase, and that bookkeeping cost as much as the draws under it. These strategies are
subclasses of Hypothesis's, with its labels: they draw the same choices in the same spans, so
an exploration draws exactly the same runs (the tests compare both, choice for choice).
Where Hypothesis's internals are not what this module knows — a name missing, or, checked once
at import (:func:`draws_as_hypothesis`), a draw that differs from Hypothesis's own — the plain
strategies are used: verify then runs slower, never differently and never into an error.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
U = TypeVar("U")

try:  # Hypothesis's internals: the strategies these subclass, and the span a map opens
    from hypothesis.control import BuildContext
    from hypothesis.errors import FlakyStrategyDefinition, UnsatisfiedAssumption
    from hypothesis.internal.compat import add_note
    from hypothesis.internal.conjecture import utils as cu
    from hypothesis.internal.conjecture.choice import ValueHole
    from hypothesis.internal.conjecture.data import MAX_DEPTH, ConjectureData
    from hypothesis.internal.conjecture.utils import calc_label_from_cls
    from hypothesis.strategies._internal.collections import ListStrategy
    from hypothesis.strategies._internal.core import BuildsStrategy
    from hypothesis.strategies._internal.flatmapped import FlatMapStrategy
    from hypothesis.strategies._internal.lazy import unwrap_strategies
    from hypothesis.strategies._internal.strategies import (
        MAPPED_SEARCH_STRATEGY_DO_DRAW_LABEL,
        MappedStrategy,
        OneOfStrategy,
        SampledFromStrategy,
        SearchStrategy,
        check_strategy,
    )
except ImportError:  # pragma: no cover - another Hypothesis: the plain strategies
    LEAN = False
else:
    LEAN = True

    _BUILDS_LABEL = calc_label_from_cls(BuildsStrategy)
    _MAPPED_LABEL = calc_label_from_cls(MappedStrategy)
    _FLATMAP_LABEL = calc_label_from_cls(FlatMapStrategy)
    _LIST_LABEL = calc_label_from_cls(ListStrategy)
    _ONE_OF_LABEL = calc_label_from_cls(OneOfStrategy)
    _SAMPLED_LABEL = calc_label_from_cls(SampledFromStrategy)
    _UNREFERENCED: frozenset[type] = frozenset({tuple, list, dict})
    """Values a span cannot record (neither kept as they are nor weakly referenced):
    ``record_value_for_span`` would only fail to make a weak reference to them."""

    def _draw(data: ConjectureData, strategy: st.SearchStrategy[T]) -> T:
        """``data.draw(strategy)`` inside another draw (the top level, timed and observed,
        is left to ``data.draw``)."""
        return data.draw(strategy) if data.depth == 0 else _spanned(data, strategy)

    def _spanned(data: ConjectureData, strategy: st.SearchStrategy[T]) -> T:
        """``data.draw(strategy)`` as Hypothesis draws inside another draw (the same checks,
        label, span and recorded value) without the three imports its ``draw`` runs on
        every call (each a failed ``__path__`` lookup on a module under Python 3.11). A
        value being re-encoded (a ``ValueHole`` next) is left to ``data.draw``."""
        prefix = data.prefix
        if (
            prefix is not None
            and data.index < len(prefix)
            and isinstance(prefix[data.index], ValueHole)
        ):
            return data.draw(strategy)
        strategy.validate()
        if strategy.is_empty:
            data.mark_invalid(f"empty strategy {strategy!r}")
        if data.depth >= MAX_DEPTH:
            data.mark_invalid("max depth exceeded")
        unwrapped = unwrap_strategies(strategy)  # type: ignore[no-untyped-call]
        record = data._ConjectureData__span_record  # type: ignore[attr-defined]
        span_index = record.span_count
        data.start_span(label=unwrapped.label)
        try:
            try:
                value: T = unwrapped.do_draw(data)
            except FlakyStrategyDefinition as err:
                add_note(err, f"while drawing from {strategy!r}")  # type: ignore[no-untyped-call]
                raise
            if type(value) not in _UNREFERENCED:  # a container: recorded as nothing
                record.record_value_for_span(span_index, value)
            return value
        finally:
            data.stop_span()

    class _Builds(BuildsStrategy):  # type: ignore[type-arg]
        @property
        def class_label(self) -> int:
            return _BUILDS_LABEL

        def do_draw(self, data: ConjectureData) -> Any:
            args = [_draw(data, strategy) for strategy in self.args]
            kwargs = {name: _draw(data, strategy) for name, strategy in self.kwargs.items()}
            return self.target(*args, **kwargs)

    class _Mapped(MappedStrategy):  # type: ignore[type-arg]
        @property
        def class_label(self) -> int:
            return _MAPPED_LABEL

        def do_draw(self, data: ConjectureData) -> Any:
            failed: UnsatisfiedAssumption | None = None
            for _ in range(3):  # as MappedStrategy: a rejected value is drawn again
                data.start_span(MAPPED_SEARCH_STRATEGY_DO_DRAW_LABEL)
                discard = False
                try:
                    return self.pack(_draw(data, self.mapped_strategy))
                except UnsatisfiedAssumption as error:
                    failed, discard = error, True
                finally:
                    data.stop_span(discard=discard)
            assert failed is not None
            raise failed

    class _FlatMapped(FlatMapStrategy):  # type: ignore[type-arg]
        @property
        def class_label(self) -> int:
            return _FLATMAP_LABEL

        def do_draw(self, data: ConjectureData) -> Any:
            expanded = self.expand(_draw(data, self.base))
            check_strategy(expanded)
            return _draw(data, expanded)

    class _Lists(ListStrategy):  # type: ignore[type-arg]
        @property
        def class_label(self) -> int:
            return _LIST_LABEL

        def do_draw(self, data: ConjectureData) -> Any:
            if self.element_strategy.is_empty:
                assert self.min_size == 0
                return []
            with cu.many(
                data,
                min_size=self.min_size,
                max_size=self.max_size,
                average_size=self.average_size,
            ) as elements:
                return [_draw(data, self.element_strategy) for _ in elements]

    class _Sampled(SampledFromStrategy):  # type: ignore[type-arg]
        _strategies_only: bool | None = None
        """Whether every element is a strategy (known at the first draw)."""

        @property
        def class_label(self) -> int:
            return _SAMPLED_LABEL

        def do_draw(self, data: ConjectureData) -> Any:
            if self._transformations:  # mapped or filtered: Hypothesis's own draw
                return super().do_draw(data)
            # do_filtered_draw's first try, which nothing can reject without a filter
            elements = self.elements
            value = elements[data.draw_integer(0, len(elements) - 1)]
            strategies_only = self._strategies_only
            if strategies_only is None:
                strategies_only = self._strategies_only = all(
                    isinstance(x, SearchStrategy) for x in elements
                )
            if strategies_only and isinstance(value, SearchStrategy):
                # what SampledFromStrategy.do_draw notes for a failure report
                data._sampled_from_all_strategies_elements_message = (  # type: ignore[attr-defined]
                    "sampled_from was given a collection of strategies: {!r}. Was one_of intended?",
                    elements,
                )
            return value

    class _OneOf(OneOfStrategy):  # type: ignore[type-arg]
        _lean_sampler: SampledFromStrategy[Any] | None = None
        """The branch sampler, as Hypothesis's (built at the first draw)."""

        @property
        def class_label(self) -> int:
            return _ONE_OF_LABEL

        def do_draw(self, data: ConjectureData) -> Any:
            strategies = self.element_strategies
            if len(strategies) == 1:
                return _draw(data, strategies[0])
            sampler = self._lean_sampler
            if sampler is None:
                if any(
                    type(s).is_currently_empty is not SearchStrategy.is_currently_empty
                    for s in strategies
                ):  # a branch that can empty itself: Hypothesis's filtered draw
                    return super().do_draw(data)
                sampler = self._lean_sampler = SampledFromStrategy(strategies)
            return _draw(data, _draw(data, sampler))

    _LEAN_OF: dict[type, Callable[[Any], SearchStrategy[Any]]] = {
        BuildsStrategy: lambda s: _Builds(s.target, s.args, s.kwargs),
        MappedStrategy: lambda s: _Mapped(s.mapped_strategy, s.pack),
        FlatMapStrategy: lambda s: _FlatMapped(s.base, s.expand),
        ListStrategy: lambda s: _Lists(s.element_strategy, s.min_size, s.max_size),
        OneOfStrategy: lambda s: _OneOf(s.original_strategies),
        SampledFromStrategy: lambda s: _Sampled(
            s.elements,
            force_repr=s.force_repr,
            force_repr_braces=s.force_repr_braces,
            transformations=s._transformations,
        ),
    }
    """Each strategy this module knows, by its exact type: its lean subclass made from it."""


def untimed_draw(data: ConjectureData, strategy: st.SearchStrategy[T]) -> T:
    """``data.draw(strategy)`` at a test's top level without what Hypothesis adds there for
    its own report: the draw's time (an entry per draw), observability, a note on an error.
    The same checks, label, span and recorded value: the same choices."""
    if not LEAN:  # pragma: no cover
        return data.draw(strategy)
    return _spanned(data, strategy)


def builds(target: Callable[..., T], *args: Any, **kwargs: Any) -> st.SearchStrategy[T]:
    """``st.builds(target, *args, **kwargs)``, each argument a strategy."""
    return _lean(st.builds(target, *args, **kwargs))


def mapped(strategy: st.SearchStrategy[T], pack: Callable[[T], U]) -> st.SearchStrategy[U]:
    """``strategy.map(pack)`` (a ``sampled_from`` maps its elements, no span: its own draw)."""
    return _lean(strategy.map(pack))


def flatmapped(
    strategy: st.SearchStrategy[T], expand: Callable[[T], st.SearchStrategy[U]]
) -> st.SearchStrategy[U]:
    """``strategy.flatmap(expand)``."""
    return _lean(strategy.flatmap(expand))


def lists(
    elements: st.SearchStrategy[T], *, min_size: int = 0, max_size: int | None = None
) -> st.SearchStrategy[list[T]]:
    """``st.lists(elements, min_size=..., max_size=...)``."""
    return _lean(st.lists(elements, min_size=min_size, max_size=max_size))


def one_of(*strategies: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``st.one_of(*strategies)``."""
    return _lean(st.one_of(*strategies))


def sampled_from(elements: Sequence[T]) -> st.SearchStrategy[T]:
    """``st.sampled_from(elements)`` (one element is a ``just``: left as Hypothesis makes it)."""
    return _lean(st.sampled_from(elements))


def _lean(plain: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """``plain`` as its lean subclass, where this module knows the strategy it unwraps to
    (exactly that type: a subclass may draw differently); otherwise ``plain``."""
    if not LEAN:  # pragma: no cover
        return plain
    inner = unwrap_strategies(plain)  # type: ignore[no-untyped-call]
    make = _LEAN_OF.get(type(inner))
    return plain if make is None else make(inner)


def drawn(strategy: st.SearchStrategy[Any], seed: int, *, untimed: bool = False) -> Any:
    """What a draw from ``strategy`` does under the random source of ``seed``, as a test case
    would (inside a build context): the value, the choices, the spans (label, start, end,
    depth) and what a sample of strategies notes for a failure report. ``untimed`` draws with
    :func:`untimed_draw`, otherwise with ``data.draw``. Two strategies that give equal results
    for a seed draw the same run from it."""
    data = ConjectureData(random=random.Random(seed))
    with BuildContext(data, wrapped_test=drawn):
        value = untimed_draw(data, strategy) if untimed else data.draw(strategy)
    data.freeze()
    spans = [(span.label, span.start, span.end, span.depth) for span in data.spans]
    noted = getattr(data, "_sampled_from_all_strategies_elements_message", None)
    return value, data.choices, spans, noted and (noted[0], len(noted[1]))


def draws_as_hypothesis(seeds: int = 8) -> bool:
    """Whether every lean strategy, and a top-level untimed draw, does what Hypothesis's own
    does with the installed Hypothesis, on a composite of all six over ``seeds`` random
    sources. ``False`` also when a draw raises: an internal this module reads is gone."""
    try:
        plain, lean = _probe(lambda strategy: strategy), _probe(_lean)
        return all(drawn(lean, seed, untimed=True) == drawn(plain, seed) for seed in range(seeds))
    except Exception:  # a renamed or removed internal: the plain strategies, not a crash
        return False


def _probe(make: Callable[[st.SearchStrategy[Any]], st.SearchStrategy[Any]]) -> Any:
    """One strategy drawing through each of the six (``make`` turns each lean or leaves it)."""
    counts = make(st.sampled_from((0, 1, 2)))
    items = make(st.lists(make(st.one_of(st.integers(0, 3), st.just("x"))), max_size=3))
    return make(
        st.builds(
            _triple,
            items,
            make(counts.flatmap(_up_to)),
            make(make(st.integers(0, 5)).map(_doubled)),
        )
    )


def _triple(a: Any, b: Any, c: Any) -> tuple[Any, Any, Any]:
    return a, b, c


def _up_to(n: int) -> st.SearchStrategy[int]:
    """A flatmap's expansion (its label names this function: the same one on both sides)."""
    return st.integers(0, n)


def _doubled(n: int) -> int:
    return 2 * n


if LEAN and not draws_as_hypothesis():  # pragma: no cover - another Hypothesis
    LEAN = False
