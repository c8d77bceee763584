"""Machine declarations: loading, validation, binding checks, analysis and `pictx-fsm machines`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import pictx_fsm.machines as machines
from pictx_fsm.cli import main
from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.machines import (
    MachineBindings,
    bind,
    completeness_gaps,
    fingerprint,
    load_machine_document,
    load_models,
    models_dir,
)
from pictx_fsm.machines.conditions import (
    And,
    ConditionSyntaxError,
    GuardRef,
    Not,
    Or,
    compile_condition,
    parse_condition,
    render_condition,
)

FIXTURES = Path(__file__).parent / "fixtures" / "machines"
VALID = FIXTURES / "valid"
BROKEN = FIXTURES / "broken"
FLAT = VALID / "toggle_flat.yaml"
PARALLEL = VALID / "control_parallel.yaml"


def _bindings(spec: machines.MachineSpec, **overrides: object) -> MachineBindings[object, str]:
    guards = {name: (lambda facts: True) for name in spec.guard_names}
    actions = {name: (lambda facts: ()) for name in spec.action_names}
    return MachineBindings(
        machine=str(overrides.get("machine", spec.name)),
        guards=overrides.get("guards", guards),  # type: ignore[arg-type]
        actions=overrides.get("actions", actions),  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- loading


def test_flat_machine_is_one_region_named_after_the_machine_in_document_order() -> None:
    # Given the flat fixture, whose states are named off and on
    # When it is loaded
    spec = load_machine_document(FLAT)
    # Then off/on stay strings (not YAML booleans), in document order, off initial
    assert spec.parallel_state is None
    assert [(r.name, r.states, r.initial) for r in spec.regions] == [
        ("toggle_flat", ("off", "on"), "off")
    ]
    assert spec.events == ("disable", "enable", "tick")
    assert spec.source == str(FLAT)
    assert len(spec.sha256) == 64


def test_transition_ids_are_machine_region_source_event_and_index_among_that_event() -> None:
    # Given the flat fixture with two `enable` transitions out of `off`
    spec = load_machine_document(FLAT)
    # Then ids count per (source, event), 1-based, in document order
    ids = [t.id for t in spec.transitions]
    assert ids[:3] == [
        "toggle_flat:toggle_flat:off:enable:1",
        "toggle_flat:toggle_flat:off:enable:2",
        "toggle_flat:toggle_flat:off:tick:1",
    ]
    first = spec.transitions[0]
    assert (first.target, first.actions, first.cond) == (
        "on",
        ("announce", "remember"),
        GuardRef(name="allowed"),
    )


def test_parallel_machine_has_its_regions_in_document_order_with_hyphenated_states() -> None:
    # Given the parallel fixture
    spec = load_machine_document(PARALLEL)
    # Then the parallel state's children are the regions, each with its own initial state
    assert spec.parallel_state == "control"
    assert [(r.name, r.initial) for r in spec.regions] == [
        ("request", "none"),
        ("overflow", "idle"),
    ]
    assert spec.region("overflow").states == ("idle", "pending", "pending-spent", "spent")
    assert "control_parallel:overflow:pending-spent:turn_end:2" in {t.id for t in spec.transitions}
    assert spec.region_events("request") == ("abort", "request", "turn_end")


def test_a_cond_list_is_a_conjunction_and_an_unless_list_a_disjunction() -> None:
    # Given transitions with `cond: [ready, not spent]` and `unless: [ready, forced]`
    spec = load_machine_document(PARALLEL)
    by_id = {t.id: t for t in spec.transitions}
    # Then python-statemachine's list meaning is kept: all conds hold, any unless blocks
    assert by_id["control_parallel:overflow:pending-spent:turn_end:1"].cond == And(
        operands=(GuardRef(name="ready"), Not(operand=GuardRef(name="spent")))
    )
    assert by_id["control_parallel:overflow:pending:turn_end:2"].unless == Or(
        operands=(GuardRef(name="ready"), GuardRef(name="forced"))
    )


def test_load_models_reads_every_document_of_a_directory_by_name() -> None:
    # When the valid fixture directory is loaded
    specs = load_models(VALID)
    # Then every document is there, keyed and sorted by machine name
    assert list(specs) == ["control_parallel", "toggle_flat"]


def test_a_json_document_loads_like_its_yaml_twin(tmp_path: Path) -> None:
    # Given the flat fixture rewritten as JSON (python-statemachine's other native format)
    raw = yaml.load(FLAT.read_text(), Loader=yaml.BaseLoader)
    raw["states"]["off"]["initial"] = True
    json_path = tmp_path / "toggle_flat.json"
    json_path.write_text(json.dumps(raw))
    # When both are loaded
    from_yaml, from_json = load_machine_document(FLAT), load_machine_document(json_path)
    # Then they declare the same machine
    assert from_json.transitions == from_yaml.transitions
    assert from_json.regions == from_yaml.regions


def test_one_machine_name_declared_twice_in_a_directory_is_refused(tmp_path: Path) -> None:
    # Given toggle_flat as .yaml and as .yml
    shutil.copy(FLAT, tmp_path / "toggle_flat.yaml")
    shutil.copy(FLAT, tmp_path / "toggle_flat.yml")
    # Then loading the directory names both documents
    with pytest.raises(ModelDocumentError, match="also declared in"):
        load_models(tmp_path)


def test_a_missing_models_directory_is_a_model_document_error(tmp_path: Path) -> None:
    with pytest.raises(ModelDocumentError, match="no such models directory"):
        load_models(tmp_path / "absent")


# --------------------------------------------------------------------------- validation

# (document stem, expected `where`, expected words of the reason)
BROKEN_CASES = [
    ("unknown_target", "state 'idle', transition 2 (go)", "unknown target 'nowhere'"),
    ("cross_region_target", "state 'a', transition 1 (go)", "'b' is not a state of region 'left'"),
    ("missing_initial", "states", "exactly one state must be marked 'initial: true'"),
    ("missing_region_initial", "state 'right'", "none is marked"),
    ("two_initials", "states", "found ['idle', 'busy']"),
    ("history_state", "state 'left'", "'history' is not supported"),
    ("invoke_state", "state 'idle'", "'invoke' is not supported"),
    ("datamodel", "datamodel", "a datamodel is not supported"),
    ("enter_action", "state 'idle'", "'enter' is not supported"),
    ("exit_action", "state 'idle'", "'exit' is not supported"),
    ("on_action", "state 'idle', transition 1 (go)", "actions go under 'before'"),
    ("after_action", "state 'idle', transition 1 (go)", "actions go under 'before'"),
    ("structured_action", "state 'idle', transition 1 (go)", "structured actions"),
    ("duplicate_action", "state 'idle', transition 1 (go)", "'note' is listed twice"),
    ("deep_nesting", "state 'outer'", "nested deeper than a region ('left')"),
    ("nested_compound", "state 'outer'", "nested states are not supported"),
    ("final_state", "state 'done'", "'final' is not supported"),
    ("eventless", "state 'idle', transition 1", "eventless transitions"),
    ("multi_event", "state 'idle', transition 1", "one event per transition, got 'go run'"),
    ("multi_target", "state 'idle', transition 1 (go)", "one target per transition"),
    ("targetless", "state 'idle', transition 1 (go)", "self-transition"),
    ("internal_transition", "state 'idle', transition 1 (go)", "'internal' transitions"),
    ("bad_cond", "state 'idle', transition 1 (go)", "'budget > 10' is not allowed"),
    ("yaml_syntax", "line 9", "flow mapping (from line 8)"),
    ("duplicate_state", "line 8", "duplicate key 'idle'"),
    ("duplicate_across_regions", "state 'idle'", "declared under region 'left' and again"),
    ("name_mismatch", "name", "must live in a file named something_else.yaml"),
    ("reserved_guard", "state 'idle', transition 1 (go)", "guard name 'event' is reserved"),
    ("convention_action", "state 'idle', transition 1 (go)", "'on_go' clashes with the callback"),
    ("action_named_like_event", "state 'idle', transition 1 (go)", "clashes with the event 'stop'"),
    ("action_named_like_state", "state 'idle', transition 1 (go)", "top-level state 'busy'"),
    ("guard_and_action", "state 'idle', transition 1 (go)", "both as a guard and as an action"),
    ("event_named_like_state", "state 'idle', transition 1", "clashes with the top-level state"),
    ("event_named_like_engine", "state 'idle', transition 1", "'send' would replace"),
    ("state_named_like_engine", "state 'states'", "would replace a python-statemachine"),
    ("unknown_key", "document", "Unknown transition key(s) ['guard']"),
    ("no_description", "description", "a non-empty 'description' is required"),
    ("parallel_with_sibling", "state 'both'", "exactly one top-level state"),
]


def test_every_broken_fixture_has_a_case() -> None:
    # Keeps the table and the fixture directory in step: a new defect needs an expectation.
    assert sorted(p.stem for p in BROKEN.glob("*.yaml")) == sorted(c[0] for c in BROKEN_CASES)


@pytest.mark.parametrize(
    ("stem", "where", "reason"), BROKEN_CASES, ids=[c[0] for c in BROKEN_CASES]
)
def test_a_broken_document_fails_to_load_naming_document_element_and_reference(
    stem: str, where: str, reason: str
) -> None:
    # Given a document with exactly one defect
    path = BROKEN / f"{stem}.yaml"
    # When it is loaded
    with pytest.raises(ModelDocumentError) as caught:
        load_machine_document(path)
    # Then the error names the document, the element at fault and the reference
    assert caught.value.document == str(path)
    assert caught.value.where == where
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"{path}: {where}: ")


def test_a_json_syntax_error_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "name": "broken",\n  "states": {,}\n}\n')
    with pytest.raises(ModelDocumentError) as caught:
        load_machine_document(path)
    assert caught.value.where == "line 3"


def test_an_unreadable_document_is_a_model_document_error(tmp_path: Path) -> None:
    with pytest.raises(ModelDocumentError, match="file"):
        load_machine_document(tmp_path / "absent.yaml")


# --------------------------------------------------------------------------- binding


def test_bind_accepts_bindings_naming_exactly_the_documents_guards_and_actions() -> None:
    spec = load_machine_document(PARALLEL)
    bound = bind(spec, _bindings(spec))
    assert bound.spec is spec


def test_an_unbound_guard_names_the_transition_and_the_guard() -> None:
    # Given bindings that lack the guard `forced`
    spec = load_machine_document(PARALLEL)
    guards = {name: (lambda facts: True) for name in spec.guard_names if name != "forced"}
    # When they are bound
    with pytest.raises(ModelDocumentError) as caught:
        bind(spec, _bindings(spec, guards=guards))
    # Then the first transition using it is named, with the missing reference
    assert caught.value.where == "transition control_parallel:request:explicit:turn_end:1"
    assert "guard 'forced' is not bound" in caught.value.reason


def test_an_unbound_action_names_the_transition_and_the_action() -> None:
    spec = load_machine_document(FLAT)
    actions = {name: (lambda facts: ()) for name in spec.action_names if name != "remember"}
    with pytest.raises(ModelDocumentError) as caught:
        bind(spec, _bindings(spec, actions=actions))
    assert caught.value.where == "transition toggle_flat:toggle_flat:off:enable:1"
    assert "action 'remember' is not bound" in caught.value.reason


@pytest.mark.parametrize("kind", ["guards", "actions"])
def test_a_binding_no_transition_uses_is_an_error(kind: str) -> None:
    # Given bindings with one extra, unused guard or action
    spec = load_machine_document(FLAT)
    extra = dict(getattr(_bindings(spec), kind))
    extra["stale_name"] = lambda facts: True
    # Then binding fails naming it: the declaration is the spec, an unused binding is drift
    with pytest.raises(ModelDocumentError) as caught:
        bind(spec, _bindings(spec, **{kind: extra}))
    assert caught.value.where == "bindings"
    assert "'stale_name' bound but named by no transition" in caught.value.reason


def test_bindings_for_another_machine_are_refused() -> None:
    spec = load_machine_document(FLAT)
    with pytest.raises(ModelDocumentError, match="bindings are for machine 'toggle'"):
        bind(spec, _bindings(spec, machine="toggle"))


# --------------------------------------------------------------------------- analysis


def test_completeness_gaps_are_states_that_lack_or_may_refuse_a_declared_event() -> None:
    # Given the flat fixture: off has no `disable`, on has no `enable`, and both `tick`
    # transitions of `on` are guarded by conditions that can both be false
    spec = load_machine_document(FLAT)
    # Then exactly those three pairs are gaps
    assert completeness_gaps(spec) == [
        ("toggle_flat", "off", "disable"),
        ("toggle_flat", "on", "enable"),
        ("toggle_flat", "on", "tick"),
    ]


def test_guarded_transitions_that_cover_every_valuation_are_not_a_gap(tmp_path: Path) -> None:
    # Given `go` guarded by `ready` then `unless: ready`: one of them is always enabled
    path = tmp_path / "total.yaml"
    path.write_text(
        "name: total\ndescription: total\nstates:\n  idle:\n    initial: true\n"
        "    transitions:\n"
        "      - {event: go, target: idle, cond: ready}\n"
        "      - {event: go, target: idle, unless: ready}\n"
    )
    # Then the pair is not reported
    assert completeness_gaps(load_machine_document(path)) == []


def test_the_fingerprint_covers_every_documents_bytes_in_name_order(tmp_path: Path) -> None:
    # Given the fixture machines
    specs = load_models(VALID)
    # Then the fingerprint does not depend on the order the specs are given in
    assert fingerprint(specs) == fingerprint(reversed(list(specs.values())))
    # And changing one byte of one document (a comment) changes it
    copy = tmp_path / "toggle_flat.yaml"
    copy.write_bytes(FLAT.read_bytes() + b"# edited\n")
    edited = dict(specs, toggle_flat=load_machine_document(copy))
    assert fingerprint(edited) != fingerprint(specs)


# --------------------------------------------------------------------------- conditions

_NAMES = ["a", "b", "c", "d"]


def _conditions() -> st.SearchStrategy[str]:
    leaves = st.sampled_from(_NAMES)
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            inner.map(lambda x: f"not {x}"),
            st.tuples(inner, inner).map(lambda p: f"({p[0]} and {p[1]})"),
            st.tuples(inner, inner).map(lambda p: f"({p[0]} or {p[1]})"),
        ),
        max_leaves=8,
    )


class _Recorder(dict[str, bool]):
    """A namespace for eval() that records every name Python looks up, in order."""

    def __init__(self, truth: dict[str, bool]) -> None:
        super().__init__()
        self.truth = truth
        self.order: list[str] = []

    def __missing__(self, key: str) -> bool:
        self.order.append(key)
        return self.truth[key]


@given(text=_conditions(), bits=st.lists(st.booleans(), min_size=4, max_size=4))
def test_conditions_evaluate_like_python_and_call_only_the_guards_python_would(
    text: str, bits: list[bool]
) -> None:
    # Given a random condition and valuation
    values = dict(zip(_NAMES, bits, strict=True))
    python = _Recorder(values)
    expected = bool(eval(text, {}, python))  # generated: names, not, and, or
    # When the compiled condition evaluates it through a recording lookup
    looked_up: list[str] = []

    def lookup(name: str) -> bool:
        looked_up.append(name)
        return values[name]

    # Then it agrees with Python, and short-circuits exactly as Python does
    assert compile_condition(parse_condition(text))(lookup) is expected
    assert looked_up == python.order


@given(text=_conditions())
def test_rendering_a_condition_parses_back_to_the_same_tree(text: str) -> None:
    condition = parse_condition(text)
    assert parse_condition(render_condition(condition)) == condition


@pytest.mark.parametrize(
    "text", ["a > 1", "f(a)", "a.b", "True", "a if b else c", "a + b", "", "a and"]
)
def test_a_condition_outside_the_guard_language_is_refused(text: str) -> None:
    with pytest.raises(ConditionSyntaxError):
        parse_condition(text)


# --------------------------------------------------------------------------- models_dir


def test_models_dir_holds_the_repository_models(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given no override / When the package locates its declarations
    monkeypatch.delenv(machines.MODELS_ENV, raising=False)
    found = models_dir()
    # Then it is the repository's models/ (source checkout) or the wheel's copy of it
    # (installed package): either way the same documents, byte for byte
    repo = Path(__file__).resolve().parents[1] / "models"
    assert found == repo or found.name == "_models"
    names = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(found)) for p in found.rglob("*") if p.is_file())
    for name in names:
        assert (found / name).read_bytes() == (repo / name).read_bytes()


def test_the_models_environment_variable_overrides_the_location(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(machines.MODELS_ENV, str(VALID))
    assert models_dir() == VALID


# --------------------------------------------------------------------------- CLI


def test_machines_command_lists_every_machine_with_regions_events_and_transitions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # When the fixture machines are listed
    code = main(["machines", "--models", str(VALID)])
    out = capsys.readouterr().out
    # Then each machine shows its regions (initial starred), events, transitions and gaps
    assert code == 0
    assert "region      overflow: idle*, pending, pending-spent, spent" in out
    assert "events      disable, enable, tick" in out
    assert "toggle_flat:toggle_flat:on:tick:1" in out
    assert "tick [not allowed and (pinned or noisy)] / explode" in out
    assert "toggle_flat: on x tick" in out


def test_machines_command_json_describes_the_declarations(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the models directory set through the environment
    monkeypatch.setenv(machines.MODELS_ENV, str(VALID))
    # When one machine is listed as JSON
    assert main(["machines", "--machine", "toggle_flat", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    # Then the document carries the fingerprint and the machine's declaration
    (machine,) = document["machines"]
    assert document["fingerprint"] == fingerprint([load_machine_document(FLAT)])
    assert machine["regions"] == [
        {"name": "toggle_flat", "states": ["off", "on"], "initial": "off"}
    ]
    assert machine["transitions"][3] == {
        "id": "toggle_flat:toggle_flat:on:disable:1",
        "region": "toggle_flat",
        "source": "on",
        "event": "disable",
        "target": "off",
        "cond": None,
        "unless": "pinned",
        "actions": ["announce"],
    }


def test_machines_command_refuses_an_unknown_machine_with_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["machines", "--models", str(VALID), "--machine", "nope"]) == 2
    assert "no machine 'nope'; declared: control_parallel, toggle_flat" in capsys.readouterr().err


def test_machines_command_reports_a_broken_model_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(BROKEN / "unknown_target.yaml", tmp_path)
    assert main(["machines", "--models", str(tmp_path)]) == 2
    assert "unknown target 'nowhere'" in capsys.readouterr().err


def test_the_reserved_callback_names_are_exactly_what_python_statemachine_injects() -> None:
    # Given a python-statemachine chart whose transition action takes every keyword argument
    from statemachine import State, StateChart

    from pictx_fsm.machines.builder import INJECTED_ARGUMENTS

    passed: dict[str, object] = {}

    class Probe(StateChart):  # type: ignore[misc]
        start = State(initial=True)
        end = State(final=True)
        go = start.to(end, on="seen")

        def seen(self, *args: object, **kwargs: object) -> None:
            passed.update(kwargs)

    # When the event fires
    Probe().send("go")
    # Then the names it injected are exactly the ones no guard or action may take
    assert frozenset(passed) == INJECTED_ARGUMENTS
