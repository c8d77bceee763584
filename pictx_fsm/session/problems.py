"""Typed problems found while reading a Pi session file.

The reader never raises on content: everything it cannot use, or can use only after a repair,
becomes a :class:`Problem` with its 1-based line number. ``raw`` keeps the text of anything
that did not become an entry, so a problem report loses no data.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from attrs import frozen

__all__ = ["DEFAULT_SEVERITY", "MAX_PROBLEMS_PER_KIND", "Problem", "ProblemKind", "Severity"]


class Severity(enum.Enum):
    """How much a problem matters. ``info`` is never a defect (a migrated v1 file, a blank
    line); ``warning`` and ``error`` make ``pictx-fsm inspect`` exit 1."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def is_defect(self) -> bool:
        return self is not Severity.INFO


class ProblemKind(enum.Enum):
    """What is wrong; the value is the name printed in reports."""

    TORN_LINE = "torn_line"
    """Truncated JSON (a crash mid-write), or an unterminated last line that does not parse."""
    GLUED_OBJECTS = "glued_objects"
    """Two or more JSON objects on one line (a write without its newline); all recovered."""
    INVALID_JSON = "invalid_json"
    INVALID_ENCODING = "invalid_encoding"
    """A line that is not UTF-8 (a torn multi-byte character, binary data)."""
    NOT_AN_OBJECT = "not_an_object"
    MISSING_HEADER = "missing_header"
    """No JSON object at all, so no session header."""
    NOT_SESSION_HEADER = "not_session_header"
    """The first object is not a ``session`` header with a string id (Pi ignores the file)."""
    EXTRA_HEADER = "extra_header"
    """A second ``session`` object after the header: not an entry, kept in ``raw``."""
    DANGLING_PARENT = "dangling_parent"
    DUPLICATE_ID = "duplicate_id"
    INVALID_FIELD = "invalid_field"
    ENTRY_WITHOUT_ID = "entry_without_id"
    UNKNOWN_ENTRY_TYPE = "unknown_entry_type"
    LEGACY_VERSION = "legacy_version"
    """A v1 or v2 file, migrated in memory as Pi does on load."""
    FUTURE_VERSION = "future_version"
    """A header version newer than 3: read as v3, fields may be misread."""
    BLANK_LINE = "blank_line"
    """One blank line, or a run of them (reported once, at its first line)."""
    OVERSIZED_LINE = "oversized_line"
    """A line longer than the reader's limit: skipped, its start kept in ``raw``."""
    PARENT_CYCLE = "parent_cycle"
    """``parentId`` links that loop back: Pi's ``getBranch`` never ends on them."""
    MISSING_FINAL_NEWLINE = "missing_final_newline"
    """The last line has no ``\\n``: Pi's next append would glue onto it."""


DEFAULT_SEVERITY: Final[Mapping[ProblemKind, Severity]] = {
    ProblemKind.TORN_LINE: Severity.ERROR,
    ProblemKind.GLUED_OBJECTS: Severity.ERROR,
    ProblemKind.INVALID_JSON: Severity.ERROR,
    ProblemKind.INVALID_ENCODING: Severity.ERROR,
    ProblemKind.NOT_AN_OBJECT: Severity.ERROR,
    ProblemKind.MISSING_HEADER: Severity.ERROR,
    ProblemKind.NOT_SESSION_HEADER: Severity.ERROR,
    ProblemKind.EXTRA_HEADER: Severity.WARNING,
    ProblemKind.DANGLING_PARENT: Severity.WARNING,
    ProblemKind.DUPLICATE_ID: Severity.ERROR,
    ProblemKind.INVALID_FIELD: Severity.WARNING,
    ProblemKind.ENTRY_WITHOUT_ID: Severity.WARNING,
    ProblemKind.UNKNOWN_ENTRY_TYPE: Severity.INFO,
    ProblemKind.LEGACY_VERSION: Severity.INFO,
    ProblemKind.FUTURE_VERSION: Severity.WARNING,
    ProblemKind.BLANK_LINE: Severity.INFO,
    ProblemKind.OVERSIZED_LINE: Severity.ERROR,
    ProblemKind.PARENT_CYCLE: Severity.ERROR,
    ProblemKind.MISSING_FINAL_NEWLINE: Severity.WARNING,
}
"""Why these: anything that makes Pi lose or misplace data is an error (Pi's loader skips a
glued line whole, so the entries on it vanish for Pi even though this reader recovers them; a
duplicate id silently re-links the tree). What Pi tolerates with a defined outcome (an orphan
becomes a root, an entry without id stays out of the tree) is a warning. What is normal for
old or newer files is info."""


MAX_PROBLEMS_PER_KIND: Final = 10_000
"""Problems of one kind listed per file; the rest are counted in one more problem, so a file
of a million bad lines costs the reader bounded memory."""


@frozen(kw_only=True)
class Problem:
    """One thing wrong with one line (``line`` is ``None`` for file-level problems)."""

    kind: ProblemKind
    line: int | None
    message: str
    severity: Severity
    entry_id: str | None = None
    field: str | None = None
    raw: str | None = None

    @classmethod
    def of(
        cls,
        kind: ProblemKind,
        line: int | None,
        message: str,
        *,
        entry_id: str | None = None,
        field: str | None = None,
        raw: str | None = None,
    ) -> Problem:
        """A problem with the default severity of its kind."""
        return cls(
            kind=kind,
            line=line,
            message=message,
            severity=DEFAULT_SEVERITY[kind],
            entry_id=entry_id,
            field=field,
            raw=raw,
        )

    @property
    def is_defect(self) -> bool:
        return self.severity.is_defect

    def render(self, path: str) -> str:
        """``path:line: severity: kind: message`` (no ``:line`` for file-level problems)."""
        where = path if self.line is None else f"{path}:{self.line}"
        return f"{where}: {self.severity.value}: {self.kind.value}: {self.message}"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "kind": self.kind.value,
            "line": self.line,
            "severity": self.severity.value,
            "message": self.message,
        }
        for key, value in (("entryId", self.entry_id), ("field", self.field), ("raw", self.raw)):
            if value is not None:
                out[key] = value
        return out
