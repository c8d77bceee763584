"""What this extension persists in the session (M7, M15, Q1) and how it is read back.

The package's own schemas are undocumented (Q1); these are this implementation's, all
``version: 2`` (M7), each a ``custom`` entry except the checkpoint, which lives in the
``details`` of the compaction entry it answers (``fromHook: true``, M32):

- ``context-memory/notes``: a snapshot of the whole current note set after an accepted
  write or background commit, with the coverage position and the note-state version;
- ``details.contextMemory`` of a compaction: the checkpoint (notes + both positions);
- ``context-memory/event``: a generation failure or native fallback (``failedAttempts``,
  ``lastFailure``, M36) — codes and numbers only;
- ``context-memory/auto``: the automatic-handoff setting and counters (M52, M58, M60);
- ``context-memory/handoff`` (source) and ``context-memory/receipt`` (target): the package
  and its binding to the captured parent branch (M24, M47); ``context-memory/takeover``
  marks the takeover prompt as sent (M50).

Reading is a fold over the branch (notes, positions, failures are per branch) plus the
whole file for the session-wide settings (auto handoff, receipt, takeover): a reload
restores everything marked **P** in spec §11.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from attrs import evolve, field, frozen

from pictx_fsm.extensions.context_management.notes import FileRecord, Note, NoteSet, note_from_json
from pictx_fsm.extensions.context_management.policy import NOTE_STATE_VERSION
from pictx_fsm.extensions.context_management.sizes import digest
from pictx_fsm.session.entries import CompactionEntry, CustomEntry, Entry

__all__ = [
    "AUTO_TYPE",
    "CHECKPOINT_KEY",
    "EVENT_TYPE",
    "HANDOFF_TYPE",
    "JSON",
    "NOTES_TYPE",
    "OWN_TYPES",
    "RECEIPT_TYPE",
    "TAKEOVER_TYPE",
    "AutoSetting",
    "BranchMemory",
    "Failure",
    "Receipt",
    "SessionMemory",
    "auto_from_json",
    "branch_digest",
    "checkpoint_details",
    "event_data",
    "inherited_notes",
    "notes_data",
    "read_branch",
    "read_session",
    "receipt_from_json",
]

JSON: TypeAlias = Any
NOTES_TYPE: Final = "context-memory/notes"
EVENT_TYPE: Final = "context-memory/event"
AUTO_TYPE: Final = "context-memory/auto"
HANDOFF_TYPE: Final = "context-memory/handoff"
RECEIPT_TYPE: Final = "context-memory/receipt"
TAKEOVER_TYPE: Final = "context-memory/takeover"
CHECKPOINT_KEY: Final = "contextMemory"
OWN_TYPES: Final = frozenset(
    {NOTES_TYPE, EVENT_TYPE, AUTO_TYPE, HANDOFF_TYPE, RECEIPT_TYPE, TAKEOVER_TYPE}
)


def notes_data(
    notes: NoteSet, *, origin: str, through: str | None, state: int, retired: Sequence[str]
) -> dict[str, JSON]:
    return {
        "version": NOTE_STATE_VERSION,
        "origin": origin,
        "notes": notes.to_json(),
        "notesThroughEntryId": through,
        "stateVersion": state,
        "retired": list(retired),
    }


def checkpoint_details(
    notes: NoteSet, *, through: str | None, notes_through: str | None, state: int, files: FileRecord
) -> dict[str, JSON]:
    return {
        **files.to_json(),
        CHECKPOINT_KEY: {
            "version": NOTE_STATE_VERSION,
            "notes": notes.to_json(),
            "throughEntryId": through,
            "notesThroughEntryId": notes_through,
            "stateVersion": state,
        },
    }


def event_data(event: str, code: str, time: int, budget: Mapping[str, JSON] | None) -> JSON:
    out: dict[str, JSON] = {"version": NOTE_STATE_VERSION, "event": event, "code": code}
    out["time"] = time
    if budget is not None:
        out["budget"] = dict(budget)
    return out


@frozen(kw_only=True)
class AutoSetting:
    """The persisted automatic-handoff state (spec §11.4, all **P**)."""

    enabled: bool = True
    paused: bool = False
    attempts: tuple[int, ...] = ()
    next_eligible_at: int | None = None
    last_failure: tuple[str, int] | None = None

    def to_json(self) -> dict[str, JSON]:
        failure = self.last_failure
        return {
            "version": NOTE_STATE_VERSION,
            "enabled": self.enabled,
            "paused": self.paused,
            "attempts": list(self.attempts),
            "nextEligibleAt": self.next_eligible_at,
            "lastFailure": None if failure is None else {"code": failure[0], "time": failure[1]},
        }


def auto_from_json(data: Mapping[str, JSON]) -> AutoSetting:
    failure = data.get("lastFailure")
    attempts = data.get("attempts")
    return AutoSetting(
        enabled=bool(data.get("enabled", True)),
        paused=bool(data.get("paused", False)),
        attempts=tuple(int(a) for a in attempts) if isinstance(attempts, list) else (),
        next_eligible_at=_int_or_none(data.get("nextEligibleAt")),
        last_failure=(str(failure.get("code")), int(failure.get("time", 0)))
        if isinstance(failure, Mapping)
        else None,
    )


def _int_or_none(value: JSON) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def branch_digest(ids: Iterable[str]) -> str:
    """The pinned digest of a captured branch (M24's receipt binding, inferred)."""
    return digest("\n".join(ids))


@frozen(kw_only=True)
class Receipt:
    """A handoff target's binding to its direct parent (M24, M47)."""

    parent_session: str
    parent_file: str
    captured_leaf: str
    digest: str
    captured_at: int
    mode: str
    package: Mapping[str, JSON]
    display: str
    auto: AutoSetting

    def to_json(self) -> dict[str, JSON]:
        return {
            "version": NOTE_STATE_VERSION,
            "parentSession": self.parent_session,
            "parentFile": self.parent_file,
            "capturedLeafId": self.captured_leaf,
            "branchDigest": self.digest,
            "captureTime": self.captured_at,
            "mode": self.mode,
            "package": dict(self.package),
            "display": self.display,
            "auto": self.auto.to_json(),
        }


def receipt_from_json(data: Mapping[str, JSON]) -> Receipt | None:
    try:
        return Receipt(
            parent_session=str(data["parentSession"]),
            parent_file=str(data["parentFile"]),
            captured_leaf=str(data["capturedLeafId"]),
            digest=str(data["branchDigest"]),
            captured_at=int(data["captureTime"]),
            mode=str(data.get("mode", "manual")),
            package=dict(data.get("package") or {}),
            display=str(data.get("display", "")),
            auto=auto_from_json(data.get("auto") or {}),
        )
    except (KeyError, TypeError, ValueError):
        return None


def inherited_notes(package: Mapping[str, JSON]) -> NoteSet:
    """M9/M47: every note inherited through a handoff is inferred."""
    items = package.get("notes")
    notes = []
    for index, item in enumerate(items if isinstance(items, list) else []):
        if isinstance(item, Mapping) and "key" in item and "kind" in item:
            note = note_from_json(item, saved=index + 1)
            notes.append(Note(**{**_fields(note), "inferred": True}))
    return NoteSet(notes=tuple(notes))


def _fields(note: Note) -> dict[str, JSON]:
    return {
        "key": note.key,
        "kind": note.kind,
        "status": note.status,
        "text": note.text,
        "sources": note.sources,
        "inferred": note.inferred,
        "revision": note.revision,
        "saved": note.saved,
    }


def _note_set(items: JSON) -> NoteSet:
    if not isinstance(items, list):
        return NoteSet()
    return NoteSet(
        notes=tuple(
            note_from_json(item, saved=index + 1)
            for index, item in enumerate(items)
            if isinstance(item, Mapping) and "key" in item and "kind" in item
        )
    )


@frozen(kw_only=True)
class Failure:
    """``lastFailure`` (M36): code, time, and the budget numbers when a budget broke."""

    code: str
    time: int
    budget: tuple[tuple[str, JSON], ...] | None = None

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"code": self.code, "time": self.time}
        if self.budget is not None:
            out["budget"] = dict(self.budget)
        return out


@frozen(kw_only=True)
class BranchMemory:
    """Everything the branch says about notes (M15, M33, M36)."""

    notes: NoteSet = field(factory=NoteSet)
    state_version: int = 0
    notes_through: str | None = None
    through: str | None = None
    checkpoint_id: str | None = None
    files: FileRecord = field(factory=FileRecord)
    has_notes_entry: bool = False
    last_compaction_origin: str | None = None
    unreconciled_native: str | None = None
    """A foreign or native compaction newer than the notes' coverage (M38)."""
    failed_attempts: int = 0
    last_failure: Failure | None = None
    last_save_time: str | None = None
    handoff_saved: bool = False


def read_branch(branch: Sequence[Entry], inherited: NoteSet | None = None) -> BranchMemory:
    """Replay the branch, oldest first (M15): the last snapshot wins; a handoff target
    starts from its inherited notes."""
    start = inherited or NoteSet()
    memory = BranchMemory(notes=start, has_notes_entry=bool(start))
    for entry in branch:
        memory = _fold(memory, entry)
    return memory


def _fold(memory: BranchMemory, entry: Entry) -> BranchMemory:
    if isinstance(entry, CompactionEntry):
        return _fold_compaction(memory, entry)
    if not isinstance(entry, CustomEntry) or not isinstance(entry.data, Mapping):
        return memory
    data = entry.data
    if entry.custom_type == NOTES_TYPE:
        return _evolve(
            memory,
            notes=_note_set(data.get("notes")),
            state_version=int(data.get("stateVersion", memory.state_version + 1)),
            notes_through=data.get("notesThroughEntryId", memory.notes_through),
            has_notes_entry=True,
            last_save_time=entry.timestamp,
            unreconciled_native=memory.unreconciled_native
            if data.get("origin") == "tool"
            else None,
        )
    if entry.custom_type == EVENT_TYPE:
        return _fold_event(memory, data)
    if entry.custom_type == HANDOFF_TYPE:
        return _evolve(memory, handoff_saved=True)
    return memory


def _fold_event(memory: BranchMemory, data: Mapping[str, JSON]) -> BranchMemory:
    budget = data.get("budget")
    failure = Failure(
        code=str(data.get("code", "")),
        time=int(data.get("time", 0)),
        budget=tuple((str(k), v) for k, v in budget.items())
        if isinstance(budget, Mapping)
        else None,
    )
    failed = memory.failed_attempts + (data.get("event") == "checkpoint_failed")
    return _evolve(memory, failed_attempts=failed, last_failure=failure)


def _fold_compaction(memory: BranchMemory, entry: CompactionEntry) -> BranchMemory:
    details = entry.details if isinstance(entry.details, Mapping) else {}
    checkpoint = details.get(CHECKPOINT_KEY)
    if entry.from_hook is True and isinstance(checkpoint, Mapping):
        files = FileRecord(
            read=tuple(details.get("readFiles") or ()),
            modified=tuple(details.get("modifiedFiles") or ()),
        )
        return _evolve(
            memory,
            notes=_note_set(checkpoint.get("notes")),
            state_version=int(checkpoint.get("stateVersion", memory.state_version + 1)),
            notes_through=checkpoint.get("notesThroughEntryId"),
            through=checkpoint.get("throughEntryId"),
            checkpoint_id=entry.id,
            files=files,
            has_notes_entry=True,
            last_compaction_origin="plugin",
            unreconciled_native=None,
            last_save_time=entry.timestamp,
        )
    return _evolve(memory, last_compaction_origin="pi", unreconciled_native=entry.id)


def _evolve(memory: BranchMemory, **changes: JSON) -> BranchMemory:
    return evolve(memory, **changes)


@frozen(kw_only=True)
class SessionMemory:
    """The session-wide records (file order, any branch): auto setting, receipt, takeover."""

    auto: AutoSetting | None = None
    receipt: Receipt | None = None
    takeover_sent: bool = False


def read_session(entries: Iterable[Entry]) -> SessionMemory:
    auto: AutoSetting | None = None
    receipt: Receipt | None = None
    takeover = False
    for entry in entries:
        if not isinstance(entry, CustomEntry) or not isinstance(entry.data, Mapping):
            continue
        if entry.custom_type == AUTO_TYPE:
            auto = auto_from_json(entry.data)
        elif entry.custom_type == RECEIPT_TYPE and receipt is None:
            receipt = receipt_from_json(entry.data)
        elif entry.custom_type == TAKEOVER_TYPE:
            takeover = True
    return SessionMemory(auto=auto, receipt=receipt, takeover_sent=takeover)
