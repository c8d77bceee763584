"""A differential run on the model session: the same canonical actions applied to the
extension's world (the Pi version's host profile, Pi's own system message), then disposed as
Pi is when its input ends, and read back in the form the real side is."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from pictx_fsm.testing.differential.kit import DifferentialKit
from pictx_fsm.testing.differential.observe import (
    Observed,
    decisions,
    known_texts,
    labelled,
    leading_text,
    shape,
)

__all__ = ["ModelRun", "run_model"]

JSON: TypeAlias = Any


class ModelRun:
    """The model side of one run: what it did, and the world it ran in."""

    def __init__(self, world: Any, observed: Observed, estimates: tuple[int, ...]) -> None:
        self.world = world
        self.observed = observed
        self.estimates = estimates


def run_model(
    kit: DifferentialKit,
    config: Any,
    actions: Sequence[Any],
    known: Sequence[str],
    system_message: Mapping[str, JSON] | None,
    plant: Callable[[Any], None] | None = None,
) -> ModelRun:
    """Apply ``actions`` to a fresh world (``plant`` first changes its model session)."""
    world = kit.world(config, system_message)
    if plant is not None:
        plant(kit.session_of(world))
    try:
        for action in actions:
            world.apply(action)
        session = kit.session_of(world)
        session.dispose()  # as Pi does when RPC's stdin closes
    finally:
        world.release()
    texts = known_texts(known)
    requests = tuple(
        labelled(({"role": m.get("role"), "text": leading_text(m)} for m in r.messages), texts)
        for r in session.log.requests
    )
    decided = kit.model_decisions(world)
    if decided is None:
        decided = decisions(record for audit in world.audits for record in audit.records)
    observed = Observed(
        files=tuple(shape(store.tree.entries) for store in session.saved_files().values()),
        requests=requests,
        decisions=decided,
    )
    return ModelRun(world, observed, tuple(r.tokens for r in session.log.requests))
