"""Load and validate machine declarations (``models/<name>.yaml``) into a frozen IR.

The document format is python-statemachine's own native YAML/JSON vocabulary, parsed and
checked by its own parser (:func:`statemachine.io.native.native_dict_to_definition`), so a
document here is a document there. On top of that vocabulary pictx_fsm accepts a deliberate
subset that both engines (the compiled table and python-statemachine itself) execute alike:

- a machine is **flat** (top-level atomic states: one implicit region named after the machine)
  or has exactly **one top-level ``parallel: true`` state** whose children are the regions, each
  a compound state of atomic states (no deeper nesting);
- every region (and a flat machine) marks exactly one state ``initial: true``;
- a transition has one ``event``, one ``target`` in its own region, an optional ``cond`` /
  ``unless`` over guard names (see :mod:`pictx_fsm.machines.conditions`) and named actions under
  ``before`` (a string or a list of strings); an ignored event is an explicit self-transition;
- no history, invoke, datamodel, final states, enter/exit actions, ``on``/``after`` slots,
  structured actions, eventless or targetless transitions.

Anything else is refused at load with a :class:`~pictx_fsm.errors.ModelDocumentError` naming
the document, the element (``line N``, ``state 'x'``, ``state 'x', transition 2 (event)``) and
the offending reference, so a broken model fails when it is loaded, not when an event arrives.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from itertools import product
from pathlib import Path
from typing import Any

import attrs
import yaml
from statemachine.event import _event_data_kwargs
from statemachine.exceptions import InvalidDefinition
from statemachine.io.native import native_dict_to_definition
from statemachine.io.yaml.reader import _make_loader
from statemachine.statemachine import StateChart

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.machines.conditions import (
    Condition,
    ConditionSyntaxError,
    all_of,
    any_of,
    compile_condition,
    guard_names,
    parse_condition,
)

DOCUMENT_SUFFIXES = (".yaml", ".yml", ".json")

_STATE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")

# Names no guard or action may take: python-statemachine injects these as callback arguments
# (they would shadow the model attribute) or its condition normaliser rewrites them.
_RESERVED_NAMES = frozenset(set(_event_data_kwargs) | {"true", "false", "null", "In"})
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

# Beyond this many guards in one (state, event) the exact gap check would enumerate too much.
_MAX_EXACT_GUARDS = 12


@attrs.frozen(kw_only=True)
class RegionSpec:
    """One region: its atomic states in document order and its initial state."""

    name: str
    states: tuple[str, ...]
    initial: str


@attrs.frozen(kw_only=True)
class TransitionSpec:
    """One declared transition; ``id`` is stable: ``machine:region:source:event:index``.

    ``index`` is 1-based among the transitions from ``source`` on ``event``, in document order,
    which is also the order in which both engines try them.
    """

    id: str
    region: str
    source: str
    event: str
    index: int
    target: str
    cond: Condition | None
    unless: Condition | None
    actions: tuple[str, ...]

    @property
    def guards(self) -> tuple[str, ...]:
        """Guard names in the order a check may evaluate them (``cond`` then ``unless``)."""
        names = dict.fromkeys(guard_names(self.cond))
        names.update(dict.fromkeys(guard_names(self.unless)))
        return tuple(names)

    @property
    def is_guarded(self) -> bool:
        return self.cond is not None or self.unless is not None


@attrs.frozen(kw_only=True)
class MachineSpec:
    """A validated machine declaration: the single source both engines and diagrams read."""

    name: str
    description: str
    source: str
    sha256: str
    document: bytes = attrs.field(repr=False)
    parallel_state: str | None
    regions: tuple[RegionSpec, ...]
    events: tuple[str, ...]
    transitions: tuple[TransitionSpec, ...]

    @property
    def guard_names(self) -> tuple[str, ...]:
        return tuple(sorted({name for t in self.transitions for name in t.guards}))

    @property
    def action_names(self) -> tuple[str, ...]:
        return tuple(sorted({name for t in self.transitions for name in t.actions}))

    def region(self, name: str) -> RegionSpec:
        for region in self.regions:
            if region.name == name:
                return region
        raise KeyError(name)

    def transitions_from(
        self, region: str, state: str, event: str | None = None
    ) -> tuple[TransitionSpec, ...]:
        """Transitions leaving ``state`` (optionally on ``event``), in document order."""
        return tuple(
            t
            for t in self.transitions
            if t.region == region and t.source == state and (event is None or t.event == event)
        )

    def region_events(self, region: str) -> tuple[str, ...]:
        """Events the region declares anywhere (sorted): the ones it must answer strictly."""
        return tuple(sorted({t.event for t in self.transitions if t.region == region}))


# --------------------------------------------------------------------------- loading


def load_models(directory: str | os.PathLike[str]) -> dict[str, MachineSpec]:
    """Load every ``*.yaml`` / ``*.yml`` / ``*.json`` document of ``directory``, by name."""
    root = Path(directory)
    if not root.is_dir():
        raise ModelDocumentError(str(root), "directory", "no such models directory")
    specs: dict[str, MachineSpec] = {}
    for path in sorted(p for p in root.iterdir() if p.suffix in DOCUMENT_SUFFIXES):
        spec = load_machine_document(path)
        if spec.name in specs:
            raise ModelDocumentError(
                str(path),
                "name",
                f"machine {spec.name!r} is also declared in {specs[spec.name].source}",
            )
        specs[spec.name] = spec
    return dict(sorted(specs.items()))


def load_machine_document(path: str | os.PathLike[str]) -> MachineSpec:
    """Read, parse and validate one machine document into a :class:`MachineSpec`."""
    file = Path(path)
    document = str(file)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ModelDocumentError(document, "file", exc.strerror or str(exc)) from None
    raw = _parse(data, file, document)
    _check_header(raw, file, document)
    try:
        definition = native_dict_to_definition(raw, source_name=file.stem)
    except (InvalidDefinition, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ModelDocumentError(document, "document", str(exc)) from None
    return _SpecBuilder(document, str(raw["name"]), raw).build(definition, data)


def _parse(data: bytes, file: Path, document: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelDocumentError(document, "document", f"not UTF-8 ({exc.reason})") from None
    if file.suffix == ".json":
        return _parse_json(text, document)
    return _parse_yaml(text, document)


def _parse_json(text: str, document: str) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        duplicates = sorted({key for key in keys if keys.count(key) > 1})
        if duplicates:
            raise ModelDocumentError(document, "document", f"duplicate key(s) {duplicates}")
        return dict(items)

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise ModelDocumentError(document, f"line {exc.lineno}", exc.msg) from None


def _parse_yaml(text: str, document: str) -> Any:
    try:
        return yaml.load(text, Loader=_strict_yaml_loader())  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}" if mark is not None else "document"
        context = exc.context
        if context and exc.context_mark is not None and exc.context_mark is not mark:
            context = f"{context} (from line {exc.context_mark.line + 1})"
        reason = " ".join(part for part in (context, exc.problem) if part)
        raise ModelDocumentError(document, where, reason or str(exc)) from None
    except yaml.YAMLError as exc:
        raise ModelDocumentError(document, "document", str(exc)) from None


_LOADER: type[yaml.SafeLoader] | None = None


def _strict_yaml_loader() -> type[yaml.SafeLoader]:
    """python-statemachine's loader (keeps ``on``/``off`` as strings), refusing duplicate keys.

    PyYAML keeps the last of two equal keys; two states with one id would silently lose one.
    """
    global _LOADER
    if _LOADER is None:
        base: type[yaml.SafeLoader] = _make_loader(yaml)  # type: ignore[no-untyped-call]

        class StrictLoader(base):  # type: ignore[valid-type,misc]
            def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    if not isinstance(key, str):
                        continue
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"found duplicate key {key!r}",
                            key_node.start_mark,
                        )
                    seen.add(key)
                return super().construct_mapping(node, deep=deep)

        _LOADER = StrictLoader
    return _LOADER


def _check_header(raw: Any, file: Path, document: str) -> None:
    if not isinstance(raw, Mapping):
        raise ModelDocumentError(document, "document", "a machine document must be a mapping")
    name = raw.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise ModelDocumentError(document, "name", f"'name' must be an identifier, got {name!r}")
    if name != file.stem:
        raise ModelDocumentError(
            document, "name", f"machine {name!r} must live in a file named {name}{file.suffix}"
        )
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ModelDocumentError(document, "description", "a non-empty 'description' is required")
    if raw.get("datamodel") is not None:
        raise ModelDocumentError(
            document, "datamodel", "a datamodel is not supported: guards read typed facts instead"
        )


# --------------------------------------------------------------------------- building


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


# --------------------------------------------------------------------------- analysis


def completeness_gaps(spec: MachineSpec) -> list[tuple[str, str, str]]:
    """``(region, state, event)`` where the event could be illegal.

    A region answers every event it declares (anywhere) strictly, so each of its states must
    accept each such event. A gap is a state with no transition for one of them, or one whose
    transitions for it are all guarded and some valuation of those guards (treated as
    independent booleans, so facts may rule the valuation out) enables none of them.
    """
    gaps: list[tuple[str, str, str]] = []
    for region in spec.regions:
        for state in region.states:
            for event in spec.region_events(region.name):
                candidates = spec.transitions_from(region.name, state, event)
                if not candidates or _can_disable_all(candidates):
                    gaps.append((region.name, state, event))
    return gaps


def _can_disable_all(candidates: tuple[TransitionSpec, ...]) -> bool:
    if any(not t.is_guarded for t in candidates):
        return False
    names = sorted({name for t in candidates for name in t.guards})
    if len(names) > _MAX_EXACT_GUARDS:
        return True
    checks = [_enabled_check(t) for t in candidates]
    for values in product((False, True), repeat=len(names)):
        valuation = dict(zip(names, values, strict=True))
        if not any(check(valuation.__getitem__) for check in checks):
            return True
    return False


def _enabled_check(transition: TransitionSpec) -> Any:
    cond = compile_condition(transition.cond) if transition.cond is not None else None
    unless = compile_condition(transition.unless) if transition.unless is not None else None

    def enabled(lookup: Any) -> bool:
        if cond is not None and not cond(lookup):
            return False
        return not (unless is not None and unless(lookup))

    return enabled


def fingerprint(specs: Mapping[str, MachineSpec] | Iterable[MachineSpec]) -> str:
    """sha256 over the documents' bytes, sorted by machine name (for the audit log).

    Each document is framed by its name and length so that moving bytes between documents
    changes the fingerprint.
    """
    items: Iterator[MachineSpec] = iter(specs.values() if isinstance(specs, Mapping) else specs)
    digest = hashlib.sha256()
    for spec in sorted(items, key=lambda s: s.name):
        digest.update(f"{spec.name}\0{len(spec.document)}\0".encode())
        digest.update(spec.document)
    return digest.hexdigest()
