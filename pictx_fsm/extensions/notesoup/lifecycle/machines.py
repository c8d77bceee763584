"""notesoup's five machines, loaded from ``models/notesoup/`` and bound to its facts and
actions (the family's binding, :mod:`pictx_fsm.extensions.shared.machinery`): loaded once per
process per directory; a broken document fails here, naming it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from pictx_fsm.extensions.notesoup.lifecycle.actions import ACTIONS, Action
from pictx_fsm.extensions.notesoup.lifecycle.facts import FACTS, STATE_FACTS
from pictx_fsm.extensions.shared.machinery import Fact, MachineFamily, bind_family
from pictx_fsm.machines import MachineSpec, family_loader

__all__ = ["FAMILY", "MACHINE_NAMES", "build_machines", "load_machines"]

FAMILY: Final = "notesoup"
"""The directory of ``models/`` that holds notesoup's machines."""
MACHINE_NAMES: Final = (
    "notesoup_reset_control",
    "notesoup_budget",
    "notesoup_boot_repair",
    "notesoup_projection",
    "notesoup_toggle",
)


def build_machines(
    specs: Mapping[str, MachineSpec],
    directory: Path,
    *,
    facts: Mapping[str, Fact] = FACTS,
    actions: Mapping[str, Action] = ACTIONS,
) -> MachineFamily:
    """Bind and compile ``specs`` (a planted fault passes modified catalogues)."""
    return bind_family(
        specs, MACHINE_NAMES, directory, facts=facts, actions=actions, state_facts=STATE_FACTS
    )


load_machines = family_loader(FAMILY, build_machines)
"""notesoup's machines (default: ``<models>/notesoup``)."""
