"""The notes model (M8–M14): a note, the current note set, its size and bounded retirement.

Everything here is a pure function of frozen values. A write is judged whole: it either
yields the next note set (possibly with resolved ordinary notes retired to make room) or a
refusal naming the budget it broke; the set it was given is never altered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

from attrs import evolve, frozen

from pictx_fsm.extensions.context_management.policy import NOTE_MAX_ITEMS, Budgets
from pictx_fsm.extensions.context_management.sizes import json_bytes

__all__ = [
    "JSON",
    "KINDS",
    "NOTES_BUDGET",
    "PROTECTED_KINDS",
    "STATUSES",
    "BudgetFailure",
    "BudgetType",
    "FileRecord",
    "Fitted",
    "Kind",
    "Note",
    "NoteSet",
    "Status",
    "checkpoint_bytes",
    "fit",
    "kind_change_refused",
    "note_bytes",
    "note_from_json",
    "over_budget",
    "updated",
]

JSON: TypeAlias = Any
Kind: TypeAlias = Literal["goal", "constraint", "decision", "failed_attempt", "open_item"]
Status: TypeAlias = Literal["active", "resolved"]
BudgetType: TypeAlias = Literal["note_bytes", "note_count", "file_tracking"]
NOTES_BUDGET: Final = "notes_budget"
"""M14, M29: the code of every capacity failure; the budget's ``type`` names the limit."""

KINDS: Final[tuple[str, ...]] = ("goal", "constraint", "decision", "failed_attempt", "open_item")
"""M8's kinds, spelled as this implementation writes them (Q2); pending approvals are
``open_item`` notes."""
STATUSES: Final[tuple[str, ...]] = ("active", "resolved")
PROTECTED_KINDS: Final[frozenset[str]] = frozenset({"constraint", "failed_attempt"})
"""M11/M13: never retired, never re-kinded."""


@frozen(kw_only=True)
class Note:
    """One cited note. ``revision`` counts updates of the key (M8's version relation);
    ``saved`` is the save order used by retirement (M11)."""

    key: str
    kind: str
    status: str
    text: str
    sources: tuple[str, ...]
    inferred: bool
    revision: int = 1
    saved: int = 0

    def to_json(self) -> dict[str, JSON]:
        return {
            "key": self.key,
            "kind": self.kind,
            "status": self.status,
            "text": self.text,
            "sources": list(self.sources),
            "inferred": self.inferred,
            "revision": self.revision,
        }

    @property
    def retirable(self) -> bool:
        """M11: only resolved ordinary notes may leave the current set."""
        return self.status == "resolved" and self.kind not in PROTECTED_KINDS


def note_from_json(obj: Mapping[str, JSON], saved: int = 0) -> Note:
    """A stored note (version 2, or a version-1 note without ``inferred``/``revision``)."""
    sources = obj.get("sources", [])
    return Note(
        key=str(obj["key"]),
        kind=str(obj["kind"]),
        status=str(obj.get("status", "active")),
        text=str(obj.get("text", "")),
        sources=tuple(str(s) for s in sources) if isinstance(sources, list) else (),
        inferred=bool(obj.get("inferred", False)),
        revision=int(obj.get("revision", 1)),
        saved=saved,
    )


@frozen(kw_only=True)
class FileRecord:
    """The checkpoint's file-operation list (Pi's tracking, kept, M26)."""

    read: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()

    def to_json(self) -> dict[str, JSON]:
        return {"readFiles": list(self.read), "modifiedFiles": list(self.modified)}


@frozen(kw_only=True)
class NoteSet:
    """The current note set in save order (oldest first)."""

    notes: tuple[Note, ...] = ()

    def __len__(self) -> int:
        return len(self.notes)

    def get(self, key: str) -> Note | None:
        return next((n for n in self.notes if n.key == key), None)

    def to_json(self) -> list[dict[str, JSON]]:
        return [n.to_json() for n in self.notes]

    @property
    def next_saved(self) -> int:
        return max((n.saved for n in self.notes), default=0) + 1

    def put(self, note: Note) -> NoteSet:
        """``note`` replaces its key (now the newest save) or joins the set."""
        kept = tuple(n for n in self.notes if n.key != note.key)
        return NoteSet(notes=(*kept, evolve(note, saved=self.next_saved)))

    def without(self, keys: Iterable[str]) -> NoteSet:
        gone = set(keys)
        return NoteSet(notes=tuple(n for n in self.notes if n.key not in gone))

    def count(self, status: str) -> int:
        return sum(1 for n in self.notes if n.status == status)

    def count_kind(self, kind: str) -> int:
        return sum(1 for n in self.notes if n.kind == kind)


def note_bytes(notes: NoteSet) -> int:
    """M10: the note set's size, the UTF-8 bytes of its serialized JSON (inferred, Q4)."""
    return json_bytes(notes.to_json())


def checkpoint_bytes(notes: NoteSet, files: FileRecord) -> int:
    """M10: a whole checkpoint: notes plus the file-operation list."""
    return note_bytes(notes) + json_bytes(files.to_json())


@frozen(kw_only=True)
class BudgetFailure:
    """M14's ``lastFailure.budget``: which limit, the actual value and the limit."""

    type: str
    actual: int
    limit: int

    def to_json(self) -> dict[str, JSON]:
        return {"type": self.type, "actual": self.actual, "limit": self.limit}


@frozen(kw_only=True)
class Fitted:
    """A write that fits: the next set and the keys retired to make room (M11)."""

    notes: NoteSet
    retired: tuple[str, ...]


def over_budget(notes: NoteSet, files: FileRecord, budgets: Budgets) -> BudgetFailure | None:
    """The first capacity limit ``notes`` breaks (count, bytes, then the whole checkpoint)."""
    if len(notes) > NOTE_MAX_ITEMS:
        return BudgetFailure(type="note_count", actual=len(notes), limit=NOTE_MAX_ITEMS)
    size = note_bytes(notes)
    if size > budgets.note_max_bytes:
        return BudgetFailure(type="note_bytes", actual=size, limit=budgets.note_max_bytes)
    whole = checkpoint_bytes(notes, files)
    if whole > budgets.checkpoint_max_bytes:
        limit = budgets.checkpoint_max_bytes
        return BudgetFailure(type="file_tracking", actual=whole, limit=limit)
    return None


def fit(
    candidate: NoteSet, touched: Sequence[str], files: FileRecord, budgets: Budgets
) -> Fitted | BudgetFailure:
    """M10–M11: retire resolved ordinary notes in save order, oldest first, until
    ``candidate`` fits; never a note of ``touched`` (the current update). The failure of the
    untouched candidate is reported when no retirement makes it fit (M14)."""
    first = over_budget(candidate, files, budgets)
    if first is None:
        return Fitted(notes=candidate, retired=())
    current = candidate
    retired: list[str] = []
    protected = set(touched)
    for note in sorted(candidate.notes, key=lambda n: n.saved):
        if not note.retirable or note.key in protected:
            continue
        current = current.without((note.key,))
        retired.append(note.key)
        if over_budget(current, files, budgets) is None:
            return Fitted(notes=current, retired=tuple(retired))
    return first


def kind_change_refused(notes: NoteSet, key: str, kind: str) -> bool:
    """M13: an existing constraint or failed attempt keeps its kind."""
    existing = notes.get(key)
    return existing is not None and existing.kind in PROTECTED_KINDS and existing.kind != kind


def updated(notes: NoteSet, note: Note) -> Note:
    """``note`` as the next revision of its key (M8)."""
    previous = notes.get(note.key)
    return note if previous is None else evolve(note, revision=previous.revision + 1)
