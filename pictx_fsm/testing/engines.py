"""Running an extension's machine on both engines with chosen guard values.

The compiled engine is checked against python-statemachine (the reference) by a property test
and by the engines benchmark; both drive the machines with guard values they choose (drawn by
Hypothesis, or at random) instead of facts computed from a session, so the comparison covers
combinations the runtime may never produce as well as those it does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pictx_fsm.machines.compiled import CompiledMachine
from pictx_fsm.machines.reference import ReferenceMachine

__all__ = ["ChosenFacts", "reference_machine"]


class Compiled(Protocol):
    """Machines compiled for the hot path, by name (a pi-context ``Lifecycle``, say)."""

    @property
    def machines(self) -> Mapping[str, CompiledMachine[Any, Any]]: ...


class ChosenFacts:
    """A stand-in for an extension's facts: the given guard values. (The engines choose
    transitions and list the actions to run; actions themselves run in the extension's step,
    so no other fact is needed.)"""

    def __init__(self, guards: Mapping[str, bool]) -> None:
        self._guards = guards

    def __getitem__(self, name: str) -> Any:
        return self._guards[name]


def reference_machine(machines: Compiled, name: str) -> ReferenceMachine[Any, Any]:
    """Machine ``name`` on python-statemachine, with the same bindings as compiled."""
    compiled = machines.machines[name]
    return ReferenceMachine(compiled.spec, compiled.bindings)
