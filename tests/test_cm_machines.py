"""The context-management family: declared, validated at load, run by both engines alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.cli import main
from pictx_fsm.errors import IllegalEventError
from pictx_fsm.extensions.context_management.machines import BINDINGS, MACHINE_NAMES, load_machines
from pictx_fsm.machines import CompiledMachine, Configuration, MachineBindings
from pictx_fsm.machines.reference import ReferenceMachine

MACHINES = load_machines()


def test_the_family_is_listed_and_its_names_are_unique(capsys: Any) -> None:
    # Given `pictx-fsm machines --json`
    assert main(["machines", "--json"]) == 0
    out = capsys.readouterr().out
    # Then the five machines of the family are listed next to pi-context's
    for name in MACHINE_NAMES:
        assert f'"name": "{name}"' in out


def _oracle_bindings(name: str, values: Mapping[str, bool]) -> MachineBindings[Any, Any]:
    guards, actions = BINDINGS[name]
    return MachineBindings(
        machine=name,
        guards={g: (lambda facts, g=g: bool(facts[g])) for g in guards},
        actions={a: (lambda facts, a=a: (a,)) for a in actions},
    )


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_compiled_engine_agrees_with_python_statemachine(data: st.DataObject) -> None:
    # Given any machine of the family, guard values and a sequence of declared events
    name = data.draw(st.sampled_from(MACHINE_NAMES))
    spec = MACHINES.specs[name]
    values = {g: data.draw(st.booleans(), label=g) for g in spec.guard_names}
    bindings = _oracle_bindings(name, values)
    compiled = CompiledMachine.build(spec, bindings)
    reference = ReferenceMachine(spec, bindings)
    config: Configuration = compiled.initial()
    for event in data.draw(st.lists(st.sampled_from(spec.events), max_size=12)):
        # When both engines take the event
        try:
            stepped = compiled.step(config, event, values)
        except IllegalEventError:
            stepped = None
        try:
            after, effects = reference.send(event, values)
        except IllegalEventError:
            after = None
        # Then they reach the same configuration with the same effects, or both refuse
        if stepped is None:
            assert after is None
            break
        assert after == stepped.after and tuple(effects) == stepped.effects
        config = stepped.after


def test_a_broken_reference_in_the_family_is_refused_at_load(tmp_path: Any, capsys: Any) -> None:
    # Given a copy of the models whose notes_store names an action nobody binds
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "models"
    target = Path(str(tmp_path)) / "models"
    shutil.copytree(root, target)
    doc = target / "context_management" / "notes_store.yaml"
    doc.write_text(doc.read_text().replace("before: refuse_kind}", "before: refuse_knd}"))
    # When the machines are listed / Then exit 2 names the document, transition and name
    assert main(["machines", "--models", str(target)]) == 2
    err = capsys.readouterr().err
    assert "notes_store.yaml" in err and "write:3" in err and "'refuse_knd' is not bound" in err
