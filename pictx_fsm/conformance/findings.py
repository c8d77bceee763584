"""What the session audit reports: one :class:`Finding` per defect, of a :class:`FindingKind`.

Every kind names the rule it enforces (an extension's rule ids, ``FM…`` of the failure modes,
``pi-host §8`` for the file format) and a default severity:

- ``error``: the file as written breaks an invariant Pi or an extension relies on (a lost
  boundary, an unanswered tool call on a branch, a window without its boot, a storm);
- ``warning``: a rule is broken but a defined recovery exists (startup repair completes the
  tail, the projection tolerates a duplicate) or the evidence is circumstantial;
- ``info``: worth knowing, never a defect (legacy entries, a fork's inherited root boot).

A file whose findings are all ``info`` audits clean (exit code 0). The kinds here are the
generic audit's own (the file's structure, Pi's tool pairs); each extension declares its
kinds beside its checks (:class:`~pictx_fsm.conformance.checks.CheckSet`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

from attrs import frozen

from pictx_fsm.session.problems import ProblemKind, Severity

__all__ = [
    "BOUNDARY_ON_DAMAGED_LINE",
    "ERROR",
    "GENERIC_KINDS",
    "INFO",
    "OUT_OF_BAND_FORK",
    "STRUCTURE",
    "STRUCTURE_RULES",
    "WARNING",
    "EntryRef",
    "Finding",
    "FindingKind",
    "SortKey",
    "make_finding",
    "sort_key",
]

ERROR: Final = Severity.ERROR
WARNING: Final = Severity.WARNING
INFO: Final = Severity.INFO


@frozen(kw_only=True, eq=False)
class FindingKind:
    """What is wrong: the name printed in reports, the rule it enforces, its default severity
    and one line saying what it means. Each kind is one value, compared by identity."""

    name: str
    rule: str
    severity: Severity
    meaning: str

    def __attrs_post_init__(self) -> None:
        _KINDS.setdefault(self.name, self)

    def __repr__(self) -> str:
        return f"FindingKind({self.name!r})"

    def __reduce__(self) -> tuple[Callable[[str], FindingKind], tuple[str]]:
        """A copy (a finding sent back from a Ray worker) is the one kind of its name, so
        identity still compares kinds."""
        return (_kind_named, (self.name,))


_KINDS: dict[str, FindingKind] = {}
"""Every kind made in this process, by name (the first of a name)."""


def _kind_named(name: str) -> FindingKind:
    return _KINDS[name]


STRUCTURE: Final = FindingKind(
    name="structure",
    rule="pi-host §8",
    severity=ERROR,
    meaning="the reader's structural problem",
)
"""A problem of the tolerant reader (torn or glued line, dangling parent, …)."""
BOUNDARY_ON_DAMAGED_LINE: Final = FindingKind(
    name="boundary_on_damaged_line",
    rule="FM20",
    severity=ERROR,
    meaning="a compaction, branch summary or an extension's boundary entry on a glued or torn "
    "line: Pi's loader skips the line and loses the boundary",
)
OUT_OF_BAND_FORK: Final = FindingKind(
    name="out_of_band_fork",
    rule="FM19",
    severity=ERROR,
    meaning="an entry appended while a tool call was pending, left as an abandoned leaf",
)
GENERIC_KINDS: Final = (STRUCTURE, BOUNDARY_ON_DAMAGED_LINE, OUT_OF_BAND_FORK)
"""The generic audit's kinds, first in report order (the extensions' follow)."""

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
    """The reader problem kind of a :data:`STRUCTURE` finding."""

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
        if self.kind is STRUCTURE and self.detail:
            return f"structure/{self.detail}"
        return self.kind.name

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
    return Finding(
        kind=kind,
        severity=kind.severity if severity is None else severity,
        rule=kind.rule if rule is None else rule,
        message=message,
        entries=entries,
        line=entries[0].line if entries else line,
    )


SortKey = Callable[[Finding], tuple[int, int, str, str]]


def sort_key(kinds: Iterable[FindingKind]) -> SortKey:
    """Report order: by line (file-level first), then the kinds' order in ``kinds``, then the
    faulty entry's id and the message."""
    order: Mapping[FindingKind, int] = {kind: position for position, kind in enumerate(kinds)}

    def key(finding: Finding) -> tuple[int, int, str, str]:
        first = finding.entries[0].id if finding.entries else ""
        line = -1 if finding.line is None else finding.line
        return (line, order[finding.kind], first, finding.message)

    return key
