"""The exhaustive bounded check behind ``pictx-fsm check``, for any extension's kit.

Every sequence of actions of length at most ``depth`` from each of the kit's finite
alphabets (:meth:`~pictx_fsm.testing.kit.Kit.alphabets`) is explored breadth first, every
invariant checked after every action, and a state is expanded once: states are
deduplicated on their canonical state (:meth:`~pictx_fsm.testing.kit.Kit.canonical_state`,
:mod:`pictx_fsm.testing.states`), held as a 16-byte digest. Breadth first means the first
violation is found at the smallest depth — the counterexample is a *shortest* one — and of
the shortest the first in alphabet order (so a parallel run, :mod:`.ray_check`, finds the
same one).

Worlds are mutable and a suspended host run cannot be copied (it is a generator; a notes
home is a directory), so expanding a state *replays* its action prefix in a fresh world
(``docs/check.md`` measures it). A state's representative prefix is the first one in
breadth-first, alphabet order that reached it.

Every state is also judged *at rest*: the kit's closing actions are applied and the
promised outcomes (:meth:`~pictx_fsm.testing.invariants.Suite.finish`) judged, as at the end
of a ``verify`` run — any prefix is a run ``verify`` could end, so an omission is found at
the depth where it is first owed.

Coverage: every declared transition fired on any explored path is counted; those never
fired within the bound are named in the report.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from attrs import define, field, frozen

from pictx_fsm.testing.canon import Unmergeable, digest
from pictx_fsm.testing.invariants import Violation
from pictx_fsm.testing.kit import ExploreSettings, Kit, kit_named
from pictx_fsm.testing.trace import Trace, close_run, record_trace

__all__ = [
    "CheckOptions",
    "CheckReport",
    "Child",
    "Expander",
    "ExpanderFactory",
    "Node",
    "Replayer",
    "Search",
    "SearchReport",
    "check",
    "expand",
    "expand_frontier",
    "in_order",
    "serial_expander",
]

Path = tuple[int, ...]
"""A state's representative: indices into the alphabet, from the initial state."""


@frozen(kw_only=True)
class CheckOptions:
    depth: int = 8
    alphabets: tuple[str, ...] = ()
    """The kit's alphabets to explore (empty: all of them)."""
    fault: str | None = None
    seed: int = 0
    variants: Mapping[str, tuple[str, ...]] = field(factory=dict)
    """The kit's options (profile, host …): by default each option's single variant
    (:attr:`~pictx_fsm.testing.kit.KitOption.single`: the one a user gets, as verify's)."""
    time_budget: float | None = None
    """Seconds after which no further depth is started (``None``: none)."""

    def settings(self, kit: Kit) -> ExploreSettings:
        variants = {o.name: tuple(self.variants.get(o.name) or (o.single,)) for o in kit.options}
        return ExploreSettings(
            steps=self.depth, seed=self.seed, fault=self.fault, variants=variants
        )

    def bound(self, kit: Kit, alphabet: str) -> int:
        """How deep ``alphabet`` is explored: ``depth``, or its horizon
        (:meth:`~pictx_fsm.testing.kit.Kit.alphabet_horizons`) when no alphabet is named."""
        if self.alphabets:
            return self.depth
        return min(self.depth, kit.alphabet_horizons().get(alphabet, self.depth))

    def alphabet_names(self, kit: Kit) -> tuple[str, ...]:
        known = kit.alphabets()
        names = self.alphabets or tuple(known)
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ValueError(
                f"{kit.name} has no alphabet {unknown[0]!r}; known: {', '.join(known)}"
            )
        return names


@frozen(kw_only=True)
class Child:
    """One explored transition: the path that reached the state, its digest, whether the
    last action was applied, what failed (if anything) and every transition the path fired."""

    path: Path
    digest: bytes
    applied: bool
    invariant: str | None = None
    failure: str | None = None
    fired: frozenset[str] = frozenset()
    merged: bool = True
    """``False``: the state could not be canonicalized and is kept apart."""


def expand(
    kit: Kit,
    config: Any,
    alphabet: Sequence[Any],
    path: Path,
    judged: set[bytes] | None = None,
) -> Child:
    """Replay ``path`` in a fresh world, checking every invariant after every action, then
    judge the state at rest unless its canonical state is in ``judged`` (a verdict is a
    function of the canonical state; states judged clean are added, so which children
    report a violation does not depend on the order a worker met them in)."""
    world = kit.world(config)
    suite = kit.suite(config)
    applied = True
    try:
        for index in path:
            try:
                applied = bool(world.apply(alphabet[index]))
            except Exception as error:
                return Child(
                    path=path,
                    digest=digest(("crash", path)),
                    applied=True,
                    invariant="crash",
                    failure=f"{type(error).__name__}: {error}",
                    fired=frozenset(world.transition_counts()),
                )
            found = suite.check(world)
            if found:
                return Child(
                    path=path,
                    digest=digest(("violation", path)),
                    applied=applied,
                    invariant=found[0].invariant,
                    failure=str(found[0]),
                    fired=frozenset(world.transition_counts()),
                )
        try:
            state, merged = digest(kit.canonical_state(world, suite)), True
        except Unmergeable:
            state, merged = digest(("apart", path)), False
        # The promised outcomes are judged at rest, as a run of `verify` ends: the state's
        # closing actions, then what the invariants find still owed. The canonical state is
        # taken first (closing changes the world); the verdict is a function of it.
        owed: list[Violation] = []
        if judged is None or state not in judged:
            owed = _owed_at_rest(kit, world, suite)
            if judged is not None and merged and not owed:
                judged.add(state)  # clean only: any child reaching a faulty state reports it
        fired = frozenset(world.transition_counts())
        if owed:
            return Child(
                path=path,
                digest=digest(("violation", path)),
                applied=applied,
                invariant=owed[0].invariant,
                failure=f"at rest: {owed[0]}",
                fired=fired,
            )
        return Child(path=path, digest=state, applied=applied, fired=fired, merged=merged)
    finally:
        world.release()


def _owed_at_rest(kit: Kit, world: Any, suite: Any) -> list[Violation]:
    try:
        return close_run(kit, world, suite)
    except Exception as error:
        return [
            Violation(
                invariant="crash", rule="", message=f"closing: {type(error).__name__}: {error}"
            )
        ]


def expand_frontier(
    kit: Kit,
    config: Any,
    alphabet: Sequence[Any],
    frontier: Iterable[Path],
    judged: set[bytes] | None = None,
) -> list[Child]:
    """Every action from every state of ``frontier``, in frontier then alphabet order
    (``judged``: the states already judged at rest, kept across layers by the caller)."""
    judged = set() if judged is None else judged
    return [
        expand(kit, config, alphabet, (*path, index), judged)
        for path in frontier
        for index in range(len(alphabet))
    ]


class Replayer:
    """A worker process's expander (:mod:`.local_check`, :mod:`.ray_check`): replays the
    paths it is dealt, for any kit (by its locator), configuration (as JSON) and alphabet
    (by name), each built once with the states it has judged at rest."""

    def __init__(self) -> None:
        self._built: dict[tuple[str, str, str], tuple[Kit, Any, Sequence[Any]]] = {}
        self._judged: dict[tuple[str, str, str], set[bytes]] = {}

    def expand(self, kit: str, config: Any, alphabet: str, paths: Sequence[Path]) -> list[Child]:
        key = (kit, repr(config), alphabet)
        built = self._built.get(key)
        if built is None:
            found = kit_named(kit)
            built = self._built[key] = (
                found,
                found.config_from_json(config),
                found.alphabets()[alphabet],
            )
        judged = self._judged.setdefault(key, set())
        return expand_frontier(built[0], built[1], built[2], paths, judged)


Node = tuple[Path, bytes]
"""A state of the frontier: its representative path and its digest."""


def in_order(frontier: Sequence[Node], width: int, children: Iterable[Child]) -> list[Child]:
    """Children expanded anywhere, in frontier then alphabet order (a serial search's)."""
    found = {child.path: child for child in children}
    return [found[(*path, index)] for path, _ in frontier for index in range(width)]


class Expander(Protocol):
    """How a layer is expanded: in this process, or on Ray workers (:mod:`.ray_check`).
    Returns the children in frontier, then alphabet, order."""

    def __call__(self, frontier: Sequence[Node]) -> list[Child]: ...


def serial_expander(kit: Kit, config: Any, alphabet: Sequence[Any]) -> Expander:
    judged: set[bytes] = set()

    def run(frontier: Sequence[Node]) -> list[Child]:
        return expand_frontier(kit, config, alphabet, [path for path, _ in frontier], judged)

    return run


@define
class SearchReport:
    """One breadth-first search: one configuration, one alphabet."""

    config: Any
    alphabet: str
    actions: tuple[Any, ...]
    states: int = 0
    transitions: int = 0
    depth: int = 0
    """The deepest layer fully explored."""
    bound: int = 0
    complete: bool = False
    """Every state within ``bound`` explored (no violation cut it short, no time budget)."""
    elapsed: float = 0.0
    cpu: float = 0.0
    """CPU seconds this process spent on it (the driver's only, on Ray)."""
    apart: int = 0
    """States that could not be canonicalized (kept apart, never merged)."""
    fired: set[str] = field(factory=set)
    violation: Child | None = None
    layers: list[int] = field(factory=list)
    """New states per depth (depth 0: the initial state)."""

    @property
    def states_per_second(self) -> float:
        return self.states / self.elapsed if self.elapsed > 0 else 0.0


@define
class Search:
    """Breadth-first search state: the seen digests, the frontier and the counts. Absorbs
    one layer's children at a time (from any expander), in frontier and alphabet order."""

    report: SearchReport
    seen: set[bytes] = field(factory=set)
    frontier: list[Node] = field(factory=list)

    def start(self, root: Child) -> None:
        self.seen.add(root.digest)
        self.frontier = [(root.path, root.digest)]
        self.report.states = 1
        self.report.layers.append(1)
        self.report.fired |= root.fired
        if root.invariant is not None:
            self.report.violation = root

    def absorb(self, children: Iterable[Child]) -> None:
        report = self.report
        fresh: list[Node] = []
        for child in children:
            report.transitions += 1
            report.fired |= child.fired
            if child.invariant is not None:
                if report.violation is None:
                    report.violation = child
                continue
            if child.digest in self.seen:
                continue
            self.seen.add(child.digest)
            report.apart += not child.merged
            fresh.append((child.path, child.digest))
        report.depth += 1
        report.states += len(fresh)
        report.layers.append(len(fresh))
        self.frontier = fresh


@frozen(kw_only=True)
class Progress:
    extension: str
    alphabet: str
    depth: int
    states: int
    transitions: int
    elapsed: float


@define
class CheckReport:
    kit: Kit
    options: CheckOptions
    settings: ExploreSettings
    searches: list[SearchReport] = field(factory=list)
    counterexample: Trace | None = None
    violation: str | None = None
    elapsed: float = 0.0

    @property
    def failed(self) -> bool:
        return self.counterexample is not None

    @property
    def states(self) -> int:
        return sum(s.states for s in self.searches)

    @property
    def transitions(self) -> int:
        return sum(s.transitions for s in self.searches)

    @property
    def fired(self) -> set[str]:
        return set().union(*(s.fired for s in self.searches))


ExpanderFactory = Callable[[Kit, Any, Sequence[Any]], Expander]


def check(
    kit: Kit,
    options: CheckOptions,
    progress: Callable[[Progress], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    expander: ExpanderFactory = serial_expander,
) -> CheckReport:
    """Explore every alphabet of ``kit`` in every configuration it names, breadth first to
    ``options.depth``. The searches advance depth by depth together, so the first violation
    of any of them is the shortest of all: the searches stop at that depth, at the first
    search (in configuration and alphabet order) that meets one — it is reported."""
    if options.fault is not None and options.fault not in kit.faults:
        raise ValueError(f"{kit.name} has no planted fault {options.fault!r}")
    settings = options.settings(kit)
    report = CheckReport(kit=kit, options=options, settings=settings)
    started = clock()
    deadline = None if options.time_budget is None else started + options.time_budget
    alphabets = kit.alphabets()
    running: list[tuple[Search, Expander, float]] = []
    for config, name in kit.check_searches(settings, options.alphabet_names(kit)):
        search = SearchReport(
            config=config,
            alphabet=name,
            actions=alphabets[name],
            bound=options.bound(kit, name),
        )
        report.searches.append(search)
        state = Search(report=search)
        state.start(expand(kit, config, search.actions, ()))
        running.append((state, expander(kit, config, search.actions), 0.0))
    depth = 0
    while not any(s.report.violation for s, _, _ in running) and depth < options.depth:
        if deadline is not None and clock() > deadline:
            break
        depth += 1
        for index, (state, layer, spent) in enumerate(running):
            if not state.frontier or state.report.depth >= state.report.bound:
                continue
            began, cpu = clock(), time.process_time()
            state.absorb(layer(state.frontier))
            state.report.cpu += time.process_time() - cpu
            state.report.elapsed = spent + clock() - began
            running[index] = (state, layer, state.report.elapsed)
            if progress is not None:
                progress(_progress(kit, state.report))
            if state.report.violation is not None:
                break  # every search is done to depth - 1: no later one finds a shorter one
    for state, _, _ in running:
        search = state.report
        search.complete = search.violation is None and (
            search.depth >= search.bound or not state.frontier
        )
    found = next(
        ((s.report, s.report.violation) for s, _, _ in running if s.report.violation), None
    )
    if found is not None:
        search, child = found
        assert child is not None
        actions = [search.actions[i] for i in child.path]
        trace, run = record_trace(kit, search.config, actions)
        report.counterexample = trace
        report.violation = run.describe_failure()
    report.elapsed = clock() - started
    return report


def _progress(kit: Kit, report: SearchReport) -> Progress:
    return Progress(
        extension=kit.name,
        alphabet=report.alphabet,
        depth=report.depth,
        states=report.states,
        transitions=report.transitions,
        elapsed=report.elapsed,
    )
