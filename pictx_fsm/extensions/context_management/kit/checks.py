"""What the §12 invariants share: the violation value, the incremental base class, and
readings of a step (its branch, its appended snapshots, its log records)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, TypeAlias

from attrs import field

from pictx_fsm.extensions.context_management.effects import LogRecord
from pictx_fsm.extensions.context_management.kit.world import StepRecord, World
from pictx_fsm.extensions.context_management.policy import Budgets
from pictx_fsm.extensions.context_management.records import NOTES_TYPE
from pictx_fsm.host.effects import AppendEntry, ToolResult
from pictx_fsm.session.entries import Entry
from pictx_fsm.testing.invariants import Invariant, Violation, remembering

__all__ = [
    "JSON",
    "JournalInvariant",
    "appended",
    "branch_at",
    "budgets",
    "describe",
    "logs",
    "moved",
    "snapshots",
    "tool_payload",
]

JSON: TypeAlias = Any


@remembering
class JournalInvariant(Invariant[World]):
    """An incremental check over the world's journal: each step is judged once."""

    cursors: ClassVar[frozenset[str]] = frozenset({"_seen"})
    """Attributes that only say how far it has read (not part of its residual)."""

    _seen: int = field(init=False, default=0)

    def check(self, world: World) -> list[Violation]:
        steps = world.journal.steps
        found: list[Violation] = []
        for record in steps[self._seen :]:
            if not record.rolled_back:
                found.extend(self.check_step(world, record))
        self._seen = len(steps)
        found.extend(self.check_world(world))
        return found

    def residual(self, world: World) -> object:
        """Everything it learnt from the journal (times, keys, counts), not its cursors."""
        return {k: v for k, v in vars(self).items() if k not in self.cursors}

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        return []

    def check_world(self, world: World) -> list[Violation]:
        return []

    def violation(self, message: str, record: StepRecord | None = None) -> Violation:
        """A violation; with the step that showed it named after the message."""
        where = "" if record is None else f" ({describe(record)})"
        return Violation(invariant=self.name, rule=self.rule, message=message + where)


def branch_at(record: StepRecord) -> Sequence[Entry]:
    return record.tree.branch(record.leaf) if record.leaf is not None else []


def budgets(record: StepRecord) -> Budgets:
    return Budgets(context_window=record.ctx.context_window or 200_000)


def appended(record: StepRecord, custom_type: str) -> Iterator[Mapping[str, JSON]]:
    for effect in record.result.effects:
        if isinstance(effect, AppendEntry) and effect.custom_type == custom_type:
            yield effect.data


def snapshots(record: StepRecord) -> list[Mapping[str, JSON]]:
    return list(appended(record, NOTES_TYPE))


def logs(record: StepRecord, kind: str | None = None) -> Iterator[Mapping[str, JSON]]:
    for effect in record.result.effects:
        if isinstance(effect, LogRecord) and (kind is None or effect.kind == kind):
            yield effect.to_json()


def tool_payload(record: StepRecord) -> Mapping[str, JSON] | None:
    value = record.result.value
    return value.payload if isinstance(value, ToolResult) else None


def moved(record: StepRecord, machine: str, source: str | tuple[str, ...], target: str) -> bool:
    before = record.before.state_of(machine)
    sources = (source,) if isinstance(source, str) else source
    return before in sources and record.after.state_of(machine) == target


def describe(record: StepRecord) -> str:
    return f"runtime {record.runtime}, action {record.at}, {type(record.event).__name__}"
