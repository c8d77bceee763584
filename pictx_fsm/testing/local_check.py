"""``pictx-fsm check --workers N``: each layer's frontier shared among N local processes.

The replay of a state's prefix (:func:`~pictx_fsm.testing.check.expand`) is independent of
every other, so a layer is cut into contiguous batches of frontier states and each batch
replayed by a worker process; the driver absorbs the children in frontier, then alphabet,
order — the serial search's order, so the distinct states, the transitions and the shortest
counterexample are the serial run's (tested). The workers are started once per command
(``spawn``: fresh interpreters, so no two inherit the same notes sandbox or cache) and keep
each kit, configuration and alphabet they have built, and their caches, across layers.
Ray (:mod:`.ray_check`) does the same across machines.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from pictx_fsm.testing.check import (
    Child,
    Expander,
    ExpanderFactory,
    Node,
    Replayer,
    in_order,
    serial_expander,
)
from pictx_fsm.testing.kit import Kit

__all__ = ["BATCHES_PER_WORKER", "SERIAL_BELOW", "local_expander"]

BATCHES_PER_WORKER = 4
"""Batches a layer is cut into per worker: enough that a worker finishing early takes
another, few enough that each replays a run of neighbouring states."""

SERIAL_BELOW = 64
"""Transitions in a layer below which this process expands it (no worker is started for a
small check: starting one costs about a second)."""

_REPLAYER = Replayer()
"""This worker process's expander (each worker imports this module afresh)."""


def _expand(kit: str, config: Any, alphabet: str, paths: Sequence[tuple[int, ...]]) -> list[Child]:
    return _REPLAYER.expand(kit, config, alphabet, paths)


@contextmanager
def local_expander(workers: int) -> Iterator[ExpanderFactory]:
    """An expander factory dealing each layer to ``workers`` local processes, shut down on
    leaving the context."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:

        def factory(kit: Kit, config: Any, alphabet: Sequence[Any]) -> Expander:
            name = next(n for n, a in kit.alphabets().items() if tuple(a) == tuple(alphabet))
            locator = kit.locator or kit.name
            serial = serial_expander(kit, config, alphabet)
            data = config.to_json()

            def run(frontier: Sequence[Node]) -> list[Child]:
                if len(frontier) * len(alphabet) < SERIAL_BELOW:
                    return serial(frontier)
                paths = [path for path, _ in frontier]
                size = max(1, -(-len(paths) // (workers * BATCHES_PER_WORKER)))
                batches = [paths[i : i + size] for i in range(0, len(paths), size)]
                jobs = [pool.submit(_expand, locator, data, name, batch) for batch in batches]
                results = [job.result() for job in jobs]
                return in_order(frontier, len(alphabet), (c for r in results for c in r))

            return run

        yield factory
