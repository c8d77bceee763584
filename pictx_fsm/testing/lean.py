"""``st.builds`` and ``.map`` without the bookkeeping verify never reads.

Hypothesis's own ``builds`` records every argument's span and every built value's call for
its failure report (an explain phase, a pretty-printed example), and ``map`` enters a
``warnings.catch_warnings()`` block on every draw; verify writes its own trace and runs
neither phase, and that bookkeeping cost as much as the draws under it. These strategies are
subclasses of Hypothesis's, with its labels: they draw the same choices in the same spans, so
an exploration draws exactly the same runs (the tests compare both, choice for choice).
Where Hypothesis's internals are not what this module knows, the plain strategies are used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
U = TypeVar("U")

try:  # Hypothesis's internals: the strategies these subclass, and the span a map opens
    from hypothesis.errors import FlakyStrategyDefinition, UnsatisfiedAssumption
    from hypothesis.internal.compat import add_note
    from hypothesis.internal.conjecture.choice import ValueHole
    from hypothesis.internal.conjecture.data import MAX_DEPTH, ConjectureData
    from hypothesis.internal.conjecture.utils import calc_label_from_cls
    from hypothesis.strategies._internal.core import BuildsStrategy
    from hypothesis.strategies._internal.flatmapped import FlatMapStrategy
    from hypothesis.strategies._internal.lazy import unwrap_strategies
    from hypothesis.strategies._internal.strategies import (
        MAPPED_SEARCH_STRATEGY_DO_DRAW_LABEL,
        MappedStrategy,
        check_strategy,
    )
except ImportError:  # pragma: no cover - another Hypothesis: the plain strategies
    LEAN = False
else:
    LEAN = True

    _BUILDS_LABEL = calc_label_from_cls(BuildsStrategy)
    _MAPPED_LABEL = calc_label_from_cls(MappedStrategy)
    _FLATMAP_LABEL = calc_label_from_cls(FlatMapStrategy)

    def _draw(data: ConjectureData, strategy: st.SearchStrategy[T]) -> T:
        """``data.draw(strategy)`` inside another draw, as Hypothesis draws it there (the
        same checks, label, span and recorded value) without the three imports its ``draw``
        runs on every call (each a failed ``__path__`` lookup on a module under Python
        3.11). The top level (timing, observability) and a value being re-encoded (a
        ``ValueHole`` next) are left to ``data.draw``."""
        prefix = data.prefix
        if data.depth == 0 or (
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


def builds(target: Callable[..., T], *args: Any, **kwargs: Any) -> st.SearchStrategy[T]:
    """``st.builds(target, *args, **kwargs)``, each argument a strategy."""
    plain = st.builds(target, *args, **kwargs)
    if not LEAN:  # pragma: no cover
        return plain
    built = unwrap_strategies(plain)  # type: ignore[no-untyped-call]
    if type(built) is not BuildsStrategy:  # pragma: no cover - not what this module knows
        return plain
    return _Builds(built.target, built.args, built.kwargs)


def mapped(strategy: st.SearchStrategy[T], pack: Callable[[T], U]) -> st.SearchStrategy[U]:
    """``strategy.map(pack)`` (a ``sampled_from`` or ``just`` maps its elements, no span:
    left as Hypothesis makes it)."""
    plain = strategy.map(pack)
    if not LEAN:  # pragma: no cover
        return plain
    mapping = unwrap_strategies(plain)  # type: ignore[no-untyped-call]
    if type(mapping) is not MappedStrategy:
        return plain
    return _Mapped(mapping.mapped_strategy, mapping.pack)


def flatmapped(
    strategy: st.SearchStrategy[T], expand: Callable[[T], st.SearchStrategy[U]]
) -> st.SearchStrategy[U]:
    """``strategy.flatmap(expand)``."""
    plain = strategy.flatmap(expand)
    if not LEAN:  # pragma: no cover
        return plain
    flat = unwrap_strategies(plain)  # type: ignore[no-untyped-call]
    if type(flat) is not FlatMapStrategy:  # pragma: no cover - not what this module knows
        return plain
    return _FlatMapped(flat.base, flat.expand)
