"""Diagram IR: what a picture of a declared machine shows, extracted from its :class:`MachineSpec`.

Renderers (:mod:`~pictx_fsm.diagrams.mermaid`, :mod:`~pictx_fsm.diagrams.dot`) only format this
IR, so every format shows the same states, regions and labelled transitions, in document order,
with nothing run-dependent in it (no addresses, no timestamps): the text is a golden file.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from pictx_fsm.machines.conditions import render_condition
from pictx_fsm.machines.document import MachineSpec, TransitionSpec

__all__ = ["Diagram", "Edge", "Region", "extract", "transition_label"]


@attrs.frozen(kw_only=True)
class Edge:
    """One declared transition; ``count`` is its firing count when an overlay is drawn."""

    id: str
    source: str
    target: str
    label: str
    count: int | None = None

    @property
    def never_fired(self) -> bool:
        return self.count == 0

    @property
    def caption(self) -> str:
        """The label plus the overlay note: ``(fired N)`` or ``(never fired)``."""
        if self.count is None:
            return self.label
        note = "never fired" if self.count == 0 else f"fired {self.count}"
        return f"{self.label} ({note})"


@attrs.frozen(kw_only=True)
class Region:
    name: str
    states: tuple[str, ...]
    initial: str
    edges: tuple[Edge, ...]


@attrs.frozen(kw_only=True)
class Diagram:
    """A machine as drawn: regions (one for a flat machine) under an optional parallel state."""

    machine: str
    description: str
    parallel_state: str | None
    regions: tuple[Region, ...]


def transition_label(transition: TransitionSpec) -> str:
    """``event [cond unless u] / action, action`` — the UML-style label of a transition."""
    guards = []
    if transition.cond is not None:
        guards.append(render_condition(transition.cond))
    if transition.unless is not None:
        guards.append("unless " + render_condition(transition.unless))
    label = transition.event
    if guards:
        label += f" [{' '.join(guards)}]"
    if transition.actions:
        label += " / " + ", ".join(transition.actions)
    return label


def extract(spec: MachineSpec, counts: Mapping[str, int] | None = None) -> Diagram:
    """The diagram of ``spec``; with ``counts`` each edge carries its firing count (0 if absent)."""
    regions = tuple(
        Region(
            name=region.name,
            states=region.states,
            initial=region.initial,
            edges=tuple(
                Edge(
                    id=t.id,
                    source=t.source,
                    target=t.target,
                    label=transition_label(t),
                    count=None if counts is None else counts.get(t.id, 0),
                )
                for t in spec.transitions
                if t.region == region.name
            ),
        )
        for region in spec.regions
    )
    return Diagram(
        machine=spec.name,
        description=spec.description,
        parallel_state=spec.parallel_state,
        regions=regions,
    )
