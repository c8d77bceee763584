"""One ``context_notes`` update (M9–M16): its arguments and how the note set would take it.

:func:`parse_write` reads the tool arguments (Q2 wire names: ``key``, ``kind``, ``text``,
``status``, ``sources``, ``inferred``); :func:`write_outcome` judges it against the branch:
the cited sources (M9), then capacity with bounded retirement (M10–M11). The notes machine's
guards and actions both read this one judgement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.extensions.context_management.notes import (
    KINDS,
    STATUSES,
    BudgetFailure,
    Fitted,
    Note,
    fit,
    updated,
)
from pictx_fsm.session.entries import CompactionEntry, CustomMessageEntry, MessageEntry

__all__ = ["JSON", "WriteOutcome", "WriteRequest", "parse_write", "write_outcome", "write_problem"]

if TYPE_CHECKING:
    from pictx_fsm.extensions.context_management.facts import CmFacts

JSON: TypeAlias = Any


@frozen(kw_only=True)
class WriteRequest:
    key: str
    kind: str
    status: str
    text: str
    sources: tuple[str, ...]
    inferred: bool


def write_problem(args: Mapping[str, JSON]) -> str | None:
    """Why an ``action: "update"`` call cannot be judged, naming the field; ``None`` when
    it can. M8: a note's key and text are whole characters — a lone surrogate (half of a
    cut emoji) is refused, never stored or measured as something else."""
    key, kind, text = args.get("key"), args.get("kind"), args.get("text")
    status, sources = args.get("status", "active"), args.get("sources")
    if not (isinstance(key, str) and key.strip()):
        return "key must be a non-empty string"
    if kind not in KINDS:
        return f"kind must be one of {', '.join(KINDS)}"
    if status not in STATUSES:
        return f"status must be one of {', '.join(STATUSES)}"
    if not isinstance(text, str) or not text.strip():
        return "text must be a non-empty string"
    if not isinstance(args.get("inferred", False), bool):
        return "inferred must be true or false"
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) for s in sources):
        return "sources must be a non-empty list of message ids"
    for name, value in (("key", key), ("text", text)):
        at = js.first_lone_surrogate(value)
        if at is not None:
            return (
                f"{name} holds a lone surrogate (half of a cut character) at character {at}; "
                "write it again without the broken character"
            )
    return None


def parse_write(args: Mapping[str, JSON]) -> WriteRequest | None:
    """The update an ``action: "update"`` call asks for, or ``None`` when malformed."""
    if write_problem(args) is not None:
        return None
    sources = args["sources"]
    return WriteRequest(
        key=str(args["key"]),
        kind=str(args["kind"]),
        status=str(args.get("status", "active")),
        text=str(args["text"]),
        sources=tuple(dict.fromkeys(sources)),
        inferred=bool(args.get("inferred", False)),
    )


@frozen(kw_only=True)
class WriteOutcome:
    sources_ok: bool
    note: Note
    fitted: Fitted | None
    failure: BudgetFailure | None


def write_outcome(f: CmFacts, write: WriteRequest) -> WriteOutcome:
    cached: WriteOutcome | None = f.memo.get("write")
    if cached is not None:
        return cached
    roles = _roles(f)
    sources_ok = all(s in roles for s in write.sources)
    derived = any(roles.get(s) in ("summary", "custom") for s in write.sources)
    if write.kind == "constraint" and not write.inferred:
        sources_ok = sources_ok and any(roles.get(s) == "user" for s in write.sources)
    notes = f.state.branch.notes
    note = updated(
        notes,
        Note(
            key=write.key,
            kind=write.kind,
            status=write.status,
            text=write.text,
            sources=write.sources,
            inferred=write.inferred or derived,
        ),
    )
    result = fit(notes.put(note), (write.key,), f.state.branch.files, f.budgets)
    outcome = WriteOutcome(
        sources_ok=sources_ok,
        note=note,
        fitted=result if isinstance(result, Fitted) else None,
        failure=result if isinstance(result, BudgetFailure) else None,
    )
    f.memo["write"] = outcome
    return outcome


def _roles(f: CmFacts) -> dict[str, str]:
    """Raw message entries of the branch by id, with the role they can support (M9)."""
    roles: dict[str, str] = {}
    for entry in f.branch:
        if isinstance(entry, MessageEntry) and entry.message.role in (
            "user",
            "assistant",
            "toolResult",
        ):
            roles[entry.id] = entry.message.role
        elif isinstance(entry, CustomMessageEntry):
            roles[entry.id] = "custom"
        elif isinstance(entry, CompactionEntry):
            roles[entry.id] = "summary"
    return roles
