"""One constant pool for every generated exploration, wherever pictx_fsm is installed.

Hypothesis (since 6.131) sometimes draws a constant harvested from the source of every
*local* module loaded — any module outside site-packages and the standard library. An
editable install makes pictx_fsm local, a test run adds its helpers, and a module imported
lazily mid-run grows the pool: the same ``--seed`` then generated 35 runs of 726 actions
from an editable install and 31 runs of 347 from the wheel of the same commit. verify draws
from Hypothesis's global pool only, so a seed means the same runs for every user.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

providers: ModuleType | None
try:  # Hypothesis's private hooks: the local harvest, an empty pool, the pool's cache
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants
except ImportError:  # another Hypothesis: none of these to pin
    providers = None


@contextlib.contextmanager
def global_constants_only() -> Iterator[None]:
    """Generate as if no local module had constants (private hooks of Hypothesis). Where
    they are missing or not the ones this module knows, Hypothesis has no local pool or
    another one: nothing is pinned, and verify runs as it does in a plain test."""
    harvest = getattr(providers, "_get_local_constants", None)
    cache: Any = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if harvest is None or not callable(getattr(cache, "clear", None)):
        yield
        return
    empty = Constants()
    setattr(providers, "_get_local_constants", lambda: empty)  # noqa: B010
    cache.clear()
    try:
        yield
    finally:
        setattr(providers, "_get_local_constants", harvest)  # noqa: B010
        cache.clear()
