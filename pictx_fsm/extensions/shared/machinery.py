"""How a lifecycle extension of the family binds its declared machines: guards are facts,
actions are reducers, both by name.

An extension declares machines in ``models/<family>/`` and keeps two catalogues: *facts*
(named observations, computed lazily from one view of a machine event, so a guard that is not
reached is never computed and the audit records exactly what a decision read) and *actions*
(pure reducers, the only code that changes the extension's data). :func:`bind_family`
compiles every machine with each guard bound to the fact of its name and each action to its
own name (the step reduces the named actions once every region has chosen), and fails at load
time — naming the document, the transition and the reference — on an unbound name, an action
no transition names, or a state fact reading a state the machine does not declare.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, Self, TypeVar

from attrs import frozen

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.extensions.shared.policy import Policy
from pictx_fsm.host.effects import Notify
from pictx_fsm.host.events import HostContext
from pictx_fsm.machines import (
    CompiledMachine,
    Configuration,
    MachineBindings,
    MachineSpec,
    Step,
    fingerprint,
)

__all__ = [
    "BoundMachine",
    "EffectTurn",
    "Fact",
    "FactCatalogue",
    "FactError",
    "Facts",
    "MachineFamily",
    "MachineStates",
    "PolicyCell",
    "PolicyServices",
    "PolicyState",
    "Raised",
    "bind_family",
    "fire",
    "run_machine_events",
]


@frozen(kw_only=True)
class Raised:
    """A follow-up machine event an action raised (data, run after the hook's own events)."""

    machine: str
    event: str
    extras: tuple[tuple[str, Any], ...] = ()

    @property
    def extras_map(self) -> Mapping[str, Any]:
        return dict(self.extras)


class FactError(LookupError):
    """A guard asked for a fact this event cannot provide (a model or runtime defect)."""


FactFn = Callable[[Any, "Facts"], Any]


@frozen(kw_only=True)
class Fact:
    name: str
    compute: FactFn
    doc: str


class FactCatalogue(dict[str, Fact]):
    """An extension's facts by name; :meth:`fact` registers a function under its own name
    (its docstring is the fact's documentation)."""

    def fact(self, fn: FactFn) -> FactFn:
        self[fn.__name__] = Fact(name=fn.__name__, compute=fn, doc=(fn.__doc__ or "").strip())
        return fn


class Facts:
    """Lazily computed facts for one machine event; records what was read, in order."""

    def __init__(self, env: Any, catalogue: Mapping[str, Fact]) -> None:
        self.env = env
        self._catalogue = catalogue
        self._values: dict[str, Any] = {}

    @property
    def services(self) -> Any:
        return self.env.services

    def __getitem__(self, name: str) -> Any:
        if name in self._values:
            return self._values[name]
        entry = self._catalogue.get(name)
        if entry is None:
            raise FactError(f"unknown fact {name!r}")
        value = entry.compute(self.env, self)
        self._values[name] = value
        return value

    def used(self) -> tuple[tuple[str, Any], ...]:
        return tuple(self._values.items())

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)


BoundMachine = CompiledMachine[Facts, str]
"""A compiled machine whose actions return their own names, in firing order."""


@frozen(kw_only=True)
class MachineFamily:
    """The compiled machines of one extension, the facts and actions they are bound to, and
    the fingerprint of the documents they came from."""

    machines: Mapping[str, BoundMachine]
    facts: Mapping[str, Fact]
    actions: Mapping[str, Callable[..., Any]]
    fingerprint: str
    directory: Path
    state_facts: Mapping[str, tuple[str, str, str]] = MappingProxyType({})
    """The state facts it was checked against (:func:`bind_family`): a rebuild (a planted
    fault) is bound the same way."""

    def initial(self) -> dict[str, Configuration]:
        return {name: machine.initial() for name, machine in self.machines.items()}

    @property
    def specs(self) -> Mapping[str, MachineSpec]:
        return {name: machine.spec for name, machine in self.machines.items()}

    def transition_ids(self) -> tuple[str, ...]:
        return tuple(t.id for m in self.machines.values() for t in m.spec.transitions)


def bind_family(
    specs: Mapping[str, MachineSpec],
    names: tuple[str, ...],
    directory: Path,
    *,
    facts: Mapping[str, Fact],
    actions: Mapping[str, Callable[..., Any]],
    state_facts: Mapping[str, tuple[str, str, str]] = MappingProxyType({}),
) -> MachineFamily:
    """Bind and compile the machines ``names`` of ``specs`` (every one must be declared)."""
    missing = [name for name in names if name not in specs]
    if missing:
        raise ModelDocumentError(
            str(directory), "models", f"missing machine document(s): {', '.join(missing)}"
        )
    machines = {name: _compile(specs[name], facts, actions) for name in names}
    _check_state_facts(machines, state_facts)
    _reject_unused_actions(machines, actions, directory)
    return MachineFamily(
        machines=MappingProxyType(machines),
        facts=MappingProxyType(dict(facts)),
        actions=MappingProxyType(dict(actions)),
        fingerprint=fingerprint([specs[name] for name in names]),
        directory=directory,
        state_facts=MappingProxyType(dict(state_facts)),
    )


def _compile(
    spec: MachineSpec, facts: Mapping[str, Fact], actions: Mapping[str, Callable[..., Any]]
) -> BoundMachine:
    for transition in spec.transitions:
        for name in transition.guards:
            if name not in facts:
                raise ModelDocumentError(
                    spec.source,
                    f"transition {transition.id}",
                    f"guard {name!r} is not bound: no fact has that name",
                )
        for name in transition.actions:
            if name not in actions:
                raise ModelDocumentError(
                    spec.source,
                    f"transition {transition.id}",
                    f"action {name!r} is not bound; actions: {', '.join(sorted(actions))}",
                )
    bindings: MachineBindings[Facts, str] = MachineBindings(
        machine=spec.name,
        guards={name: _guard(name) for name in spec.guard_names},
        actions={name: _named(name) for name in spec.action_names},
    )
    return CompiledMachine.build(spec, bindings)


def _guard(name: str) -> Callable[[Facts], bool]:
    """A guard is exactly one fact: guards live in the models, facts in the catalogue."""

    def guard(facts: Facts) -> bool:
        return bool(facts[name])

    guard.__name__ = name
    return guard


def _named(name: str) -> Callable[[Facts], tuple[str, ...]]:
    """The engine's action: its name, for the step to reduce once every region has chosen."""
    effects = (name,)
    return lambda facts: effects


def _check_state_facts(
    machines: Mapping[str, BoundMachine], state_facts: Mapping[str, tuple[str, str, str]]
) -> None:
    for fact_name, (machine, region, state) in state_facts.items():
        spec = machines[machine].spec
        regions = {r.name: r.states for r in spec.regions}
        if state not in regions.get(region, ()):
            raise ModelDocumentError(
                spec.source,
                f"region {region!r}",
                f"the fact {fact_name!r} reads state {state!r}, which the region does not declare",
            )


def _reject_unused_actions(
    machines: Mapping[str, BoundMachine],
    actions: Mapping[str, Callable[..., Any]],
    directory: Path,
) -> None:
    used = {name for machine in machines.values() for name in machine.spec.action_names}
    unused = sorted(set(actions) - used)
    if unused:
        raise ModelDocumentError(
            str(directory),
            "actions",
            f"action(s) {', '.join(map(repr, unused))} named by no transition; use them in a "
            "document or remove them",
        )


class MachineStates:
    """The machines' configurations in a lifecycle state, one per machine in declaration
    order (mixed into an extension's frozen state class, which holds ``configurations``
    and ``evolve``)."""

    __slots__ = ()
    configurations: tuple[tuple[str, Configuration], ...]

    @classmethod
    def initial(cls, configurations: Mapping[str, Configuration]) -> Self:
        return cls(configurations=tuple(configurations.items()))  # type: ignore[call-arg]

    def evolve(self, **changes: Any) -> Self:
        raise NotImplementedError

    def configuration(self, machine: str) -> Configuration:
        for name, configuration in self.configurations:
            if name == machine:
                return configuration
        raise KeyError(machine)

    def state_of(self, machine: str, region: str) -> str:
        return self.configuration(machine).state(region)

    def with_configuration(self, machine: str, configuration: Configuration) -> Self:
        configurations = tuple(
            (name, configuration if name == machine else current)
            for name, current in self.configurations
        )
        return self.evolve(configurations=configurations)


class PolicyServices(Protocol):
    @property
    def cache_policy(self) -> bool: ...

    def resolve_policy(self, ctx: HostContext) -> Policy: ...


class PolicyState(Protocol):
    """An extension state that caches its settings policy (R55, S61)."""

    @property
    def policy(self) -> Policy | None: ...

    @property
    def warned(self) -> frozenset[str]: ...

    def evolve(self, **changes: Any) -> Any: ...


class EffectTurn(Protocol):
    def emit(self, *effects: Any) -> Any: ...


StateT = TypeVar("StateT", bound=PolicyState)
TurnT = TypeVar("TurnT", bound=EffectTurn)


class PolicyCell:
    """The settings policy of one hook: resolved on first use (or reused while cached), each
    warning shown once per transition (R40, R46, R55; S50, S51). Local to one step call.

    ``state`` is the extension's state (its ``policy`` and ``warned`` fields are the cache),
    ``services`` resolves a policy for ``ctx`` and says whether to cache it."""

    def __init__(self, state: PolicyState, ctx: HostContext, services: PolicyServices) -> None:
        self.cached = state.policy
        self.warned = set(state.warned)
        self._ctx = ctx
        self._services = services
        self._notices: list[Notify] = []

    def __call__(self) -> Policy:
        caching = self._services.cache_policy
        if self.cached is not None and caching:
            return self.cached
        resolved = self._services.resolve_policy(self._ctx)
        for warning in resolved.warnings:
            if warning not in self.warned:
                self.warned.add(warning)
                self._notices.append(Notify(message=warning, level="warning"))
        if caching:
            self.cached = resolved
        return resolved

    def kept(self, state: StateT) -> StateT:
        """``state`` with this hook's policy cache and warnings (itself when they are the
        ones it has: most hooks resolve nothing new)."""
        if self.cached is state.policy and self.warned == state.warned:
            return state
        kept: StateT = state.evolve(policy=self.cached, warned=frozenset(self.warned))
        return kept

    def drain(self, turn: TurnT) -> TurnT:
        """The warnings resolved since the last drain, as host effects in order."""
        if not self._notices:
            return turn
        notices, self._notices = self._notices, []
        emitted: TurnT = turn.emit(*notices)
        return emitted


# -- one hook through the machines (pi-context R55, notesoup S61) -------------------------------


def fire(
    family: Any, turn: Any, raised: Raised, facts: Facts, settings: PolicyCell
) -> tuple[Any, Step[str]]:
    """One machine event: choose (guards read ``facts``), then reduce ``turn`` through the
    actions of ``family`` (its ``machines`` and ``actions``); the policy's notices drained
    before and after."""
    machine = raised.machine
    decided = family.machines[machine].step(turn.state.configuration(machine), raised.event, facts)
    turn = settings.drain(turn)
    if decided.after.states != decided.before.states:  # most events leave every state as is
        turn = turn.evolve(state=turn.state.with_configuration(machine, decided.after))
    for name in decided.effects:
        turn = family.actions[name](facts, turn)
    return settings.drain(turn), decided.with_facts(facts.used())


def run_machine_events(
    turn: Any,
    raised: Iterable[Raised],
    hook: str,
    settings: PolicyCell,
    decide: Callable[[Any, Raised], tuple[Any, Step[str]]],
    budget: str,
) -> tuple[Any, tuple[Step[str], ...]]:
    """The hook's machine events in order (``decide`` runs each), then those their actions
    raised; ``session_start`` resolves the policy right after the ``budget`` machine's
    event."""
    queue = deque(raised)
    steps: list[Step[str]] = []
    while queue:
        event = queue.popleft()
        turn, decided = decide(turn, event)
        steps.append(decided)
        if turn.raised:
            queue.extend(turn.raised)
            turn = turn.evolve(raised=())
        if hook == "session_start" and event.machine == budget:
            settings()
            turn = settings.drain(turn)
    return turn, tuple(steps)
