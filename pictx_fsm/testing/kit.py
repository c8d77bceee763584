"""The extension protocol of the testing kit: what an extension supplies so that the one
exploration, trace format, shrinker, coverage table, planted-fault check and replay run it.

An extension's kit (:class:`Kit`) names its machines, its world (the extension on a host,
built from a JSON-able configuration), its action language (each action JSON-able), its
invariants, its seed scenarios, its planted faults and how it generates runs. Everything
else — budgets, Hypothesis, shrinking, traces, coverage, reports — is written once in
:mod:`pictx_fsm.testing` against this protocol (``docs/extending.md`` walks through a new
one). Kits are found by name: the ones this package ships and any other installed package's
are registered under the entry point group ``pictx_fsm.kits``; ``module:attribute`` names a
kit that is not installed.
"""

from __future__ import annotations

import abc
import functools
import importlib
import importlib.metadata
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

import attrs
from attrs import Factory, field, frozen

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.errors import PictxError, UsageError
from pictx_fsm.testing.coverage import EXEMPTIONS_FILE, Coverage, coverage_of
from pictx_fsm.testing.invariants import Invariant, Suite, Violation

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from pictx_fsm.testing.differential.kit import DifferentialKit

__all__ = [
    "ENTRY_POINT_GROUP",
    "Companion",
    "Config",
    "CoverageVerdict",
    "Draw",
    "Fault",
    "Kit",
    "KitOption",
    "MachineSet",
    "Machinery",
    "Regions",
    "Scenario",
    "TraceFormatError",
    "World",
    "companion_named",
    "config_of",
    "faults_by_name",
    "kit_named",
    "kit_names",
    "named_fault",
    "read_action",
]

ENTRY_POINT_GROUP = "pictx_fsm.kits"

Draw = Callable[["SearchStrategy[Any]"], Any]
"""How a generated run draws a value (Hypothesis's ``data.draw``)."""


class TraceFormatError(PictxError):
    """A trace, or one of its fields, that cannot be used; the message names the field."""


class MachineSet(Protocol):
    """An extension's loaded machines, as the kit reports them."""

    @property
    def fingerprint(self) -> str: ...

    @property
    def directory(self) -> Path: ...

    def transition_ids(self) -> tuple[str, ...]: ...


@frozen
class Machinery:
    """An extension's machines as its kit reaches them: their names, the declared family
    (unfaulted: coverage is judged on it), and the binding of a family's documents to the
    extension's guards and actions (raising on an unbound name)."""

    names: tuple[str, ...]
    load: Callable[[], MachineSet]
    bind: Callable[[dict[str, Any], Path], object]


class Config(Protocol):
    """A world's reproducible configuration (seed, settings, planted fault)."""

    @property
    def seed(self) -> int: ...

    @property
    def fault(self) -> str | None: ...

    def to_json(self) -> dict[str, Any]: ...


class World(Protocol):
    """An extension running on a host, driven by actions."""

    @property
    def audits(self) -> Sequence[AuditLog]:
        """One decision log per runtime instance, oldest first."""
        ...

    def apply(self, action: Any) -> object: ...

    def transition_counts(self) -> Mapping[str, int]: ...

    def decisions(self) -> list[dict[str, Any]]:
        """Every machine decision so far, compact (what a replay compares)."""
        ...

    def release(self) -> None: ...


class Fault(Protocol):
    """A deliberate bug the kit can plant (by a world configuration's ``fault``)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def caught_by(self) -> str:
        """The invariant expected to report it."""
        ...


FaultT = TypeVar("FaultT", bound=Fault)
ConfigT = TypeVar("ConfigT")


def config_of(cls: type[ConfigT], obj: Mapping[str, Any]) -> ConfigT:
    """A world configuration (an attrs class) from its JSON fields; an unknown field is a
    :class:`ValueError` naming it (a trace from another kit, or a typo)."""
    known = {field.name for field in attrs.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(obj) - known)
    if unknown:
        raise ValueError(f"unknown world config field(s): {', '.join(unknown)}")
    return cls(**dict(obj))


def read_action(read: Callable[[Mapping[str, Any]], Any], obj: Any, where: str) -> Any:
    """``read(obj)``, the action a trace holds at ``where`` (``actions[3]``): a value that is
    not an object, or that ``read`` rejects, is a :class:`TraceFormatError` naming the field."""
    if not isinstance(obj, Mapping):
        raise TraceFormatError(f"field {where!r} must be an object")
    try:
        return read(obj)
    except (ValueError, AttributeError, TypeError, KeyError) as error:
        raise TraceFormatError(f"field {where!r}: {error}") from None


def faults_by_name(*faults: FaultT) -> dict[str, FaultT]:
    """An extension's planted faults, by name (a name given twice is a kit's bug)."""
    table = {fault.name: fault for fault in faults}
    if len(table) != len(faults):
        raise ValueError("two planted faults share a name")
    return table


def named_fault(faults: Mapping[str, FaultT], name: str) -> FaultT:
    """``faults[name]``; an unknown name is a :class:`ValueError` listing the known ones."""
    try:
        return faults[name]
    except KeyError:
        known = ", ".join(sorted(faults))
        raise ValueError(f"unknown fault {name!r}; known faults: {known}") from None


@frozen(kw_only=True)
class Scenario:
    """A seed scenario: hand-written actions that open a region generated runs rarely reach."""

    name: str
    actions: tuple[Any, ...]
    world: Callable[[Any], Any] | None = None
    """Adjusts the configuration the kit runs it in (default: unchanged)."""


@frozen
class KitOption:
    """A setting the kit explores in several variants (a profile, a host version): a
    command-line option of ``verify`` taking one or more of ``choices``."""

    name: str
    choices: tuple[str, ...]
    help: str
    flag: str = field(default=Factory(lambda self: f"--{self.name}", takes_self=True), kw_only=True)
    """The command-line option (default: ``--`` and the name)."""
    default: tuple[str, ...] = field(
        default=Factory(lambda self: self.choices, takes_self=True), kw_only=True
    )
    """The variants explored unless told (default: every choice)."""
    preferred: str | None = field(default=None, kw_only=True)
    """The variant a run of one configuration (``check``) takes unless told: the one a user
    gets by default (``None``: the first of ``default``)."""

    @property
    def single(self) -> str:
        """The variant a run of one configuration takes unless told."""
        return self.preferred if self.preferred is not None else self.default[0]


@frozen(kw_only=True)
class Regions:
    """A kit's finite alphabets for ``pictx-fsm check``: regions of its action language."""

    alphabets: Mapping[str, tuple[Any, ...]]
    """By name, in the order ``check`` explores them: every sequence of their actions up to
    the depth bound."""
    configs: Mapping[str, Mapping[str, Any]] = field(factory=dict)
    """Configuration fields an alphabet is explored with, over each of the kit's check
    configurations (a small window, a resumed session …): the region of the action language
    some behaviour needs within a few actions."""
    horizons: Mapping[str, int] = field(factory=dict)
    """The depth an alphabet is explored to when ``check`` explores every alphabet (none
    named): a narrow region that exists for faults met within a few actions, whose states
    barely merge (each of its actions adds tokens or time, so the states grow by nearly the
    alphabet's width a layer), is explored to its horizon rather than to ``--depth``. Named
    with ``--alphabet``, it is explored to ``--depth``."""

    def __attrs_post_init__(self) -> None:
        for name in (*self.configs, *self.horizons):
            if name not in self.alphabets:
                raise ValueError(f"no alphabet {name!r} to configure or bound")


@frozen(kw_only=True)
class CoverageVerdict:
    """The coverage of an exploration, and whether its missing transitions fail it."""

    coverage: Coverage
    judged: bool = True
    note: str | None = None
    exemptions_file: str = ""


class Companion(Protocol):
    """Another extension loaded on the same host, before this one, as a user who installed
    both would: it adds its extension to the world and keeps its own invariants."""

    def extensions(self, world: Any) -> list[Any]:
        """The host extensions it adds (built once per world)."""
        ...

    def check(self, world: Any) -> list[Violation]: ...

    def finish(self, world: Any) -> list[Violation]:
        """Its promised outcomes still owed at the end of a run (the world at rest)."""
        ...

    def transition_counts(self) -> Mapping[str, int]: ...


@frozen(kw_only=True)
class ExploreSettings:
    """What a kit needs of the exploration's options to generate runs."""

    steps: int
    seed: int
    fault: str | None
    variants: Mapping[str, tuple[str, ...]] = field(factory=dict)
    without: tuple[str, ...] = ()


class Kit(abc.ABC):
    """One extension's verification kit. Subclass it and register an instance."""

    name: ClassVar[str]
    """The extension's name on the command line (``pi-context``)."""
    trace_format: ClassVar[str] = "pictx-fsm/trace/2"
    legacy_formats: ClassVar[tuple[str, ...]] = ()
    """Formats of traces older releases wrote for this extension (read, never written)."""
    options: ClassVar[tuple[KitOption, ...]] = ()
    locator: str | None = None
    """``module:attribute`` the kit was loaded from (set by :func:`kit_named`): a trace
    records it, so a kit that is not registered is found again when the trace is replayed."""
    invariant_types: ClassVar[tuple[type[Invariant[Any]], ...]] = ()
    """The invariant classes, in the order a suite checks them (``docs/verification.md``
    lists each with its kind and rule)."""
    decision_fields: ClassVar[tuple[tuple[str, type], ...]] = (("fired", list),)
    """The fields (and types) of each decision :meth:`World.decisions` records."""
    contract_modules: ClassVar[tuple[str, ...]] = ()
    """Modules whose PEP 316 contracts ``verify`` checks with CrossHair."""
    name_patterns: ClassVar[tuple[str, ...]] = ()
    """Regular expressions of the names the kit's world mints beyond the host's (window ids,
    generated labels): the exhaustive check's canonical state renames them
    (:mod:`pictx_fsm.testing.canon`)."""

    @property
    def invariant_names(self) -> tuple[str, ...]:
        """The names of :attr:`invariant_types`, in their order."""
        return tuple(t.name for t in self.invariant_types)

    @property
    def package(self) -> str:
        """The package the kit's class is defined in: where its parts are found by
        convention (``faults.FAULTS``, ``scenarios.SCENARIOS``, ``alphabets.REGIONS``)."""
        return type(self).__module__.rpartition(".")[0]

    def part(self, module: str, attribute: str) -> Any:
        """``<package>.<module>.<attribute>``: one of the kit's parts, by convention."""
        if not self.package:
            raise TypeError(f"{type(self).__name__} declares no {module} (it is in no package)")
        where = f"{self.package}.{module}"
        try:
            found = importlib.import_module(where)
        except ModuleNotFoundError as error:
            if error.name != where:
                raise
            raise TypeError(
                f"{type(self).__name__} declares no {module}, and there is no module {where}"
            ) from None
        return getattr(found, attribute)

    @property
    def faults(self) -> Mapping[str, Fault]:
        """The planted faults by name: by default the kit package's ``faults.FAULTS``."""
        faults: Mapping[str, Fault] = self.part("faults", "FAULTS")
        return faults

    @property
    def scenarios(self) -> Sequence[Scenario]:
        """The seed scenarios: by default the kit package's ``scenarios.SCENARIOS``."""
        scenarios: Sequence[Scenario] = self.part("scenarios", "SCENARIOS")
        return scenarios

    machinery: ClassVar[Machinery | None] = None
    """The extension's machines (``None``: the kit overrides :meth:`machines` and binds
    nothing)."""

    def machines(self) -> MachineSet:
        """The declared machines (unfaulted: coverage is judged on them)."""
        if self.machinery is None:
            raise NotImplementedError(f"kit {self.name!r} names no machinery")
        return self.machinery.load()

    @abc.abstractmethod
    def config_from_json(self, obj: Any) -> Config:
        """A configuration from a trace; raises :class:`TraceFormatError` naming the field."""

    def action_from_json(self, obj: Any, where: str = "action") -> Any:
        """An action from a trace (``where``: its place, ``actions[3]``); raises
        :class:`TraceFormatError` naming the field. By default the kit package's
        ``actions.action_from_json`` read through :func:`read_action`."""
        return read_action(self.part("actions", "action_from_json"), obj, where)

    def action_to_json(self, action: Any) -> dict[str, Any]:
        """By default the kit package's ``actions.action_to_json``, or the host actions'
        (:func:`pictx_fsm.testing.actions.action_to_json`) where it has none."""
        from pictx_fsm.testing import actions as host

        try:
            to_json = self.part("actions", "action_to_json")
        except (TypeError, AttributeError):
            to_json = host.action_to_json
        data: dict[str, Any] = to_json(action)
        return data

    world_type: ClassVar[type[Any] | None] = None
    """The world a configuration opens (:meth:`world`), unless the kit overrides it."""
    suite_type: ClassVar[type[Any] | None] = None
    """The invariant suite every world is judged by (:meth:`suite`), unless overridden."""

    def world(self, config: Any) -> World:
        """A fresh world of ``config``."""
        if self.world_type is None:
            raise NotImplementedError(f"kit {self.name!r} names no world_type")
        world: World = self.world_type(config)
        return world

    def suite(self, config: Any) -> Suite[Any]:
        """Fresh invariants for one world of ``config``."""
        if self.suite_type is None:
            raise NotImplementedError(f"kit {self.name!r} names no suite_type")
        suite: Suite[Any] = self.suite_type()
        return suite

    @abc.abstractmethod
    def scenario_configs(
        self, scenario: Scenario, number: int, settings: ExploreSettings
    ) -> Iterator[Any]:
        """The configurations a seed scenario runs in."""

    @abc.abstractmethod
    def configs(self, settings: ExploreSettings) -> SearchStrategy[Any]:
        """Generated world configurations."""

    @abc.abstractmethod
    def generate(self, draw: Draw, world: Any, settings: ExploreSettings) -> Iterator[Any]:
        """The actions of one generated run, drawn one at a time (the world has applied the
        previous one when the next is drawn)."""

    def closing(self, world: Any) -> Sequence[Any]:
        """The actions that bring a world to rest at the end of every run (a settle, the
        replies the host still owes), applied and checked like any other, before the
        promised outcomes are judged (:meth:`~pictx_fsm.testing.invariants.Suite.finish`).
        Not recorded in a trace: a replay applies them again."""
        return ()

    def boundary_names(self) -> tuple[str, ...]:
        """The numeric lines the extension's guards compare, by name (read from its policy
        and its guards, never listed by hand); ``verify`` reports which of each line's
        −1, exact and +1 values a decision met (:mod:`pictx_fsm.testing.boundaries`)."""
        return ()

    @property
    def machine_names(self) -> tuple[str, ...]:
        """The names of the extension's machines: a family holding them all is the
        extension's (:meth:`check_bindings`)."""
        return () if self.machinery is None else self.machinery.names

    def bind_machines(self, specs: dict[str, Any], directory: Path) -> None:
        """Bind the extension's machine documents to its guards and actions (raising on an
        unbound name); :meth:`check_bindings` calls it for the extension's own family."""
        if self.machinery is not None:
            self.machinery.bind(specs, directory)

    def check_bindings(self, specs: Mapping[str, Any], directory: Path) -> None:
        """Bind ``specs`` (machine documents of one family) to this extension's guards and
        actions when they are its machines, so an unbound name fails at load time
        (``pictx-fsm machines``); nothing when they are not."""
        if self.machine_names and set(self.machine_names) <= set(specs):
            self.bind_machines(dict(specs), directory)

    def tally(self, world: Any, tallies: dict[str, Counter[str]]) -> None:
        """Add what a finished world counted beyond transitions (tool outcomes, say)."""
        return

    def coverage(self, counts: Mapping[str, int], settings: ExploreSettings) -> CoverageVerdict:
        """The coverage table of ``counts`` against the declared machines and their
        ``coverage-exemptions.toml``."""
        machines = self.machines()
        return CoverageVerdict(
            coverage=coverage_of(machines, counts),
            exemptions_file=f"{machines.directory.name}/{EXEMPTIONS_FILE}",
        )

    def report_lines(
        self, tallies: Mapping[str, Counter[str]], failed: bool
    ) -> tuple[list[str], bool]:
        """Further report lines (and whether they fail the run) from the tallies."""
        return [], False

    def describe(self, config: Any) -> str:
        """One line about a configuration, for ``replay``."""
        fault = getattr(config, "fault", None)
        return self.name + (f" · planted fault {fault}" if fault else "")

    def describe_settings(self, settings: ExploreSettings) -> str:
        return " · ".join(
            f"{option.name} {', '.join(settings.variants.get(option.name, option.default))}"
            for option in self.options
        )

    def differential(self) -> DifferentialKit | None:
        """How the extension runs on the real Pi for ``pictx-fsm differential`` (``None``: it
        does not load into Pi)."""
        return None

    # -- what the exhaustive check (``pictx-fsm check``) needs -------------------------------

    def regions(self) -> Regions:
        """The kit's alphabets for ``check``, with their configurations and horizons: the
        kit package's ``alphabets.REGIONS``, or without one the host actions alone."""
        try:
            found = self.part("alphabets", "REGIONS")
        except TypeError:
            from pictx_fsm.testing.actions import HOST_ALPHABET

            return Regions(alphabets={"host": HOST_ALPHABET})
        if not isinstance(found, Regions):
            raise TypeError(f"{self.package}.alphabets.REGIONS is not a Regions table")
        return found

    def alphabets(self) -> Mapping[str, tuple[Any, ...]]:
        """The finite alphabets ``check`` explores, by name: every sequence of their actions
        up to the depth bound. By default one, the host actions of
        :data:`~pictx_fsm.testing.actions.HOST_ALPHABET`."""
        return self.regions().alphabets

    def check_configs(self, settings: ExploreSettings) -> list[Any]:
        """The world configurations ``check`` explores (each one search): by default the
        first one the first seed scenario runs in."""
        return list(self.scenario_configs(self.scenarios[0], 0, settings))[:1]

    def alphabet_configs(self) -> Mapping[str, Mapping[str, Any]]:
        """Configuration fields an alphabet is explored with (:attr:`Regions.configs`)."""
        return self.regions().configs

    def alphabet_horizons(self) -> Mapping[str, int]:
        """The depth an alphabet is explored to when none is named (:attr:`Regions.horizons`)."""
        return self.regions().horizons

    def check_searches(
        self, settings: ExploreSettings, names: Sequence[str]
    ) -> list[tuple[Any, str]]:
        """The searches ``check`` runs, each a configuration and an alphabet: every alphabet
        of ``names`` in every configuration of :meth:`check_configs`, with its
        :meth:`alphabet_configs` fields."""
        fields = self.alphabet_configs()
        return [
            (attrs.evolve(config, **fields[name]) if name in fields else config, name)
            for config in self.check_configs(settings)
            for name in names
        ]

    def canonical_state(self, world: Any, suite: Any) -> Hashable:
        """The state ``check`` deduplicates on (:mod:`pictx_fsm.testing.states`): by default
        the world's ``canonical_state(canon)`` and the invariants' residual, renamed
        together, times read against the world's ``now()``."""
        from pictx_fsm.testing.canon import HOST_NAMES, Canon, Unmergeable
        from pictx_fsm.testing.states import suite_residual

        state = getattr(world, "canonical_state", None)
        if state is None:
            raise Unmergeable(f"{type(world).__name__} has no canonical_state(canon)")
        canon = Canon(
            _pattern(HOST_NAMES + self.name_patterns), now=getattr(world, "now", _never)()
        )
        return (state(canon), suite_residual(suite, world, canon))

    def companion(self) -> Companion | None:
        """A fresh instance of this extension as a companion in another kit's world (``None``:
        it cannot be one). The world it joins offers ``session`` (the model session),
        ``clock`` and ``config.seed``."""
        return None


def _never() -> None:
    return None


@functools.cache
def _pattern(alternatives: tuple[str, ...]) -> re.Pattern[str]:
    from pictx_fsm.testing.canon import Canon

    return Canon.pattern(*alternatives)


def kit_names() -> list[str]:
    """The registered kits' names, in name order."""
    return sorted({entry.name for entry in _entry_points()})


def kit_named(name: str) -> Kit:
    """The kit registered as ``name``, or the one ``module:attribute`` names."""
    if ":" in name:
        return _load(name, name)
    matches = [entry for entry in _entry_points() if entry.name == name]
    if not matches:
        known = ", ".join(kit_names())
        hint = (
            f"registered: {known}"
            if known
            else "none is registered (is pictx-fsm installed? `pip install -e .` registers "
            "its kits)"
        )
        raise UsageError(f"no extension kit {name!r}; {hint}")
    return _load(matches[0].value, name)


def companion_named(name: str) -> Companion:
    """A fresh companion of the kit registered as ``name``."""
    companion = kit_named(name).companion()
    if companion is None:
        raise UsageError(f"extension kit {name!r} cannot join another extension's world")
    return companion


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _load(target: str, name: str) -> Kit:
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(
            f"extension kit {name!r}: cannot import {module_name!r}: {error}"
        ) from None
    kit = getattr(module, attribute, None)
    if not isinstance(kit, Kit):
        raise UsageError(f"extension kit {name!r}: {target} is not a pictx_fsm.testing.Kit")
    kit.locator = target
    return kit
