"""One generation run's data (M26–M31): the requests it sends, the replies it gets, and the
validation of each candidate (shape, boundary, capacity, repair transition rules).

The run's variables (spec §11.2: deadline, requests, cap, batch, batches, repairUsed) are a
frozen :class:`GenRun`; the checkpoint machine's guards read it and its actions return the
next one. Model calls leave as :class:`GenerationRequest` values and come back as
:class:`GenerationReply` values through the injected generator (see the runtime).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

from attrs import evolve, field, frozen

from pictx_fsm import js
from pictx_fsm.extensions.context_management.notes import (
    KINDS,
    NOTES_BUDGET,
    PROTECTED_KINDS,
    STATUSES,
    BudgetFailure,
    FileRecord,
    Fitted,
    Note,
    NoteSet,
    fit,
    note_from_json,
)
from pictx_fsm.extensions.context_management.policy import (
    BATCH_CAP,
    GEN_TIMEOUT_MS,
    Budgets,
    request_cap,
)
from pictx_fsm.extensions.context_management.sizes import json_bytes
from pictx_fsm.extensions.context_management.sources import Piece
from pictx_fsm.extensions.context_management.texts import GENERATION_POLICY_TEXT

__all__ = [
    "ABORTED",
    "BATCH_LIMIT",
    "BOUNDARY",
    "INCOMPLETE",
    "INPUT_BUDGET",
    "JSON",
    "REPAIR_TRANSITION",
    "REQUEST_FAILED",
    "SHAPE",
    "STORAGE_FAILED",
    "TIMEOUT",
    "UNSUPPORTED",
    "Candidate",
    "GenKind",
    "GenRun",
    "GenerationReply",
    "GenerationRequest",
    "ReplyKind",
    "add_usage",
    "next_batch",
    "open_run",
    "repair_breaks_rules",
    "repaired",
    "request_of",
    "too_many_batches",
    "validate",
]

JSON: TypeAlias = Any
GenKind: TypeAlias = Literal["compaction", "background", "handoff_manual", "handoff_auto"]
ReplyKind: TypeAlias = Literal["ok", "error", "incomplete", "aborted"]

SHAPE: Final = "invalid_checkpoint_shape"
BOUNDARY: Final = "invalid_checkpoint_boundary"
REPAIR_TRANSITION: Final = "invalid_checkpoint_repair_transition"
TIMEOUT: Final = "checkpoint_timeout"
BATCH_LIMIT: Final = "checkpoint_batch_limit"
INPUT_BUDGET: Final = "checkpoint_input_budget"
UNSUPPORTED: Final = "unsupported_context"
ABORTED: Final = "aborted"
INCOMPLETE: Final = "checkpoint_incomplete"
REQUEST_FAILED: Final = "checkpoint_request_failed"
STORAGE_FAILED: Final = "storage_failed"


@frozen(kw_only=True)
class GenerationRequest:
    """One model request of a run: the policy, the carried notes and one batch of sources."""

    job: int
    kind: str
    batch: int
    batches: int
    repair: bool
    notes: NoteSet
    pieces: tuple[Piece, ...]
    summary: str | None
    target_bytes: int
    feedback: BudgetFailure | None = None

    def payload(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "policy": GENERATION_POLICY_TEXT,
            "targetBytes": self.target_bytes,
            "batch": {"index": self.batch, "count": self.batches},
            "notes": self.notes.to_json(),
            "sources": [p.to_json() for p in self.pieces],
        }
        if self.summary is not None:
            out["summary"] = self.summary
        if self.feedback is not None:
            out["capacityFeedback"] = self.feedback.to_json()
        return out

    @property
    def size(self) -> int:
        return json_bytes(self.payload())

    @property
    def boundary(self) -> str | None:
        """The source id the reply must confirm (M31 ``invalid_checkpoint_boundary``)."""
        return self.pieces[-1].id if self.pieces else None


@frozen(kw_only=True)
class GenerationReply:
    """What the generator answered: the output text, its usage, and how long it took."""

    kind: ReplyKind
    text: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float = 0.0
    duration_ms: int = 0


@frozen(kw_only=True)
class Candidate:
    """A validated candidate, or the code and budget of its failure."""

    notes: NoteSet | None
    code: str | None = None
    budget: BudgetFailure | None = None


@frozen(kw_only=True)
class GenRun:
    """The variables of one generation run (spec §11.2)."""

    job: int
    kind: str
    started_at: int
    deadline: int
    cap: int
    start_leaf: str | None
    model: str | None
    note_state: int
    batches: tuple[tuple[Piece, ...], ...] = ()
    batch: int = 0
    requests: int = 0
    repair_used: bool = False
    notes: NoteSet = field(factory=NoteSet)
    """The validated notes carried into the next batch (M27)."""
    first: NoteSet | None = None
    """This batch's first candidate (M30 compares the repair with it)."""
    reply: GenerationReply | None = None
    summary: str | None = None
    unsupported: bool = False
    fixed_over: bool = False
    through: str | None = None
    """The last source the run covers (the new coverage position)."""
    archived_through: str | None = None
    first_kept: str | None = None
    files: FileRecord = field(factory=FileRecord)
    failure: str | None = None
    failure_budget: BudgetFailure | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    usage_unknown: int = 0
    counted: int = 0
    """Requests whose reply usage is summed already."""
    cost: float = 0.0
    key: str = ""
    """The background retry key (M43)."""

    @property
    def more_batches(self) -> bool:
        return self.batch < len(self.batches)

    @property
    def current(self) -> tuple[Piece, ...]:
        return self.batches[self.batch - 1] if 0 < self.batch <= len(self.batches) else ()


def open_run(
    *, job: int, kind: str, now: int, start_leaf: str | None, model: str | None, note_state: int
) -> GenRun:
    """M28: one deadline for the whole run, the cap of its path."""
    return GenRun(
        job=job,
        kind=kind,
        started_at=now,
        deadline=now + GEN_TIMEOUT_MS,
        cap=request_cap(kind),
        start_leaf=start_leaf,
        model=model,
        note_state=note_state,
    )


def too_many_batches(run: GenRun) -> bool:
    return len(run.batches) > min(BATCH_CAP, run.cap)


def next_batch(run: GenRun) -> GenRun:
    """The run after sending its next batch."""
    return evolve(run, batch=run.batch + 1, requests=run.requests + 1, first=None)


def repaired(run: GenRun, first: NoteSet) -> GenRun:
    """M29: the run after sending the one repair of its current batch."""
    return evolve(run, requests=run.requests + 1, repair_used=True, first=first)


def request_of(run: GenRun, budgets: Budgets, repair: BudgetFailure | None) -> GenerationRequest:
    return GenerationRequest(
        job=run.job,
        kind=run.kind,
        batch=run.batch,
        batches=len(run.batches),
        repair=repair is not None,
        notes=run.notes,
        pieces=run.current,
        summary=run.summary if run.batch == 1 else None,
        target_bytes=budgets.generation_target_bytes,
        feedback=repair,
    )


def add_usage(run: GenRun, reply: GenerationReply) -> GenRun:
    """M32/M70: usage is summed over every request; unknown usage is counted apart. The
    reply to one request is counted once however many actions read it."""
    if run.counted >= run.requests:
        return run
    if reply.input_tokens is None or reply.output_tokens is None:
        return evolve(run, reply=reply, counted=run.requests, usage_unknown=run.usage_unknown + 1)
    return evolve(
        run,
        reply=reply,
        counted=run.requests,
        input_tokens=run.input_tokens + reply.input_tokens,
        output_tokens=run.output_tokens + reply.output_tokens,
        cost=run.cost + reply.cost,
    )


# -- validation ---------------------------------------------------------------------------------


def _parse(text: str) -> tuple[list[Mapping[str, JSON]], str] | None:
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(obj, Mapping):
        return None
    notes, through = obj.get("notes"), obj.get("throughEntryId")
    if not isinstance(notes, list) or not isinstance(through, str):
        return None
    if not all(_note_shape(n) for n in notes):
        return None
    return notes, through


def _note_shape(obj: JSON) -> bool:
    if not isinstance(obj, Mapping):
        return False
    sources, key, text = obj.get("sources"), obj.get("key"), obj.get("text")
    return (
        isinstance(key, str)
        and bool(key)
        and obj.get("kind") in KINDS
        and obj.get("status", "active") in STATUSES
        and isinstance(text, str)
        and isinstance(sources, list)
        and bool(sources)
        and all(isinstance(s, str) for s in sources)
        # M8: whole characters only, as a tool write (writes.write_problem)
        and js.first_lone_surrogate(key) is None
        and js.first_lone_surrogate(text) is None
    )


def validate(
    run: GenRun, text: str, scope: frozenset[str], files: FileRecord, budgets: Budgets
) -> Candidate:
    """M31: shape (structure, known kinds, cited sources in scope, nothing protected lost
    or re-kinded), boundary (the batch's last source), then capacity after retirement."""
    parsed = _parse(text)
    if parsed is None:
        return Candidate(notes=None, code=SHAPE)
    items, through = parsed
    if through != _boundary(run):
        return Candidate(notes=None, code=BOUNDARY)
    cited = scope | {p.id for p in run.current}
    candidate = _as_set(items, run.notes)
    if not _keeps_protected(run.notes, candidate) or any(
        not set(n.sources) <= cited for n in candidate.notes
    ):
        return Candidate(notes=None, code=SHAPE)
    touched = [n.key for n in candidate.notes if run.notes.get(n.key) != n]
    fitted = fit(candidate, touched, files, budgets)
    if isinstance(fitted, Fitted):
        return Candidate(notes=fitted.notes)
    return Candidate(notes=candidate, code=NOTES_BUDGET, budget=fitted)


def _boundary(run: GenRun) -> str | None:
    return run.current[-1].id if run.current else None


def _as_set(items: Sequence[Mapping[str, JSON]], carried: NoteSet) -> NoteSet:
    out = NoteSet()
    for item in items:
        note = note_from_json(item)
        previous = carried.get(note.key)
        if previous is not None and _same(previous, note):
            note = previous
        elif previous is not None:
            note = evolve(note, revision=previous.revision + 1)
        out = out.put(note)
    return out


def _same(a: Note, b: Note) -> bool:
    return (a.kind, a.status, a.text, a.sources) == (b.kind, b.status, b.text, b.sources)


def _keeps_protected(carried: NoteSet, candidate: NoteSet) -> bool:
    """Constraints and failed attempts are never dropped or re-kinded (M10, M13)."""
    for note in carried.notes:
        if note.kind in PROTECTED_KINDS:
            kept = candidate.get(note.key)
            if kept is None or kept.kind != note.kind:
                return False
    return True


def repair_breaks_rules(run: GenRun, text: str) -> bool:
    """M30: against the carried notes and the batch's first candidate, the repair may not
    re-kind an active item or a protected kind, and may resolve a note only when the first
    candidate proposed it and the repair keeps its citations to this batch's sources."""
    parsed = _parse(text)
    first = run.first
    if parsed is None or first is None:
        return False  # shape is judged by validation
    batch_ids = {p.id for p in run.current}
    for item in parsed[0]:
        note = note_from_json(item)
        before = run.notes.get(note.key)
        proposed = first.get(note.key)
        kept_kind = before is not None and (
            before.status == "active" or before.kind in PROTECTED_KINDS
        )
        if kept_kind and before is not None and note.kind != before.kind:
            return True
        if note.status == "resolved" and (before is None or before.status != "resolved"):
            if proposed is None or proposed.status != "resolved":
                return True
            if not (set(proposed.sources) & batch_ids) <= set(note.sources):
                return True
    return False
