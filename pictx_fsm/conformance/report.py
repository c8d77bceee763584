"""The audit of one file (summary, findings, throughput) and of a run, as text and JSON.

Exit codes, per file, the overall code being the highest (as ``pictx-fsm inspect``):

- 0: clean — no finding, or only ``info`` findings (a migrated v1 file, a legacy reset-v2
  compaction, a fork's inherited root boot are facts, not defects);
- 1: at least one ``warning`` or ``error`` finding;
- 2: unreadable input — the file cannot be read (missing, a directory, no permission); a
  readable file in which nothing is a session reports its problems as findings (1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, TypeAlias

from attrs import frozen

from pictx_fsm.conformance.findings import Finding
from pictx_fsm.conformance.walk import Shape
from pictx_fsm.session.problems import Severity

__all__ = [
    "EXIT_CLEAN",
    "EXIT_FINDINGS",
    "EXIT_UNREADABLE",
    "Folds",
    "SessionAudit",
    "Stats",
    "Summary",
    "render_run",
    "render_text",
    "run_json",
    "total_stats",
]

EXIT_CLEAN: Final = 0
EXIT_FINDINGS: Final = 1
EXIT_UNREADABLE: Final = 2

Folds: TypeAlias = tuple[tuple[Any, Any], ...]
"""Each file-order check of an audit with its state after the file's last entry."""


@frozen(kw_only=True)
class Summary:
    """What the session holds, across all its branches: entries, branches, then the counts
    the extensions' checks add (:class:`~pictx_fsm.conformance.checks.SummaryCount`)."""

    entries: int
    branches: int
    counts: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, shape: Shape, entries: int, counts: Sequence[tuple[str, int]] = ()) -> Summary:
        return cls(entries=entries, branches=len(shape.leaves()), counts=tuple(counts))

    def to_json(self) -> dict[str, int]:
        return {"entries": self.entries, "branches": self.branches, **dict(self.counts)}

    def text(self) -> str:
        return "  ".join(f"{name} {count}" for name, count in self.to_json().items())


@frozen(kw_only=True)
class Stats:
    """Throughput of one audit (read, tree and checks together)."""

    bytes: int
    entries: int
    seconds: float

    def rate(self, amount: int) -> float:
        return amount / self.seconds if self.seconds > 0 else float("inf")

    def to_json(self) -> dict[str, float]:
        return {
            "bytes": self.bytes,
            "entries": self.entries,
            "seconds": round(self.seconds, 6),
            "bytesPerSecond": round(self.rate(self.bytes), 1),
            "entriesPerSecond": round(self.rate(self.entries), 1),
        }

    def text(self) -> str:
        return (
            f"{self.bytes} bytes, {self.entries} entries in {self.seconds:.3f} s "
            f"({self.rate(self.bytes) / 1e6:.2f} MB/s, {self.rate(self.entries):.0f} entries/s)"
        )


@frozen(kw_only=True)
class SessionAudit:
    path: str
    findings: tuple[Finding, ...] = ()
    summary: Summary | None = None
    stats: Stats | None = None
    error: str | None = None
    """Why the file could not be read at all (exit code 2)."""
    note: str | None = None
    """Why a readable file holds no session (its problems are findings, exit code 1)."""
    folds: Folds = ()
    """The file-order checks' last states: what the checks across files read of each file,
    found in the file's one pass (:meth:`fold`)."""

    def fold(self, check: Any) -> Any:
        """``check``'s state after the file's last entry (``None``: it did not run)."""
        return next((state for ran, state in self.folds if ran == check), None)

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return EXIT_UNREADABLE
        return EXIT_FINDINGS if any(f.is_defect for f in self.findings) else EXIT_CLEAN

    def counts(self) -> dict[str, int]:
        by_severity = Counter(f.severity for f in self.findings)
        return {severity.value: by_severity[severity] for severity in Severity}

    def kinds(self) -> dict[str, int]:
        return dict(sorted(Counter(f.name for f in self.findings).items()))

    def to_json(self, *, stats: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "exitCode": self.exit_code}
        if self.error is not None:
            out["error"] = self.error
        if self.note is not None:
            out["note"] = self.note
        if self.summary is not None:
            out["summary"] = {**self.summary.to_json(), "findings": self.counts()}
        out["kinds"] = self.kinds()
        out["findings"] = [f.to_json() for f in self.findings]
        if stats and self.stats is not None:
            out["stats"] = self.stats.to_json()
        return out


def run_json(
    audits: Sequence[SessionAudit], head: Mapping[str, Any], *, stats: bool = False
) -> dict[str, Any]:
    """One document for the whole run: ``head`` (the run's options, such as the profile the
    checks were given), the overall exit code, totals, every file."""
    totals: Counter[str] = Counter()
    for audit in audits:
        totals.update(audit.counts())
    out: dict[str, Any] = {
        **head,
        "exitCode": max((a.exit_code for a in audits), default=EXIT_CLEAN),
        "findings": {severity.value: totals[severity.value] for severity in Severity},
        "files": [audit.to_json(stats=stats) for audit in audits],
    }
    if stats:
        out["stats"] = total_stats(audits).to_json()
    return out


def total_stats(audits: Sequence[SessionAudit]) -> Stats:
    present = [a.stats for a in audits if a.stats is not None]
    return Stats(
        bytes=sum(s.bytes for s in present),
        entries=sum(s.entries for s in present),
        seconds=sum(s.seconds for s in present),
    )


# --------------------------------------------------------------------------------------------
# Text


def render_text(audit: SessionAudit, *, stats: bool = False) -> Iterator[str]:
    yield f"== {audit.path}"
    if audit.error is not None:
        yield f"unreadable: {audit.error}"
    if audit.note is not None:
        yield f"not a session: {audit.note}"
    if audit.summary is not None:
        yield audit.summary.text()
    counts = audit.counts()
    listed = ", ".join(f"{counts[severity.value]} {severity.value}" for severity in Severity)
    yield f"findings: {len(audit.findings)} ({listed})"
    for finding in audit.findings:
        yield "  " + finding.render(audit.path)
    if stats and audit.stats is not None:
        yield "stats: " + audit.stats.text()


def render_run(audits: Sequence[SessionAudit], *, stats: bool = False) -> str:
    blocks = ["\n".join(render_text(audit, stats=stats)) for audit in audits]
    if stats and len(audits) > 1:
        blocks.append("total: " + total_stats(audits).text())
    return "\n\n".join(blocks)
