"""The lifecycle's five machines, loaded from ``models/`` and bound to their guards/actions.

Loading happens once per process (:func:`load_lifecycle` caches by directory): every document
is validated and every guard and action reference resolved, so a broken model fails here with
a :class:`~pictx_fsm.errors.ModelDocumentError` naming the document, the transition and the
reference — never when an event first arrives.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from attrs import frozen

from pictx_fsm.errors import IllegalEventError, ModelDocumentError
from pictx_fsm.facts import Facts
from pictx_fsm.intents import Outcome
from pictx_fsm.lifecycle_actions import LIFECYCLE_BINDINGS
from pictx_fsm.machines import (
    CompiledMachine,
    Configuration,
    MachineBindings,
    MachineSpec,
    fingerprint,
    load_models,
    models_dir,
)

MACHINE_NAMES: tuple[str, ...] = tuple(LIFECYCLE_BINDINGS)


@frozen(kw_only=True)
class MachineStep:
    """A compiled step with configurations as ``{region: state}`` mappings."""

    before: Mapping[str, str]
    after: Mapping[str, str]
    fired: tuple[Any, ...]
    effects: tuple[Outcome, ...]


@frozen(kw_only=True)
class LifecycleMachine:
    """One compiled lifecycle machine behind a mapping-based configuration."""

    spec: MachineSpec
    compiled: CompiledMachine[Facts, Outcome]

    def initial(self) -> Mapping[str, str]:
        return _as_mapping(self.compiled.initial())

    def step(self, config: Mapping[str, str], event: str, facts: Facts) -> MachineStep:
        states = tuple((region.name, config[region.name]) for region in self.spec.regions)
        step = self.compiled.step(Configuration(states=states), event, facts)
        return MachineStep(
            before=config,
            after=_as_mapping(step.after),
            fired=tuple(_FiredView(f) for f in step.fired),
            effects=step.effects,
        )


@frozen
class _FiredView:
    """Adapts the engine's ``Fired`` to the names the audit record uses."""

    fired: Any

    @property
    def transition_id(self) -> str:
        return str(self.fired.transition)

    @property
    def region(self) -> str:
        return str(self.fired.region)

    @property
    def source(self) -> str:
        return str(self.fired.source)

    @property
    def target(self) -> str:
        return str(self.fired.target)

    @property
    def guards(self) -> tuple[tuple[str, bool], ...]:
        return tuple(self.fired.guards)


def _as_mapping(config: Configuration) -> Mapping[str, str]:
    return MappingProxyType(dict(config.states))


@frozen(kw_only=True)
class Lifecycle:
    """The loaded machines plus the fingerprint of the documents they came from."""

    machines: Mapping[str, LifecycleMachine]
    fingerprint: str
    directory: Path

    def initial_configs(self) -> dict[str, Mapping[str, str]]:
        return {name: machine.initial() for name, machine in self.machines.items()}

    @property
    def specs(self) -> Mapping[str, MachineSpec]:
        return {name: machine.spec for name, machine in self.machines.items()}

    def transition_ids(self) -> tuple[str, ...]:
        return tuple(t.id for m in self.machines.values() for t in m.spec.transitions)


def build_lifecycle(
    specs: Mapping[str, MachineSpec],
    directory: Path,
    bindings: Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]] = LIFECYCLE_BINDINGS,
) -> Lifecycle:
    """Bind and compile ``specs`` (``bindings`` defaults to the lifecycle's own table; a
    planted fault passes a modified copy)."""
    missing = [name for name in MACHINE_NAMES if name not in specs]
    if missing:
        raise ModelDocumentError(
            str(directory), "models", f"missing machine document(s): {', '.join(missing)}"
        )
    machines: dict[str, LifecycleMachine] = {}
    for name in MACHINE_NAMES:
        guards, actions = bindings[name]
        bound: MachineBindings[Facts, Outcome] = MachineBindings(
            machine=name, guards=guards, actions=actions
        )
        compiled: CompiledMachine[Facts, Outcome] = CompiledMachine.build(specs[name], bound)
        machines[name] = LifecycleMachine(spec=specs[name], compiled=compiled)
    return Lifecycle(
        machines=MappingProxyType(machines),
        fingerprint=fingerprint([specs[name] for name in MACHINE_NAMES]),
        directory=directory,
    )


@functools.lru_cache(maxsize=8)
def _load(directory: str) -> Lifecycle:
    path = Path(directory)
    return build_lifecycle(load_models(path), path)


def load_lifecycle(directory: str | os.PathLike[str] | None = None) -> Lifecycle:
    """Load and bind the lifecycle machines (default: :func:`models_dir`)."""
    path = Path(directory) if directory is not None else models_dir()
    return _load(str(path.resolve()))


# Fail at definition time: the package's own declarations are loaded, validated and bound
# when this module is imported, so a broken model stops the import with a message naming
# the document, the transition and the reference (style: "fail at definition time").
load_lifecycle()

__all__ = ["IllegalEventError", "Lifecycle", "LifecycleMachine", "load_lifecycle"]
