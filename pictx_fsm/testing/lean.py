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
    from hypothesis.errors import UnsatisfiedAssumption
    from hypothesis.internal.conjecture.data import ConjectureData
    from hypothesis.internal.conjecture.utils import calc_label_from_cls
    from hypothesis.strategies._internal.core import BuildsStrategy
    from hypothesis.strategies._internal.lazy import unwrap_strategies
    from hypothesis.strategies._internal.strategies import (
        MAPPED_SEARCH_STRATEGY_DO_DRAW_LABEL,
        MappedStrategy,
    )
except ImportError:  # pragma: no cover - another Hypothesis: the plain strategies
    LEAN = False
else:
    LEAN = True

    _BUILDS_LABEL = calc_label_from_cls(BuildsStrategy)
    _MAPPED_LABEL = calc_label_from_cls(MappedStrategy)

    class _Builds(BuildsStrategy):  # type: ignore[type-arg]
        @property
        def class_label(self) -> int:
            return _BUILDS_LABEL

        def do_draw(self, data: ConjectureData) -> Any:
            args = [data.draw(strategy) for strategy in self.args]
            kwargs = {name: data.draw(strategy) for name, strategy in self.kwargs.items()}
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
                    return self.pack(data.draw(self.mapped_strategy))
                except UnsatisfiedAssumption as error:
                    failed, discard = error, True
                finally:
                    data.stop_span(discard=discard)
            assert failed is not None
            raise failed


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
