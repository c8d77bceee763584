"""Actions of ``checkpoint`` (M25–M36): assemble a run, send batches, judge replies, commit
or fail — and tell the run's owner (compaction hook, background job or handoff)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from attrs import evolve

from pictx_fsm import js
from pictx_fsm.extensions.context_management import generation as gen
from pictx_fsm.extensions.context_management.act_notes import Action, log, op_id
from pictx_fsm.extensions.context_management.effects import (
    AbortGeneration,
    Answer,
    CheckpointCompaction,
    Emit,
    Intent,
    Raise,
    RequestGeneration,
    update,
)
from pictx_fsm.extensions.context_management.events import CompactionStarting, GenerationReplied
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.generation import GenRun
from pictx_fsm.extensions.context_management.notes import BudgetFailure, NoteSet
from pictx_fsm.extensions.context_management.policy import GEN_TIMEOUT_MS
from pictx_fsm.extensions.context_management.records import (
    EVENT_TYPE,
    Failure,
    checkpoint_details,
    event_data,
)
from pictx_fsm.extensions.context_management.sources import (
    Source,
    after,
    batches,
    branch_sources,
    unsupported,
)
from pictx_fsm.extensions.context_management.texts import GENERATION_POLICY_TEXT, NOTICE_FALLBACK
from pictx_fsm.host.effects import AppendEntry, CancelResult, Notify
from pictx_fsm.session.entries import CompactionEntry, Entry

__all__ = [
    "GENERATION_ACTIONS",
    "MIN_BATCH_BYTES",
    "cancel_generation",
    "carry_and_commit",
    "carry_and_request",
    "close_generation",
    "commit_generation",
    "fail_batch_limit",
    "fail_incomplete",
    "fail_input_budget",
    "fail_repair_transition",
    "fail_request",
    "fail_request_cap",
    "fail_storage",
    "fail_timeout",
    "fail_unsupported",
    "fail_validation",
    "open_generation",
    "record_native_fallback",
    "request_batch",
    "request_repair",
    "validate_reply",
]

MIN_BATCH_BYTES: Final = 1024
"""Below this much room for sources a batch is not worth sending (M34 input budget)."""


# -- assembling ---------------------------------------------------------------------------------


def _archived(f: CmFacts, first_kept: str | None) -> Sequence[Entry]:
    branch = f.branch
    if first_kept is None:
        return branch
    for index, entry in enumerate(branch):
        if entry.id == first_kept:
            return branch[:index]
    return branch


def _native_summary(f: CmFacts) -> str | None:
    native = f.state.branch.unreconciled_native
    for entry in f.branch:
        if isinstance(entry, CompactionEntry) and entry.id == native:
            return entry.summary
    return None


def _range(f: CmFacts, kind: str) -> tuple[Sequence[Entry], list[Source], str | None]:
    """The entries a run reads, its sources and its new coverage position."""
    through = f.state.branch.notes_through
    if kind == "compaction":
        event = f.event
        assert isinstance(event, CompactionStarting)
        archived = _archived(f, event.first_kept)
        # M26: only what the notes do not cover yet — nothing when they cover past Pi's kept
        # boundary (background notes run ahead of compaction); custom instructions redo all.
        uncovered = len(f.branch) - len(after(f.branch, through))
        scope = archived if event.custom_instructions else archived[uncovered:]
        last = archived[-1].id if archived else through
        return scope, branch_sources(scope), last
    if kind == "background":
        prefix = f.background_prefix
        return (), prefix, prefix[-1].id if prefix else through
    scope = after(f.branch, through)
    sources = branch_sources(scope)
    return scope, sources, sources[-1].id if sources else through


def open_generation(f: CmFacts) -> tuple[Intent, ...]:
    """M26–M28: snapshot the notes, set deadline and cap, cut the batches."""
    kind = f.state.gen_owner or "compaction"
    scope, sources, through = _range(f, kind)
    budgets = f.budgets
    summary = _native_summary(f) if kind == "compaction" else None
    fixed = js.utf8_length(GENERATION_POLICY_TEXT) + budgets.note_max_bytes
    fixed += js.utf8_length(summary or "")
    room = budgets.batch_bytes - fixed
    run = gen.open_run(
        job=f.state.next_job,
        kind=kind,
        now=f.now,
        start_leaf=f.services.tree.leaf_id,
        model=f.ctx.model,
        note_state=f.state.branch.state_version,
    )
    event = f.event
    run = evolve(
        run,
        notes=f.state.branch.notes,
        batches=tuple(batches(sources, room)) if room >= MIN_BATCH_BYTES else (),
        summary=summary,
        unsupported=any(unsupported(e) for e in scope),
        fixed_over=room < MIN_BATCH_BYTES,
        through=through,
        archived_through=through if kind == "compaction" else f.state.branch.through,
        first_kept=event.first_kept if isinstance(event, CompactionStarting) else None,
        files=event.files if isinstance(event, CompactionStarting) else f.state.branch.files,
        key=f.background_key if kind == "background" else "",
    )
    return (
        update(generation=run, gen_owner=None, next_job=run.job + 1),
        log(
            "operation_start",
            id=op_id(f, run.job),
            type=kind,
            model=f.ctx.model,
            time=f.now,
            generationTimeoutMs=GEN_TIMEOUT_MS,
            batches=len(run.batches),
            trigger=_trigger(f, kind),
        ),
        Raise(machine="checkpoint", event="input_ready"),
    )


def _trigger(f: CmFacts, kind: str) -> dict[str, object]:
    """M65: why the run started — an automatic handoff's trigger observation, a background
    job's source threshold, Pi's compaction reason, or the user's command; the usage then
    (``null`` when unknown). Pi's ``threshold`` and ``overflow`` compactions are both
    ``threshold``: the window, not the user, started them."""
    tokens, window = f.ctx.tokens, f.ctx.context_window
    growth = projected = None
    trigger, event = f.state.trigger, f.event
    if kind == "handoff_auto" and trigger is not None:
        mode, reason = "automatic", trigger.reason
        tokens, window = trigger.tokens, trigger.context_window
        growth, projected = trigger.growth, trigger.projected
    elif kind == "background" or (
        kind == "compaction" and isinstance(event, CompactionStarting) and event.reason != "manual"
    ):
        mode, reason = "automatic", "threshold"
    else:
        mode, reason = "manual", "manual"
    return {
        "mode": mode,
        "reason": reason,
        "tokens": tokens,
        "contextWindow": window,
        "growthTokens": growth,
        "projectedTokens": projected,
    }


# -- requests and replies -----------------------------------------------------------------------


def _send(f: CmFacts, run: GenRun, repair: BudgetFailure | None = None) -> tuple[Intent, ...]:
    request = gen.request_of(run, f.budgets, repair)
    return (update(generation=run), Emit(effect=RequestGeneration(request=request)))


def request_batch(f: CmFacts) -> tuple[Intent, ...]:
    return _send(f, gen.next_batch(f.generation))


def _with_reply(f: CmFacts) -> GenRun:
    run = f.generation
    event = f.event
    return gen.add_usage(run, event.reply) if isinstance(event, GenerationReplied) else run


def carry_and_request(f: CmFacts) -> tuple[Intent, ...]:
    """M27: the next batch carries this batch's validated notes."""
    notes = f.candidate().notes
    assert notes is not None
    return _send(f, gen.next_batch(evolve(_with_reply(f), notes=notes)))


def request_repair(f: CmFacts) -> tuple[Intent, ...]:
    """M29: one regeneration of the same batch with the actual values and limits."""
    candidate = f.candidate()
    first = candidate.notes or NoteSet()
    return _send(f, gen.repaired(_with_reply(f), first), candidate.budget)


# -- outcomes -----------------------------------------------------------------------------------


def _end(f: CmFacts, run: GenRun, result: str) -> Intent:
    usage = None
    if run.requests and run.usage_unknown < run.requests:
        usage = {"input": run.input_tokens, "output": run.output_tokens}
    fields = {
        "id": op_id(f, run.job),
        "type": run.kind,
        "model": run.model,
        "time": f.now,
        "durationMs": f.now - run.started_at,
        "result": result,
        "usage": usage,
        "cost": run.cost,
        "requests": run.requests,
    }
    if run.failure_budget is not None:
        fields["budget"] = run.failure_budget.to_json()
    return log("operation_end", **fields)


def _checkpoint(f: CmFacts, run: GenRun) -> CheckpointCompaction:
    branch = f.state.branch
    notes_through = _later(f.branch, branch.notes_through, run.through)
    details = checkpoint_details(
        run.notes,
        through=run.archived_through,
        notes_through=notes_through,
        state=branch.state_version + 1,
        files=run.files,
    )
    summary = "\n".join(f"- [{n.kind}/{n.status}] {n.key}: {n.text}" for n in run.notes.notes)
    assert run.first_kept is not None
    return CheckpointCompaction(
        summary=summary or "(no notes)", first_kept_entry_id=run.first_kept, details=details
    )


def _later(branch: Sequence[Entry], a: str | None, b: str | None) -> str | None:
    """M33: coverage never moves back on a branch."""
    order = {e.id: i for i, e in enumerate(branch)}
    if a is None or b is None:
        return b or a
    return a if order.get(a, -1) > order.get(b, -1) else b


def _commit(f: CmFacts, run: GenRun) -> tuple[Intent, ...]:
    owner: list[Intent] = []
    if run.kind == "compaction":
        owner.append(Answer(value=_checkpoint(f, run)))
    elif run.kind == "background":
        owner.append(Raise(machine="background_notes", event="succeeded"))
    else:
        owner.append(Raise(machine="handoff", event="notes_ready"))
    return (
        update(generation=run),
        _end(f, run, "ok"),
        *owner,
        Raise(machine="checkpoint", event="settle"),
    )


def commit_generation(f: CmFacts) -> tuple[Intent, ...]:
    """M32 (and Q10 with no request): the run's notes go to their owner."""
    return _commit(f, _with_reply(f))


def carry_and_commit(f: CmFacts) -> tuple[Intent, ...]:
    notes = f.candidate().notes
    assert notes is not None
    return _commit(f, evolve(_with_reply(f), notes=notes))


def _fail(
    f: CmFacts, code: str, budget: BudgetFailure | None = None, *, native: bool = False
) -> tuple[Intent, ...]:
    """Nothing is saved (M28, M29, M32); the owner hears of it."""
    run = evolve(_with_reply(f), failure=code, failure_budget=budget)
    intents: list[Intent] = [update(generation=run), _end(f, run, code)]
    if run.kind == "background":
        intents.append(Raise(machine="background_notes", event="failed"))
    elif run.kind != "compaction":
        intents.append(Raise(machine="handoff", event="generation_failed"))
    elif native:
        intents.extend(_native_fallback(f, run))
    intents.append(Raise(machine="checkpoint", event="settle"))
    return tuple(intents)


def _native_fallback(f: CmFacts, run: GenRun) -> tuple[Intent, ...]:
    """M34, M36, M64: Pi's default compaction, a warning, ``failedAttempts + 1`` on the
    branch, one ``native_compaction`` summary record."""
    code = run.failure or gen.SHAPE
    budget = run.failure_budget
    failure = Failure(
        code=code, time=f.now, budget=None if budget is None else tuple(budget.to_json().items())
    )
    data = event_data(
        "checkpoint_failed", code, f.now, None if budget is None else budget.to_json()
    )
    memory = evolve(
        f.state.branch, failed_attempts=f.state.branch.failed_attempts + 1, last_failure=failure
    )
    return (
        Answer(value=None),
        Emit(effect=Notify(message=NOTICE_FALLBACK.format(code=code), level="warning")),
        Emit(effect=AppendEntry(custom_type=EVENT_TYPE, data=data)),
        update(branch=memory, last_failure=failure),
        log("native_compaction", id=op_id(f, run.job), time=f.now, result=code),
    )


def fail_unsupported(f: CmFacts) -> tuple[Intent, ...]:
    return _fail(f, gen.UNSUPPORTED, native=True)


def fail_batch_limit(f: CmFacts) -> tuple[Intent, ...]:
    return _fail(f, gen.BATCH_LIMIT, native=True)


def fail_input_budget(f: CmFacts) -> tuple[Intent, ...]:
    return _fail(f, gen.INPUT_BUDGET, native=True)


def fail_timeout(f: CmFacts) -> tuple[Intent, ...]:
    """M28: the internal timeout is ``checkpoint_timeout``, never ``aborted``."""
    return (Emit(effect=AbortGeneration(job=f.generation.job)), *_fail(f, gen.TIMEOUT))


def fail_request(f: CmFacts) -> tuple[Intent, ...]:
    return _fail(f, gen.REQUEST_FAILED)


def fail_incomplete(f: CmFacts) -> tuple[Intent, ...]:
    return _fail(f, gen.INCOMPLETE)


def fail_validation(f: CmFacts) -> tuple[Intent, ...]:
    candidate = f.candidate()
    return _fail(f, candidate.code or gen.SHAPE, candidate.budget)


def fail_repair_transition(f: CmFacts) -> tuple[Intent, ...]:
    return _fail(f, gen.REPAIR_TRANSITION)


def fail_request_cap(f: CmFacts) -> tuple[Intent, ...]:
    return _fail(f, gen.BATCH_LIMIT)


def fail_storage(f: CmFacts) -> tuple[Intent, ...]:
    return _fail(f, gen.STORAGE_FAILED)


def cancel_generation(f: CmFacts) -> tuple[Intent, ...]:
    """M35: abort or branch switch: nothing saved; a compaction is cancelled, no fallback."""
    run = evolve(_with_reply(f), failure=gen.ABORTED)
    intents: list[Intent] = [
        Emit(effect=AbortGeneration(job=run.job)),
        update(generation=run),
        _end(f, run, gen.ABORTED),
    ]
    if run.kind == "compaction":
        intents.append(Answer(value=CancelResult()))
    elif run.kind == "background":
        intents.append(Raise(machine="background_notes", event="cancel"))
    else:
        intents.append(Raise(machine="handoff", event="generation_failed"))
    intents.append(Raise(machine="checkpoint", event="settle"))
    return tuple(intents)


def record_native_fallback(f: CmFacts) -> tuple[Intent, ...]:
    return (*_native_fallback(f, f.generation), Raise(machine="checkpoint", event="settle"))


def close_generation(f: CmFacts) -> tuple[Intent, ...]:
    return (update(generation=None),)


_ACTIONS: Final[Mapping[str, Action]] = {
    "open_generation": open_generation,
    "fail_unsupported": fail_unsupported,
    "fail_batch_limit": fail_batch_limit,
    "fail_input_budget": fail_input_budget,
    "commit_generation": commit_generation,
    "request_batch": request_batch,
    "fail_timeout": fail_timeout,
    "fail_request": fail_request,
    "fail_incomplete": fail_incomplete,
    "cancel_generation": cancel_generation,
    "fail_storage": fail_storage,
    "carry_and_request": carry_and_request,
    "fail_request_cap": fail_request_cap,
    "carry_and_commit": carry_and_commit,
    "request_repair": request_repair,
    "fail_validation": fail_validation,
    "fail_repair_transition": fail_repair_transition,
    "close_generation": close_generation,
    "record_native_fallback": record_native_fallback,
}


def validate_reply(f: CmFacts) -> tuple[Intent, ...]:
    """A complete reply is judged at once (M31)."""
    return (update(generation=_with_reply(f)), Raise(machine="checkpoint", event="check"))


GENERATION_ACTIONS: Final[Mapping[str, Action]] = {**_ACTIONS, "validate_reply": validate_reply}
