"""Guards and actions bound to a declared machine, and the check that they match it.

A declaration in ``models/`` names guards and actions; the Python side supplies them as a
:class:`MachineBindings`. :func:`bind` checks the two against each other at definition time
— every name the document uses is bound, and every bound name is used — so a typo or a stale
guard fails when the machine is built, never when an event first arrives.

An unused binding is an **error**, not a warning: the declared machine is the spec, and a
guard or action no transition names is either a renamed reference in the document (the
behaviour silently changed) or dead code. Both deserve a stop, with the name to fix.

Guards are pure functions of the facts returning a ``bool``; actions are pure functions of
the facts returning a tuple of effects (data). Both engines call them through
:func:`call_guard` / :func:`call_action`, which refuse other return types, so a guard that
returns ``None`` is a loud bug rather than a silent ``False``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import attrs

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.machines.document import MachineSpec

__all__ = ["BoundMachine", "E", "F", "MachineBindings", "bind", "call_action", "call_guard"]

F = TypeVar("F")
E = TypeVar("E")


def _frozen_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


@attrs.frozen(kw_only=True)
class MachineBindings(Generic[F, E]):
    """The guards and actions of one machine, by the names its document uses.

    ``F`` is the facts type (any frozen attrs value) the guards and actions read; ``E`` is
    the effect type the actions return.
    """

    machine: str
    guards: Mapping[str, Callable[[F], bool]] = attrs.field(converter=_frozen_mapping)
    actions: Mapping[str, Callable[[F], tuple[E, ...]]] = attrs.field(converter=_frozen_mapping)


@attrs.frozen(kw_only=True)
class BoundMachine(Generic[F, E]):
    """A declaration and bindings that :func:`bind` found consistent."""

    spec: MachineSpec
    bindings: MachineBindings[F, E]


def bind(spec: MachineSpec, bindings: MachineBindings[F, E]) -> BoundMachine[F, E]:
    """Check ``bindings`` against ``spec``; raise :class:`ModelDocumentError` on any mismatch."""
    document = spec.source
    if bindings.machine != spec.name:
        raise ModelDocumentError(
            document,
            "bindings",
            f"bindings are for machine {bindings.machine!r}, the document declares {spec.name!r}",
        )
    for transition in spec.transitions:
        where = f"transition {transition.id}"
        for name in transition.guards:
            if name not in bindings.guards:
                raise ModelDocumentError(
                    document, where, f"guard {name!r} is not bound; {_known(bindings.guards)}"
                )
        for name in transition.actions:
            if name not in bindings.actions:
                raise ModelDocumentError(
                    document, where, f"action {name!r} is not bound; {_known(bindings.actions)}"
                )
    _reject_unused("guard", bindings.guards, spec.guard_names, document)
    _reject_unused("action", bindings.actions, spec.action_names, document)
    return BoundMachine(spec=spec, bindings=bindings)


def _known(names: Mapping[str, object]) -> str:
    return "bound: " + (", ".join(sorted(names)) or "none")


def _reject_unused(
    kind: str, bound: Mapping[str, object], used: tuple[str, ...], document: str
) -> None:
    unused = sorted(set(bound) - set(used))
    if unused:
        raise ModelDocumentError(
            document,
            "bindings",
            f"{kind}(s) {', '.join(map(repr, unused))} bound but named by no transition; "
            f"use them in the document or remove the binding",
        )


def call_guard(machine: str, name: str, guard: Callable[[F], bool], facts: F) -> bool:
    """Evaluate one guard, insisting on a ``bool`` (both engines go through here)."""
    value = guard(facts)
    if type(value) is not bool:
        raise TypeError(
            f"guard {name!r} of machine {machine!r} returned {type(value).__name__}, not bool"
        )
    return value


def call_action(
    machine: str, name: str, action: Callable[[F], tuple[E, ...]], facts: F
) -> tuple[E, ...]:
    """Run one action, insisting on a tuple of effects (both engines go through here)."""
    effects = action(facts)
    if type(effects) is not tuple:
        raise TypeError(
            f"action {name!r} of machine {machine!r} returned {type(effects).__name__}, "
            "not a tuple of effects"
        )
    return effects
