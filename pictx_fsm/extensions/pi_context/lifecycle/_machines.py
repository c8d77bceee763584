"""The lifecycle's five machines, loaded from ``models/`` and bound to facts and actions.

Loading happens once per process (:func:`load_lifecycle` caches by directory): every document
is validated, every guard bound to the fact of its name and every action to the reducer of its
name, so a broken model fails here with a :class:`~pictx_fsm.errors.ModelDocumentError`
naming the document, the transition and the reference — never when an event first arrives.
An action the documents never name is an error too: it would be behaviour no diagram shows.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from attrs import frozen

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.extensions.pi_context.lifecycle._actions import ACTIONS, Action
from pictx_fsm.extensions.pi_context.lifecycle._facts import FACTS, STATE_FACTS, Fact, Facts
from pictx_fsm.machines import (
    CompiledMachine,
    Configuration,
    MachineBindings,
    MachineSpec,
    fingerprint,
    load_models,
    models_dir,
)

__all__ = ["MACHINE_NAMES", "Lifecycle", "LifecycleMachine", "build_lifecycle", "load_lifecycle"]

MACHINE_NAMES: tuple[str, ...] = ("reset_control", "budget", "boot_repair", "projection", "toggle")

LifecycleMachine = CompiledMachine[Facts, str]
"""A compiled lifecycle machine: its actions return their own names, in firing order, for the
step to reduce (:data:`~._actions.ACTIONS`)."""


@frozen(kw_only=True)
class Lifecycle:
    """The compiled machines, the facts and actions they are bound to, and the fingerprint
    of the documents they came from."""

    machines: Mapping[str, LifecycleMachine]
    facts: Mapping[str, Fact]
    actions: Mapping[str, Action]
    fingerprint: str
    directory: Path

    def initial(self) -> dict[str, Configuration]:
        return {name: machine.initial() for name, machine in self.machines.items()}

    @property
    def specs(self) -> Mapping[str, MachineSpec]:
        return {name: machine.spec for name, machine in self.machines.items()}

    def transition_ids(self) -> tuple[str, ...]:
        return tuple(t.id for m in self.machines.values() for t in m.spec.transitions)


def build_lifecycle(
    specs: Mapping[str, MachineSpec],
    directory: Path,
    *,
    facts: Mapping[str, Fact] = FACTS,
    actions: Mapping[str, Action] = ACTIONS,
) -> Lifecycle:
    """Bind and compile ``specs`` to ``facts`` and ``actions`` (the lifecycle's own
    catalogues by default; a planted fault passes modified copies)."""
    missing = [name for name in MACHINE_NAMES if name not in specs]
    if missing:
        raise ModelDocumentError(
            str(directory), "models", f"missing machine document(s): {', '.join(missing)}"
        )
    machines = {name: _compile(specs[name], facts, actions) for name in MACHINE_NAMES}
    _check_state_facts(machines)
    _reject_unused_actions(machines, actions, directory)
    return Lifecycle(
        machines=MappingProxyType(machines),
        facts=MappingProxyType(dict(facts)),
        actions=MappingProxyType(dict(actions)),
        fingerprint=fingerprint([specs[name] for name in MACHINE_NAMES]),
        directory=directory,
    )


def _compile(
    spec: MachineSpec, facts: Mapping[str, Fact], actions: Mapping[str, Action]
) -> LifecycleMachine:
    for transition in spec.transitions:
        for name in transition.guards:
            if name not in facts:
                raise ModelDocumentError(
                    spec.source,
                    f"transition {transition.id}",
                    f"guard {name!r} is not bound: no fact has that name",
                )
        for name in transition.actions:
            if name not in actions:
                raise ModelDocumentError(
                    spec.source,
                    f"transition {transition.id}",
                    f"action {name!r} is not bound; actions: {', '.join(sorted(actions))}",
                )
    bindings: MachineBindings[Facts, str] = MachineBindings(
        machine=spec.name,
        guards={name: _guard(name) for name in spec.guard_names},
        actions={name: _named(name) for name in spec.action_names},
    )
    return CompiledMachine.build(spec, bindings)


def _guard(name: str) -> Callable[[Facts], bool]:
    """A guard is exactly one fact: guards live in the models, facts in ``_facts``."""

    def guard(facts: Facts) -> bool:
        return bool(facts[name])

    guard.__name__ = name
    return guard


def _named(name: str) -> Callable[[Facts], tuple[str, ...]]:
    """The engine's action: its name, for the step to reduce once every region has chosen."""
    effects = (name,)
    return lambda facts: effects


def _check_state_facts(machines: Mapping[str, LifecycleMachine]) -> None:
    for fact_name, (machine, region, state) in STATE_FACTS.items():
        spec = machines[machine].spec
        regions = {r.name: r.states for r in spec.regions}
        if state not in regions.get(region, ()):
            raise ModelDocumentError(
                spec.source,
                f"region {region!r}",
                f"the fact {fact_name!r} reads state {state!r}, which the region does not declare",
            )


def _reject_unused_actions(
    machines: Mapping[str, LifecycleMachine], actions: Mapping[str, Action], directory: Path
) -> None:
    used = {name for machine in machines.values() for name in machine.spec.action_names}
    unused = sorted(set(actions) - used)
    if unused:
        raise ModelDocumentError(
            str(directory),
            "actions",
            f"action(s) {', '.join(map(repr, unused))} named by no transition; use them in a "
            "document or remove them",
        )


FAMILY = "pi_context"
"""The directory of ``models/`` that holds pi-context's machines."""


@functools.lru_cache(maxsize=8)
def _load(directory: str) -> Lifecycle:
    path = Path(directory)
    return build_lifecycle(load_models(path), path)


def load_lifecycle(directory: str | os.PathLike[str] | None = None) -> Lifecycle:
    """Load and bind the lifecycle machines (default: ``<models>/pi_context``)."""
    path = Path(directory) if directory is not None else models_dir() / FAMILY
    return _load(str(path.resolve()))
