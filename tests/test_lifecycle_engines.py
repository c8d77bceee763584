"""The lifecycle's own machines run identically on both engines (design: one declaration, two
engines). Facts are generated: every guard gets an arbitrary truth value, so the property
covers combinations the runtime may never produce as well as those it does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.errors import IllegalEventError
from pictx_fsm.extensions.pi_context.lifecycle import MACHINE_NAMES, load_lifecycle
from pictx_fsm.testing.engines import ChosenFacts, reference_machine

LIFECYCLE = load_lifecycle()


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
    compiled = LIFECYCLE.machines[machine]
    reference = reference_machine(LIFECYCLE, machine)
    config = compiled.initial()
    for event, values in data.draw(event_runs(machine)):
        facts = ChosenFacts(values)
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
