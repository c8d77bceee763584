"""pi-context-management's part of the session-file audit: its persisted state (issue 13 item 4).

Recognises the extension's entries (:mod:`pictx_fsm.extensions.context_management.records`) in an
entry stream and reports violations of the persisted invariants (spec §12):

- ``cm_notes_over_capacity`` (§12.5, M10): a stored note set over 32 items or over 8 000
  bytes (``NOTE_MAX_BYTES`` is at most 8 000 for any window), a checkpoint over 16 384;
- ``cm_coverage_moved_by_write`` (§12.8, M16): a ``context_notes`` snapshot that moved
  ``notesThroughEntryId``;
- ``cm_handoff_cooldown`` (§12.12, M60): an automatic attempt before ``nextEligibleAt``;
- ``cm_handoff_hourly_limit`` (§12.11, M56): more than three automatic attempts within a
  rolling hour — within a file's inherited counters, and across a chain of files linked by
  their receipts (:func:`chain_findings`);
- ``cm_takeover_repeated`` (§12.20, M50): more than one takeover mark in a session.

:class:`ContextMemoryCheck` is a per-entry check over the file order (``start`` / ``step`` /
``end``), so a streaming reader feeds it each entry once; :func:`context_management_checks` is
the :class:`~pictx_fsm.conformance.checks.CheckSet` the generic audit runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final, TypeAlias

from attrs import evolve, frozen

from pictx_fsm.conformance.checks import CheckSet
from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import ERROR, EntryRef, Finding, FindingKind, make_finding
from pictx_fsm.conformance.report import SessionAudit
from pictx_fsm.extensions.context_management.notes import NoteSet, note_bytes
from pictx_fsm.extensions.context_management.policy import (
    AUTO_MAX_PER_HOUR,
    CHECKPOINT_MAX_BYTES_CAP,
    HOUR_MS,
    NOTE_MAX_BYTES_CAP,
    NOTE_MAX_ITEMS,
)
from pictx_fsm.extensions.context_management.records import (
    AUTO_TYPE,
    CHECKPOINT_KEY,
    NOTES_TYPE,
    RECEIPT_TYPE,
    TAKEOVER_TYPE,
    _note_set,
    auto_from_json,
    receipt_from_json,
)
from pictx_fsm.session.entries import CompactionEntry, CustomEntry, Entry
from pictx_fsm.session.estimate import js_json
from pictx_fsm.session.tree import TreeNode

__all__ = [
    "CM_COVERAGE_MOVED_BY_WRITE",
    "CM_HANDOFF_COOLDOWN",
    "CM_HANDOFF_HOURLY_LIMIT",
    "CM_NOTES_OVER_CAPACITY",
    "CM_TAKEOVER_REPEATED",
    "CONTEXT_MEMORY",
    "KINDS",
    "ChainLink",
    "ContextMemoryCheck",
    "add_chain_findings",
    "chain_findings",
    "context_management_checks",
    "receipt_link",
]

JSON: TypeAlias = Any

CM_NOTES_OVER_CAPACITY: Final = FindingKind(
    name="cm_notes_over_capacity",
    rule="M10",
    severity=ERROR,
    meaning="a stored note set or checkpoint over its capacity",
)
CM_COVERAGE_MOVED_BY_WRITE: Final = FindingKind(
    name="cm_coverage_moved_by_write",
    rule="M16",
    severity=ERROR,
    meaning="a context_notes write moved notesThroughEntryId",
)
CM_HANDOFF_COOLDOWN: Final = FindingKind(
    name="cm_handoff_cooldown",
    rule="M60",
    severity=ERROR,
    meaning="an automatic handoff before its 5-minute cooldown",
)
CM_HANDOFF_HOURLY_LIMIT: Final = FindingKind(
    name="cm_handoff_hourly_limit",
    rule="M56",
    severity=ERROR,
    meaning="more than 3 automatic handoffs in a rolling hour",
)
CM_TAKEOVER_REPEATED: Final = FindingKind(
    name="cm_takeover_repeated",
    rule="M50",
    severity=ERROR,
    meaning="a takeover prompt sent twice in one session",
)
KINDS: Final = (
    CM_NOTES_OVER_CAPACITY,
    CM_COVERAGE_MOVED_BY_WRITE,
    CM_HANDOFF_COOLDOWN,
    CM_HANDOFF_HOURLY_LIMIT,
    CM_TAKEOVER_REPEATED,
)
"""pi-context-management's kinds, in report order."""


@frozen(kw_only=True)
class _Seen:
    """What the check remembers between entries (immutable, so it can be shared)."""

    notes_through: tuple[str | None, bool] = (None, False)
    next_eligible: int | None = None
    attempts: tuple[int, ...] = ()
    takeovers: int = 0
    receipt: ChainLink | None = None
    """The file's handoff receipt (its first): the session-chain check's link, taken in the
    file's one pass (its ``path`` is set by :func:`add_chain_findings`)."""


@frozen
class ContextMemoryCheck:
    """Per-entry check of the extension's entries, in file order (a fold: unlike a content
    check, it remembers earlier entries). Frozen, so a copy (an audit sent back from a Ray
    worker) still names the check."""

    entry_types: ClassVar[frozenset[str]] = frozenset({"custom", "compaction"})

    def start(self) -> _Seen:
        return _Seen()

    def step(
        self, seen: _Seen, entry: Entry, node: TreeNode, ctx: AuditContext
    ) -> tuple[_Seen, list[Finding]]:
        ref = ctx.ref(node)
        if isinstance(entry, CompactionEntry):
            return seen, _checkpoint(entry, ref)
        if not isinstance(entry, CustomEntry) or not isinstance(entry.data, Mapping):
            return seen, []
        data = entry.data
        if entry.custom_type == RECEIPT_TYPE and seen.receipt is None:
            return evolve(seen, receipt=receipt_link("", (entry,), lambda _: ref.line)), []
        if entry.custom_type == NOTES_TYPE:
            return _notes(seen, data, ref)
        if entry.custom_type == AUTO_TYPE:
            return _auto(seen, data, ref)
        if entry.custom_type == TAKEOVER_TYPE:
            found = (
                []
                if seen.takeovers == 0
                else [_finding(CM_TAKEOVER_REPEATED, "a second takeover prompt mark", ref)]
            )
            return evolve(seen, takeovers=seen.takeovers + 1), found
        return seen, []

    def end(self, seen: _Seen) -> list[Finding]:
        return []


def _finding(kind: FindingKind, message: str, ref: EntryRef) -> Finding:
    return make_finding(kind, message, (ref,))


def _over(notes: NoteSet) -> str | None:
    if len(notes) > NOTE_MAX_ITEMS:
        return f"{len(notes)} notes (limit {NOTE_MAX_ITEMS})"
    size = note_bytes(notes)
    if size > NOTE_MAX_BYTES_CAP:
        return f"{size} bytes of notes (limit {NOTE_MAX_BYTES_CAP})"
    return None


def _notes(seen: _Seen, data: Mapping[str, JSON], ref: EntryRef) -> tuple[_Seen, list[Finding]]:
    found = []
    over = _over(_note_set(data.get("notes")))
    if over is not None:
        found.append(_finding(CM_NOTES_OVER_CAPACITY, over, ref))
    through = data.get("notesThroughEntryId")
    previous, known = seen.notes_through
    if data.get("origin") == "tool" and known and through != previous:
        found.append(
            _finding(CM_COVERAGE_MOVED_BY_WRITE, f"coverage moved {previous} → {through}", ref)
        )
    return evolve(seen, notes_through=(through, True)), found


def _checkpoint(entry: CompactionEntry, ref: EntryRef) -> list[Finding]:
    details = entry.details if isinstance(entry.details, Mapping) else {}
    checkpoint = details.get(CHECKPOINT_KEY)
    if entry.from_hook is not True or not isinstance(checkpoint, Mapping):
        return []
    notes = _note_set(checkpoint.get("notes"))
    over = _over(notes)
    files = {k: details.get(k) for k in ("readFiles", "modifiedFiles")}
    whole = note_bytes(notes) + len(js_json(files).encode("utf-8"))
    if over is None and whole > CHECKPOINT_MAX_BYTES_CAP:
        over = f"a {whole}-byte checkpoint (limit {CHECKPOINT_MAX_BYTES_CAP})"
    return [] if over is None else [_finding(CM_NOTES_OVER_CAPACITY, over, ref)]


def _auto(seen: _Seen, data: Mapping[str, JSON], ref: EntryRef) -> tuple[_Seen, list[Finding]]:
    setting = auto_from_json(data)
    fresh = [t for t in setting.attempts if t not in seen.attempts]
    found = []
    for attempt in fresh:
        if seen.next_eligible is not None and attempt < seen.next_eligible:
            gap = seen.next_eligible - attempt
            found.append(
                _finding(
                    CM_HANDOFF_COOLDOWN,
                    f"an automatic attempt {gap} ms before nextEligibleAt",
                    ref,
                )
            )
        if _crowded(setting.attempts, attempt):
            found.append(
                _finding(
                    CM_HANDOFF_HOURLY_LIMIT, "more than 3 automatic handoffs within an hour", ref
                )
            )
    seen = evolve(seen, attempts=setting.attempts, next_eligible=setting.next_eligible_at)
    return seen, found


def _crowded(times: Iterable[int], at: int) -> bool:
    """More than :data:`AUTO_MAX_PER_HOUR` attempts in the hour ending at ``at``."""
    return sum(1 for t in times if 0 <= at - t < HOUR_MS) > AUTO_MAX_PER_HOUR


CONTEXT_MEMORY: Final = ContextMemoryCheck()
"""The check every audit runs (the chain check reads its last state)."""


# -- session chains -------------------------------------------------------------------------------


@frozen(kw_only=True)
class ChainLink:
    """A handoff target: its file, the entry of its receipt, the capture time and mode."""

    path: str
    entry: str
    line: int | None
    parent: str
    captured_at: int
    mode: str


def receipt_link(path: str, entries: Iterable[Entry], locate: Any) -> ChainLink | None:
    for entry in entries:
        if (
            isinstance(entry, CustomEntry)
            and entry.custom_type == RECEIPT_TYPE
            and isinstance(entry.data, Mapping)
        ):
            receipt = receipt_from_json(entry.data)
            if receipt is None:
                return None
            return ChainLink(
                path=path,
                entry=entry.id,
                line=locate(entry),
                parent=receipt.parent_file,
                captured_at=receipt.captured_at,
                mode=receipt.mode,
            )
    return None


def _chains(links: Sequence[ChainLink]) -> list[list[ChainLink]]:
    """Links grouped by session chain (files connected through their parents)."""
    root: dict[str, str] = {}

    def find(path: str) -> str:
        while root.get(path, path) != path:
            path = root[path]
        return path

    for link in links:
        root[find(link.path)] = find(link.parent)
    groups: dict[str, list[ChainLink]] = {}
    for link in links:
        groups.setdefault(find(link.path), []).append(link)
    return list(groups.values())


def chain_findings(links: Sequence[ChainLink]) -> dict[str, list[Finding]]:
    """§12.11 across files: automatic handoffs (captures) of one chain, more than three in a
    rolling hour; the finding goes to the file of the handoff that broke the limit."""
    found: dict[str, list[Finding]] = {}
    for chain in _chains(links):
        automatic = sorted((k for k in chain if k.mode == "automatic"), key=lambda k: k.captured_at)
        times = [link.captured_at for link in automatic]
        for link in automatic:
            if _crowded(times, link.captured_at):
                ref = EntryRef(id=link.entry, line=link.line)
                message = "the session chain has more than 3 automatic handoffs within an hour"
                found.setdefault(link.path, []).append(
                    _finding(CM_HANDOFF_HOURLY_LIMIT, message, ref)
                )
    return found


def add_chain_findings(audits: Sequence[SessionAudit], paths: Sequence[str]) -> list[SessionAudit]:
    """The audits with the chain findings (§12.11) added to the files at fault; each audit
    brings its file's receipt, found by :class:`ContextMemoryCheck` in the file's one pass."""
    links = []
    for audit in audits:
        seen = audit.fold(CONTEXT_MEMORY)
        if isinstance(seen, _Seen) and seen.receipt is not None:
            links.append(evolve(seen.receipt, path=audit.path))
    found = chain_findings(links)
    if not found:
        return list(audits)
    return [
        evolve(audit, findings=(*audit.findings, *found[audit.path]))
        if audit.path in found
        else audit
        for audit in audits
    ]


def context_management_checks() -> CheckSet:
    """pi-context-management's checks: its persisted state in each file, file after file,
    and the automatic handoffs of a chain of session files (§12.11)."""
    return CheckSet(
        kinds=KINDS,
        file_order=(CONTEXT_MEMORY,),
        across_files=(add_chain_findings,),
    )
