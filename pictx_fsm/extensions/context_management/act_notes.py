"""Actions of ``notes_store`` (M9–M16, M33, M36, M44) and the intent helpers every action
module shares."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from attrs import evolve

from pictx_fsm.extensions.context_management.effects import (
    Answer,
    Emit,
    Intent,
    LogRecord,
    Raise,
    update,
)
from pictx_fsm.extensions.context_management.events import StorageFailed
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.notes import NOTES_BUDGET, BudgetFailure
from pictx_fsm.extensions.context_management.records import NOTES_TYPE, Failure, notes_data
from pictx_fsm.extensions.context_management.sources import pending_bytes
from pictx_fsm.extensions.context_management.texts import NOTICE_STORAGE_FAILED
from pictx_fsm.extensions.context_management.writes import parse_write, write_outcome
from pictx_fsm.host.effects import AppendEntry, Notify, ToolResult

__all__ = [
    "INVALID_SOURCES",
    "JSON",
    "NOTES_ACTIONS",
    "PROTECTED_KIND",
    "STORAGE_FAILED",
    "Action",
    "accept_write",
    "commit_checkpoint",
    "commit_generated_notes",
    "log",
    "mark_storage_failed",
    "op_id",
    "rebuild_index",
    "refuse_budget",
    "refuse_kind",
    "refuse_sources",
    "refuse_storage",
    "tool_error",
]

JSON: TypeAlias = Any
Action = Callable[[CmFacts], tuple[Intent, ...]]
INVALID_SOURCES: Final = "invalid_sources"
PROTECTED_KIND: Final = "protected_kind"
STORAGE_FAILED: Final = "storage_failed"


def log(kind: str, **fields: JSON) -> Emit:
    return Emit(effect=LogRecord(kind=kind, fields=tuple(fields.items())))


def op_id(f: CmFacts, job: int) -> str:
    return f"{f.state.session_id[:8]}:{job}"


def tool_error(code: str, message: str, budget: BudgetFailure | None = None) -> Answer:
    """Q2: a refused call answers ``{ok: false, error, message[, budget]}``."""
    payload: dict[str, JSON] = {"ok": False, "error": code, "message": message}
    if budget is not None:
        payload["budget"] = budget.to_json()
    return Answer(value=ToolResult(payload=payload))


def _refusal(
    f: CmFacts, code: str, message: str, budget: BudgetFailure | None = None
) -> tuple[Intent, ...]:
    fields: dict[str, JSON] = {"time": f.now, "result": code}
    if budget is not None:
        fields["budget"] = budget.to_json()
    failure = Failure(
        code=code,
        time=f.now,
        budget=None if budget is None else tuple(budget.to_json().items()),
    )
    return (
        tool_error(code, message, budget),
        update(last_failure=failure),
        log("note_write", **fields),
    )


def refuse_storage(f: CmFacts) -> tuple[Intent, ...]:
    return _refusal(f, STORAGE_FAILED, "the session file could not be written; reopen the session")


def refuse_sources(f: CmFacts) -> tuple[Intent, ...]:
    message = (
        "sources must be ids of messages on this branch; an explicit constraint must cite a "
        "user message"
    )
    return _refusal(f, INVALID_SOURCES, message)


def refuse_kind(f: CmFacts) -> tuple[Intent, ...]:
    return _refusal(f, PROTECTED_KIND, "a constraint or failed attempt keeps its kind")


def refuse_budget(f: CmFacts) -> tuple[Intent, ...]:
    write = parse_write(f.tool_arguments)
    assert write is not None  # the guard parsed it
    failure = write_outcome(f, write).failure
    return _refusal(f, NOTES_BUDGET, "the notes do not fit their budget", failure)


def accept_write(f: CmFacts) -> tuple[Intent, ...]:
    """M16: one snapshot entry; coverage untouched; ``ok=true``; a background job stops."""
    write = parse_write(f.tool_arguments)
    assert write is not None
    fitted = write_outcome(f, write).fitted
    assert fitted is not None
    branch = f.state.branch
    version = branch.state_version + 1
    data = notes_data(
        fitted.notes,
        origin="tool",
        through=branch.notes_through,
        state=version,
        retired=fitted.retired,
    )
    memory = evolve(
        branch,
        notes=fitted.notes,
        state_version=version,
        has_notes_entry=True,
    )
    payload = {
        "ok": True,
        "key": write.key,
        "retired": list(fitted.retired),
        "notes": len(fitted.notes),
    }
    return (
        Emit(effect=AppendEntry(custom_type=NOTES_TYPE, data=data)),
        update(branch=memory),
        Answer(value=ToolResult(payload=payload)),
        Raise(machine="background_notes", event="cancel"),
        log("note_write", time=f.now, result="ok", retired=len(fitted.retired)),
    )


def commit_generated_notes(f: CmFacts) -> tuple[Intent, ...]:
    """M40, M46 step 1: a background job's or a handoff's notes; coverage advances to the
    end of what the run read."""
    run = f.generation
    branch = f.state.branch
    version = branch.state_version + 1
    origin = "background" if run.kind == "background" else "handoff"
    data = notes_data(run.notes, origin=origin, through=run.through, state=version, retired=())
    memory = evolve(
        branch,
        notes=run.notes,
        state_version=version,
        notes_through=run.through,
        has_notes_entry=True,
    )
    return (
        Emit(effect=AppendEntry(custom_type=NOTES_TYPE, data=data)),
        update(branch=memory, pending_bytes=pending_bytes(f.branch, run.through)),
    )


def rebuild_index(f: CmFacts) -> tuple[Intent, ...]:
    """M15: the note state is replayed from the current branch."""
    memory = f.memo_branch_memory()
    return (update(branch=memory, pending_bytes=pending_bytes(f.branch, memory.notes_through)),)


def commit_checkpoint(f: CmFacts) -> tuple[Intent, ...]:
    """M32–M33: Pi wrote the checkpoint: both positions advance with it."""
    return rebuild_index(f)


def mark_storage_failed(f: CmFacts) -> tuple[Intent, ...]:
    """M44: an explicit notice; writes stop until the session is reopened (Q11)."""
    intents: list[Intent] = [
        update(storage_failed=True, branch=f.memo_branch_memory()),
        Emit(effect=Notify(message=NOTICE_STORAGE_FAILED, level="error")),
    ]
    if isinstance(f.event, StorageFailed) and f.event.during == "tool":
        intents.append(tool_error(STORAGE_FAILED, "the session file could not be written"))
    return tuple(intents)


NOTES_ACTIONS: Final[Mapping[str, Action]] = {
    "refuse_storage": refuse_storage,
    "refuse_sources": refuse_sources,
    "refuse_kind": refuse_kind,
    "refuse_budget": refuse_budget,
    "accept_write": accept_write,
    "commit_generated_notes": commit_generated_notes,
    "commit_checkpoint": commit_checkpoint,
    "mark_storage_failed": mark_storage_failed,
    "rebuild_index": rebuild_index,
}
