"""Running a lifecycle machine on both engines with chosen guard values.

The compiled engine is checked against python-statemachine (the reference) by a property test
and by the engines benchmark; both drive the machines with guard values they choose (drawn by
Hypothesis, or at random) instead of facts computed from a session, so the comparison covers
combinations the runtime may never produce as well as those it does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.extensions.pi_context.lifecycle import Lifecycle
from pictx_fsm.machines.reference import ReferenceMachine

__all__ = ["ChosenFacts", "reference_machine"]


class ChosenFacts:
    """A stand-in for :class:`pictx_fsm.extensions.pi_context.lifecycle.Facts`: the given guard
    values. (The
    engines choose transitions and list the actions to run; actions themselves run in the
    lifecycle's step, so no other fact is needed.)"""

    def __init__(self, guards: Mapping[str, bool]) -> None:
        self._guards = guards

    def __getitem__(self, name: str) -> Any:
        return self._guards[name]


def reference_machine(lifecycle: Lifecycle, name: str) -> ReferenceMachine[Any, Any]:
    """Lifecycle machine ``name`` on python-statemachine, with the lifecycle's bindings."""
    compiled = lifecycle.machines[name]
    return ReferenceMachine(compiled.spec, compiled.bindings)
