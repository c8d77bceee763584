"""The lifecycle's invariants over what *any* host can give: the provider requests it made
(as Pi LLM messages, with the session leaf and the audit position at that moment), the
session tree, the audit records, and the input it queued.

:mod:`pictx_fsm.extensions.pi_context.kit.invariants` checks the model session through its own log;
these
checks need nothing host-specific, so a second host (pydantic-ai) is held to the same rules:

============================  ===================================================  =========
check                         rule                                                 guards
============================  ===================================================  =========
``no_erased_history``         after a marker no request carries a message from     R67–R69
                              before it (unless the window holds it too)
``one_continuation``          each reset window has at most one continuation, and  R28, R32,
                              a boundary that continues is followed by exactly     R35, D1
                              one request
``queued_once``               queued input lands once in the session and reaches   R32,
                              the provider after it was queued                     FM10–13
``recoveries_bounded``        at most one settle-boundary reset until a prompt or  R33–R37
                              a successful reply
``audit_chain``               the audit records' hash chain verifies               audit
``tool_channels``             a notes or history tool's result in the session is   N3, N4
                              the runtime's outcome, text and channel (an error
                              is an error result, ok and refusal are not); a
                              call whose result a crash lost is closed by the
                              host as an error result, never as an ok one
``notes_confined``            nothing outside the notes root changed, and its      N11, N12
                              sentinel's secret never reached a tool result
                              (when the run has a :class:`NotesSandbox`)
============================  ===================================================  =========
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias, TypeGuard

from attrs import field, frozen

from pictx_fsm.audit.log import json_digest, verify_records
from pictx_fsm.errors import PictxError
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import SECRET, NotesSandbox
from pictx_fsm.extensions.pi_context.texts import CONTINUATION_TYPE, MARKER_TYPE
from pictx_fsm.extensions.pi_context.tools import HANDLERS as TOOL_HANDLERS
from pictx_fsm.extensions.pi_context.windows import WindowIndex, window_id_of_marker
from pictx_fsm.host.events import ToolCall
from pictx_fsm.host.requests import ProviderRequest
from pictx_fsm.session.entries import CustomMessageEntry, Entry, MessageEntry, content_text
from pictx_fsm.session.projection import context_messages, convert_message
from pictx_fsm.session.tree import SessionTree

__all__ = [
    "CHECKS",
    "JSON",
    "LIFECYCLE_PREFIX",
    "Check",
    "Key",
    "LostResult",
    "Observation",
    "QueuedInput",
    "Violation",
    "audit_chain",
    "check_all",
    "no_erased_history",
    "notes_confined",
    "one_continuation",
    "queued_once",
    "recoveries_bounded",
    "tool_channels",
]

JSON: TypeAlias = Any
LIFECYCLE_PREFIX = "pi-context/"
Key: TypeAlias = tuple[str, str]


def _tuple(items: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(items)


@frozen(kw_only=True)
class QueuedInput:
    """User input queued during a run (``text``), ``audit_seq`` records in."""

    text: str
    audit_seq: int
    run_failed: bool = False
    """The run it was queued into raised (the host drops what it had not delivered)."""


@frozen(kw_only=True)
class LostResult:
    """A tool result a crash took from the session after the runtime had answered the call
    (``audit_seq`` records in at the crash). The answer never reached the session, so the
    host closes the call with its own error result (Pi's "No result provided", pydantic-ai's
    "interrupted" return), which is not the runtime's outcome."""

    tool_call_id: str
    audit_seq: int


@frozen(kw_only=True)
class Observation:
    """Everything the checks read."""

    tree: SessionTree
    requests: tuple[ProviderRequest, ...] = field(converter=_tuple)
    audit: tuple[Mapping[str, JSON], ...] = field(converter=_tuple)
    queued: tuple[QueuedInput, ...] = field(converter=_tuple, default=())
    notes: NotesSandbox | None = None
    """The run's notes home, with the outside it must not touch."""
    lost: tuple[LostResult, ...] = field(converter=_tuple, default=())
    """Tool results the driver's crashes took from the session (it knows what it cut)."""


@frozen(kw_only=True)
class Violation:
    check: str
    message: str


Check: TypeAlias = Callable[[Observation], list[Violation]]


# -- no erased history -----------------------------------------------------------------------


def _key(message: Mapping[str, JSON]) -> Key | None:
    """What identifies a conversation message across hosts: its role and its text."""
    role = str(message.get("role"))
    if role == "system":
        return None
    if role == "assistant":
        calls = [b.get("id") for b in message.get("content") or () if isinstance(b, Mapping)]
        return role, content_text(message.get("content")) + repr([c for c in calls if c])
    return ("user" if role in ("user", "custom") else role), content_text(message.get("content"))


def no_erased_history(seen: Observation) -> list[Violation]:
    found = []
    for index, request in enumerate(seen.requests):
        node = seen.tree.find(request.leaf_id) if request.leaf_id else None
        marker_id = None if node is None else WindowIndex.of(seen.tree).window_of(node).marker_id
        if node is None or marker_id is None:
            continue
        marker = seen.tree.node(marker_id)
        erased = _keys(n.entry for n in marker.path()[:-1])
        window = _keys(n.entry for n in node.path()[len(marker.path()) :])
        for message in request.messages:
            key = _key(message)
            if key is not None and key in erased and key not in window:
                found.append(_v("no_erased_history", f"request {index} carries erased {key}"))
                break
    return found


def _keys(entries: Iterable[Entry]) -> set[Key]:
    """The conversation of ``entries``: the lifecycle's own messages (boots, reminders,
    continuations, whose texts recur from window to window) are not erased history."""
    keys = set()
    for message in context_messages(list(entries)):
        if str(message.get("customType", "")).startswith(LIFECYCLE_PREFIX):
            continue
        converted = convert_message(message)
        key = None if converted is None else _key(converted)
        if key is not None:
            keys.add(key)
    return keys


# -- one continuation per reset --------------------------------------------------------------


def one_continuation(seen: Observation) -> list[Violation]:
    found = []
    for leaf in seen.tree.leaves():
        counts: dict[str, int] = {}
        windows = WindowIndex.of(seen.tree)
        for node in seen.tree.branch_nodes(leaf):
            entry = node.entry
            if isinstance(entry, CustomMessageEntry) and entry.custom_type == CONTINUATION_TYPE:
                window_id = windows.window_of(node).window_id
                counts[window_id] = counts.get(window_id, 0) + 1
        found += [
            _v("one_continuation", f"window {w} has {n} continuations")
            for w, n in counts.items()
            if n > 1
        ]
    return found + _one_request_per_continue(seen)


def _one_request_per_continue(seen: Observation) -> list[Violation]:
    """A boundary result with ``continue`` and a reset tail buys exactly one request before
    the next ``turn_end``."""
    found = []
    records = seen.audit
    for position, record in enumerate(records):
        if not _continues_with_reset(record):
            continue
        seq = int(record["seq"])
        after = [r for r in records[position + 1 :] if r.get("hook") == "turn_end"]
        end = int(after[0]["seq"]) if after else None
        made = [
            r for r in seen.requests if r.audit_seq >= seq and (end is None or r.audit_seq < end)
        ]
        if end is not None and len(made) != 1:
            what = f"{record['hook']} #{seq} continued with {len(made)} requests"
            found.append(_v("one_continuation", what))
    return found


def _continues_with_reset(record: Mapping[str, JSON]) -> bool:
    result = record.get("result")
    value = result.get("value") if isinstance(result, Mapping) else None
    if not isinstance(value, Mapping) or value.get("continue") is not True:
        return False
    return any(d.get("customType") == CONTINUATION_TYPE for d in value.get("entries") or ())


# -- queued input ------------------------------------------------------------------------------


def queued_once(seen: Observation) -> list[Violation]:
    found = []
    users = [
        content_text(e.message.content)
        for e in seen.tree.entries
        if isinstance(e, MessageEntry) and e.message.role == "user"
    ]
    for queued in seen.queued:
        count = sum(1 for text in users if text == queued.text)
        if queued.run_failed and count == 0:
            continue
        if count != 1:
            found.append(_v("queued_once", f"{queued.text!r} is in the session {count} times"))
            continue
        later = [r for r in seen.requests if r.audit_seq >= queued.audit_seq]
        reached = any(("user", queued.text) in map(_key, r.messages) for r in later)
        if not reached and not queued.run_failed:
            found.append(_v("queued_once", f"{queued.text!r} never reached the provider"))
    return found


# -- bounded recovery --------------------------------------------------------------------------


def recoveries_bounded(seen: Observation) -> list[Violation]:
    """A recovery is a reset the settle boundary committed (the audit says which windows);
    on the session's branches, a prompt or a reply that succeeded ends the failure chain
    (R37), so two recoveries with neither between them are one too many."""
    recovered = _recovery_windows(seen.audit)
    found = []
    for leaf in seen.tree.leaves():
        chain = 0
        for entry in seen.tree.branch(leaf):
            if isinstance(entry, MessageEntry):
                role, failed = entry.message.role, entry.message.stop_reason in ("error", "length")
                if role == "user" or (role == "assistant" and not failed):
                    chain = 0
            elif window_id_of_marker(entry) in recovered:
                chain += 1
                if chain > 1:
                    found.append(_v("recoveries_bounded", f"recovery {chain} at marker {entry.id}"))
    return found


def _recovery_windows(records: Iterable[Mapping[str, JSON]]) -> set[str | None]:
    windows: set[str | None] = set()
    for record in records:
        if record.get("hook") != "agent_before_settle":
            continue
        value = (record.get("result") or {}).get("value") or {}
        for draft in value.get("entries") or ():
            if draft.get("customType") == MARKER_TYPE:
                windows.add((draft.get("data") or {}).get("windowId"))
    return windows


# -- the audit chain ---------------------------------------------------------------------------


def audit_chain(seen: Observation) -> list[Violation]:
    try:
        verify_records(seen.audit)
    except PictxError as error:
        return [_v("audit_chain", str(error))]
    return []


# -- the notes and history tools ---------------------------------------------------------------


def tool_channels(seen: Observation) -> list[Violation]:
    """Each tool result in the session that the runtime answered (by its call id) carries
    the outcome's text, as an error result exactly when the outcome is ``error`` (N4). A
    result the host made itself (a call a crash left unanswered) has no record to match; one
    that closes a call whose answered result a crash lost must be an error result."""
    answers = {
        str(r["event"].get("tool_call_id")): r
        for r in seen.audit
        if r.get("hook") == ToolCall.HOOK and r["event"].get("name") in TOOL_HANDLERS
    }
    lost = {x.tool_call_id: x.audit_seq for x in seen.lost}
    found = []
    for entry in seen.tree.entries:
        if not _is_tool_result(entry):
            continue
        call_id = str(entry.message.raw.get("toolCallId"))
        record = answers.get(call_id)
        if record is None:
            continue
        text, failed = entry.message.text(), entry.message.raw.get("isError") is True
        if int(record["seq"]) <= lost.get(call_id, 0):  # answered before the crash
            if not failed:
                found.append(_v("tool_channels", f"entry {entry.id} closes a lost call as ok"))
            continue
        answer = record["result"]["value"]
        if failed != (answer["status"] == "error") or json_digest(text) != answer["text"]:
            what = f"entry {entry.id} is not the {answer['status']} outcome the runtime gave"
            found.append(_v("tool_channels", what))
    return found


def _is_tool_result(entry: Entry) -> TypeGuard[MessageEntry]:
    return isinstance(entry, MessageEntry) and entry.message.role == "toolResult"


def notes_confined(seen: Observation) -> list[Violation]:
    sandbox = seen.notes
    if sandbox is None:
        return []
    found = []
    if sandbox.outside_state() != sandbox.baseline:
        found.append(_v("notes_confined", f"{sandbox.outside} changed under the notes tools"))
    for entry in seen.tree.entries:
        if _is_tool_result(entry) and SECRET in entry.message.text():
            found.append(_v("notes_confined", f"entry {entry.id} carries the secret"))
    return found


CHECKS: tuple[Check, ...] = (
    no_erased_history,
    one_continuation,
    queued_once,
    recoveries_bounded,
    audit_chain,
    tool_channels,
    notes_confined,
)


def check_all(seen: Observation, checks: Sequence[Check] = CHECKS) -> list[Violation]:
    return [violation for check in checks for violation in check(seen)]


def _v(check: str, message: str) -> Violation:
    return Violation(check=check, message=message)
