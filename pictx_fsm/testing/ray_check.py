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

from pictx_fsm.testing.check import Child, Expander, ExpanderFactory, Node, expand_frontier
from pictx_fsm.testing.kit import Kit, kit_named
from pictx_fsm.testing.ray_support import worker_count

__all__ = ["ray_expander"]


class Replayer:
    """A worker: replays the paths it is dealt, for any kit, configuration and alphabet."""

    def __init__(self) -> None:
        self._built: dict[tuple[str, str, str], tuple[Kit, Any, Sequence[Any]]] = {}
        self._judged: dict[tuple[str, str, str], set[bytes]] = {}

    def expand(
        self, kit: str, config: Any, alphabet: str, paths: Sequence[tuple[int, ...]]
    ) -> list[Child]:
        key = (kit, repr(config), alphabet)
        built = self._built.get(key)
        if built is None:
            found = kit_named(kit)
            built = self._built[key] = (
                found,
                found.config_from_json(config),
                found.alphabets()[alphabet],
            )
        judged = self._judged.setdefault(key, set())
        return expand_frontier(built[0], built[1], built[2], paths, judged)


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
            children: dict[tuple[int, ...], Child] = {}
            for result in ray.get(pending):
                children.update((child.path, child) for child in result)
            width = len(alphabet)
            return [children[(*path, index)] for path, _ in frontier for index in range(width)]

        return run

    return factory
