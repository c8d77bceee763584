"""Two engines from one declaration: the compiled table and python-statemachine agree.

Facts here are a frozen mapping guard name -> bool, so every guard is free; actions return
their own name as the effect (``remember`` returns two, to pin the order within an action).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.errors import IllegalEventError, ModelDocumentError
from pictx_fsm.machines import (
    CompiledMachine,
    Configuration,
    Fired,
    MachineBindings,
    MachineSpec,
    load_machine_document,
)
from pictx_fsm.machines.reference import ReferenceMachine, chart_class

VALID = Path(__file__).parent / "fixtures" / "machines" / "valid"
FLAT = load_machine_document(VALID / "toggle_flat.yaml")
PARALLEL = load_machine_document(VALID / "control_parallel.yaml")
UNKNOWN_EVENT = "no_such_event"


@attrs.frozen(kw_only=True)
class GuardValues:
    """Facts for the fixtures: the value of every guard (missing guards are False)."""

    values: tuple[tuple[str, bool], ...] = ()

    @classmethod
    def of(cls, **values: bool) -> GuardValues:
        return cls(values=tuple(sorted(values.items())))

    def get(self, name: str) -> bool:
        return dict(self.values).get(name, False)


class Boom(RuntimeError):
    """The failure a failing action raises in these tests."""


def _guard(name: str) -> Callable[[GuardValues], bool]:
    return lambda facts: facts.get(name)


def _action(name: str) -> Callable[[GuardValues], tuple[str, ...]]:
    if name == "remember":
        return lambda facts: ("remember:1", "remember:2")
    return lambda facts: (name,)


def _failing(facts: GuardValues) -> tuple[str, ...]:
    raise Boom("action failed")


def bindings_for(
    spec: MachineSpec, *, failing: str | None = None
) -> MachineBindings[GuardValues, str]:
    actions = {name: _action(name) for name in spec.action_names}
    if failing is not None:
        actions[failing] = _failing
    return MachineBindings(
        machine=spec.name,
        guards={name: _guard(name) for name in spec.guard_names},
        actions=actions,
    )


def engines(
    spec: MachineSpec, *, failing: str | None = None
) -> tuple[CompiledMachine[GuardValues, str], ReferenceMachine[GuardValues, str]]:
    bindings = bindings_for(spec, failing=failing)
    return CompiledMachine.build(spec, bindings), ReferenceMachine(spec, bindings)


def drive(
    compiled: CompiledMachine[GuardValues, str],
    reference: ReferenceMachine[GuardValues, str],
    events: list[tuple[str, GuardValues]],
) -> Configuration:
    configuration = compiled.initial()
    for event, facts in events:
        step = compiled.step(configuration, event, facts)
        assert reference.send(event, facts) == (step.after, step.effects)
        configuration = step.after
    return configuration


# --------------------------------------------------------------------------- equivalence


def _steps(spec: MachineSpec) -> st.SearchStrategy[list[tuple[str, GuardValues]]]:
    valuation = st.fixed_dictionaries({name: st.booleans() for name in spec.guard_names})
    step = st.tuples(
        st.sampled_from([*spec.events, UNKNOWN_EVENT]),
        valuation.map(lambda values: GuardValues.of(**values)),
    )
    return st.lists(step, max_size=25)


def _check_equivalence(spec: MachineSpec, data: st.DataObject) -> None:
    compiled, reference = engines(spec)
    configuration = compiled.initial()
    assert reference.configuration() == configuration
    # When random events arrive with random guard values
    for event, facts in data.draw(_steps(spec)):
        try:
            step = compiled.step(configuration, event, facts)
        except IllegalEventError:
            # The compiled engine is stricter. In a single region "no enabled transition"
            # is also what python-statemachine refuses, so it must refuse and stay put.
            if len(spec.regions) == 1 or event == UNKNOWN_EVENT:
                with pytest.raises(IllegalEventError):
                    reference.send(event, facts)
                assert reference.configuration() == configuration
            # A partly refused parallel event would move python-statemachine alone; a
            # caller of the compiled engine never sends it, so neither do we.
            continue
        # Then after every accepted step both agree on configuration and effects
        assert reference.send(event, facts) == (step.after, step.effects)
        configuration = step.after


@pytest.mark.parametrize("spec", [FLAT, PARALLEL], ids=lambda s: s.name)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_both_engines_reach_the_same_configuration_with_the_same_effects(
    spec: MachineSpec, data: st.DataObject
) -> None:
    # Given both engines built from one fixture declaration and the same bindings,
    # When random events arrive with random guard values,
    # Then after every step the compiled engine accepts, both agree
    _check_equivalence(spec, data)


_GUARDS, _ACTIONS, _EVENTS = ("g1", "g2", "g3"), ("a1", "a2", "a3"), ("e1", "e2", "e3")


def _condition_text() -> st.SearchStrategy[str]:
    return st.recursive(
        st.sampled_from(_GUARDS),
        lambda inner: st.one_of(
            inner.map(lambda x: f"not {x}"),
            st.tuples(inner, inner, st.sampled_from(["and", "or"])).map(
                lambda p: f"({p[0]} {p[2]} {p[1]})"
            ),
        ),
        max_leaves=4,
    )


@st.composite
def _machine_documents(draw: st.DrawFn) -> dict[str, object]:
    """A random declaration in the supported subset: flat, or one parallel state of regions."""
    region_count = draw(st.integers(1, 3))
    parallel = region_count > 1 or draw(st.booleans())
    regions = {}
    for r in range(region_count):
        names = [f"r{r}s{i}" for i in range(draw(st.integers(1, 4)))]
        states: dict[str, object] = {}
        for name in names:
            transitions = []
            for _ in range(draw(st.integers(0, 4))):
                transition: dict[str, object] = {
                    "event": draw(st.sampled_from(_EVENTS)),
                    "target": draw(st.sampled_from(names)),
                }
                if draw(st.booleans()):
                    transition["cond"] = draw(_condition_text())
                if draw(st.integers(0, 3)) == 0:
                    transition["unless"] = draw(st.lists(_condition_text(), min_size=1, max_size=2))
                if actions := draw(st.lists(st.sampled_from(_ACTIONS), max_size=2, unique=True)):
                    transition["before"] = actions
                transitions.append(transition)
            states[name] = {"transitions": transitions}
        states[names[0]]["initial"] = True  # type: ignore[index]
        regions[f"r{r}"] = {"states": states}
    top = {"par": {"parallel": True, "states": regions}} if parallel else regions["r0"]["states"]
    return {"name": "generated", "description": "generated", "states": top}


@settings(max_examples=100, deadline=None)
@given(document=_machine_documents(), data=st.data())
def test_both_engines_agree_on_generated_machines(
    document: dict[str, object], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Given a random declaration in the supported subset, loaded like any model
    path = tmp_path_factory.mktemp("generated") / "generated.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    spec = load_machine_document(path)
    # When random events arrive with random guard values,
    # Then after every step the compiled engine accepts, both engines agree
    _check_equivalence(spec, data)


def test_python_statemachine_orders_regions_by_entry_which_the_reference_corrects() -> None:
    # Given python-statemachine's own class of the parallel fixture, with a plain model
    ran: list[str] = []

    def action(name: str) -> Callable[[object], None]:
        return lambda model: ran.append(name)

    namespace: dict[str, object] = {"spent": False, "ready": True, "forced": False}
    namespace.update({name: action(name) for name in PARALLEL.action_names})
    chart = chart_class(PARALLEL)(model=type("Model", (), namespace)())
    # When overflow's `pending` is entered before request's `explicit`, then turn_end fires both
    for event in ("overflow", "request", "turn_end"):
        chart.send(event)
    # Then the library runs the later-entered region last, whatever the document order
    assert ran[-3:] == ["recover", "start_reset", "note_reset"]
    # While the reference engine (and the compiled one) follow document order, as SCXML says
    compiled, reference = engines(PARALLEL)
    drive(compiled, reference, [("overflow", GuardValues()), ("request", GuardValues())])
    _, effects = reference.send("turn_end", GuardValues.of(ready=True))
    assert effects == ("start_reset", "note_reset", "recover")


def test_the_reference_guard_evaluator_reads_a_nested_condition() -> None:
    # Given `on` --tick [not allowed and (pinned or noisy)] / explode--> on
    compiled, reference = engines(FLAT)
    drive(compiled, reference, [("enable", GuardValues.of(allowed=True))])
    # When tick arrives with allowed false and noisy true
    configuration, effects = reference.send("tick", GuardValues.of(noisy=True))
    # Then python-statemachine's restricted evaluator took the first transition, as compiled does
    assert (configuration.state("toggle_flat"), effects) == ("on", ("explode",))


# --------------------------------------------------------------------------- steps


def test_a_step_records_transitions_guards_and_effects_in_region_then_list_order() -> None:
    # Given the parallel machine with request=explicit and overflow=pending
    compiled, _ = engines(PARALLEL)
    start = compiled.step(compiled.initial(), "request", GuardValues()).after
    start = compiled.step(start, "overflow", GuardValues()).after
    # When turn_end arrives with ready true and spent false
    step = compiled.step(start, "turn_end", GuardValues.of(ready=True))
    # Then both regions fired, in document order, each with the guards that decided it
    assert step.before == start
    assert step.after == Configuration(states=(("request", "none"), ("overflow", "pending-spent")))
    assert step.fired == (
        Fired(
            transition="control_parallel:request:explicit:turn_end:1",
            region="request",
            source="explicit",
            target="none",
            guards=(("spent", False), ("ready", True)),
            actions=("start_reset", "note_reset"),
        ),
        Fired(
            transition="control_parallel:overflow:pending:turn_end:1",
            region="overflow",
            source="pending",
            target="pending-spent",
            guards=(("ready", True),),
            actions=("recover",),
        ),
    )
    assert step.effects == ("start_reset", "note_reset", "recover")


def test_guards_short_circuit_and_each_is_evaluated_once_per_region() -> None:
    # Given guards that count their calls
    calls: list[str] = []

    def spy(name: str) -> Callable[[GuardValues], bool]:
        def guard(facts: GuardValues) -> bool:
            calls.append(name)
            return facts.get(name)

        return guard

    bindings = attrs.evolve(
        bindings_for(FLAT), guards={name: spy(name) for name in FLAT.guard_names}
    )
    compiled = CompiledMachine.build(FLAT, bindings)
    on = compiled.step(compiled.initial(), "enable", GuardValues.of(allowed=True)).after
    calls.clear()
    # When tick arrives with allowed true: `not allowed and (...)` fails on `allowed` alone,
    # then the second transition's `noisy` decides
    step = compiled.step(on, "tick", GuardValues.of(allowed=True, noisy=True))
    # Then only allowed and noisy were called, once each, and recorded in that order
    assert calls == ["allowed", "noisy"]
    assert step.fired[0].guards == (("allowed", True), ("noisy", True))
    assert step.fired[0].transition == "toggle_flat:toggle_flat:on:tick:2"
    # And the same guard outcome again records the same transition value (kept, not rebuilt)
    again = compiled.step(on, "tick", GuardValues.of(allowed=True, noisy=True))
    assert again == step and again.fired[0] is step.fired[0]


def test_an_explicit_self_transition_is_a_recorded_step() -> None:
    compiled, _ = engines(FLAT)
    step = compiled.step(compiled.initial(), "tick", GuardValues())
    assert step.after == step.before
    assert step.after is step.before  # a configuration is a value: the unchanged one is kept
    assert [f.transition for f in step.fired] == ["toggle_flat:toggle_flat:off:tick:1"]


def test_step_is_pure_the_same_inputs_give_the_same_step() -> None:
    compiled, _ = engines(PARALLEL)
    start, facts = compiled.initial(), GuardValues.of(ready=True)
    assert compiled.step(start, "request", facts) == compiled.step(start, "request", facts)
    assert start == compiled.initial()


# --------------------------------------------------------------------------- strictness


@pytest.mark.parametrize("spec", [FLAT, PARALLEL], ids=lambda s: s.name)
def test_an_unknown_event_raises_in_both_engines(spec: MachineSpec) -> None:
    compiled, reference = engines(spec)
    with pytest.raises(IllegalEventError, match="unknown event"):
        compiled.step(compiled.initial(), UNKNOWN_EVENT, GuardValues())
    with pytest.raises(IllegalEventError):
        reference.send(UNKNOWN_EVENT, GuardValues())
    assert reference.configuration() == compiled.initial()


def test_an_event_the_state_does_not_declare_raises_in_both_engines() -> None:
    # Given the flat machine in `off`, which has no `disable` transition
    compiled, reference = engines(FLAT)
    # Then both refuse `disable`
    with pytest.raises(IllegalEventError, match="has no transition for it"):
        compiled.step(compiled.initial(), "disable", GuardValues())
    with pytest.raises(IllegalEventError):
        reference.send("disable", GuardValues())


def test_a_declaring_region_without_an_enabled_transition_refuses_the_whole_event() -> None:
    # Given request=explicit (turn_end would fire there) and overflow=pending, where
    # turn_end with ready false and forced true enables nothing
    compiled, reference = engines(PARALLEL)
    start = drive(compiled, reference, [("request", GuardValues()), ("overflow", GuardValues())])
    facts = GuardValues.of(forced=True)
    # Then the compiled engine refuses the whole event, naming region and guard values
    with pytest.raises(IllegalEventError) as caught:
        compiled.step(start, "turn_end", facts)
    assert "region 'overflow'" in str(caught.value)
    assert "ready=False, forced=True" in str(caught.value)
    # While python-statemachine (more lenient) moves the region that can
    configuration, _ = reference.send("turn_end", facts)
    assert configuration.state("request") == "none"
    assert configuration.state("overflow") == "pending"


@pytest.mark.parametrize(
    ("spec", "failing", "events", "event", "facts"),
    [
        # flat: on --tick [not allowed and pinned] / explode--> on
        (FLAT, "explode", [("enable", GuardValues.of(allowed=True))], "tick",
         GuardValues.of(pinned=True)),
        # parallel: request's actions succeed, then overflow's `recover` fails
        (PARALLEL, "recover", [("request", GuardValues()), ("overflow", GuardValues())],
         "turn_end", GuardValues.of(ready=True)),
    ],
    ids=["flat", "parallel"],
)  # fmt: skip
def test_a_failing_action_leaves_both_engines_in_the_source_configuration(
    spec: MachineSpec,
    failing: str,
    events: list[tuple[str, GuardValues]],
    event: str,
    facts: GuardValues,
) -> None:
    # Given both engines in a configuration where `event` fires a failing action
    compiled, reference = engines(spec, failing=failing)
    source = drive(compiled, reference, events)
    # When the event is handled
    with pytest.raises(Boom):
        compiled.step(source, event, facts)
    with pytest.raises(Boom):
        reference.send(event, facts)
    # Then python-statemachine ran the action under `before`, before leaving the source
    assert reference.configuration() == source
    # And both engines go on from there alike, without replaying the failed event
    follow_up = spec.events[0] if spec is PARALLEL else "disable"
    step = compiled.step(source, follow_up, GuardValues())
    assert reference.send(follow_up, GuardValues()) == (step.after, step.effects)


def test_a_guard_that_returns_a_non_bool_is_a_type_error_in_both_engines() -> None:
    bindings = attrs.evolve(
        bindings_for(FLAT),
        guards={**bindings_for(FLAT).guards, "allowed": lambda facts: None},
    )
    compiled, reference = (
        CompiledMachine.build(FLAT, bindings),
        ReferenceMachine(FLAT, bindings),
    )
    with pytest.raises(TypeError, match="guard 'allowed'"):
        compiled.step(compiled.initial(), "enable", GuardValues())
    with pytest.raises(TypeError, match="guard 'allowed'"):
        reference.send("enable", GuardValues())


def test_an_action_that_returns_a_list_is_a_type_error_in_both_engines() -> None:
    bindings = attrs.evolve(
        bindings_for(FLAT),
        actions={**bindings_for(FLAT).actions, "refuse": lambda facts: ["refuse"]},
    )
    compiled, reference = (
        CompiledMachine.build(FLAT, bindings),
        ReferenceMachine(FLAT, bindings),
    )
    with pytest.raises(TypeError, match="action 'refuse'"):
        compiled.step(compiled.initial(), "enable", GuardValues())
    with pytest.raises(TypeError, match="action 'refuse'"):
        reference.send("enable", GuardValues())


@pytest.mark.parametrize("engine", [CompiledMachine.build, ReferenceMachine])
def test_both_engines_check_the_bindings_when_they_are_built(
    engine: Callable[..., object],
) -> None:
    bindings = attrs.evolve(bindings_for(FLAT), guards={})
    with pytest.raises(ModelDocumentError, match="guard 'allowed' is not bound"):
        engine(FLAT, bindings)


# --------------------------------------------------------------------------- the document rules


def test_changing_a_target_in_the_document_changes_both_engines_with_no_python_change(
    tmp_path: Path,
) -> None:
    # Given a copy of the flat machine where `enable [allowed]` goes to off instead of on
    text = (VALID / "toggle_flat.yaml").read_text()
    original = "      - event: enable\n        target: on\n"
    assert original in text
    copy = tmp_path / "toggle_flat.yaml"
    copy.write_text(text.replace(original, "      - event: enable\n        target: off\n"))
    edited = load_machine_document(copy)
    # When the same bindings run the copy
    compiled, reference = engines(edited)
    step = compiled.step(compiled.initial(), "enable", GuardValues.of(allowed=True))
    # Then both engines follow the new target, with the same actions
    assert step.after.state("toggle_flat") == "off"
    assert step.effects == ("announce", "remember:1", "remember:2")
    assert reference.send("enable", GuardValues.of(allowed=True)) == (step.after, step.effects)


def test_a_json_declaration_runs_alike_on_both_engines(tmp_path: Path) -> None:
    # Given the parallel fixture rewritten as a JSON document
    raw = yaml.safe_load((VALID / "control_parallel.yaml").read_text())
    path = tmp_path / "control_parallel.json"
    path.write_text(json.dumps(raw))
    spec = load_machine_document(path)
    # Then python-statemachine reads it with its JSON reader and both engines agree
    compiled, reference = engines(spec)
    events = [("request", GuardValues()), ("turn_end", GuardValues.of(ready=True))]
    assert drive(compiled, reference, events) == Configuration(
        states=(("request", "none"), ("overflow", "idle"))
    )


@pytest.mark.parametrize(
    "states",
    [(("request", "none"),), (("request", "none"), ("overflow", "nowhere")),
     (("overflow", "idle"), ("request", "none"))],
    ids=["missing-region", "unknown-state", "regions-swapped"],
)  # fmt: skip
def test_a_configuration_of_another_shape_is_refused(states: tuple[tuple[str, str], ...]) -> None:
    compiled, _ = engines(PARALLEL)
    for _ in range(2):  # refused again: only a configuration that was checked is kept
        with pytest.raises(ValueError, match="is not a configuration of 'control_parallel'"):
            compiled.step(Configuration(states=states), "abort", GuardValues())
