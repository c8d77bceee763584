"""Running a lifecycle machine on both engines with chosen guard values.

The compiled engine is checked against python-statemachine (the reference) by a property test
and by the engines benchmark; both drive the machines with guard values they choose (drawn by
Hypothesis, or at random) instead of facts computed from a session, so the comparison covers
combinations the runtime may never produce as well as those it does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.lifecycle import Lifecycle
from pictx_fsm.lifecycle_actions import LIFECYCLE_BINDINGS
from pictx_fsm.machines import MachineBindings
from pictx_fsm.machines.reference import ReferenceMachine
from pictx_fsm.repair import TailVerdict

ACTION_FACTS: Mapping[str, Any] = {
    "window_id": "pcw:12345678:0badcafe",
    "previous_window_id": "pcw:12345678:root",
    "guidance_remaining": 4096,
    "tool_remaining": 512,
    "committed_pending_resets": ("pcw:12345678:0badcafe",),
    "built_window_id": "pcw:12345678:0badcafe",
    "tail_verdict": TailVerdict.INTACT,
}
"""The values the actions read besides guards (window ids, counts): constant per run."""


class ChosenFacts:
    """A stand-in for :class:`pictx_fsm.facts.Facts`: the given guard values, then
    :data:`ACTION_FACTS`."""

    def __init__(self, guards: Mapping[str, bool]) -> None:
        self._guards = guards

    def __getitem__(self, name: str) -> Any:
        return self._guards[name] if name in self._guards else ACTION_FACTS[name]


def reference_machine(lifecycle: Lifecycle, name: str) -> ReferenceMachine[Any, Any]:
    """Lifecycle machine ``name`` on python-statemachine, with the lifecycle's bindings."""
    guards, actions = LIFECYCLE_BINDINGS[name]
    bindings: MachineBindings[Any, Any] = MachineBindings(
        machine=name, guards=guards, actions=actions
    )
    return ReferenceMachine(lifecycle.machines[name].spec, bindings)
