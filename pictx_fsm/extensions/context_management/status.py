"""``/ctx-memory status`` (M72), ``context_status`` (M23) and the status-bar text (M4).

The field names are the README's (M72); their nesting is this implementation's (Q13):
``coverage`` under ``memory``, both positions top-level. Everything is derived from the state
and the branch, never stored twice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeAlias

from pictx_fsm.extensions.context_management.effects import LogScope
from pictx_fsm.extensions.context_management.events import CmContext
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.policy import (
    AUTO_MAX_PER_HOUR,
    GEN_TIMEOUT_MS,
    HOUR_MS,
    VERSION,
    Budgets,
)
from pictx_fsm.extensions.context_management.records import Failure
from pictx_fsm.extensions.context_management.sources import after, branch_sources
from pictx_fsm.extensions.context_management.state import CmState
from pictx_fsm.extensions.context_management.texts import (
    STATUS_BATCH,
    STATUS_HANDOFF,
    STATUS_READY,
    STATUS_REOPEN,
)

__all__ = [
    "FOREGROUND",
    "JSON",
    "checkpoint_state",
    "context_status",
    "log_scope",
    "panel_snapshot",
    "recall_left",
    "render_panel",
    "source_checks",
    "status_bar",
    "status_fields",
]

JSON: TypeAlias = Any
FOREGROUND = ("compaction", "handoff_manual", "handoff_auto")


def status_bar(state: CmState) -> str:
    """M4: storage failure wins; a foreground generation shows its current batch (never a
    total or a percentage); a handoff shows its phase; otherwise ready."""
    if state.storage_failed:
        return STATUS_REOPEN
    handoff = state.state_of("handoff")
    run = state.generation
    if run is not None and run.kind in FOREGROUND and run.batch:
        return STATUS_BATCH.format(batch=run.batch)
    if handoff not in ("idle", "done", "failed_no_switch", "failed_returned", "needs_resume"):
        return STATUS_HANDOFF.format(phase=handoff.replace("_", " "))
    return STATUS_READY


def checkpoint_state(state: CmState) -> str:
    """M36: the notes machine's state is ``checkpointState``."""
    return state.state_of("notes_store")


def _failure(failure: Failure | None) -> JSON:
    return None if failure is None else failure.to_json()


def recall_left(state: CmState, ctx: CmContext) -> int:
    budget = Budgets(context_window=ctx.context_window or 0).recall_turn_bytes(
        ctx.tokens if ctx.context_window else None
    )
    return max(0, budget - state.recall_used)


def status_fields(f: CmFacts) -> dict[str, JSON]:
    state, ctx = f.state, f.ctx
    memory = state.branch
    sources = f.sources
    later = branch_sources(after(f.branch, memory.notes_through))
    auto = state.auto
    attempts = sum(1 for t in auto.attempts if ctx.now - t < HOUR_MS)
    background = state.background
    return {
        "version": VERSION,
        "loadedAt": state.loaded_at,
        "notes": len(memory.notes),
        "rawMessages": len(sources),
        "checkpointPosition": memory.through,
        "recallQuotaRemaining": recall_left(state, ctx),
        "checkpointState": checkpoint_state(state),
        "lastCompaction": {"origin": memory.last_compaction_origin},
        "failedAttempts": memory.failed_attempts,
        "lastFailure": _failure(state.last_failure or memory.last_failure),
        "activeNotes": memory.notes.count("active"),
        "resolvedNotes": memory.notes.count("resolved"),
        "memory": {
            "savedNotes": len(memory.notes) if memory.has_notes_entry else 0,
            "lastSaveTime": memory.last_save_time,
            "lastNoteFailure": _failure(state.last_failure),
            "coverage": {
                "coveredThrough": memory.notes_through,
                "coveredTime": _time_of(f, memory.notes_through),
                "laterMessages": len(later),
            },
        },
        "background": {
            "enabled": state.state_of("background_notes") not in ("disabled", "unloaded"),
            "running": state.state_of("background_notes") == "running",
            "failureCodes": list(background.last_codes),
            "lastSuccessUsage": None
            if background.last_usage is None
            else {"input": background.last_usage[0], "output": background.last_usage[1]},
        },
        "notesThroughEntryId": memory.notes_through,
        "throughEntryId": memory.through,
        "autoHandoff": {
            "enabled": auto.enabled and not state.flags.no_auto_handoff,
            "paused": auto.paused,
            "pending": state.state_of("auto_handoff") in ("pending", "preparing", "switching"),
            "attemptsInHour": attempts,
            "maxPerHour": AUTO_MAX_PER_HOUR,
            "nextEligibleAt": auto.next_eligible_at,
            "lastFailure": None
            if auto.last_failure is None
            else {"code": auto.last_failure[0], "time": auto.last_failure[1]},
        },
        "budgets": {"generationTimeoutMs": GEN_TIMEOUT_MS, **_budgets(f.budgets)},
    }


def _budgets(budgets: Budgets) -> dict[str, int]:
    return {
        "noteMaxBytes": budgets.note_max_bytes,
        "checkpointMaxBytes": budgets.checkpoint_max_bytes,
        "backgroundThresholdBytes": budgets.background_threshold,
        "handoffMaxBytes": budgets.handoff_max_bytes,
    }


def _time_of(f: CmFacts, entry_id: str | None) -> str | None:
    if entry_id is None:
        return None
    entry = f.services.tree.get(entry_id)
    return None if entry is None else entry.timestamp


def log_scope(f: CmFacts) -> LogScope | None:
    """M64, M68: this saved session's logs, and its direct parent's once the receipt was
    verified; ``None`` for an unsaved session (it keeps no log)."""
    session = f.ctx.session_file
    if session is None:
        return None
    receipt = f.receipt if f.state.receipt_verified else None
    if receipt is None:
        return LogScope(session_file=session)
    return LogScope(
        session_file=session, parent_file=receipt.parent_file, captured_at=receipt.captured_at
    )


def source_checks(f: CmFacts) -> dict[str, int]:
    """M62, M70: how many source ids the current notes cite, and where they resolve — this
    branch, or (inherited notes) the parent's captured branch. Traceability, never a claim
    that the notes are complete or correct."""
    cited = [source for note in f.state.branch.notes.notes for source in note.sources]
    parent = f.captured_parent() if f.receipt is not None else None
    parent_ids = {e.id for e in parent or ()}
    on_branch = sum(1 for s in cited if s in f.branch_ids)
    in_parent = sum(1 for s in cited if s not in f.branch_ids and s in parent_ids)
    return {
        "cited": len(cited),
        "onBranch": on_branch,
        "inParent": in_parent,
        "unresolved": len(cited) - on_branch - in_parent,
    }


def panel_snapshot(f: CmFacts) -> dict[str, JSON]:
    """M62: what the panel shows from the state — sessions, usage, auto handoff, note
    counts, source checks — computed from the event that refreshed it, so never stale; the
    shell adds the call statistics from the logs (:func:`render_panel`)."""
    fields = status_fields(f)
    notes = f.state.branch.notes
    return {
        "session": f.state.session_id,
        "sourceSession": f.receipt.parent_session if f.receipt is not None else None,
        "usage": {"tokens": f.ctx.tokens, "contextWindow": f.ctx.context_window},
        "autoHandoff": fields["autoHandoff"],
        "goals": notes.count_kind("goal"),
        "constraints": notes.count_kind("constraint"),
        "openItems": notes.count_kind("open_item"),
        "checkpointState": fields["checkpointState"],
        "failedAttempts": fields["failedAttempts"],
        "sourceChecks": source_checks(f),
    }


def render_panel(snapshot: Mapping[str, JSON], diagnostics: Mapping[str, JSON] | None) -> str:
    """The panel's text: the snapshot and the diagnostics (``null`` without a log)."""
    panel = {**snapshot, "diagnostics": None if diagnostics is None else dict(diagnostics)}
    return json.dumps(panel, indent=2, ensure_ascii=False)


def context_status(f: CmFacts) -> dict[str, JSON]:
    """M23: the context estimate, the checkpoint and the remaining recall quota."""
    return {
        "tokens": f.ctx.tokens,
        "contextWindow": f.ctx.context_window,
        "checkpointState": checkpoint_state(f.state),
        "throughEntryId": f.state.branch.through,
        "notesThroughEntryId": f.state.branch.notes_through,
        "recallQuotaRemaining": recall_left(f.state, f.ctx),
    }
