"""The frozen IR of a machine declaration: what both engines and the diagrams read.

Built by :mod:`pictx_fsm.machines.document` from a validated document; never edited after.
"""

from __future__ import annotations

import attrs

from pictx_fsm.machines.conditions import Condition, guard_names

__all__ = ["MachineSpec", "RegionSpec", "TransitionSpec"]


@attrs.frozen(kw_only=True)
class RegionSpec:
    """One region: its atomic states in document order and its initial state."""

    name: str
    states: tuple[str, ...]
    initial: str


@attrs.frozen(kw_only=True)
class TransitionSpec:
    """One declared transition; ``id`` is stable: ``machine:region:source:event:index``.

    ``index`` is 1-based among the transitions from ``source`` on ``event``, in document order,
    which is also the order in which both engines try them.
    """

    id: str
    region: str
    source: str
    event: str
    index: int
    target: str
    cond: Condition | None
    unless: Condition | None
    actions: tuple[str, ...]

    @property
    def guards(self) -> tuple[str, ...]:
        """Guard names in the order a check may evaluate them (``cond`` then ``unless``)."""
        names = dict.fromkeys(guard_names(self.cond))
        names.update(dict.fromkeys(guard_names(self.unless)))
        return tuple(names)

    @property
    def is_guarded(self) -> bool:
        return self.cond is not None or self.unless is not None


@attrs.frozen(kw_only=True)
class MachineSpec:
    """A validated machine declaration: the single source both engines and diagrams read."""

    name: str
    description: str
    source: str
    sha256: str
    document: bytes = attrs.field(repr=False)
    parallel_state: str | None
    regions: tuple[RegionSpec, ...]
    events: tuple[str, ...]
    transitions: tuple[TransitionSpec, ...]

    @property
    def guard_names(self) -> tuple[str, ...]:
        return tuple(sorted({name for t in self.transitions for name in t.guards}))

    @property
    def action_names(self) -> tuple[str, ...]:
        return tuple(sorted({name for t in self.transitions for name in t.actions}))

    def region(self, name: str) -> RegionSpec:
        for region in self.regions:
            if region.name == name:
                return region
        raise KeyError(name)

    def transitions_from(
        self, region: str, state: str, event: str | None = None
    ) -> tuple[TransitionSpec, ...]:
        """Transitions leaving ``state`` (optionally on ``event``), in document order."""
        return tuple(
            t
            for t in self.transitions
            if t.region == region and t.source == state and (event is None or t.event == event)
        )

    def region_events(self, region: str) -> tuple[str, ...]:
        """Events the region declares anywhere (sorted): the ones it must answer strictly."""
        return tuple(sorted({t.event for t in self.transitions if t.region == region}))
