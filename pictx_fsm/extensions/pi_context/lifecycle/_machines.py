"""The lifecycle's five machines, loaded from ``models/`` and bound to facts and actions.

Loading happens once per process (:func:`load_lifecycle` caches by directory): every document
is validated, every guard bound to the fact of its name and every action to the reducer of its
name, so a broken model fails here with a :class:`~pictx_fsm.errors.ModelDocumentError`
naming the document, the transition and the reference — never when an event first arrives.
An action the documents never name is an error too: it would be behaviour no diagram shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pictx_fsm.extensions.pi_context.lifecycle._actions import ACTIONS, Action
from pictx_fsm.extensions.pi_context.lifecycle._facts import FACTS, STATE_FACTS, Fact
from pictx_fsm.extensions.shared.machinery import BoundMachine, MachineFamily, bind_family
from pictx_fsm.machines import MachineSpec, family_loader

__all__ = ["MACHINE_NAMES", "Lifecycle", "LifecycleMachine", "build_lifecycle", "load_lifecycle"]

MACHINE_NAMES: tuple[str, ...] = ("reset_control", "budget", "boot_repair", "projection", "toggle")

LifecycleMachine = BoundMachine
"""A compiled lifecycle machine: its actions return their own names, in firing order, for the
step to reduce (:data:`~._actions.ACTIONS`)."""

Lifecycle = MachineFamily
"""The compiled machines, the facts and actions they are bound to, and the fingerprint
of the documents they came from."""


def build_lifecycle(
    specs: Mapping[str, MachineSpec],
    directory: Path,
    *,
    facts: Mapping[str, Fact] = FACTS,
    actions: Mapping[str, Action] = ACTIONS,
) -> Lifecycle:
    """Bind and compile ``specs`` to ``facts`` and ``actions`` (the lifecycle's own
    catalogues by default; a planted fault passes modified copies)."""
    return bind_family(
        specs, MACHINE_NAMES, directory, facts=facts, actions=actions, state_facts=STATE_FACTS
    )


FAMILY = "pi_context"
"""The directory of ``models/`` that holds pi-context's machines."""


load_lifecycle = family_loader(FAMILY, build_lifecycle)
"""Load and bind the lifecycle machines (default: ``<models>/pi_context``)."""
