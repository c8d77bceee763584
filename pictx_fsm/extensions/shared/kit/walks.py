"""How the family's kit invariants read a world incrementally: every entry appended to any of
its session files once (:class:`EntryWalk`), every audit record of every runtime once
(:class:`RecordWalk`), and the invariant bases fed by them (:class:`PerTree`,
:class:`PerRecord`), generic over the world an extension's kit reads. One walk of each feeds
a whole suite.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from attrs import field

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.testing import invariants as testing_invariants
from pictx_fsm.testing.invariants import Violation, remembering

__all__ = [
    "ChildWatch",
    "EntryWalk",
    "Fresh",
    "PerRecord",
    "PerTree",
    "RecordWalk",
    "Records",
    "WalkedSuite",
    "session_trees",
]

W = TypeVar("W")


def session_trees(session: ModelSession) -> list[SessionTree]:
    seen: dict[int, SessionTree] = {}
    for store in session.files.values():
        seen[id(store.tree)] = store.tree
    seen[id(session.tree)] = session.tree
    return list(seen.values())


def _nodes_since(tree: SessionTree, start: int) -> Iterator[TreeNode]:
    for entry in tree.entries[start:]:
        if entry.id is not None:
            node = tree.find(entry.id)
            if node is not None and node.entry is entry:
                yield node


Fresh = list[tuple[SessionTree, TreeNode, bool]]
"""Entries appended since the last look: (file, node, first time any file had it)."""


class EntryWalk:
    """Every entry appended to any session file of the world, seen once.

    A fork copies a path and a reload re-reads a file: their entries keep their ids, so a
    copy is reported as not new (``False``) and never judged again. One walk feeds every
    per-entry invariant of a suite."""

    def __init__(self) -> None:
        self._cursors: dict[int, int] = {}
        self._seen: set[str] = set()

    def advance(self, session: ModelSession) -> Fresh:
        fresh: Fresh = []
        for tree in session_trees(session):
            start = self._cursors.get(id(tree), 0)
            if start == len(tree.entries):
                continue
            for node in _nodes_since(tree, start):
                first = node.id not in self._seen
                if first:
                    self._seen.add(node.id)
                fresh.append((tree, node, first))
            self._cursors[id(tree)] = len(tree.entries)
        return fresh


@remembering
class PerTree(testing_invariants.Invariant[W]):
    """Checks every entry once when it is appended, in every session file of the world;
    copies are only noted (:meth:`copied`), never re-judged (:class:`EntryWalk`)."""

    _walk: EntryWalk = field(init=False, factory=EntryWalk)

    def check(self, world: W) -> list[Violation]:
        return self.check_entries(world, self._walk.advance(world.session))  # type: ignore[attr-defined]

    def residual(self, world: W) -> object:
        """Nothing: it judges each entry once, and the files keep every entry (a subclass's
        memory of which entries have children is read off the files too)."""
        return None

    def check_entries(self, world: W, fresh: Fresh) -> list[Violation]:
        found: list[Violation] = []
        for tree, node, first in fresh:
            if first:
                found.extend(self.check_node(world, tree, node))
            else:
                self.copied(tree, node)
        return found

    def copied(self, tree: SessionTree, node: TreeNode) -> None:
        """An entry another file already had (fork, reload)."""

    def check_node(self, world: W, tree: SessionTree, node: TreeNode) -> list[Violation]:
        raise NotImplementedError


Records = list[tuple[Mapping[str, Any], int, str]]
"""Audit records written since the last look: (record, index of its runtime, its line)."""


class ChildWatch:
    """Which entries already have a child, per session file: an entry's first child is what
    was committed after it; a later one is another branch (navigation), and a copied one
    (fork, reload) was judged where it was first written."""

    def __init__(self) -> None:
        self._parents: set[tuple[int, str]] = set()
        """(tree, parent id) of every entry that already has a child in that tree."""

    def copied(self, tree: SessionTree, node: TreeNode) -> None:
        if node.parent is not None:
            self._parents.add((id(tree), node.parent.id))

    def first_child(self, tree: SessionTree, node: TreeNode) -> bool:
        """Whether ``node`` is its parent's first child in ``tree`` (now noted)."""
        parent = node.parent
        if parent is None or (id(tree), parent.id) in self._parents:
            return False
        self._parents.add((id(tree), parent.id))
        return True


class RecordWalk:
    """Every audit record of every runtime of the world, seen once (each runtime's log has
    its own cursor). One walk feeds every per-record invariant of a suite."""

    def __init__(self) -> None:
        self._cursors: dict[int, int] = {}

    def advance(self, audits: Sequence[AuditLog]) -> Records:
        fresh: Records = []
        for index, log in enumerate(audits):
            start = self._cursors.get(index, 0)
            if start == len(log):
                continue
            written = log.written(start)
            fresh.extend((record, index, line) for line, record in written)
            self._cursors[index] = start + len(written)
        return fresh


@remembering
class PerRecord(testing_invariants.Invariant[W]):
    """Checks every audit record once, runtime by runtime (:class:`RecordWalk`)."""

    _walk: RecordWalk = field(init=False, factory=RecordWalk)

    def check(self, world: W) -> list[Violation]:
        return self.check_records(world, self._walk.advance(world.audits))  # type: ignore[attr-defined]

    def residual(self, world: W) -> object:
        """Nothing: it judges each audit record once, when it is written."""
        return None

    def check_records(self, world: W, fresh: Records) -> list[Violation]:
        found: list[Violation] = []
        for record, runtime, _ in fresh:
            found.extend(self.check_record(record, runtime))
        return found

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        raise NotImplementedError


class WalkedSuite(Generic[W]):
    """Fresh instances of ``types`` for one world, checked in that order (the first violation
    is the one reported). The per-entry and per-record invariants share one walk of the new
    entries and one of the new records; the per-entry ones are asked even when nothing was
    appended when ``every_action`` (some count inputs as they come)."""

    every_action: ClassVar[bool] = False

    def __init__(self, types: Sequence[type[testing_invariants.Invariant[W]]]) -> None:
        self.invariants = [cls() for cls in types]
        self._entries = EntryWalk()
        self._records = RecordWalk()
        self._per_tree = [i for i in self.invariants if isinstance(i, PerTree)]
        self._per_record = [i for i in self.invariants if isinstance(i, PerRecord)]
        self._others = [i for i in self.invariants if not isinstance(i, PerTree | PerRecord)]

    def check(self, world: W) -> list[Violation]:
        entries = self._entries.advance(world.session)  # type: ignore[attr-defined]
        records = self._records.advance(world.audits)  # type: ignore[attr-defined]
        found: list[Violation] = []
        for invariant in self._others:
            found.extend(invariant.check(world))
        for tree_invariant in self._per_tree if entries or self.every_action else ():
            found.extend(tree_invariant.check_entries(world, entries))
        for record_invariant in self._per_record if records else ():
            found.extend(record_invariant.check_records(world, records))
        return self._ordered(found)

    def finish(self, world: W) -> list[Violation]:
        """What the promised outcomes still find owed once the world is at rest."""
        return self._ordered([v for invariant in self.invariants for v in invariant.finish(world)])

    def residual(self, world: W) -> tuple[object, ...]:
        """What each invariant remembers beyond the world (the shared walks are cursors)."""
        return tuple(invariant.residual(world) for invariant in self.invariants)

    def _ordered(self, found: list[Violation]) -> list[Violation]:
        if found:
            order = {invariant.name: index for index, invariant in enumerate(self.invariants)}
            found.sort(key=lambda violation: order[violation.invariant])
        return found
