"""The family's kit invariants that read a window index: reminders once per window, narrow
repair, no erased history in a provider request. Each is written once against a
:class:`~pictx_fsm.extensions.shared.window_index.SchemeWindowIndex`; an extension binds its
own index (and what counts as the same reminder, and where a window's cut is) with its rule
ids (:func:`family_invariants`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from attrs import field

from pictx_fsm.extensions.shared.kit.invariants import (
    Erased,
    NothingAfterAbort,
    OneResetPerBatch,
    erased_messages,
)
from pictx_fsm.extensions.shared.kit.view import SessionWorld
from pictx_fsm.extensions.shared.kit.walks import PerTree
from pictx_fsm.extensions.shared.repair import TailKind, tail_kind
from pictx_fsm.extensions.shared.window_index import SchemeWindowIndex
from pictx_fsm.extensions.shared.windows import Window
from pictx_fsm.session.entries import CustomMessageEntry
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.testing import invariants as testing_invariants
from pictx_fsm.testing.invariants import Violation, remembering

__all__ = [
    "ErasedRequests",
    "NarrowRepair",
    "RemindersOncePerWindow",
    "Rules",
    "family_invariants",
]

Rules = Mapping[str, tuple[str, str]]
"""An extension's ``(rule ids, doc)`` per family invariant name."""


class RemindersOncePerWindow(PerTree[SessionWorld]):
    """Each reminder persists at most once per window per branch."""

    name = "reminders_once_per_window"
    windows: ClassVar[type[SchemeWindowIndex]]
    reminders: ClassVar[Mapping[str, tuple[str, ...]]]
    """Per reminder custom type: the custom types that count as the same reminder."""

    def check_node(self, world: Any, tree: SessionTree, node: TreeNode) -> list[Violation]:
        entry = node.entry
        if not isinstance(entry, CustomMessageEntry):
            return []
        kinds = self.reminders.get(entry.custom_type)
        parent = node.parent
        if kinds is None or parent is None:
            return []
        windows = self.windows.of(tree)
        if windows.window_of(parent) is not windows.window_of(node):
            return []
        present = windows.at(parent).message_types
        if any(kind in present for kind in kinds):
            window_id = windows.window_of(node).window_id
            return [self.violation(f"second {entry.custom_type} {node.id} in window {window_id}")]
        return []


class NarrowRepair(PerTree[SessionWorld]):
    """A boot or continuation only ever completes a bare tail (never after later work,
    never twice)."""

    name = "narrow_repair"
    windows: ClassVar[type[SchemeWindowIndex]]

    def check_node(self, world: Any, tree: SessionTree, node: TreeNode) -> list[Violation]:
        windows = self.windows.of(tree)
        window = windows.window_of(node)
        if window.marker_id is None or node.id == window.marker_id:
            return []
        scheme = self.windows.scheme
        kind = tail_kind(node.entry, window.window_id, scheme)
        if kind not in (TailKind.BOOT, TailKind.CONTINUATION):
            return []
        tail = windows.tail_since_marker(node)[:-1]
        earlier = [tail_kind(n.entry, window.window_id, scheme) for n in tail]
        allowed = {TailKind.METADATA} | (
            {TailKind.BOOT} if kind is TailKind.CONTINUATION else set()
        )
        extra = [k.value for k in earlier if k not in allowed]
        if extra:
            return [
                self.violation(
                    f"{kind.value} {node.id} appended after {', '.join(extra)} "
                    f"in window {window.window_id}"
                )
            ]
        return []


@remembering
class ErasedRequests(testing_invariants.Invariant[SessionWorld]):
    """No provider request in a window carries a message of an entry before the window's
    cut (:meth:`cut`: its marker, or what a subclass says)."""

    windows: ClassVar[type[SchemeWindowIndex]]

    _seen: int = field(init=False, default=0)
    _erased: dict[str, tuple[TreeNode, Erased]] = field(init=False, factory=dict)
    """Per cut node: the messages before it (its ancestors never change)."""

    def cut(self, tree: SessionTree, window: Window) -> TreeNode | None:
        """Where ``window``'s history ends: its marker (``None``: nothing is erased)."""
        return None if window.marker_id is None else tree.node(window.marker_id)

    def check(self, world: SessionWorld) -> list[Violation]:
        session = world.session
        requests = session.log.requests
        found = []
        for index, request in enumerate(requests[self._seen :], start=self._seen):
            leaf = session.tree.find(request.leaf_id) if request.leaf_id else None
            if leaf is None:
                continue
            window = self.windows.of(session.tree).window_of(leaf)
            cut = self.cut(session.tree, window)
            if cut is None:
                continue
            erased = self._erased_before(cut)
            for message in request.messages:
                if message.get("role") != "system" and erased.holds(message):
                    found.append(
                        self.violation(
                            f"request {index} in window {window.window_id} carries an erased "
                            f"{message.get('role')} message from before marker {window.marker_id}"
                        )
                    )
                    break
        self._seen = len(requests)
        return found

    def _erased_before(self, cut: TreeNode) -> Erased:
        known = self._erased.get(cut.id)
        if known is None or known[0] is not cut:
            known = self._erased[cut.id] = (cut, erased_messages(cut))
        return known[1]

    def residual(self, world: SessionWorld) -> object:
        """Nothing: a cursor into the requests, and a cache of what the files hold."""
        return None


FAMILY: tuple[type[testing_invariants.Invariant[Any]], ...] = (
    OneResetPerBatch,
    NothingAfterAbort,
    RemindersOncePerWindow,
    NarrowRepair,
)


def family_invariants(
    module: str, rules: Rules, **bindings: Any
) -> dict[str, type[testing_invariants.Invariant[Any]]]:
    """An extension's family invariants, by name: the family's checks, each with the
    extension's ``(rule ids, doc)`` from ``rules`` and its ``bindings`` (``marker_type``,
    ``windows``, ``reminders``: each class takes those it declares), owned by ``module``."""
    declared = {name for base in FAMILY for name in base.__annotations__}
    if set(bindings) - declared:
        raise TypeError(f"no family invariant takes {sorted(set(bindings) - declared)}")
    out: dict[str, type[testing_invariants.Invariant[Any]]] = {}
    for base in FAMILY:
        rule, doc = rules[base.name]
        own = {k: v for k, v in bindings.items() if k in base.__annotations__}
        namespace = {"rule": rule, "doc": doc, "__module__": module, **own}
        out[base.name] = type(base.__name__, (base,), namespace)
    return out
