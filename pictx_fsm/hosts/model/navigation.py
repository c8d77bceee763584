"""Tree navigation (``navigateTree``, pi-host §3.1, §7 "Tree", observed in ``h_tree_fork``).

``session_before_tree`` may cancel (the first ``{cancel}`` wins) or supply the summary. The
leaf moves to the target, or to its parent when the target is a user or custom message (whose
text goes back to the editor). Without a summary nothing is written (the leaf move lives in
memory only); with one, a ``branch_summary`` is appended at the new position (``fromId`` = the
old leaf), plus a ``label`` on it when asked. Then ``session_tree``.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from attrs import frozen

from pictx_fsm.host.effects import CancelResult, HookResult, TreeSummaryResult
from pictx_fsm.host.events import SessionBeforeTree, SessionTreeEvent
from pictx_fsm.host.extension import Reply
from pictx_fsm.hosts.model.dispatch import emit
from pictx_fsm.hosts.model.errors import ModelHostError
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.session.entries import CustomMessageEntry, Entry, MessageEntry
from pictx_fsm.session.tree import SessionTree as Tree

__all__ = ["JSON", "SUMMARY_PREAMBLE", "NavigationOutcome", "navigate"]

JSON: TypeAlias = Any
SUMMARY_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\n"
    "Summary of that exploration:\n\n"
)


@frozen(kw_only=True)
class NavigationOutcome:
    cancelled: bool
    new_leaf_id: str | None = None
    summary_entry_id: str | None = None
    editor_text: str | None = None


def navigate(
    host: HostState, target_id: str, *, summarize: bool = False, label: str | None = None
) -> NavigationOutcome:
    tree = host.store.tree
    target = tree.get(target_id)
    if target is None:
        raise ModelHostError(f"cannot navigate to {target_id!r}: no such entry in the session")
    old_leaf = tree.leaf_id
    if target_id == old_leaf:  # Pi: already there, nothing happens (no hook)
        return NavigationOutcome(cancelled=False, new_leaf_id=old_leaf)
    event = SessionBeforeTree(user_wants_summary=summarize, target_id=target_id)
    replies = emit(host, event, targetId=target_id, userWantsSummary=summarize)
    if any(_value(reply, CancelResult) for reply in replies):
        return NavigationOutcome(cancelled=True)
    supplied = next((v for r in replies if (v := _value(r, TreeSummaryResult))), None)
    new_leaf, editor_text = _landing(target)
    abandoned = _abandoned(tree, old_leaf, new_leaf)
    host.store.navigate(new_leaf)
    summary_id = None
    if summarize:
        summary_id = _write_summary(host, old_leaf, abandoned, supplied, label)
    if summary_id is None and label is not None:
        host.store.label(target_id, label)
    emit(host, SessionTreeEvent(new_leaf_id=host.store.leaf_id, old_leaf_id=old_leaf))
    return NavigationOutcome(
        cancelled=False,
        new_leaf_id=host.store.leaf_id,
        summary_entry_id=summary_id,
        editor_text=editor_text,
    )


def _value(reply: Reply, kind: type[Any]) -> Any:
    if isinstance(reply, HookResult) and isinstance(reply.value, kind):
        return reply.value
    return None


def _landing(target: Entry) -> tuple[str | None, str | None]:
    """Where the leaf lands, and the text returned to the editor."""
    if isinstance(target, MessageEntry) and target.message.role == "user":
        return target.parent_id, target.message.text()
    if isinstance(target, CustomMessageEntry):
        return target.parent_id, target.text()
    return target.id, None


def _abandoned(tree: Tree, old_leaf: str | None, new_leaf: str | None) -> int:
    """Entries on the old branch that the new position leaves behind."""
    kept = {entry.id for entry in tree.branch(new_leaf)} if new_leaf is not None else set()
    old = tree.branch(old_leaf) if old_leaf is not None else []
    return sum(1 for entry in old if entry.id not in kept)


def _write_summary(
    host: HostState,
    old_leaf: str | None,
    abandoned: int,
    supplied: TreeSummaryResult | None,
    label: str | None,
) -> str | None:
    """Pi's ``navigateTree`` writes a ``branch_summary`` only for a non-empty summary text
    (``if (summaryText)``): an extension's ``{summary: ""}`` (R75) and a branch with nothing
    to summarise leave no entry."""
    fields: dict[str, JSON]
    if supplied is not None:
        summary, fields = supplied.summary, {"from_hook": True}
    elif abandoned == 0:
        return None
    else:
        summary = f"{SUMMARY_PREAMBLE}## Goal\nModel-host summary of {abandoned} entries"
        fields = {"details": {"readFiles": [], "modifiedFiles": []}, "from_hook": False}
    if not summary:
        return None
    entry = host.store.branch_summary(old_leaf or "root", summary, fields)
    if label is not None:
        host.store.label(str(entry.id), label)
    return str(entry.id)
