"""Spec §12 invariants 1–10 (background notes, generation runs, the note store, recall) and
the suite of all 21, checked after every action of a pi-context-management world.

Each invariant recomputes what it needs from the session files, the host's journal and the
effects a step asked for — never from the guard values the step itself computed — so a
wrong guard is caught, not confirmed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from attrs import field

from pictx_fsm.extensions.context_management.diaglog import check_record
from pictx_fsm.extensions.context_management.effects import CheckpointCompaction, RequestGeneration
from pictx_fsm.extensions.context_management.events import (
    CompactionStarting,
    ReplyEnded,
    ToolCalled,
    TurnEnded,
    TurnStarted,
)
from pictx_fsm.extensions.context_management.kit.checks import (
    JournalInvariant,
    branch_at,
    budgets,
    logs,
    snapshots,
    tool_payload,
)
from pictx_fsm.extensions.context_management.kit.world import StepRecord, World
from pictx_fsm.extensions.context_management.notes import (
    NOTES_BUDGET,
    PROTECTED_KINDS,
    FileRecord,
    NoteSet,
    checkpoint_bytes,
    note_bytes,
)
from pictx_fsm.extensions.context_management.policy import (
    BATCH_CAP,
    BG_FAILURE_COOLDOWN_MS,
    BG_MAX_TRIES,
    BG_SELECT_BYTES,
    BG_SUCCESS_COOLDOWN_MS,
    GEN_TIMEOUT_MS,
    NOTE_MAX_ITEMS,
    REPAIRS_PER_GENERATION,
    request_cap,
)
from pictx_fsm.extensions.context_management.records import (
    inherited_notes,
    read_branch,
    read_session,
)
from pictx_fsm.extensions.context_management.sources import (
    after,
    branch_sources,
    closed_prefix,
    pending_bytes,
)
from pictx_fsm.extensions.context_management.texts import (
    NOTES_TOOL,
    READ_TOOL,
    SEARCH_TOOL,
    STATUS_BATCH,
    STATUS_HANDOFF,
)
from pictx_fsm.session.entries import CompactionEntry, CustomMessageEntry, MessageEntry
from pictx_fsm.testing.invariants import Cursor, Violation, remembering

JSON: TypeAlias = Any


def _fired(record: StepRecord, prefix: str) -> bool:
    return any(t.startswith(prefix) for t in record.result.fired)


def _note_set(data: Mapping[str, JSON]) -> NoteSet:
    from pictx_fsm.extensions.context_management.records import _note_set

    return _note_set(data.get("notes"))


class OneBackgroundJob(JournalInvariant):
    """§12.1: at most one job; a job starts only at a reply end."""

    name, rule = "one_background_job", "§12.1 M5 M38"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        if not _fired(record, "background_notes:background_notes:idle:reply_end:1"):
            return []
        if not isinstance(record.event, ReplyEnded):
            return [self.violation("a background job started outside a reply end", record)]
        if record.before.generation is not None:
            return [self.violation("a background job started beside another run", record)]
        return []


@remembering
class BackgroundStartGuard(JournalInvariant):
    """§12.2: threshold, both 60 s cooldowns, tries per key, no capacity-blocked key, no
    unreconciled native summary — recomputed from the branch and the job outcomes."""

    name, rule = "background_start_guard", "§12.2 M38 M43"

    success: dict[int, int] = field(init=False, factory=dict)
    failure: dict[int, int] = field(init=False, factory=dict)
    tries: dict[tuple[int, tuple[str, ...]], int] = field(init=False, factory=dict)
    blocked: set[tuple[int, tuple[str, ...]]] = field(init=False, factory=set)
    keys: dict[tuple[int, str], tuple[str, ...]] = field(init=False, factory=dict)

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        found = (
            self._judge_start(record)
            if _fired(record, "background_notes:background_notes:idle:reply_end:1")
            else []
        )
        self._learn(record)
        return found

    def _key(self, record: StepRecord) -> tuple[str, ...]:
        branch = branch_at(record)
        prefix = closed_prefix(
            branch_sources(after(branch, record.before.branch.notes_through)), BG_SELECT_BYTES
        )
        ends = (prefix[0].id, prefix[-1].id) if prefix else ("", "")
        return (*ends, str(record.before.branch.state_version), record.ctx.model or "")

    def _judge_start(self, record: StepRecord) -> list[Violation]:
        now, runtime = record.ctx.now, record.runtime
        branch = branch_at(record)
        problems = []
        fresh = pending_bytes(branch, record.before.branch.notes_through)
        if fresh < budgets(record).background_threshold:
            problems.append(f"only {fresh} bytes of new source")
        if runtime in self.success and now - self.success[runtime] < BG_SUCCESS_COOLDOWN_MS:
            problems.append(f"{now - self.success[runtime]} ms after the last success")
        if runtime in self.failure and now - self.failure[runtime] < BG_FAILURE_COOLDOWN_MS:
            problems.append(f"{now - self.failure[runtime]} ms after the last failure")
        key = (runtime, self._key(record))
        if self.tries.get(key, 0) >= BG_MAX_TRIES:
            problems.append("the retry key is exhausted")
        if key in self.blocked:
            problems.append("the retry key is capacity-blocked")
        if read_branch(branch).unreconciled_native is not None:
            problems.append("an unreconciled native summary is on the branch")
        self.tries[key] = self.tries.get(key, 0) + 1
        self.keys[(runtime, str(record.after.next_job - 1))] = key[1]
        if not problems:
            return []
        return [self.violation(f"a background job started although {'; '.join(problems)}", record)]

    def _learn(self, record: StepRecord) -> None:
        for data in snapshots(record):
            if data.get("origin") == "background":
                self.success[record.runtime] = record.ctx.now
        for end in logs(record, "operation_end"):
            if end.get("type") != "background" or end.get("result") in ("ok", "aborted"):
                continue
            self.failure[record.runtime] = record.ctx.now
            job = str(end.get("id", "")).rsplit(":", 1)[-1]
            key = self.keys.get((record.runtime, job))
            if key is not None and end.get("result") == NOTES_BUDGET:
                self.blocked.add((record.runtime, key))


class BackgroundCommitCurrent(JournalInvariant):
    """§12.3: a background commit only from a job still current (M42)."""

    name, rule = "background_commit_current", "§12.3 M42"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        if not any(d.get("origin") == "background" for d in snapshots(record)):
            return []
        run = record.before.generation
        if run is None:
            return [self.violation("a background commit without a job", record)]
        ids = {e.id for e in branch_at(record)}
        problems = []
        if run.start_leaf is not None and run.start_leaf not in ids:
            problems.append("its start leaf left the branch")
        if run.model != record.ctx.model:
            problems.append("the model changed")
        if run.note_state != record.before.branch.state_version:
            problems.append("the note state changed")
        return (
            [self.violation(f"background commit although {', '.join(problems)}", record)]
            if problems
            else []
        )


@remembering
class GenerationBounds(JournalInvariant):
    """§12.4: requests ≤ cap, ≤ 300 s, ≤ 16 batches, ≤ 1 repair, at most one commit."""

    name, rule = "generation_bounds", "§12.4 M28 M29 M32"

    requests: dict[tuple[int, int], list[Any]] = field(init=False, factory=dict)
    started: dict[str, int] = field(init=False, factory=dict)
    commits: dict[tuple[int, int], int] = field(init=False, factory=dict)

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        found: list[Violation] = []
        for effect in record.result.effects:
            if isinstance(effect, RequestGeneration):
                found.extend(self._request(record, effect.request))
        for start in logs(record, "operation_start"):
            if start.get("type") != "reply":  # a foreground reply is not a generation run
                self.started[str(start.get("id"))] = int(start.get("time", 0))
        for end in logs(record, "operation_end"):
            begun = self.started.get(str(end.get("id")))
            if begun is not None and int(end.get("time", 0)) - begun > GEN_TIMEOUT_MS:
                found.append(
                    self.violation(f"run {end.get('id')} ended after {int(end['time']) - begun} ms")
                )
        committed = [d for d in snapshots(record) if d.get("origin") != "tool"]
        if isinstance(record.result.value, CheckpointCompaction):
            committed.append({})
        run = record.before.generation or record.after.generation
        if committed and run is not None:
            key = (record.runtime, run.job)
            self.commits[key] = self.commits.get(key, 0) + len(committed)
            if (
                self.commits[key] > 1
                and run.kind != "handoff_manual"
                and run.kind != "handoff_auto"
            ):
                found.append(self.violation(f"run {run.job} committed {self.commits[key]} times"))
        return found

    def _request(self, record: StepRecord, request: Any) -> list[Violation]:
        key = (record.runtime, request.job)
        sent = self.requests.setdefault(key, [])
        sent.append(request)
        problems = []
        if len(sent) > request_cap(request.kind):
            problems.append(f"{len(sent)} requests (cap {request_cap(request.kind)})")
        if request.batches > BATCH_CAP:
            problems.append(f"{request.batches} batches")
        if sum(1 for r in sent if r.repair) > REPAIRS_PER_GENERATION:
            problems.append("a second repair")
        if not problems:
            return []
        return [self.violation(f"{request.kind} run {request.job}: {', '.join(problems)}", record)]


def _is_update(record: StepRecord) -> bool:
    event = record.event
    return (
        isinstance(event, ToolCalled)
        and event.name == NOTES_TOOL
        and event.arguments.get("action") == "update"
    )


class RefusedWriteUnchanged(JournalInvariant):
    """§12.5: every stored set within its limits; a refused write changes nothing."""

    name, rule = "refused_write_unchanged", "§12.5 M10 M14 M15"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        found: list[Violation] = []
        payload = tool_payload(record)
        refused = _is_update(record) and payload is not None and payload.get("ok") is not True
        changed = snapshots(record) or record.after.branch.notes != record.before.branch.notes
        if refused and changed and payload is not None:
            message = f"a refused write ({payload.get('error')}) changed the notes"
            found.append(self.violation(message, record))
        limits = budgets(record)
        for data in snapshots(record):
            notes = _note_set(data)
            if len(notes) > NOTE_MAX_ITEMS or note_bytes(notes) > limits.note_max_bytes:
                found.append(
                    self.violation(
                        f"a stored note set of {len(notes)} items, {note_bytes(notes)} bytes",
                        record,
                    )
                )
            elif checkpoint_bytes(notes, record.before.branch.files) > limits.checkpoint_max_bytes:
                found.append(
                    self.violation(
                        f"a stored checkpoint over {limits.checkpoint_max_bytes} bytes", record
                    )
                )
        return found


class RetirementBounded(JournalInvariant):
    """§12.6: retirement removes only resolved ordinary notes, never the written one; a
    protected key never changes kind."""

    name, rule = "retirement_bounded", "§12.6 M11 M13"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        found: list[Violation] = []
        before = record.before.branch.notes
        written = record.event.arguments.get("key") if _is_update(record) else None  # type: ignore[union-attr]
        for data in snapshots(record):
            after_set = _note_set(data)
            for note in before.notes:
                kept = after_set.get(note.key)
                if kept is None and (not note.retirable or note.key == written):
                    found.append(
                        self.violation(
                            f"note {note.key!r} ({note.kind}, {note.status}) left the set", record
                        )
                    )
                if kept is not None and note.kind in PROTECTED_KINDS and kept.kind != note.kind:
                    found.append(
                        self.violation(f"protected note {note.key!r} became {kept.kind}", record)
                    )
        return found


class CitedSources(JournalInvariant):
    """§12.7: new or changed notes cite messages of the branch; explicit constraints cite a
    user message; inherited notes are inferred."""

    name, rule = "cited_sources", "§12.7 M9"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        roles = _roles(branch_at(record))
        before = record.before.branch.notes
        found: list[Violation] = []
        for data in snapshots(record):
            for note in _note_set(data).notes:
                old = before.get(note.key)
                if old is not None and old.sources == note.sources:
                    continue
                missing = [s for s in note.sources if s not in roles]
                if missing:
                    found.append(
                        self.violation(
                            f"note {note.key!r} cites {missing} outside the branch", record
                        )
                    )
                elif (
                    note.kind == "constraint"
                    and not note.inferred
                    and "user" not in {roles[s] for s in note.sources}
                ):
                    found.append(
                        self.violation(
                            f"explicit constraint {note.key!r} cites no user message", record
                        )
                    )
        receipt = read_session(record.tree.entries).receipt
        if receipt is not None and any(
            not n.inferred for n in inherited_notes(receipt.package).notes
        ):
            found.append(self.violation("an inherited note is not inferred"))
        return found


def _roles(branch: Sequence[Any]) -> dict[str, str]:
    roles: dict[str, str] = {}
    for entry in branch:
        if isinstance(entry, MessageEntry):
            roles[entry.id] = entry.message.role
        elif isinstance(entry, CustomMessageEntry):
            roles[entry.id] = "custom"
        elif isinstance(entry, CompactionEntry):
            roles[entry.id] = "summary"
    return roles


class CoverageMonotonic(JournalInvariant):
    """§12.8: ``notesThroughEntryId`` never moves on a tool write, only forward otherwise."""

    name, rule = "coverage_monotonic", "§12.8 M16 M33"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        old = record.before.branch.notes_through
        order = {e.id: i for i, e in enumerate(branch_at(record))}
        found: list[Violation] = []
        for data in snapshots(record):
            new = data.get("notesThroughEntryId")
            if data.get("origin") == "tool" and new != old:
                found.append(
                    self.violation(f"a context_notes write moved coverage {old} → {new}", record)
                )
            elif old is not None and old in order and order.get(new, -1) < order[old]:
                found.append(self.violation(f"coverage moved back {old} → {new}", record))
        return found


class CheckpointStateDerived(JournalInvariant):
    """§12.9: ``checkpointState`` and the notes equal the replay of the branch (M15, M36)."""

    name, rule = "checkpoint_state_derived", "§12.9 M15 M36"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        receipt = read_session(record.tree.entries).receipt
        inherited = inherited_notes(receipt.package) if receipt is not None else NoteSet()
        memory = read_branch(branch_at(record), inherited)
        notes = memory.notes
        for data in snapshots(record):
            notes = _note_set(data)
        derived = "ready" if memory.checkpoint_id else ("notes_only" if notes else "not_created")
        state = record.after.state_of("notes_store")
        found = []
        if state != derived:
            found.append(
                self.violation(f"checkpointState is {state}, the branch says {derived}", record)
            )
        if notes.to_json() != record.after.branch.notes.to_json():
            found.append(self.violation("the notes in memory differ from the branch's", record))
        return found


@remembering
class CompactionReusesNotes(JournalInvariant):
    """M26: a compaction sends the model only archived sources the notes do not cover yet
    (all of them with custom instructions) — coverage replayed from the branch."""

    name, rule = "compaction_reuses_notes", "M26"

    covered: dict[tuple[int, int], frozenset[str]] = field(init=False, factory=dict)

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        event = record.event
        opened = any(s.get("type") == "compaction" for s in logs(record, "operation_start"))
        if isinstance(event, CompactionStarting) and opened and not event.custom_instructions:
            branch = branch_at(record)
            through = read_branch(branch).notes_through
            ids = [e.id for e in branch if e.id is not None]
            upto = ids.index(through) + 1 if through in ids else 0
            self.covered[(record.runtime, record.after.next_job - 1)] = frozenset(ids[:upto])
        found = []
        for effect in record.result.effects:
            if not isinstance(effect, RequestGeneration) or effect.request.kind != "compaction":
                continue
            covered = self.covered.get((record.runtime, effect.request.job), frozenset())
            again = sorted({p.id for p in effect.request.pieces} & covered)
            if again:
                found.append(self.violation(f"a compaction sent covered sources {again}", record))
        return found


@remembering
class RecallQuota(JournalInvariant):
    """§12.10: recall bytes per assistant turn within ``RECALL_TURN_BYTES``; none with
    unknown usage."""

    name, rule = "recall_quota", "§12.10 M23"

    used: dict[int, int] = field(init=False, factory=dict)

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        if isinstance(record.event, TurnStarted):
            self.used[record.runtime] = 0
            return []
        event = record.event
        payload = tool_payload(record)
        if not isinstance(event, ToolCalled) or payload is None or "error" in payload:
            return []
        recall = event.name in (SEARCH_TOOL, READ_TOOL) or (
            event.name == NOTES_TOOL and event.arguments.get("action") == "read"
        )
        if not recall:
            return []
        from pictx_fsm.extensions.context_management.history import result_bytes

        total = self.used.get(record.runtime, 0) + result_bytes(payload)
        self.used[record.runtime] = total
        limit = budgets(record).recall_turn_bytes(record.ctx.tokens)
        if total > limit and record.ctx.context_window:
            return [self.violation(f"{total} recall bytes in one turn, limit {limit}", record)]
        return []


class LogBounded(JournalInvariant):
    """§12.21: log files ≤ 2 MiB, only ``.1``/``.2`` backups, whitelisted records only."""

    name, rule = "log_bounded", "§12.21 M66 M67"

    def check_world(self, world: World) -> list[Violation]:
        from pictx_fsm.extensions.context_management.diaglog import LOG_SUFFIX
        from pictx_fsm.extensions.context_management.policy import LOG_MAX_BYTES

        found: list[Violation] = []
        for path, data in world.extension.files.data.items():
            if LOG_SUFFIX not in path:
                continue
            tail = path.split(LOG_SUFFIX, 1)[1]
            if tail not in ("", ".1", ".2"):
                found.append(self.violation(f"unexpected log backup {path}"))
            if len(data) > LOG_MAX_BYTES:
                found.append(self.violation(f"{path} holds {len(data)} bytes"))
        return found

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        found = []
        for entry in logs(record):
            try:
                check_record(entry)
            except ValueError as error:
                found.append(self.violation(f"{error}", record))
        return found


@remembering
class AbortCancelsBackground(JournalInvariant):
    """M41: a background job running when the foreground run is aborted never commits."""

    name, rule = "abort_cancels_background", "M41"

    open: set[tuple[int, str]] = field(init=False, factory=set)
    aborted: set[tuple[int, str]] = field(init=False, factory=set)

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        runtime = record.runtime
        found = []
        for end in logs(record, "operation_end"):
            job = (runtime, str(end.get("id")))
            if job in self.aborted and end.get("result") == "ok":
                found.append(self.violation(f"job {job[1]} committed after an abort", record))
            self.open.discard(job)
        for start in logs(record, "operation_start"):
            if start.get("type") == "background":
                self.open.add((runtime, str(start.get("id"))))
        if isinstance(record.event, TurnEnded) and record.event.aborted:
            self.aborted |= {job for job in self.open if job[0] == runtime}
        return found


class OperationTrigger(JournalInvariant):
    """M65: every operation the extension starts records its trigger — mode, reason, usage
    and forecast as enums and numbers (``null`` when unknown)."""

    name, rule = "operation_trigger", "M65"
    NUMBERS = ("tokens", "contextWindow", "growthTokens", "projectedTokens")

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        found = []
        for start in logs(record, "operation_start"):
            if start.get("type") == "reply":
                continue
            trigger = start.get("trigger")
            ok = (
                isinstance(trigger, Mapping)
                and set(trigger) == {"mode", "reason", *self.NUMBERS}
                and trigger["mode"] in ("manual", "automatic")
                and trigger["reason"] in ("manual", "threshold", "forecast")
                and all(trigger[k] is None or type(trigger[k]) is int for k in self.NUMBERS)
            )
            if not ok:
                found.append(self.violation(f"operation_start trigger {trigger!r}", record))
        return found


class StatusAtRest(JournalInvariant):
    """M4: the status bar shows a batch or a handoff phase only while one runs in the
    current instance; once it ended (committed, failed, switched away) the bar is at rest."""

    name, rule = "status_at_rest", "M4"
    PHASES = (STATUS_BATCH.split("{")[0], STATUS_HANDOFF.split("{")[0])

    def check_world(self, world: World) -> list[Violation]:
        shown = world.extension.status
        if not world.runtimes or not shown.startswith(self.PHASES):
            return []
        state = world.runtimes[-1].state
        run = state.generation
        if (run is not None and run.kind != "background") or state.state_of("handoff") != "idle":
            return []
        return [self.violation(f"the status bar still shows {shown!r} with nothing running")]


@remembering
class NoExtensionErrors(JournalInvariant):
    """The extension never throws into the host."""

    name, rule = "no_extension_errors", "pi-host §3"
    cursors = frozenset({"_seen", "_errors"})

    _errors: Cursor = field(init=False, factory=Cursor)

    def check_world(self, world: World) -> list[Violation]:
        return [
            self.violation(f"{e.event}: {e.error}")
            for e in self._errors.fresh(world.session.log.errors)
            if e.extension == world.extension.name
        ]


NOTES_INVARIANTS: tuple[type[JournalInvariant], ...] = (
    OneBackgroundJob,
    BackgroundStartGuard,
    BackgroundCommitCurrent,
    GenerationBounds,
    RefusedWriteUnchanged,
    RetirementBounded,
    CitedSources,
    CoverageMonotonic,
    CheckpointStateDerived,
    CompactionReusesNotes,
    RecallQuota,
    LogBounded,
    AbortCancelsBackground,
    OperationTrigger,
    StatusAtRest,
    NoExtensionErrors,
)
__all__ = ["NOTES_INVARIANTS", "FileRecord"]
