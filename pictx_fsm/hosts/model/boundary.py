"""Boundary results of ``turn_end`` and ``agent_before_settle`` (pi-host §4.2).

1. Each handler sees the drafts and flag accumulated so far; returned ``entries`` replace the
   list, a returned ``continue: true`` sets the flag.
2. After each handler the drafts are checked as Pi's preview would apply them; one invalid
   draft voids the whole result (``{entries: [], continue: false}``) and is reported as
   ``Invalid boundary entries: …`` against that handler's extension.
3. After all handlers the drafts are appended in order (:func:`commit`).
4. ``continue`` is honoured only with runnable context (:func:`can_continue`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from attrs import frozen

from pictx_fsm.host.apply import append_draft
from pictx_fsm.host.effects import (
    BoundaryResult,
    CompactionDraft,
    CustomDraft,
    CustomMessageDraft,
    Draft,
    HookResult,
)
from pictx_fsm.host.events import HookEvent
from pictx_fsm.host.extension import Reply
from pictx_fsm.hosts.model.compaction import checkpoint_fields
from pictx_fsm.hosts.model.dispatch import call, error, record, subscribers
from pictx_fsm.hosts.model.records import step_at
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.hosts.model.steps import Steps
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.projection import convert_to_llm, is_editable
from pictx_fsm.session.tree import SessionTree

__all__ = ["JSON", "Boundary", "EventFactory", "can_continue", "chain", "commit", "draft_problem"]

JSON: TypeAlias = Any
EventFactory = Callable[[tuple[Draft, ...]], HookEvent]


@frozen(kw_only=True)
class Boundary:
    """The accumulated ``{entries, continue}`` of one boundary."""

    entries: tuple[Draft, ...] = ()
    continue_: bool = False


def chain(host: HostState, hook: str, make_event: EventFactory, **detail: JSON) -> Boundary:
    """Log the boundary hook and run its handlers in order, accumulating their results."""
    record(host, hook, **detail)
    state = Boundary()
    for ext in subscribers(host, hook):
        reply = call(host, ext, make_event(state.entries), host.host_context())
        state = _merge(state, reply)
        problem = draft_problem(host.store.tree, state.entries)
        if problem is not None:
            error(host, hook, ext.name, f"Invalid boundary entries: {problem}")
            state = Boundary()
    return state


def _merge(state: Boundary, reply: Reply) -> Boundary:
    if not isinstance(reply, HookResult) or not isinstance(reply.value, BoundaryResult):
        return state
    value = reply.value
    # §4.2 rule 1: returned entries replace the list; a returned continue replaces the flag.
    flag = state.continue_ if value.continue_ is None else value.continue_
    return Boundary(entries=value.entries, continue_=flag)


# -- validation --------------------------------------------------------------------------------


def draft_problem(tree: SessionTree, drafts: tuple[Draft, ...]) -> str | None:
    """Why Pi's preview would throw on these drafts, or ``None`` when they all apply."""
    if not drafts:
        return None
    on_branch = {entry.id for entry in tree.branch()}
    for draft in drafts:
        problem = _problem(tree, on_branch, draft)
        if problem is not None:
            return problem
    return None


def _problem(tree: SessionTree, on_branch: set[str | None], draft: Draft) -> str | None:
    if isinstance(draft, CustomDraft | CustomMessageDraft):
        ok = isinstance(draft.custom_type, str) and draft.custom_type
        return None if ok else "customType must be a non-empty string"
    if isinstance(draft, CompactionDraft):
        kept = draft.first_kept_entry_id
        return None if kept is None else _target_problem(tree, on_branch, kept)
    problem = _target_problem(tree, on_branch, draft.target_id)
    if problem is not None:
        return problem
    target = tree.get(draft.target_id)
    if target is None or not is_editable(target):
        return f"Entry {draft.target_id} cannot be edited"
    if not _replacement_ok(draft.replacement):
        return f"Invalid replacement for entry {draft.target_id}"
    return None


def _target_problem(tree: SessionTree, on_branch: set[str | None], target: str) -> str | None:
    if target not in tree:
        return f"Entry {target} not found"
    if target not in on_branch:
        return f"Entry {target} is not on the current branch"
    return None


def _replacement_ok(replacement: JSON) -> bool:
    if replacement is None:
        return True
    if not isinstance(replacement, Mapping):
        return False
    return isinstance(replacement.get("content"), str | list)


# -- commit and continuation -------------------------------------------------------------------


def commit(host: HostState, drafts: tuple[Draft, ...]) -> Steps[list[Entry]]:
    """Append the drafts in order, each a child of the previous one."""
    entries: list[Entry] = []
    for draft in drafts:
        entry = _append(host, draft)
        entries.append(entry)
        yield step_at("persist", entry.type)
    return entries


def _append(host: HostState, draft: Draft) -> Entry:
    if not isinstance(draft, CompactionDraft):
        return append_draft(host.store, draft)
    fields = checkpoint_fields(host, draft.summary, details=draft.details, from_hook=True)
    return host.store.compaction(fields, draft.first_kept_entry_id)


def can_continue(host: HostState) -> bool:
    """Runnable context: the last non-system LLM message is not an assistant's, or custom
    messages are held, or steering/follow-up work is queued (pi-host §4.2 rule 4)."""
    llm = convert_to_llm(host.store.context_messages())
    roles = [message.get("role") for message in llm if message.get("role") != "system"]
    runnable = bool(roles) and roles[-1] != "assistant"
    return runnable or bool(host.queues.held) or host.queues.queued
