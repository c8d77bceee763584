"""``pictx-fsm check --ray``: a layer's frontier sharded over Ray workers by state hash.

The workers are actors that build a kit, a configuration and an alphabet once and replay
the paths they are dealt; the frontier's states are dealt by their digest (a state always
goes to the same worker), and the driver absorbs the children in frontier, then alphabet,
order — the order of a serial search, so the distinct states, the transitions and the
shortest counterexample are the serial run's (tested). The driver keeps the seen digests
(16 bytes a state).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pictx_fsm.testing.check import Child, Expander, ExpanderFactory, Node, Replayer, in_order
from pictx_fsm.testing.kit import Kit
from pictx_fsm.testing.ray_support import worker_count

__all__ = ["ray_expander"]


def ray_expander(workers: int | None = None) -> ExpanderFactory:
    """An expander factory dealing each layer's states to ``workers`` Ray actors (started
    once, shared by every search of the command)."""
    import ray

    actors = [ray.remote(num_cpus=1)(Replayer).remote() for _ in range(worker_count(workers))]

    def factory(kit: Kit, config: Any, alphabet: Sequence[Any]) -> Expander:
        name = next(n for n, a in kit.alphabets().items() if tuple(a) == tuple(alphabet))
        locator = kit.locator or kit.name
        data = config.to_json()

        def run(frontier: Sequence[Node]) -> list[Child]:
            shares: list[list[tuple[int, ...]]] = [[] for _ in actors]
            for path, digest in frontier:
                shares[int.from_bytes(digest[:4], "big") % len(actors)].append(path)
            pending = [
                actors[i].expand.remote(locator, data, name, share)  # type: ignore[attr-defined]
                for i, share in enumerate(shares)
                if share
            ]
            results = ray.get(pending)
            return in_order(frontier, len(alphabet), (c for result in results for c in result))

        return run

    return factory
