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

from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants


@contextlib.contextmanager
def global_constants_only() -> Iterator[None]:
    """Generate as if no local module had constants (a private hook of Hypothesis; where it
    is missing, Hypothesis has no local pool and nothing needs pinning)."""
    harvest = getattr(providers, "_get_local_constants", None)
    if harvest is None:
        yield
        return
    empty = Constants()
    setattr(providers, "_get_local_constants", lambda: empty)  # noqa: B010
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        setattr(providers, "_get_local_constants", harvest)  # noqa: B010
        providers.CONSTANTS_CACHE.cache.clear()
