"""The bridge's connection machine (``models/bridge/bridge_connection.yaml``), bound and run.

The JS extension follows this machine from the transition table the manifest carries; the
model-session twin (:mod:`.twin`) steps it here with the compiled engine; the server checks
every transition the extension reports against it before auditing it. One declaration, three
followers, so the degraded mode the user meets is the one drawn in ``diagrams/``.

Guards read two counters the follower keeps: ``restarted`` (this start is a restart) and
``restarts_left`` (fewer restarts than :data:`MAX_RESTARTS` so far). Actions are names: each
follower carries them out in its own world (spawning a process, rebinding a runtime).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

from attrs import define, field, frozen

from pictx_fsm.machines import (
    CompiledMachine,
    Configuration,
    MachineBindings,
    MachineSpec,
    models_dir,
)
from pictx_fsm.machines.conditions import And, Condition, GuardRef, Not
from pictx_fsm.machines.document import load_machine_document

__all__ = [
    "ACTIONS",
    "BACKOFF_MS",
    "FAMILY",
    "MACHINE",
    "MAX_RESTARTS",
    "Connection",
    "ConnectionFacts",
    "Transition",
    "backoff_ms",
    "condition_json",
    "connection_spec",
    "machine_table",
    "transition_table",
]

MACHINE: Final = "bridge_connection"
FAMILY: Final = "bridge"
MAX_RESTARTS: Final = 3
"""Restarts per session before the bridge stays degraded (a crash loop is not retried forever)."""
BACKOFF_MS: Final = (0, 250, 1000)
"""Delay before the n-th restart, counted from the fault (the last value repeats)."""


@frozen(kw_only=True)
class ConnectionFacts:
    """What the guards read: the follower's restart counter against the limit."""

    restarts: int
    max_restarts: int = MAX_RESTARTS


def _restarted(facts: ConnectionFacts) -> bool:
    return facts.restarts > 0


def _restarts_left(facts: ConnectionFacts) -> bool:
    return facts.restarts < facts.max_restarts


def _named(name: str) -> Any:
    return lambda facts: (name,)


ACTIONS: Final = (
    "spawn",
    "resync",
    "diagnose",
    "announce_fault",
    "report_loss",
    "give_up",
    "stop_server",
    "close",
)


def connection_spec() -> MachineSpec:
    """The declaration, read from the package's models directory."""
    return _compiled().spec


@functools.lru_cache(maxsize=1)
def _compiled() -> CompiledMachine[ConnectionFacts, str]:
    spec = load_machine_document(models_dir() / FAMILY / f"{MACHINE}.yaml")
    bindings: MachineBindings[ConnectionFacts, str] = MachineBindings(
        machine=MACHINE,
        guards={"restarted": _restarted, "restarts_left": _restarts_left},
        actions={name: _named(name) for name in ACTIONS},
    )
    return CompiledMachine.build(spec, bindings)


@frozen(kw_only=True)
class Transition:
    """One step of the connection: what fired and the actions to carry out."""

    event: str
    source: str
    target: str
    transition_id: str
    guards: tuple[tuple[str, bool], ...]
    actions: tuple[str, ...]
    restarts: int


@define
class Connection:
    """A follower of the machine: its state and the restart counter the guards read."""

    max_restarts: int = MAX_RESTARTS
    restarts: int = 0
    history: list[Transition] = field(factory=list)
    _config: Configuration = field(factory=lambda: _compiled().initial())

    @classmethod
    def at(cls, state: str, restarts: int) -> Connection:
        """A follower placed in ``state`` (the server re-checks reported transitions)."""
        return cls(restarts=restarts, config=Configuration(states=((MACHINE, state),)))

    @property
    def state(self) -> str:
        return self._config.state(MACHINE)

    def fire(self, event: str) -> Transition:
        """Step the machine; raises :class:`~pictx_fsm.errors.IllegalEventError` when the
        declaration has no enabled transition (a follower bug, never a host input)."""
        if event == "retry":
            self.restarts += 1
        facts = ConnectionFacts(restarts=self.restarts, max_restarts=self.max_restarts)
        step = _compiled().step(self._config, event, facts)
        [fired] = step.fired
        self._config = step.after
        transition = Transition(
            event=event,
            source=fired.source,
            target=fired.target,
            transition_id=fired.transition,
            guards=fired.guards,
            actions=step.effects,
            restarts=self.restarts,
        )
        self.history.append(transition)
        return transition


def backoff_ms(restarts: int) -> int:
    """How long to wait, after a fault, before restart number ``restarts + 1``."""
    return BACKOFF_MS[min(restarts, len(BACKOFF_MS) - 1)]


def condition_json(condition: Condition | None) -> Any:
    """A guard condition as JSON for the extension's evaluator."""
    if condition is None:
        return None
    if isinstance(condition, GuardRef):
        return {"guard": condition.name}
    if isinstance(condition, Not):
        return {"not": condition_json(condition.operand)}
    kind = "and" if isinstance(condition, And) else "or"
    return {kind: [condition_json(op) for op in condition.operands]}


def transition_table() -> Mapping[str, Any]:
    """The machine as the extension runs it (:func:`machine_table`), with its restart limit
    and back-off."""
    table = machine_table(connection_spec())
    return {**table, "maxRestarts": MAX_RESTARTS, "backoffMs": list(BACKOFF_MS)}


def machine_table(spec: MachineSpec) -> dict[str, Any]:
    """A one-region machine as the extension runs it (``connection.mjs``): states, initial
    state, transitions in document order (the order both engines try them), guards as JSON
    trees, actions by name."""
    [region] = spec.regions
    return {
        "machine": spec.name,
        "sha256": spec.sha256,
        "initial": region.initial,
        "states": list(region.states),
        "transitions": [
            {
                "id": t.id,
                "source": t.source,
                "event": t.event,
                "target": t.target,
                "cond": condition_json(t.cond),
                "unless": condition_json(t.unless),
                "actions": list(t.actions),
            }
            for t in spec.transitions
        ],
    }
