"""The lease's own machine (``models/bridge/bridge_lease.yaml``), bound and run.

The extension follows it from the manifest's table (``connection.mjs``'s follower, the same
semantics as the compiled engine) and the model-session twin steps it here: unleased, held,
broken for the connection, and a new connection starting unleased. Its actions are names each
follower carries out in its own world (sending a leased hook pipelined, ending leases).
"""

from __future__ import annotations

import functools
from typing import Any, Final

from attrs import define, field

from pictx_fsm.hosts.pi.connection import FAMILY, machine_table
from pictx_fsm.machines import CompiledMachine, Configuration, MachineBindings, models_dir
from pictx_fsm.machines.document import load_machine_document

__all__ = ["ACTIONS", "MACHINE", "LeaseFollower", "lease_table"]

MACHINE: Final = "bridge_lease"
ACTIONS: Final = ("send_pipelined", "stop_leasing")


@functools.lru_cache(maxsize=1)
def _compiled() -> CompiledMachine[None, str]:
    spec = load_machine_document(models_dir() / FAMILY / f"{MACHINE}.yaml")
    bindings: MachineBindings[None, str] = MachineBindings(
        machine=MACHINE,
        guards={},
        actions={name: functools.partial(_named, name) for name in ACTIONS},
    )
    return CompiledMachine.build(spec, bindings)


def _named(name: str, facts: None) -> tuple[str, ...]:
    return (name,)


def lease_table() -> dict[str, Any]:
    """The machine as the extension runs it."""
    return machine_table(_compiled().spec)


@define
class LeaseFollower:
    """A follower of the machine; :meth:`fire` raises on an undeclared event (a bug)."""

    history: list[tuple[str, str, str]] = field(factory=list)
    """``(source, event, target)`` of every step."""
    _config: Configuration = field(factory=lambda: _compiled().initial())

    @property
    def state(self) -> str:
        return self._config.state(MACHINE)

    def fire(self, event: str) -> tuple[str, ...]:
        """Step the machine; the actions to carry out."""
        step = _compiled().step(self._config, event, None)
        self.history.append((self.state, event, step.after.state(MACHINE)))
        self._config = step.after
        return step.effects
