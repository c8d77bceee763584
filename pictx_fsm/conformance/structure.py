"""The reader's structural problems as findings, and the boundaries they swallow (FM20).

Every :class:`~pictx_fsm.session.problems.Problem` becomes a ``structure/<kind>`` finding
with the problem's own severity and line. Failure mode 20 (rank 7) adds one more: Pi's loader
skips an unparseable line whole, so a boundary entry on a glued line (recovered here, lost for
Pi) or a torn line that still shows a boundary's type is reported separately, as an error —
"skip unparseable line" is not lossless when the line carried a compaction, a branch summary
or an extension's boundary (a :class:`~pictx_fsm.conformance.checks.BoundaryRule`: pi-context's
marker, boot or continuation).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from pictx_fsm.conformance.findings import (
    BOUNDARY_ON_DAMAGED_LINE,
    STRUCTURE,
    STRUCTURE_RULES,
    EntryRef,
    Finding,
    make_finding,
)
from pictx_fsm.session.entries import BranchSummaryEntry, CompactionEntry, Entry, MessageEntry
from pictx_fsm.session.problems import Problem, ProblemKind

if TYPE_CHECKING:
    from pictx_fsm.conformance.checks import BoundaryRule

__all__ = ["damaged_boundaries", "is_boundary_entry", "problem_findings"]

_DAMAGED_FRAGMENTS: Final = frozenset(
    {ProblemKind.TORN_LINE, ProblemKind.INVALID_JSON, ProblemKind.INVALID_ENCODING}
)
_PI_BOUNDARY_TEXT: Final = r'"type"\s*:\s*"(?:compaction|branch_summary)"'


@functools.lru_cache(maxsize=16)
def _boundary_text(rules: tuple[BoundaryRule, ...]) -> re.Pattern[str]:
    """A compaction's or branch summary's type, or a rule's custom type, as quoted JSON."""
    names = sorted({name for rule in rules for name in rule.custom_types})
    return re.compile("|".join([_PI_BOUNDARY_TEXT, *(re.escape(f'"{n}"') for n in names)]))


def is_boundary_entry(entry: Entry, rules: Sequence[BoundaryRule] = ()) -> bool:
    """An entry whose loss changes the context (FM20's list, plus the rules' entries)."""
    if type(entry) is MessageEntry:  # the common entry, answered first
        return False
    if isinstance(entry, CompactionEntry | BranchSummaryEntry):
        return True
    return any(rule.is_boundary(entry) for rule in rules)


def problem_findings(problems: Iterable[Problem]) -> list[Finding]:
    return [_from_problem(problem) for problem in problems]


def _from_problem(problem: Problem) -> Finding:
    entries = (
        () if problem.entry_id is None else (EntryRef(id=problem.entry_id, line=problem.line),)
    )
    return Finding(
        kind=STRUCTURE,
        severity=problem.severity,
        rule=STRUCTURE_RULES.get(problem.kind, "pi-host §8"),
        message=problem.message,
        entries=entries,
        line=problem.line,
        detail=problem.kind.value,
    )


def damaged_boundaries(
    problems: Sequence[Problem],
    boundaries: Mapping[int, Sequence[Entry]],
    rules: Sequence[BoundaryRule] = (),
) -> list[Finding]:
    """FM20: boundary entries recovered from glued lines, torn fragments naming a boundary.

    ``boundaries`` maps a line number to the boundary entries read from it.
    """
    found: list[Finding] = []
    text = _boundary_text(tuple(rules))
    for problem in problems:
        if problem.kind is ProblemKind.GLUED_OBJECTS and problem.line is not None:
            glued = boundaries.get(problem.line, ())
            found += [_glued(problem.line, entry, rules) for entry in glued]
        elif problem.kind in _DAMAGED_FRAGMENTS and text.search(problem.raw or ""):
            message = (
                f"{problem.kind.value} text mentions a boundary entry; Pi skips the line "
                "and loses it"
            )
            found.append(make_finding(BOUNDARY_ON_DAMAGED_LINE, message, line=problem.line))
    return found


def _glued(line: int, entry: Entry, rules: Sequence[BoundaryRule]) -> Finding:
    ref = EntryRef(id=str(entry.id), line=line)
    message = (
        f"{_entry_kind(entry, rules)} entry on a glued line: Pi's loader skips the line and "
        "loses it"
    )
    return make_finding(BOUNDARY_ON_DAMAGED_LINE, message, (ref,))


def _entry_kind(entry: Entry, rules: Sequence[BoundaryRule]) -> str:
    for rule in rules:
        name = rule.name(entry)
        if name is not None:
            return name
    custom_type = getattr(entry, "custom_type", None)
    return str(custom_type) if isinstance(custom_type, str) else entry.type
