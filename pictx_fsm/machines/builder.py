"""Check python-statemachine's IR of one document against the supported subset; build the spec.

:mod:`pictx_fsm.machines.document` parses the text and hands the result of
python-statemachine's own parser here. Each check names the element at fault (``state 'x'``,
``state 'x', transition 2 (event)``) so the resulting
:class:`~pictx_fsm.errors.ModelDocumentError` says exactly what to fix.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from statemachine.statemachine import StateChart

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.machines.conditions import (
    Condition,
    ConditionSyntaxError,
    all_of,
    any_of,
    guard_names,
    parse_condition,
)
from pictx_fsm.machines.spec import MachineSpec, RegionSpec, TransitionSpec

__all__ = ["INJECTED_ARGUMENTS", "build_spec"]

_STATE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")

INJECTED_ARGUMENTS = frozenset(
    {
        "event_data",
        "machine",
        "event",
        "model",
        "transition",
        "state",
        "source",
        "target",
        "previous_configuration",
        "new_configuration",
    }
)
"""The arguments python-statemachine injects into every callback by name (its dependency
injection; ``tests/test_machines_document.py`` holds this set to what it passes)."""
# Names no guard or action may take: python-statemachine injects these as callback arguments
# (they would shadow the model attribute) or its condition normaliser rewrites them.
_RESERVED_NAMES = INJECTED_ARGUMENTS | {"true", "false", "null", "In"}
# Attributes of every python-statemachine machine; an action of that name would call them too.
_MACHINE_ATTRIBUTES = frozenset(
    {name for name in dir(StateChart) if not name.startswith("_")} | {"prepare_event"}
)
_GENERIC_CONVENTIONS = (
    "on_enter_state",
    "on_exit_state",
    "on_invoke_state",
    "before_transition",
    "on_transition",
    "after_transition",
    "prepare_event",
)


def build_spec(document: str, raw: Mapping[str, Any], definition: Any, data: bytes) -> MachineSpec:
    """The :class:`MachineSpec` of a parsed document, or a :class:`ModelDocumentError`."""
    return _SpecBuilder(document, str(raw["name"]), raw).build(definition, data)


class _SpecBuilder:
    """Walks python-statemachine's IR of one document, checking the supported subset."""

    def __init__(self, document: str, name: str, raw: Mapping[str, Any]) -> None:
        self.document = document
        self.name = name
        self.raw = raw
        self.region_of: dict[str, str] = {}  # atomic state -> region ("" until known)
        self.parent_of: dict[str, str] = {}  # every state id -> where it was declared
        self.where_named: dict[str, str] = {}  # guard/action name -> first place it appears
        self.top_level: tuple[str, ...] = ()  # states python-statemachine makes class attributes

    def fail(self, where: str, reason: str) -> ModelDocumentError:
        return ModelDocumentError(self.document, where, reason)

    def build(self, definition: Any, data: bytes) -> MachineSpec:
        parallel_state, region_nodes = self._shape(definition)
        regions = tuple(self._region(name, nodes, raw) for name, nodes, raw in region_nodes)
        transitions = tuple(
            self._transitions(region.name, state_id, node)
            for (_, nodes, _), region in zip(region_nodes, regions, strict=True)
            for state_id, node in nodes.items()
        )
        flat = tuple(t for group in transitions for t in group)
        events = tuple(sorted({t.event for t in flat}))
        self._check_names(flat, events)
        return MachineSpec(
            name=self.name,
            description=str(self.raw["description"]).strip(),
            source=self.document,
            sha256=hashlib.sha256(data).hexdigest(),
            document=data,
            parallel_state=parallel_state,
            regions=regions,
            events=events,
            transitions=flat,
        )

    # -- shape ------------------------------------------------------------------

    def _shape(self, definition: Any) -> tuple[str | None, list[tuple[str, dict[str, Any], Any]]]:
        top: dict[str, Any] = definition.states
        self.top_level = tuple(top)
        for state_id, node in top.items():
            self._check_state(state_id, node, "the top level")
        parallel = [sid for sid, node in top.items() if node.parallel]
        if not parallel:
            for state_id, node in top.items():
                if node.states:
                    raise self.fail(
                        f"state {state_id!r}",
                        "nested states are not supported: a machine is flat, or has one "
                        "top-level 'parallel: true' state whose children are its regions",
                    )
            return None, [(self.name, top, self.raw["states"])]
        if len(top) != 1:
            raise self.fail(
                f"state {parallel[0]!r}",
                "a parallel machine has exactly one top-level state (the parallel one); "
                f"found {sorted(top)}",
            )
        return parallel[0], self._parallel_regions(parallel[0], top[parallel[0]])

    def _parallel_regions(self, state_id: str, node: Any) -> list[tuple[str, dict[str, Any], Any]]:
        if node.transitions:
            raise self.fail(f"state {state_id!r}", "transitions belong to atomic states only")
        if not node.states:
            raise self.fail(f"state {state_id!r}", "a parallel state needs at least one region")
        raw_regions = self.raw["states"][state_id]["states"]
        regions = []
        for region_id, region in node.states.items():
            self._check_state(region_id, region, f"state {state_id!r}")
            self._check_region(region_id, region)
            regions.append((region_id, region.states, raw_regions[region_id]["states"]))
        return regions

    def _check_region(self, region_id: str, region: Any) -> None:
        where = f"state {region_id!r}"
        if region.parallel:
            raise self.fail(where, "nested parallel states are not supported")
        if not region.states:
            raise self.fail(where, "a region must contain atomic states")
        if region.transitions:
            raise self.fail(where, "transitions belong to atomic states only, not to regions")
        for state_id, state in region.states.items():
            self._check_state(state_id, state, f"region {region_id!r}")
            if state.states or state.parallel:
                raise self.fail(
                    f"state {state_id!r}",
                    f"states nested deeper than a region ({region_id!r}) are not supported",
                )

    def _check_state(self, state_id: Any, node: Any, parent: str) -> None:
        if not isinstance(state_id, str) or not _STATE_ID.match(state_id):
            raise self.fail(
                f"state {state_id!r}", "a state id is a name of letters, digits, '_' and '-'"
            )
        where = f"state {state_id!r}"
        if parent == "the top level" and state_id in _MACHINE_ATTRIBUTES:
            raise self.fail(
                where, "a top-level state would replace a python-statemachine attribute"
            )
        if state_id == self.name:
            raise self.fail(where, "a state may not share the machine's name")
        if state_id in self.parent_of:
            raise self.fail(
                where,
                f"state id {state_id!r} is declared under {self.parent_of[state_id]} and again "
                f"under {parent}; state ids must be unique across the machine "
                "(python-statemachine keys states by id and would merge them)",
            )
        self.parent_of[state_id] = parent
        self.region_of[state_id] = ""
        unsupported = {
            "final": node.final,
            "history": node.history,
            "invoke": node.invocations,
            "donedata": node.donedata,
            "enter": node.onentry or node.enter_refs,
            "exit": node.onexit or node.exit_refs,
        }
        for feature, present in unsupported.items():
            if present:
                raise self.fail(
                    where,
                    f"'{feature}' is not supported here; put behaviour in named actions under "
                    "a transition's 'before'",
                )

    # -- regions ----------------------------------------------------------------

    def _region(self, name: str, nodes: dict[str, Any], raw_states: Any) -> RegionSpec:
        declared = [
            sid
            for sid, node in nodes.items()
            if node.initial
            and isinstance(raw_states.get(sid), Mapping)
            and "initial" in raw_states[sid]
        ]
        where = f"state {name!r}" if name != self.name else "states"
        if len(declared) != 1:
            found = f"found {declared}" if declared else "none is marked"
            raise self.fail(where, f"exactly one state must be marked 'initial: true' ({found})")
        for state_id in nodes:
            self.region_of[state_id] = name
        return RegionSpec(name=name, states=tuple(nodes), initial=declared[0])

    # -- transitions --------------------------------------------------------------

    def _transitions(self, region: str, source: str, node: Any) -> tuple[TransitionSpec, ...]:
        counts: dict[str, int] = {}
        result = []
        for position, item in enumerate(node.transitions, start=1):
            where = f"state {source!r}, transition {position}"
            event = self._event(where, item.event)
            where = f"{where} ({event})"
            counts[event] = counts.get(event, 0) + 1
            result.append(
                TransitionSpec(
                    id=f"{self.name}:{region}:{source}:{event}:{counts[event]}",
                    region=region,
                    source=source,
                    event=event,
                    index=counts[event],
                    target=self._target(where, region, item.target),
                    cond=self._condition(where, "cond", item.cond),
                    unless=self._condition(where, "unless", item.unless),
                    actions=self._actions(where, item),
                )
            )
        return tuple(result)

    def _event(self, where: str, event: Any) -> str:
        if not event:
            raise self.fail(where, "eventless transitions are not supported; give it an 'event'")
        if not isinstance(event, str) or " " in event.strip():
            raise self.fail(where, f"one event per transition, got {event!r}")
        if not event.isidentifier():
            raise self.fail(where, f"event {event!r} must be an identifier")
        # python-statemachine makes every event (and top-level state) a class attribute.
        if event.startswith("_") or event in _MACHINE_ATTRIBUTES:
            raise self.fail(where, f"event {event!r} would replace a python-statemachine attribute")
        if event in self.top_level:
            raise self.fail(where, f"event {event!r} clashes with the top-level state {event!r}")
        return event

    def _target(self, where: str, region: str, target: Any) -> str:
        if not target:
            raise self.fail(
                where,
                "targetless transitions are not supported; an ignored event is a "
                "self-transition whose target is its source",
            )
        if not isinstance(target, str) or " " in target.strip():
            raise self.fail(where, f"one target per transition, got {target!r}")
        if target not in self.region_of:
            raise self.fail(where, f"unknown target {target!r}")
        if self.region_of[target] != region:
            raise self.fail(
                where,
                f"target {target!r} is not a state of region {region!r}; a transition stays "
                "inside its region",
            )
        return target

    def _condition(self, where: str, slot: str, value: Any) -> Condition | None:
        if value is None:
            return None
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise self.fail(where, f"'{slot}' must be a condition string or a list of them")
        try:
            parts = tuple(parse_condition(text) for text in texts)
        except ConditionSyntaxError as exc:
            raise self.fail(where, f"'{slot}': {exc}") from None
        # python-statemachine requires every listed cond to hold and every listed unless to
        # be false: a cond list is a conjunction, an unless list a disjunction.
        condition = all_of(parts) if slot == "cond" else any_of(parts)
        for name in guard_names(condition):
            self.where_named.setdefault(name, where)
        return condition

    def _actions(self, where: str, item: Any) -> tuple[str, ...]:
        if item.internal or item.initial:
            flag = "internal" if item.internal else "initial"
            raise self.fail(where, f"'{flag}' transitions are not supported")
        if item.on or item.on_refs or item.after or item.after_refs:
            raise self.fail(
                where,
                "actions go under 'before' (it runs before the source state is left, so an "
                "action that raises leaves the machine in its source state); 'on' and 'after' "
                "are not supported",
            )
        if item.before is not None and not item.before.is_empty:
            raise self.fail(where, "structured actions are not supported; name an action")
        for name in item.before_refs:
            if not isinstance(name, str) or not name.isidentifier():
                raise self.fail(where, f"action {name!r} must be an identifier")
            if item.before_refs.count(name) > 1:
                # python-statemachine registers a callback once per transition and slot.
                raise self.fail(where, f"action {name!r} is listed twice; it would run once")
            self.where_named.setdefault(name, where)
        return tuple(item.before_refs)

    # -- names --------------------------------------------------------------------

    def _check_names(
        self, transitions: tuple[TransitionSpec, ...], events: tuple[str, ...]
    ) -> None:
        """Refuse guard/action names python-statemachine would resolve to something else.

        Guards in ``cond`` strings resolve against the injected callback arguments, then the
        model; actions resolve by name against the machine *and* the model (every match is
        called), so an action must also avoid the machine's own attributes: its public API,
        its top-level states and its events. Either kind must avoid the naming conventions
        python-statemachine calls by itself (``on_<event>``, ``on_enter_<state>`` ...).
        """
        guards = {name for t in transitions for name in t.guards}
        actions = {name for t in transitions for name in t.actions}
        conventions = self._conventions(events)
        machine_attrs = self._machine_attributes(events)
        for name in sorted(guards | actions):
            kind = "guard" if name in guards else "action"
            where = self.where_named[name]
            if name in guards and name in actions:
                raise self.fail(where, f"{name!r} is used both as a guard and as an action")
            if name.startswith("_") or name in _RESERVED_NAMES:
                raise self.fail(where, f"{kind} name {name!r} is reserved by python-statemachine")
            clash = conventions.get(name) or (machine_attrs.get(name) if kind == "action" else None)
            if clash:
                raise self.fail(where, f"{kind} name {name!r} clashes with {clash}")

    def _conventions(self, events: tuple[str, ...]) -> dict[str, str]:
        taken: dict[str, str] = {}
        for state in self.region_of:
            for prefix in ("on_enter_", "on_exit_", "on_invoke_"):
                taken[prefix + state] = f"the callback convention for state {state!r}"
        for event in events:
            for prefix in ("before_", "on_", "after_"):
                taken[prefix + event] = f"the callback convention for event {event!r}"
        for generic in _GENERIC_CONVENTIONS:
            taken[generic] = "a python-statemachine callback convention"
        return taken

    def _machine_attributes(self, events: tuple[str, ...]) -> dict[str, str]:
        taken = {name: "a python-statemachine machine attribute" for name in _MACHINE_ATTRIBUTES}
        for state in self.top_level:
            taken[state] = f"the top-level state {state!r}"
        for event in events:
            taken[event] = f"the event {event!r}"
        return taken
