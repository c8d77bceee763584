"""What the session audit reports: one :class:`Finding` per defect, of a :class:`FindingKind`.

Every kind names the rule it enforces (``R…``/``D…`` of the lifecycle spec, ``FM…`` of the
failure modes, ``pi-host §8`` for the file format) and a default severity:

- ``error``: the file as written breaks an invariant Pi or pi-context relies on (a lost
  boundary, an unanswered tool call on a branch, a window without its boot, a storm);
- ``warning``: a rule is broken but a defined recovery exists (startup repair completes the
  tail, the projection tolerates a duplicate) or the evidence is circumstantial;
- ``info``: worth knowing, never a defect (legacy entries, a fork's inherited root boot).

A file whose findings are all ``info`` audits clean (exit code 0).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from attrs import frozen

from pictx_fsm.session.problems import ProblemKind, Severity

ERROR: Final = Severity.ERROR
WARNING: Final = Severity.WARNING
INFO: Final = Severity.INFO


class FindingKind(enum.Enum):
    """What is wrong; the value is the name printed in reports."""

    # -- the file (reader problems and what they swallow) ------------------------------------
    STRUCTURE = "structure"
    """A problem of the tolerant reader (torn or glued line, dangling parent, …)."""
    BOUNDARY_ON_DAMAGED_LINE = "boundary_on_damaged_line"
    # -- the reset tail: marker → boot → continuation -----------------------------------------
    BOOT_MISSING = "boot_missing"
    BOOT_WRONG_WINDOW = "boot_wrong_window"
    TAIL_INTERRUPTED = "tail_interrupted"
    CONTINUATION_MISSING = "continuation_missing"
    TAIL_INCOMPLETE = "tail_incomplete"
    DUPLICATE_BOOT = "duplicate_boot"
    DUPLICATE_CONTINUATION = "duplicate_continuation"
    CONTINUATION_BEFORE_BOOT = "continuation_before_boot"
    CONTINUATION_WITHOUT_BOOT = "continuation_without_boot"
    # -- window identity ----------------------------------------------------------------------
    STRAY_BOOT = "stray_boot"
    INHERITED_ROOT_BOOT = "inherited_root_boot"
    DUPLICATE_WINDOW_ID = "duplicate_window_id"
    INVALID_MARKER = "invalid_marker"
    ENTRY_SHAPE = "entry_shape"
    TEXT_MISMATCH = "text_mismatch"
    # -- turns and budget ---------------------------------------------------------------------
    MULTIPLE_RESETS_IN_TURN = "multiple_resets_in_turn"
    BUDGET_MESSAGE_REPEATED = "budget_message_repeated"
    # -- native boundaries on marked branches, legacy -----------------------------------------
    NATIVE_COMPACTION_ON_MARKED_BRANCH = "native_compaction_on_marked_branch"
    BRANCH_SUMMARY_ACROSS_RESET = "branch_summary_across_reset"
    LEGACY_RESET_COMPACTION = "legacy_reset_compaction"
    # -- tool pairs and the tree --------------------------------------------------------------
    BOUNDARY_SPLITS_TOOL_PAIR = "boundary_splits_tool_pair"
    OUT_OF_BAND_FORK = "out_of_band_fork"
    # -- overflow -----------------------------------------------------------------------------
    OVERFLOW_STORM = "overflow_storm"
    REPEATED_OVERFLOW_RECOVERY = "repeated_overflow_recovery"
    INEFFECTIVE_COMPACTION = "ineffective_compaction"
    EMPTY_COMPACTION_SUMMARY = "empty_compaction_summary"
    # -- pi-context-management (audit_sessions/context_management.py) ------------------------
    CM_NOTES_OVER_CAPACITY = "cm_notes_over_capacity"
    CM_COVERAGE_MOVED_BY_WRITE = "cm_coverage_moved_by_write"
    CM_HANDOFF_COOLDOWN = "cm_handoff_cooldown"
    CM_HANDOFF_HOURLY_LIMIT = "cm_handoff_hourly_limit"
    CM_TAKEOVER_REPEATED = "cm_takeover_repeated"


@frozen(kw_only=True)
class KindInfo:
    """The rule a kind enforces, its default severity and one line saying what it means."""

    rule: str
    severity: Severity
    meaning: str


K = FindingKind
CM_KINDS: Final[Mapping[FindingKind, KindInfo]] = {
    K.CM_NOTES_OVER_CAPACITY: KindInfo(
        rule="M10", severity=ERROR, meaning="a stored note set or checkpoint over its capacity"
    ),
    K.CM_COVERAGE_MOVED_BY_WRITE: KindInfo(
        rule="M16", severity=ERROR, meaning="a context_notes write moved notesThroughEntryId"
    ),
    K.CM_HANDOFF_COOLDOWN: KindInfo(
        rule="M60", severity=ERROR, meaning="an automatic handoff before its 5-minute cooldown"
    ),
    K.CM_HANDOFF_HOURLY_LIMIT: KindInfo(
        rule="M56", severity=ERROR, meaning="more than 3 automatic handoffs in a rolling hour"
    ),
    K.CM_TAKEOVER_REPEATED: KindInfo(
        rule="M50", severity=ERROR, meaning="a takeover prompt sent twice in one session"
    ),
}
"""pi-context-management's kinds (checked by :mod:`.context_management`)."""
KINDS: Final[Mapping[FindingKind, KindInfo]] = {
    K.STRUCTURE: KindInfo(
        rule="pi-host §8", severity=ERROR, meaning="the reader's structural problem"
    ),
    K.BOUNDARY_ON_DAMAGED_LINE: KindInfo(
        rule="FM20",
        severity=ERROR,
        meaning="a compaction, marker, boot or continuation on a glued or torn line: "
        "Pi's loader skips the line and loses the boundary",
    ),
    K.BOOT_MISSING: KindInfo(
        rule="R65",
        severity=ERROR,
        meaning="a reset window without its boot, and conversation follows (R68 aborts "
        "every request)",
    ),
    K.BOOT_WRONG_WINDOW: KindInfo(
        rule="R14", severity=ERROR, meaning="a boot for another window inside a reset window"
    ),
    K.TAIL_INTERRUPTED: KindInfo(
        rule="D4",
        severity=ERROR,
        meaning="conversation between the marker and its boot, or between the boot and the "
        "continuation",
    ),
    K.CONTINUATION_MISSING: KindInfo(
        rule="D1", severity=ERROR, meaning="a committed reset without its continuation (0.25.1)"
    ),
    K.TAIL_INCOMPLETE: KindInfo(
        rule="D4",
        severity=WARNING,
        meaning="the branch ends inside a reset tail; startup repair completes it",
    ),
    K.DUPLICATE_BOOT: KindInfo(
        rule="D4", severity=ERROR, meaning="a second boot for the same window on one branch"
    ),
    K.DUPLICATE_CONTINUATION: KindInfo(
        rule="D4", severity=ERROR, meaning="a second continuation in one window"
    ),
    K.CONTINUATION_BEFORE_BOOT: KindInfo(
        rule="D4", severity=ERROR, meaning="the continuation precedes the window's boot"
    ),
    K.CONTINUATION_WITHOUT_BOOT: KindInfo(
        rule="R3", severity=ERROR, meaning="a continuation with no committed boot before it"
    ),
    K.STRAY_BOOT: KindInfo(
        rule="R14",
        severity=WARNING,
        meaning="a boot whose window id matches no marker on its branch and is not this "
        "session's root id",
    ),
    K.INHERITED_ROOT_BOOT: KindInfo(
        rule="R66",
        severity=INFO,
        meaning="a root boot copied from the parent session by a fork or clone",
    ),
    K.DUPLICATE_WINDOW_ID: KindInfo(
        rule="R12", severity=ERROR, meaning="a marker reuses a window id of its branch"
    ),
    K.INVALID_MARKER: KindInfo(
        rule="R8",
        severity=WARNING,
        meaning="a reset-marker entry that is not a valid marker and opens no window",
    ),
    K.ENTRY_SHAPE: KindInfo(
        rule="R7",
        severity=WARNING,
        meaning="a pi-context entry with the wrong display flag, details or data keys",
    ),
    K.TEXT_MISMATCH: KindInfo(
        rule="D1", severity=WARNING, meaning="a pi-context text differs from the profile's"
    ),
    K.MULTIPLE_RESETS_IN_TURN: KindInfo(
        rule="R30",
        severity=WARNING,
        meaning="two resets at one turn end: no message between the markers, and the "
        "continuation turn after both",
    ),
    K.BUDGET_MESSAGE_REPEATED: KindInfo(
        rule="R56",
        severity=WARNING,
        meaning="guidance or warning twice in one window, or guidance after the warning",
    ),
    K.NATIVE_COMPACTION_ON_MARKED_BRANCH: KindInfo(
        rule="R62", severity=ERROR, meaning="a native compaction after a reset marker"
    ),
    K.BRANCH_SUMMARY_ACROSS_RESET: KindInfo(
        rule="R75", severity=ERROR, meaning="a branch summary across a reset window"
    ),
    K.LEGACY_RESET_COMPACTION: KindInfo(
        rule="R6",
        severity=INFO,
        meaning="a ≤0.24 reset-v2 compaction, reported and never interpreted",
    ),
    K.BOUNDARY_SPLITS_TOOL_PAIR: KindInfo(
        rule="FM19",
        severity=ERROR,
        meaning="a marker, boot, continuation, budget message or summary between a tool call "
        "and its result",
    ),
    K.OUT_OF_BAND_FORK: KindInfo(
        rule="FM19",
        severity=ERROR,
        meaning="an entry appended while a tool call was pending, left as an abandoned leaf",
    ),
    K.OVERFLOW_STORM: KindInfo(
        rule="FM1",
        severity=ERROR,
        meaning="repeated overflows and recoveries without progress",
    ),
    K.REPEATED_OVERFLOW_RECOVERY: KindInfo(
        rule="FM5",
        severity=INFO,
        meaning="a later overflow recovery on a branch that already recovered once, after "
        "progress (each recovery did its job; the session keeps reaching the limit)",
    ),
    K.INEFFECTIVE_COMPACTION: KindInfo(
        rule="FM1",
        severity=WARNING,
        meaning="an overflow recovery compaction that cannot cure the overflow",
    ),
    K.EMPTY_COMPACTION_SUMMARY: KindInfo(
        rule="FM1", severity=WARNING, meaning="a compaction whose summary is empty or a template"
    ),
    **CM_KINDS,
}

STRUCTURE_RULES: Final[Mapping[ProblemKind, str]] = {
    ProblemKind.TORN_LINE: "FM20",
    ProblemKind.GLUED_OBJECTS: "FM20",
    ProblemKind.INVALID_ENCODING: "FM20",
    ProblemKind.MISSING_FINAL_NEWLINE: "FM20",
}
"""Reader problems that are failure mode 20 (crash/partial write); the rest are §8 format."""


@frozen(kw_only=True)
class EntryRef:
    """An entry a finding is about, with its 1-based source line when known."""

    id: str
    line: int | None

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "line": self.line}

    def text(self) -> str:
        return self.id if self.line is None else f"{self.id} (line {self.line})"


@frozen(kw_only=True)
class Finding:
    """One defect: the entries involved (the first is the one at fault), where, which rule."""

    kind: FindingKind
    severity: Severity
    rule: str
    message: str
    entries: tuple[EntryRef, ...] = ()
    line: int | None = None
    """The line to show: the first entry's, or the reader problem's."""
    detail: str | None = None
    """The reader problem kind for :attr:`FindingKind.STRUCTURE`."""

    @property
    def is_defect(self) -> bool:
        return self.severity.is_defect

    @property
    def key(self) -> tuple[str, str, int | None]:
        """Dedupe key: one report per kind and faulty entry, whichever branch found it."""
        if self.entries:
            return (self.name, self.entries[0].id, None)
        return (self.name, "", self.line)

    @property
    def name(self) -> str:
        """``structure/<problem>`` for reader problems, else the kind."""
        if self.kind is FindingKind.STRUCTURE and self.detail:
            return f"structure/{self.detail}"
        return self.kind.value

    def render(self, path: str) -> str:
        """``path:line: severity: name [rule]: message (entries: id (line n), …)``; no
        ``:line`` when unknown, no entry list for file-level problems."""
        where = path if self.line is None else f"{path}:{self.line}"
        text = f"{where}: {self.severity.value}: {self.name} [{self.rule}]: {self.message}"
        if not self.entries:
            return text
        return f"{text} (entries: {', '.join(ref.text() for ref in self.entries)})"

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.name,
            "severity": self.severity.value,
            "rule": self.rule,
            "line": self.line,
            "entries": [ref.to_json() for ref in self.entries],
            "message": self.message,
        }


def make_finding(
    kind: FindingKind,
    message: str,
    entries: tuple[EntryRef, ...] = (),
    *,
    severity: Severity | None = None,
    rule: str | None = None,
    line: int | None = None,
) -> Finding:
    """A finding with its kind's default rule and severity unless given; its line is the
    first entry's (``line`` is for findings about a line without an entry)."""
    info = KINDS[kind]
    return Finding(
        kind=kind,
        severity=info.severity if severity is None else severity,
        rule=info.rule if rule is None else rule,
        message=message,
        entries=entries,
        line=entries[0].line if entries else line,
    )


def sort_key(finding: Finding) -> tuple[int, int, str, str]:
    """Report order: by line (file-level first), then kind order, then entry id."""
    order = _KIND_ORDER[finding.kind]
    first = finding.entries[0].id if finding.entries else ""
    return (-1 if finding.line is None else finding.line, order, first, finding.message)


_KIND_ORDER: Final = {kind: position for position, kind in enumerate(FindingKind)}
