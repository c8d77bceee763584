"""The compiled engine: a declared machine as an immutable table and a pure ``step``.

python-statemachine runs the same declaration (:mod:`pictx_fsm.machines.reference`) but costs
tens of microseconds per event and hides its decisions inside its engine; this engine is the
hot path. ``step(configuration, event, facts)`` returns a :class:`Step` value — configuration
before and after, the transitions that fired with the guard values that decided them, and the
effects of their actions — and changes nothing else, so replay is exact and the audit record
is the step itself.

Semantics (the same as python-statemachine's for the supported subset): every region whose
declaration mentions the event takes, from its current state, the first transition on that
event (document order) whose ``cond`` holds and whose ``unless`` does not; the other regions
keep their state. Actions run only after every region has chosen, regions in document order,
each transition's actions in list order; their effects are concatenated in that order.

Strictness, stricter than python-statemachine (which raises only when *no* region moves):

- an event no region declares raises :class:`~pictx_fsm.errors.IllegalEventError`;
- a region that declares the event but has no enabled transition in its current state raises
  :class:`IllegalEventError` too, even if other regions could move. A lifecycle that means to
  ignore an event in a state says so with an explicit self-transition, which is audited.

An action (or guard) that raises propagates. ``step`` has not produced a new configuration, so
a caller that keeps the configuration it passed in never sees the target state.

Guards are evaluated with short-circuit: only the guards a decision needs are called, at most
once per region and step (they are pure). ``Fired.guards`` lists, in evaluation order, every
guard evaluated while that region chose — including those of earlier candidates that did not
hold, since they explain why this transition and not an earlier one fired.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import attrs

from pictx_fsm.errors import IllegalEventError
from pictx_fsm.machines.bindings import MachineBindings, bind, call_action, call_guard
from pictx_fsm.machines.conditions import Evaluator, compile_condition
from pictx_fsm.machines.document import MachineSpec, TransitionSpec

__all__ = ["CompiledMachine", "Configuration", "E", "F", "Fired", "Step"]

F = TypeVar("F")
E = TypeVar("E")


@attrs.frozen(kw_only=True)
class Configuration:
    """The active state of every region, in document order: ``((region, state), ...)``."""

    states: tuple[tuple[str, str], ...]

    def state(self, region: str) -> str:
        for name, state in self.states:
            if name == region:
                return state
        raise KeyError(region)

    def __str__(self) -> str:
        return ", ".join(f"{region}={state}" for region, state in self.states)


@attrs.frozen(kw_only=True)
class Fired:
    """One transition taken in one region, with the guard values that decided it."""

    transition: str
    region: str
    source: str
    target: str
    guards: tuple[tuple[str, bool], ...]
    actions: tuple[str, ...]


@attrs.frozen(kw_only=True)
class Step(Generic[E]):
    """The whole outcome of one event: what an audit record of the machine needs."""

    machine: str
    event: str
    before: Configuration
    after: Configuration
    fired: tuple[Fired, ...]
    effects: tuple[E, ...]
    facts: tuple[tuple[str, Any], ...] = ()
    """The facts the decision read, in order, when the caller records them (the engine
    itself sees guards only)."""

    def with_facts(self, facts: tuple[tuple[str, Any], ...]) -> Step[E]:
        """This step with the facts its decision read (``attrs.evolve`` without its field
        lookups: every machine event of every hook records one); itself when it read none."""
        if not facts and not self.facts:
            return self
        return Step(
            machine=self.machine,
            event=self.event,
            before=self.before,
            after=self.after,
            fired=self.fired,
            effects=self.effects,
            facts=facts,
        )


@attrs.frozen(kw_only=True)
class _Entry(Generic[F, E]):
    """One transition ready to run: compiled conditions and resolved actions."""

    spec: TransitionSpec
    cond: Evaluator | None
    unless: Evaluator | None
    actions: tuple[tuple[str, Callable[[F], tuple[E, ...]]], ...]
    unguarded: Fired  # the record of this transition when no guard was evaluated
    placed: tuple[str, str]  # (region, target): the region's entry once it fired
    _guarded: dict[tuple[tuple[str, bool], ...], Fired] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )

    def fired(self, guards: tuple[tuple[str, bool], ...]) -> Fired:
        """The record of this transition fired after ``guards`` (a value: one per guard
        outcome, as few as the guards' truth tables)."""
        known = self._guarded.get(guards)
        if known is None:
            known = self._guarded[guards] = _with_guards(self.unguarded, guards)
        return known


# (region index, source state, event) -> candidate transitions in document order
_Table = Mapping[tuple[int, str, str], tuple[_Entry[F, E], ...]]
# (region index, region, its state, candidates) of every region an event concerns
_Plan = tuple[tuple[int, str, str, tuple[_Entry[F, E], ...]], ...]


@attrs.frozen(kw_only=True)
class CompiledMachine(Generic[F, E]):
    """An immutable transition table built from a declaration and its bindings."""

    spec: MachineSpec
    bindings: MachineBindings[F, E]
    table: _Table[F, E] = attrs.field(repr=False)
    region_events: tuple[frozenset[str], ...] = attrs.field(repr=False)
    region_states: tuple[tuple[str, frozenset[str]], ...] = attrs.field(repr=False)
    events: frozenset[str] = attrs.field(repr=False)
    _plans: dict[tuple[tuple[tuple[str, str], ...], str], _Plan[F, E]] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )
    """(configuration, event) -> the regions that take part and their candidates, found
    once: a configuration checked and looked up again on every step cost more than most
    decisions (the table is immutable, so a plan never changes)."""

    @classmethod
    def build(cls, spec: MachineSpec, bindings: MachineBindings[F, E]) -> CompiledMachine[F, E]:
        """Validate ``bindings`` against ``spec`` (see :func:`bind`) and compile the table."""
        bind(spec, bindings)
        index = {region.name: i for i, region in enumerate(spec.regions)}
        table: dict[tuple[int, str, str], list[_Entry[F, E]]] = {}
        for transition in spec.transitions:
            key = (index[transition.region], transition.source, transition.event)
            table.setdefault(key, []).append(_compile(transition, bindings))
        return cls(
            spec=spec,
            bindings=bindings,
            table=MappingProxyType({key: tuple(entries) for key, entries in table.items()}),
            region_events=tuple(frozenset(spec.region_events(r.name)) for r in spec.regions),
            region_states=tuple((r.name, frozenset(r.states)) for r in spec.regions),
            events=frozenset(spec.events),
        )

    def initial(self) -> Configuration:
        return Configuration(states=tuple((r.name, r.initial) for r in self.spec.regions))

    def step(self, configuration: Configuration, event: str, facts: F) -> Step[E]:
        """Handle ``event`` in ``configuration`` given ``facts``; pure, raises when illegal."""
        if event not in self.events:
            raise IllegalEventError(
                self.spec.name,
                str(configuration),
                event,
                f"unknown event; declared: {', '.join(sorted(self.events))}",
            )
        chosen = self._choose(configuration, event, facts)
        after = list(configuration.states)
        fired: list[Fired] = []
        effects: list[E] = []
        machine = self.spec.name
        for position, entry, guards in chosen:
            for name, action in entry.actions:
                effects.extend(call_action(machine, name, action, facts))
            after[position] = entry.placed
            fired.append(entry.fired(guards) if guards else entry.unguarded)
        states = tuple(after)
        return Step(
            machine=machine,
            event=event,
            before=configuration,
            # most events leave every region where it was: the configuration itself (a value)
            after=configuration if states == configuration.states else Configuration(states=states),
            fired=tuple(fired),
            effects=tuple(effects),
        )

    def _choose(
        self, configuration: Configuration, event: str, facts: F
    ) -> list[tuple[int, _Entry[F, E], tuple[tuple[str, bool], ...]]]:
        """Every region's decision, made before any action runs."""
        plan = self._plans.get((configuration.states, event))
        if plan is None:
            plan = self._plan(configuration, event)
        chosen = []
        for position, region, state, candidates in plan:
            entry, guards = self._select(candidates, facts)
            if entry is None:
                raise IllegalEventError(
                    self.spec.name, state, event, _refusal(region, candidates, guards)
                )
            chosen.append((position, entry, guards))
        return chosen

    def _plan(self, configuration: Configuration, event: str) -> _Plan[F, E]:
        """The regions ``event`` concerns in ``configuration`` (checked: a configuration of
        this machine), each with its candidate transitions; kept for the next step."""
        states = configuration.states
        if len(states) != len(self.region_states):
            raise ValueError(f"{configuration} is not a configuration of {self.spec.name!r}")
        plan = []
        for position, (region, state) in enumerate(states):
            name, known = self.region_states[position]
            if region != name or state not in known:
                raise ValueError(f"{configuration} is not a configuration of {self.spec.name!r}")
            if event not in self.region_events[position]:
                continue
            plan.append((position, region, state, self.table.get((position, state, event), ())))
        self._plans[(states, event)] = kept = tuple(plan)
        return kept

    def _select(
        self, candidates: tuple[_Entry[F, E], ...], facts: F
    ) -> tuple[_Entry[F, E] | None, tuple[tuple[str, bool], ...]]:
        if candidates and candidates[0].cond is None and candidates[0].unless is None:
            return candidates[0], ()  # the common case: nothing to evaluate
        memo: dict[str, bool] = {}
        guards = self.bindings.guards
        machine = self.spec.name

        def lookup(name: str) -> bool:
            value = memo.get(name)
            if value is None:
                value = memo[name] = call_guard(machine, name, guards[name], facts)
            return value

        for entry in candidates:
            if entry.cond is not None and not entry.cond(lookup):
                continue
            if entry.unless is not None and entry.unless(lookup):
                continue
            return entry, tuple(memo.items())
        return None, tuple(memo.items())


def _compile(transition: TransitionSpec, bindings: MachineBindings[F, E]) -> _Entry[F, E]:
    return _Entry(
        spec=transition,
        cond=compile_condition(transition.cond) if transition.cond is not None else None,
        unless=compile_condition(transition.unless) if transition.unless is not None else None,
        actions=tuple((name, bindings.actions[name]) for name in transition.actions),
        placed=(transition.region, transition.target),
        unguarded=Fired(
            transition=transition.id,
            region=transition.region,
            source=transition.source,
            target=transition.target,
            guards=(),
            actions=transition.actions,
        ),
    )


def _with_guards(unguarded: Fired, guards: tuple[tuple[str, bool], ...]) -> Fired:
    return Fired(
        transition=unguarded.transition,
        region=unguarded.region,
        source=unguarded.source,
        target=unguarded.target,
        guards=guards,
        actions=unguarded.actions,
    )


def _refusal(
    region: str, candidates: tuple[_Entry[F, E], ...], guards: tuple[tuple[str, bool], ...]
) -> str:
    if not candidates:
        return f"region {region!r} declares the event but this state has no transition for it"
    values = ", ".join(f"{name}={value}" for name, value in guards)
    return f"region {region!r}: no transition for it is enabled ({values})"
