"""The guards of the five machines: pure functions of :class:`CmFacts` returning ``bool``.

Each guard implements one clause of the spec and says which; the declarations in
``models/context_management/`` combine them with ``not``/``and``/``or``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from pictx_fsm import js
from pictx_fsm.extensions.context_management import generation as gen
from pictx_fsm.extensions.context_management.act_handoff import CREATE_FAILED
from pictx_fsm.extensions.context_management.events import CompactionStarting, GenerationReplied
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.notes import NOTES_BUDGET, kind_change_refused
from pictx_fsm.extensions.context_management.policy import (
    AUTO_FORECAST_FLOOR,
    AUTO_FORECAST_TARGET,
    AUTO_THRESHOLD,
    BG_FAILURE_COOLDOWN_MS,
    BG_MAX_TRIES,
    BG_SUCCESS_COOLDOWN_MS,
)
from pictx_fsm.extensions.context_management.sizes import json_text_bytes
from pictx_fsm.extensions.context_management.sources import after, unsupported
from pictx_fsm.extensions.context_management.writes import parse_write, write_outcome

__all__ = [
    "AUTO_HANDOFF",
    "BACKGROUND",
    "CHECKPOINT",
    "HANDOFF",
    "NOTES_STORE",
    "Guard",
    "auto_enabled",
    "auto_flag_off",
    "auto_paused",
    "background_capacity_failure",
    "background_disabled",
    "background_due",
    "candidate_valid",
    "capacity_failure",
    "checkpoint_on_branch",
    "compaction_run",
    "cooling",
    "deadline_passed",
    "failure_announced",
    "fits_after_retirement",
    "fixed_input_over_budget",
    "forecast_reached",
    "fresh_handoff_target",
    "generated_notes",
    "handoff_possible",
    "input_pending",
    "job_still_current",
    "kind_change_allowed",
    "more_batches",
    "notes_on_branch",
    "nothing_to_generate",
    "package_too_large",
    "receipt_verified",
    "recheck_ok",
    "rechecked",
    "reopened_handoff_target",
    "repair_breaks_transition_rules",
    "repair_used",
    "response_aborted",
    "response_complete",
    "response_failed",
    "sources_in_scope",
    "start_aborted",
    "storage_failed",
    "switch_safe",
    "threshold_reached",
    "too_many_batches",
    "under_request_cap",
    "unsupported_content",
    "usage_known",
]

Guard = Callable[[CmFacts], bool]

# -- notes_store (M9–M15) ----------------------------------------------------------------------


def storage_failed(f: CmFacts) -> bool:
    """Q11: writes stop after a failed disk write until the session is reopened."""
    return f.state.storage_failed


def sources_in_scope(f: CmFacts) -> bool:
    """M9: cited ids are raw messages of this branch; explicit constraints cite a user."""
    write = parse_write(f.tool_arguments)
    return write is not None and write_outcome(f, write).sources_ok


def kind_change_allowed(f: CmFacts) -> bool:
    """M13: an existing constraint or failed attempt keeps its kind."""
    write = parse_write(f.tool_arguments)
    return write is not None and not kind_change_refused(
        f.state.branch.notes, write.key, write.kind
    )


def fits_after_retirement(f: CmFacts) -> bool:
    """M10–M11: the set fits its limits once resolved ordinary notes are retired."""
    write = parse_write(f.tool_arguments)
    return write is not None and write_outcome(f, write).fitted is not None


def generated_notes(f: CmFacts) -> bool:
    """The committed run produced at least one note."""
    return bool(f.generation.notes)


def checkpoint_on_branch(f: CmFacts) -> bool:
    """M36: a plugin checkpoint exists on the branch."""
    return f.memo_branch_memory().checkpoint_id is not None


def notes_on_branch(f: CmFacts) -> bool:
    return bool(f.memo_branch_memory().notes)


NOTES_STORE: Final[Mapping[str, Guard]] = {
    "storage_failed": storage_failed,
    "sources_in_scope": sources_in_scope,
    "kind_change_allowed": kind_change_allowed,
    "fits_after_retirement": fits_after_retirement,
    "generated_notes": generated_notes,
    "checkpoint_on_branch": checkpoint_on_branch,
    "notes_on_branch": notes_on_branch,
}

# -- checkpoint (M26–M35) ----------------------------------------------------------------------


def _reply(f: CmFacts) -> gen.GenerationReply | None:
    return f.event.reply if isinstance(f.event, GenerationReplied) else None


def start_aborted(f: CmFacts) -> bool:
    """M35: the compaction's abort signal had fired before generation began."""
    event = f.event
    return isinstance(event, CompactionStarting) and event.signal_aborted


def unsupported_content(f: CmFacts) -> bool:
    return f.generation.unsupported


def too_many_batches(f: CmFacts) -> bool:
    return gen.too_many_batches(f.generation)


def fixed_input_over_budget(f: CmFacts) -> bool:
    return f.generation.fixed_over


def nothing_to_generate(f: CmFacts) -> bool:
    """Q10: every archived source is covered already."""
    return not f.generation.batches


def deadline_passed(f: CmFacts) -> bool:
    return f.now >= f.generation.deadline


def response_aborted(f: CmFacts) -> bool:
    reply = _reply(f)
    return reply is not None and reply.kind == "aborted"


def response_failed(f: CmFacts) -> bool:
    reply = _reply(f)
    return reply is not None and reply.kind == "error"


def response_complete(f: CmFacts) -> bool:
    reply = _reply(f)
    return reply is not None and reply.kind == "ok"


def candidate_valid(f: CmFacts) -> bool:
    candidate = f.candidate()
    return candidate.code is None


def capacity_failure(f: CmFacts) -> bool:
    return f.candidate().code == NOTES_BUDGET


def more_batches(f: CmFacts) -> bool:
    return f.generation.more_batches


def under_request_cap(f: CmFacts) -> bool:
    run = f.generation
    return run.requests < run.cap


def repair_used(f: CmFacts) -> bool:
    return f.generation.repair_used


def repair_breaks_transition_rules(f: CmFacts) -> bool:
    reply = _reply(f)
    return reply is not None and gen.repair_breaks_rules(f.generation, reply.text)


def compaction_run(f: CmFacts) -> bool:
    return f.generation.kind == "compaction"


CHECKPOINT: Final[Mapping[str, Guard]] = {
    "start_aborted": start_aborted,
    "unsupported_content": unsupported_content,
    "too_many_batches": too_many_batches,
    "fixed_input_over_budget": fixed_input_over_budget,
    "nothing_to_generate": nothing_to_generate,
    "deadline_passed": deadline_passed,
    "response_aborted": response_aborted,
    "response_failed": response_failed,
    "response_complete": response_complete,
    "candidate_valid": candidate_valid,
    "capacity_failure": capacity_failure,
    "more_batches": more_batches,
    "under_request_cap": under_request_cap,
    "repair_used": repair_used,
    "repair_breaks_transition_rules": repair_breaks_transition_rules,
    "compaction_run": compaction_run,
}

# -- background_notes (M37–M43) ----------------------------------------------------------------


def background_disabled(f: CmFacts) -> bool:
    """M3, M37: the flag (or a child session) disables background notes only."""
    return f.state.flags.no_background or f.state.flags.child


def background_due(f: CmFacts) -> bool:
    """M38, invariant 2: every start condition, cheapest first."""
    state, now = f.state, f.now
    bg = state.background
    if state.generation is not None or state.handoff is not None or state.trigger is not None:
        return False
    if f.ctx.model is None or state.pending_bytes < f.budgets.background_threshold:
        return False
    if bg.last_success_at is not None and now - bg.last_success_at < BG_SUCCESS_COOLDOWN_MS:
        return False
    if bg.last_failure_at is not None and now - bg.last_failure_at < BG_FAILURE_COOLDOWN_MS:
        return False
    if state.branch.unreconciled_native is not None or not f.background_prefix:
        return False
    if any(unsupported(e) for e in after(f.branch, state.branch.notes_through)):
        return False
    key = f.background_key
    return key not in bg.blocked and bg.tries_of(key) < BG_MAX_TRIES


def job_still_current(f: CmFacts) -> bool:
    """M42: start leaf still an ancestor, same model, note state unchanged."""
    run = f.generation
    same_notes = run.note_state == f.state.branch.state_version
    return f.leaf_descends_from(run.start_leaf) and run.model == f.ctx.model and same_notes


def background_capacity_failure(f: CmFacts) -> bool:
    return f.generation.failure == NOTES_BUDGET


BACKGROUND: Final[Mapping[str, Guard]] = {
    "background_disabled": background_disabled,
    "background_due": background_due,
    "job_still_current": job_still_current,
    "capacity_failure": background_capacity_failure,
}

# -- auto_handoff (M52–M61) --------------------------------------------------------------------


def auto_flag_off(f: CmFacts) -> bool:
    return f.state.flags.no_auto_handoff or f.state.flags.child


def auto_enabled(f: CmFacts) -> bool:
    return f.state.auto.enabled


def auto_paused(f: CmFacts) -> bool:
    return f.state.auto.paused


def usage_known(f: CmFacts) -> bool:
    """M53: unknown tokens (right after a compaction) never trigger."""
    return f.ctx.tokens is not None and bool(f.ctx.context_window)


def input_pending(f: CmFacts) -> bool:
    return f.ctx.pending_input


def cooling(f: CmFacts) -> bool:
    """M56: before ``nextEligibleAt`` or 3 automatic handoffs in the rolling hour."""
    return f.cooling()


def threshold_reached(f: CmFacts) -> bool:
    """M54: tokens ≥ 80 % of the window (≥, Q4)."""
    tokens, window = f.ctx.tokens, f.ctx.context_window
    return tokens is not None and bool(window) and tokens >= AUTO_THRESHOLD * (window or 0)


def forecast_reached(f: CmFacts) -> bool:
    """M54–M55: from 65 %, a valid baseline projects ≥ 90 % after one more round."""
    growth = f.growth()
    tokens, window = f.ctx.tokens, f.ctx.context_window or 0
    if growth is None or tokens is None or tokens < AUTO_FORECAST_FLOOR * window:
        return False
    return tokens + growth >= AUTO_FORECAST_TARGET * window


def recheck_ok(f: CmFacts) -> bool:
    """M57: after waitForIdle nothing changed: usage, model, session, pending input."""
    return rechecked(f, cooling=f.cooling())


def rechecked(f: CmFacts, *, cooling: bool) -> bool:
    trigger = f.state.trigger
    if trigger is None or f.ctx.pending_input or cooling:
        return False
    auto = f.state.auto
    if not auto.enabled or auto.paused:
        return False
    same = (trigger.tokens, trigger.model, trigger.session_id, trigger.compactions) == (
        f.ctx.tokens,
        f.ctx.model,
        f.state.session_id,
        f.state.compactions,
    )
    return same and trigger.turns == f.state.turns and f.leaf_descends_from(trigger.leaf)


AUTO_HANDOFF: Final[Mapping[str, Guard]] = {
    "auto_flag_off": auto_flag_off,
    "auto_enabled": auto_enabled,
    "auto_paused": auto_paused,
    "usage_known": usage_known,
    "input_pending": input_pending,
    "cooling": cooling,
    "threshold_reached": threshold_reached,
    "forecast_reached": forecast_reached,
    "recheck_ok": recheck_ok,
}

# -- handoff (M45–M51) -------------------------------------------------------------------------


def handoff_possible(f: CmFacts) -> bool:
    """M45: a saved session and a model."""
    return f.ctx.session_file is not None and f.ctx.model is not None


def fresh_handoff_target(f: CmFacts) -> bool:
    return f.receipt is not None and not f.takeover_recorded()


def reopened_handoff_target(f: CmFacts) -> bool:
    return f.receipt is not None and f.takeover_recorded()


def package_too_large(f: CmFacts) -> bool:
    """M46 step 2, invariant 18: package and display text each ≤ HANDOFF_MAX_BYTES."""
    run = f.state.handoff
    limit = f.budgets.handoff_max_bytes
    if run is None:
        return True
    return json_text_bytes(run.package) > limit or js.utf8_length(run.display) > limit


def switch_safe(f: CmFacts) -> bool:
    """Invariant 17: no pending input, no turn, model/branch change or compaction since the
    handoff began."""
    run = f.state.handoff
    if run is None or f.ctx.pending_input or not f.ctx.idle:
        return False
    same = (run.model, run.compactions, run.turns) == (
        f.ctx.model,
        f.state.compactions,
        f.state.turns,
    )
    return same and f.leaf_descends_from(run.leaf)


def receipt_verified(f: CmFacts) -> bool:
    """M24, M46 step 6: this session is saved and the parent's captured branch is intact."""
    return f.ctx.session_file is not None and f.captured_parent() is not None


def failure_announced(f: CmFacts) -> bool:
    """M61: a manual handoff's failure, or an automatic one's storage failure (the new
    session file could not be created); other automatic failures show in the status only."""
    run = f.state.handoff
    return run is None or run.mode == "manual" or run.failure == CREATE_FAILED


HANDOFF: Final[Mapping[str, Guard]] = {
    "handoff_possible": handoff_possible,
    "fresh_handoff_target": fresh_handoff_target,
    "reopened_handoff_target": reopened_handoff_target,
    "package_too_large": package_too_large,
    "switch_safe": switch_safe,
    "failure_announced": failure_announced,
    "receipt_verified": receipt_verified,
}
