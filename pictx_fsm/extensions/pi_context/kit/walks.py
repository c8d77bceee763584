"""How pi-context's invariants read a world incrementally: every entry appended to any of its
session files once (:class:`EntryWalk`), every audit record of every runtime once
(:class:`RecordWalk`), and the invariant bases fed by them (:class:`PerTree`,
:class:`PerRecord`). One walk of each feeds a whole suite.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context.kit.view import Invariant, WorldView
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.testing.invariants import Violation

__all__ = [
    "EntryWalk",
    "Fresh",
    "PerRecord",
    "PerTree",
    "RecordWalk",
    "Records",
    "session_trees",
]


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


class PerTree(Invariant):
    """Checks every entry once when it is appended, in every session file of the world;
    copies are only noted (:meth:`copied`), never re-judged (:class:`EntryWalk`)."""

    def __init__(self) -> None:
        self._walk = EntryWalk()

    def check(self, world: WorldView) -> list[Violation]:
        return self.check_entries(world, self._walk.advance(world.session))

    def residual(self, world: WorldView) -> object:
        """Nothing: it judges each entry once, and the files keep every entry (a subclass's
        memory of which entries have children is read off the files too)."""
        return None

    def check_entries(self, world: WorldView, fresh: Fresh) -> list[Violation]:
        found: list[Violation] = []
        for tree, node, first in fresh:
            if first:
                found.extend(self.check_node(world, tree, node))
            else:
                self.copied(tree, node)
        return found

    def copied(self, tree: SessionTree, node: TreeNode) -> None:
        """An entry another file already had (fork, reload)."""

    def check_node(self, world: WorldView, tree: SessionTree, node: TreeNode) -> list[Violation]:
        raise NotImplementedError


Records = list[tuple[Mapping[str, Any], int, str]]
"""Audit records written since the last look: (record, index of its runtime, its line)."""


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


class PerRecord(Invariant):
    """Checks every audit record once, runtime by runtime (:class:`RecordWalk`)."""

    def __init__(self) -> None:
        self._walk = RecordWalk()

    def check(self, world: WorldView) -> list[Violation]:
        return self.check_records(world, self._walk.advance(world.audits))

    def residual(self, world: WorldView) -> object:
        """Nothing: it judges each audit record once, when it is written."""
        return None

    def check_records(self, world: WorldView, fresh: Records) -> list[Violation]:
        found: list[Violation] = []
        for record, runtime, _ in fresh:
            found.extend(self.check_record(record, runtime))
        return found

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        raise NotImplementedError
