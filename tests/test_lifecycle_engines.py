"""The lifecycle's own machines run identically on both engines (design: one declaration, two
engines). Facts are generated: every guard gets an arbitrary truth value, so the property
covers combinations the runtime may never produce as well as those it does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.errors import IllegalEventError
from pictx_fsm.lifecycle import MACHINE_NAMES, load_lifecycle
from pictx_fsm.lifecycle_actions import LIFECYCLE_BINDINGS
from pictx_fsm.machines import MachineBindings
from pictx_fsm.machines.reference import ReferenceMachine
from pictx_fsm.repair import TailVerdict

LIFECYCLE = load_lifecycle()

# Values the actions read besides guards (window ids, counts); constant per example.
ACTION_FACTS: Mapping[str, Any] = {
    "window_id": "pcw:12345678:0badcafe",
    "previous_window_id": "pcw:12345678:root",
    "guidance_remaining": 4096,
    "tool_remaining": 512,
    "committed_pending_resets": ("pcw:12345678:0badcafe",),
    "built_window_id": "pcw:12345678:0badcafe",
    "tail_verdict": TailVerdict.INTACT,
}


class GeneratedFacts:
    """A stand-in for :class:`pictx_fsm.facts.Facts`: guard values drawn by Hypothesis."""

    def __init__(self, guards: Mapping[str, bool]) -> None:
        self._guards = guards

    def __getitem__(self, name: str) -> Any:
        if name in self._guards:
            return self._guards[name]
        return ACTION_FACTS[name]


def _events(machine: str) -> list[str]:
    return sorted(LIFECYCLE.machines[machine].spec.events)


@st.composite
def event_runs(draw: st.DrawFn, machine: str) -> list[tuple[str, dict[str, bool]]]:
    guards = sorted(LIFECYCLE.machines[machine].spec.guard_names)
    steps = draw(st.integers(min_value=1, max_value=25))
    return [
        (
            draw(st.sampled_from(_events(machine))),
            {name: draw(st.booleans()) for name in guards},
        )
        for _ in range(steps)
    ]


@pytest.mark.parametrize("machine", MACHINE_NAMES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_compiled_and_reference_engines_agree_on_every_lifecycle_machine(
    machine: str, data: st.DataObject
) -> None:
    # Given one lifecycle machine on both engines and a generated run of events and facts
    compiled = LIFECYCLE.machines[machine].compiled
    guards, actions = LIFECYCLE_BINDINGS[machine]
    reference = ReferenceMachine(
        LIFECYCLE.machines[machine].spec,
        MachineBindings(machine=machine, guards=guards, actions=actions),
    )
    config = compiled.initial()
    for event, values in data.draw(event_runs(machine)):
        facts = GeneratedFacts(values)
        # When the compiled engine accepts the event
        try:
            step = compiled.step(config, event, facts)
        except IllegalEventError:
            continue  # stricter than the library: nothing to compare
        ref_config, ref_effects = reference.send(event, facts)
        # Then the reference reaches the same configuration with the same effects
        assert ref_config == step.after
        assert ref_effects == step.effects
        config = step.after
