"""The reader's structural problems as findings, and the boundaries they swallow (FM20).

Every :class:`~pictx_fsm.session.problems.Problem` becomes a ``structure/<kind>`` finding
with the problem's own severity and line. Failure mode 20 (rank 7) adds one more: Pi's loader
skips an unparseable line whole, so a boundary entry on a glued line (recovered here, lost for
Pi) or a torn line that still shows a boundary's type is reported separately, as an error —
"skip unparseable line" is not lossless when the line carried a compaction, marker or boot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from pictx_fsm.conformance.findings import (
    STRUCTURE_RULES,
    EntryRef,
    Finding,
    FindingKind,
    make_finding,
)
from pictx_fsm.conformance.roles import is_pi_context_message
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE, CONTINUATION_TYPE, MARKER_TYPE
from pictx_fsm.extensions.pi_context.windows import is_valid_marker
from pictx_fsm.session.entries import BranchSummaryEntry, CompactionEntry, Entry, MessageEntry
from pictx_fsm.session.problems import Problem, ProblemKind

_DAMAGED_FRAGMENTS: Final = frozenset(
    {ProblemKind.TORN_LINE, ProblemKind.INVALID_JSON, ProblemKind.INVALID_ENCODING}
)
_BOUNDARY_TEXT: Final = re.compile(
    r'"type"\s*:\s*"(?:compaction|branch_summary)"|'
    + "|".join(re.escape(f'"{name}"') for name in (MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE))
)


def is_boundary_entry(entry: Entry) -> bool:
    """An entry whose loss changes the context (FM20's list, plus pi-context messages)."""
    if type(entry) is MessageEntry:  # the common entry, answered first
        return False
    if isinstance(entry, CompactionEntry | BranchSummaryEntry):
        return True
    return is_valid_marker(entry) or is_pi_context_message(entry)


def problem_findings(problems: Iterable[Problem]) -> list[Finding]:
    return [_from_problem(problem) for problem in problems]


def _from_problem(problem: Problem) -> Finding:
    entries = (
        () if problem.entry_id is None else (EntryRef(id=problem.entry_id, line=problem.line),)
    )
    return Finding(
        kind=FindingKind.STRUCTURE,
        severity=problem.severity,
        rule=STRUCTURE_RULES.get(problem.kind, "pi-host §8"),
        message=problem.message,
        entries=entries,
        line=problem.line,
        detail=problem.kind.value,
    )


def damaged_boundaries(
    problems: Sequence[Problem], boundaries: Mapping[int, Sequence[Entry]]
) -> list[Finding]:
    """FM20: boundary entries recovered from glued lines, torn fragments naming a boundary.

    ``boundaries`` maps a line number to the boundary entries read from it.
    """
    found: list[Finding] = []
    for problem in problems:
        if problem.kind is ProblemKind.GLUED_OBJECTS and problem.line is not None:
            found += [_glued(problem.line, entry) for entry in boundaries.get(problem.line, ())]
        elif problem.kind in _DAMAGED_FRAGMENTS and _BOUNDARY_TEXT.search(problem.raw or ""):
            message = (
                f"{problem.kind.value} text mentions a boundary entry; Pi skips the line "
                "and loses it"
            )
            kind = FindingKind.BOUNDARY_ON_DAMAGED_LINE
            found.append(make_finding(kind, message, line=problem.line))
    return found


def _glued(line: int, entry: Entry) -> Finding:
    ref = EntryRef(id=str(entry.id), line=line)
    message = f"{_entry_kind(entry)} entry on a glued line: Pi's loader skips the line and loses it"
    return make_finding(FindingKind.BOUNDARY_ON_DAMAGED_LINE, message, (ref,))


def _entry_kind(entry: Entry) -> str:
    if is_valid_marker(entry):
        return "reset marker"
    custom_type = getattr(entry, "custom_type", None)
    return str(custom_type) if isinstance(custom_type, str) else entry.type
