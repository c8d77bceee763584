"""The reference engine: python-statemachine itself, running the very same document.

The declaration's bytes (``MachineSpec.document``) are read by python-statemachine's own
reader and compiled by its own :mod:`statemachine.io` interpreter, with the strict settings
the lifecycle needs: ``allow_event_without_transition=False`` (an unknown event, or one no
region can take, raises) and ``catch_errors_as_events=False`` (an action error propagates
instead of becoming an ``error.execution`` event). Guards in ``cond`` / ``unless`` are
evaluated by its restricted evaluator against a model object whose attributes are the guard
names (properties calling the bound guard on the facts set just before ``send``) and the
action names (methods appending the bound action's effects to a list).

Why actions live under ``before``: in python-statemachine 3.2.2 ``SyncEngine.microstep`` runs
the ``before`` callbacks of every selected transition first, before it exits any state; with
``catch_errors_as_events=False`` an exception there propagates out of ``send``. (``microstep``
also restores the previous configuration if anything raises during before/exit/on/enter.) So
an action that raises leaves the machine in its source configuration, and the machine keeps
working for the next event. ``tests/test_machines_engines.py`` checks this on this engine.

One correction, so that both engines follow SCXML's rule for parallel regions: python-statemachine
3.2.2 picks the enabled transitions by walking the active atomic states in the order they were
*entered* (``SyncEngine._select_transitions`` carries "TODO: sorted by document order"), so the
``before`` actions of two regions run in an order that depends on history. SCXML — and the
compiled engine — use document order. After every event this engine rewrites the active
configuration (the same states) in document order through the public ``configuration`` setter;
``tests/test_machines_engines.py`` pins the library behaviour that makes this necessary.
A runtime driving python-statemachine directly would see history-dependent effect order.

This engine exists to check the compiled one (:mod:`pictx_fsm.machines.compiled`), which is
stricter: it also refuses an event that some declaring region cannot take while another can.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from statemachine.exceptions import TransitionNotAllowed
from statemachine.io.evaluators import evaluator_for
from statemachine.io.interpreter import Interpreter
from statemachine.io.json.reader import JSONReader
from statemachine.io.native import native_dict_to_definition
from statemachine.io.yaml.reader import YAMLReader
from statemachine.orderedset import OrderedSet

from pictx_fsm.errors import IllegalEventError
from pictx_fsm.machines.bindings import MachineBindings, bind, call_action, call_guard
from pictx_fsm.machines.compiled import Configuration
from pictx_fsm.machines.document import MachineSpec

__all__ = ["E", "F", "ReferenceMachine", "chart_class"]

F = TypeVar("F")
E = TypeVar("E")


class _StrictInterpreter(Interpreter):
    """python-statemachine's interpreter with the lifecycle's strict class settings."""

    def definition_kwargs(self, definition: Any) -> dict[str, Any]:
        kwargs: dict[str, Any] = super().definition_kwargs(definition)
        kwargs["allow_event_without_transition"] = False
        kwargs["catch_errors_as_events"] = False
        return kwargs


@functools.lru_cache(maxsize=64)
def chart_class(spec: MachineSpec) -> type[Any]:
    """The python-statemachine class of ``spec``, built from the document's own bytes."""
    reader = JSONReader() if spec.source.endswith(".json") else YAMLReader()
    raw = reader.parse_document(spec.document.decode("utf-8"))
    definition = native_dict_to_definition(raw, source_name=spec.name)
    interpreter = _StrictInterpreter(reader=reader, evaluator=evaluator_for(False))
    interpreter.process_definition(definition, location=spec.name)
    chart: type[Any] = interpreter.scs[spec.name]
    chart._io_processor = interpreter  # keep the interpreter alive, as statemachine.io.load does
    return chart


class _NoFacts:
    """Marker: outside ``send`` there are no facts, and guard attributes do not resolve."""


_NO_FACTS = _NoFacts()


class _ModelBase:
    """Holds the facts of the event being sent and collects the effects of its actions."""

    def __init__(self) -> None:
        self._facts: object = _NO_FACTS
        self._effects: list[object] = []


def _guard_property(machine: str, name: str, guard: Callable[[Any], bool]) -> property:
    def read(model: _ModelBase) -> bool:
        if model._facts is _NO_FACTS:
            # python-statemachine probes model attributes when it binds callbacks; no facts yet.
            raise AttributeError(name)
        return call_guard(machine, name, guard, model._facts)

    return property(read)


def _action_method(
    machine: str, name: str, action: Callable[[Any], tuple[Any, ...]]
) -> Callable[[_ModelBase], None]:
    def run(model: _ModelBase) -> None:
        model._effects.extend(call_action(machine, name, action, model._facts))

    run.__name__ = name
    return run


def _model_class(bindings: MachineBindings[Any, Any]) -> type[_ModelBase]:
    namespace: dict[str, Any] = {}
    for name, guard in bindings.guards.items():
        namespace[name] = _guard_property(bindings.machine, name, guard)
    for name, action in bindings.actions.items():
        namespace[name] = _action_method(bindings.machine, name, action)
    return type(f"{bindings.machine}_model", (_ModelBase,), namespace)


def _document_order(spec: MachineSpec) -> dict[str, int]:
    """Every state id (parallel state, regions, atomic states) by pre-order document position."""
    ids = [] if spec.parallel_state is None else [spec.parallel_state]
    for region in spec.regions:
        ids += ([] if spec.parallel_state is None else [region.name]) + list(region.states)
    return {state: position for position, state in enumerate(ids)}


class ReferenceMachine(Generic[F, E]):
    """One running python-statemachine instance of a declared machine (stateful)."""

    def __init__(self, spec: MachineSpec, bindings: MachineBindings[F, E]) -> None:
        bind(spec, bindings)
        self.spec = spec
        self._model = _model_class(bindings)()
        self._order = _document_order(spec)
        self._chart = chart_class(spec)(model=self._model)
        self._in_document_order()

    def _in_document_order(self) -> None:
        # State.document_order is not usable here: python-statemachine numbers states per
        # nesting level, so states of different regions tie.
        active = sorted(self._chart.configuration, key=lambda state: self._order[state.id])
        self._chart.configuration = OrderedSet(active)

    def configuration(self) -> Configuration:
        active = {state.id for state in self._chart.configuration}
        return Configuration(
            states=tuple(
                (region.name, next(s for s in region.states if s in active))
                for region in self.spec.regions
            )
        )

    def send(self, event: str, facts: F) -> tuple[Configuration, tuple[E, ...]]:
        """Send ``event`` with ``facts``; the new configuration and the actions' effects."""
        self._model._facts = facts
        self._model._effects = []
        try:
            self._chart.send(event)
        except TransitionNotAllowed as exc:
            raise IllegalEventError(
                self.spec.name, str(self.configuration()), event, f"python-statemachine: {exc}"
            ) from None
        finally:
            self._model._facts = _NO_FACTS
            self._in_document_order()
        effects: tuple[E, ...] = tuple(self._model._effects)  # type: ignore[arg-type]
        return self.configuration(), effects
