"""The invariant framework every extension's kit writes its checks in.

An invariant is an incremental check of a world: :meth:`Invariant.check` returns what broke
since its last call, so a run costs one pass over what each action changed. It is either a
*safety* property (something that must never happen: at most one marker per hook) or a
*promised outcome* (something that must happen by a point the rules name: a requested reset
commits at its batch's ``turn_end``); ``docs/verification.md`` lists every one with its rule.

A promised outcome is judged "eventually, within the run": as soon as the point the rule
names is observed (a ``turn_end``, a settle) by :meth:`Invariant.check`, and what is still
owed when the run ends by :meth:`Invariant.finish`, which the exploration calls once the kit
brought the world to rest (:meth:`~pictx_fsm.testing.kit.Kit.closing`) — so a run cut short
by the generator or by shrinking is never blamed for what it had no time to do.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import (
    Any,
    ClassVar,
    Generic,
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    dataclass_transform,
)

import attrs
from attrs import field, frozen

__all__ = [
    "Cursor",
    "Invariant",
    "InvariantKind",
    "InvariantSuite",
    "PerItem",
    "Suite",
    "Violation",
    "describe_invariants",
    "remembering",
]

W = TypeVar("W")
T = TypeVar("T")
W_contra = TypeVar("W_contra", contravariant=True)
InvariantKind: TypeAlias = Literal["safety", "outcome"]
C = TypeVar("C", bound=type)


class Cursor:
    """How far an invariant has read a list its world only appends to (the host's errors,
    the persisted entries): each :meth:`fresh` gives what was added since the last, so every
    item is judged once. Only a place in the world's own history: an invariant whose memory
    is a cursor has nothing to add to the state the exhaustive check deduplicates on."""

    def __init__(self) -> None:
        self.seen = 0

    def fresh(self, items: Sequence[T]) -> Sequence[T]:
        new = items[self.seen :]
        self.seen = len(items)
        return new


@frozen(kw_only=True)
class Violation:
    """One broken invariant: its name, the rules it enforces, and what happened."""

    invariant: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"[{self.invariant} · {self.rule}] {self.message}"


class Invariant(Generic[W]):
    """An incremental check of a world ``W``; subclasses set the class attributes."""

    name: ClassVar[str] = ""
    rule: ClassVar[str] = ""
    """The rule ids it enforces (``R28, D1``)."""
    kind: ClassVar[InvariantKind] = "safety"
    doc: ClassVar[str] = ""
    """What it holds to, in a sentence: by default the class's own docstring, on one line."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "doc" not in cls.__dict__ and cls.__doc__:
            cls.doc = " ".join(inspect.cleandoc(cls.__doc__).split())

    def check(self, world: W) -> list[Violation]:
        raise NotImplementedError

    def finish(self, world: W) -> list[Violation]:
        """What is still owed when the run ends, the world at rest (a safety property owes
        nothing)."""
        return []

    def violation(self, message: str) -> Violation:
        return Violation(invariant=self.name, rule=self.rule, message=message)

    def residual(self, world: W) -> object:
        """What this invariant remembers of the past that ``world`` no longer shows: part of
        the state the exhaustive check deduplicates on (:mod:`pictx_fsm.testing.states`).
        By default every attribute — all it could remember; an invariant whose memory is
        only a cursor into what the world keeps returns less."""
        return dict(vars(self))


@dataclass_transform(field_specifiers=(attrs.field,))
def remembering(cls: C) -> C:
    """Declares what an invariant remembers as attrs fields (``field(init=False,
    factory=...)``), fresh for every world its suite is built for; a subclass declares only
    its own. No slots (:meth:`Invariant.residual` reads ``vars``) and compared by identity,
    like any invariant."""
    decorated: C = attrs.define(cls, slots=False, eq=False)
    return decorated


@remembering
class PerItem(Invariant[W], Generic[W, T]):
    """Judges each item a world appends to one of its lists (:meth:`items`) once, when it is
    appended (:meth:`judge`): all it remembers is how far it read."""

    _cursor: Cursor = field(init=False, factory=Cursor)

    def items(self, world: W) -> Sequence[T]:
        raise NotImplementedError

    def judge(self, world: W, item: T) -> list[Violation]:
        raise NotImplementedError

    def check(self, world: W) -> list[Violation]:
        fresh = self._cursor.fresh(self.items(world))
        return [violation for item in fresh for violation in self.judge(world, item)]

    def residual(self, world: W) -> object:
        """Nothing: a cursor into what the world keeps."""
        return None


class Suite(Protocol[W_contra]):
    """What the exploration checks after every action."""

    def check(self, world: W_contra) -> list[Violation]: ...

    def finish(self, world: W_contra) -> list[Violation]:
        """At the end of a run, once the world is at rest: the promised outcomes still owed."""
        ...


class InvariantSuite(Generic[W]):
    """Fresh instances of ``types`` for one world, checked in that order (the first
    violation is the one reported)."""

    def __init__(self, types: Sequence[type[Invariant[W]]]) -> None:
        self.invariants: list[Invariant[W]] = [cls() for cls in types]

    def check(self, world: W) -> list[Violation]:
        found: list[Violation] = []
        for invariant in self.invariants:
            found.extend(invariant.check(world))
        return found

    def residual(self, world: W) -> tuple[object, ...]:
        return tuple(invariant.residual(world) for invariant in self.invariants)

    def finish(self, world: W) -> list[Violation]:
        found: list[Violation] = []
        for invariant in self.invariants:
            found.extend(invariant.finish(world))
        return found


def describe_invariants(types: Sequence[type[Invariant[Any]]]) -> list[tuple[str, str, str]]:
    """``(name, kind, rule)`` of each invariant, for reports and ``docs/verification.md``."""
    return [(cls.name, cls.kind, cls.rule) for cls in types]
