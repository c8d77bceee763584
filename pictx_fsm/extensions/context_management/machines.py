"""The five declared machines of ``models/context_management/``, bound and compiled.

Loading validates every document and resolves every guard and action name at import (a
broken declaration stops the import with the document, transition and name at fault), the
same way :mod:`pictx_fsm.extensions.pi_context.lifecycle` loads pi-context's machines.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from attrs import evolve, field, frozen

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.extensions.context_management import guards
from pictx_fsm.extensions.context_management.act_auto import AUTO_ACTIONS
from pictx_fsm.extensions.context_management.act_background import BACKGROUND_ACTIONS
from pictx_fsm.extensions.context_management.act_generation import GENERATION_ACTIONS
from pictx_fsm.extensions.context_management.act_handoff import HANDOFF_ACTIONS
from pictx_fsm.extensions.context_management.act_notes import NOTES_ACTIONS
from pictx_fsm.extensions.context_management.effects import Intent
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.tools import ToolAnswers, answer_tool
from pictx_fsm.machines import (
    CompiledMachine,
    Configuration,
    MachineBindings,
    MachineSpec,
    family_loader,
    fingerprint,
    models_dir,
)

__all__ = [
    "BINDINGS",
    "FAMILY",
    "MACHINE_NAMES",
    "Bindings",
    "CmMachines",
    "Engine",
    "build_machines",
    "family_dir",
    "load_machines",
    "with_bindings",
]

FAMILY: Final = "context_management"
Bindings = Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]]
BINDINGS: Final[Bindings] = MappingProxyType(
    {
        "notes_store": (guards.NOTES_STORE, NOTES_ACTIONS),
        "checkpoint": (guards.CHECKPOINT, GENERATION_ACTIONS),
        "background_notes": (guards.BACKGROUND, BACKGROUND_ACTIONS),
        "auto_handoff": (guards.AUTO_HANDOFF, AUTO_ACTIONS),
        "handoff": (guards.HANDOFF, HANDOFF_ACTIONS),
    }
)
MACHINE_NAMES: Final = tuple(BINDINGS)
Engine = CompiledMachine[CmFacts, Intent]


@frozen(kw_only=True)
class CmMachines:
    """The compiled machines, the documents' fingerprint and their directory."""

    machines: Mapping[str, Engine]
    fingerprint: str
    directory: Path
    answers: ToolAnswers = field(default=answer_tool)
    """How the read-only tool calls are answered (bound like the guards and actions, so a
    planted fault can change an answer the way a regression would)."""

    def initial(self) -> tuple[tuple[str, Configuration], ...]:
        return tuple((name, m.initial()) for name, m in self.machines.items())

    @property
    def specs(self) -> Mapping[str, MachineSpec]:
        return {name: m.spec for name, m in self.machines.items()}

    def transition_ids(self) -> tuple[str, ...]:
        return tuple(t.id for m in self.machines.values() for t in m.spec.transitions)

    def declares(self, machine: str, state: str, event: str) -> bool:
        """Whether ``state`` of ``machine`` has a transition on ``event`` (feedback routing)."""
        engine = self.machines[machine]
        return bool(engine.table.get((0, state, event)))


def build_machines(
    specs: Mapping[str, MachineSpec], directory: Path, bindings: Bindings = BINDINGS
) -> CmMachines:
    missing = [name for name in MACHINE_NAMES if name not in specs]
    if missing:
        raise ModelDocumentError(
            str(directory), "models", f"missing machine document(s): {', '.join(missing)}"
        )
    machines: dict[str, Engine] = {}
    for name in MACHINE_NAMES:
        guard_table, action_table = bindings[name]
        bound: MachineBindings[CmFacts, Intent] = MachineBindings(
            machine=name, guards=guard_table, actions=action_table
        )
        machines[name] = CompiledMachine.build(specs[name], bound)
    return CmMachines(
        machines=MappingProxyType(machines),
        fingerprint=fingerprint([specs[name] for name in MACHINE_NAMES]),
        directory=directory,
    )


def family_dir(root: str | os.PathLike[str] | None = None) -> Path:
    base = Path(root) if root is not None else models_dir()
    return base / FAMILY


load_machines = family_loader(FAMILY, build_machines)
"""Load and bind the family (default: ``<models>/context_management``)."""


def with_bindings(
    change: Callable[[Bindings], Bindings], answers: ToolAnswers = answer_tool
) -> CmMachines:
    """The machines with modified bindings or tool answers (a planted fault)."""
    base = load_machines()
    built = build_machines(base.specs, base.directory, change(BINDINGS))
    return evolve(built, answers=answers)


load_machines()
