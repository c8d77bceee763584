"""Reading and writing Pi session JSONL files.

Reading is tolerant and streaming: :class:`SessionParser` takes one physical line at a time
and turns it into entries plus typed :class:`~pictx_fsm.session.problems.Problem` values, so a
large file is never held twice in memory. Nothing is dropped: a line two objects were glued
onto yields both (Pi's own loader skips such a line whole, losing both), a torn fragment is
reported with its text, an unknown entry type is kept opaque. Only a file that cannot be read
at all raises :class:`~pictx_fsm.errors.UnreadableInputError`.

Encoding decision: lines are decoded one by one as strict UTF-8. A line that is not UTF-8 (a
crash can cut a multi-byte character; a disk can leave binary junk) is reported as
``invalid_encoding`` with its bytes kept in ``raw`` (backslash-escaped) and is then parsed with
replacement characters, as Node's ``readFileSync(path, "utf8")`` would: one bad line never
hides the rest of the file.

Writing reproduces Pi's format (``JSON.stringify`` + ``"\\n"``: compact separators, non-ASCII
as is) and never glues a new entry onto an unterminated last line (failure mode F20).
"""

from __future__ import annotations

import errno
import io
import logging
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, BinaryIO, Final

from attrs import frozen

from pictx_fsm.errors import SessionWriteError, UnreadableInputError
from pictx_fsm.js import stringify
from pictx_fsm.session.entries import (
    ENTRY_TYPES,
    Entry,
    FieldProblem,
    SessionHeader,
    entry_from_json,
    header_from_json,
)
from pictx_fsm.session.lines import (
    HEADER_TYPE,
    JSON_WHITESPACE,
    MAX_LINE_BYTES,
    OVERSIZED_PREVIEW,
    PhysicalLine,
    Piece,
    classify_junk,
    is_blank,
    iter_physical_lines,
    iter_text_lines,
    split_line,
)
from pictx_fsm.session.migrate import (
    CURRENT_VERSION,
    Migration,
    migrate_header,
    needs_migration,
    written_version,
)
from pictx_fsm.session.problems import MAX_PROBLEMS_PER_KIND, Problem, ProblemKind

_log = logging.getLogger(__name__)
EntryBuilder = Callable[[Mapping[str, Any]], tuple[Entry, Sequence[FieldProblem]]]
_JSON_KIND_NAMES: Final = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


# --------------------------------------------------------------------------------------------
# Results


@frozen(kw_only=True)
class EntryLine:
    """An entry with the 1-based line it was read from (what the streaming reader yields)."""

    entry: Entry
    line: int


@frozen(kw_only=True)
class LoadedSession:
    """A whole session file as read: header, entries in file order, problems.

    ``lines[i]`` is the 1-based source line of ``entries[i]`` (a parallel tuple, so that
    ``entries`` can be handed as is to the tree). Entries are v3 after in-memory migration;
    ``original_version`` is the version the file declared (1 for a header without one).
    """

    header: SessionHeader | None
    entries: tuple[Entry, ...]
    lines: tuple[int, ...]
    problems: tuple[Problem, ...]
    source: str
    original_version: int | None

    @property
    def has_defects(self) -> bool:
        """A warning or an error was found (info problems are not defects)."""
        return any(problem.is_defect for problem in self.problems)

    @property
    def is_session(self) -> bool:
        """Anything session-like was found: a header or at least one entry."""
        return self.header is not None or bool(self.entries)


# --------------------------------------------------------------------------------------------
# The streaming parser


class SessionParser:
    """Turns physical lines into entries and problems, one line at a time.

    Header rule as Pi's loader: the first JSON object must be a ``session`` header with a
    string id. Unlike Pi, entries are still returned when it is not (the caller decides).
    """

    def __init__(
        self,
        source: str = "<memory>",
        build: EntryBuilder = entry_from_json,
        split: Callable[[str], list[Piece]] = split_line,
    ) -> None:
        """``build`` makes each entry from its object and ``split`` decodes a line; a reader
        that keeps less than the whole entry may do less, as long as it reports the same
        problems and keeps the same values."""
        self.source = source
        self._build = build
        self._split = split
        self.header: SessionHeader | None = None
        self.original_version: int | None = None
        self._problems: list[Problem] = []
        self._objects = 0
        self._migration: Migration | None = None
        self._id_lines: dict[str, int] = {}
        self._parent_of: dict[str, str | None] = {}
        """Each id's parent as Pi's id map holds it (the later entry of a duplicate wins)."""
        self._unresolved: list[tuple[int, str, str]] = []
        self._last: tuple[int, bool] | None = None
        """The last line fed: its number and whether it ended with a newline."""
        self._last_had_junk = False
        self._closed = False
        self._blank_run: tuple[int, int] | None = None
        self._reported: Counter[ProblemKind] = Counter()

    @property
    def problems(self) -> tuple[Problem, ...]:
        """Problems so far, ordered by line (file-level ones first)."""
        return tuple(sorted(self._problems, key=lambda p: -1 if p.line is None else p.line))

    def _report(self, kind: ProblemKind, line: int | None, message: str, **extra: Any) -> None:
        self._reported[kind] += 1
        if self._reported[kind] <= MAX_PROBLEMS_PER_KIND:
            self._problems.append(Problem.of(kind, line, message, **extra))

    def feed(self, line: PhysicalLine) -> list[EntryLine]:
        """The entries found on one line (usually one)."""
        self._last, self._last_had_junk = (line.number, line.terminated), False
        if line.oversized is not None:
            self._oversized(line)
            return []
        if line.undecodable is not None:
            self._report(
                ProblemKind.INVALID_ENCODING,
                line.number,
                "line is not valid UTF-8; read with replacement characters",
                raw=line.undecodable,
            )
        if is_blank(line.text):
            start, count = self._blank_run or (line.number, 0)
            self._blank_run = (start, count + 1)
            return []
        self._end_blank_run()
        pieces = self._split(line.text)
        if len(pieces) == 1 and not pieces[0].junk:  # the common line: one object
            return self._take(pieces[0], line.number)
        objects = [p for p in pieces if not p.junk]
        if len(objects) > 1:
            self._report(
                ProblemKind.GLUED_OBJECTS,
                line.number,
                f"{len(objects)} JSON objects glued on one line; all recovered "
                "(Pi's loader drops the whole line)",
            )
        found: list[EntryLine] = []
        for position, piece in enumerate(pieces):
            if piece.junk:
                self._junk(piece.text, line, recovered_after=position < len(pieces) - 1)
            else:
                found += self._take(piece, line.number)
        self._last_had_junk = pieces[-1].junk  # a torn end is already reported as torn
        return found

    @property
    def started(self) -> bool:
        """A JSON value was read: the next object is an entry or an extra header."""
        return self._objects > 0

    def feed_entry_object(self, number: int, value: dict[str, Any]) -> Entry:
        """:meth:`feed` of a terminated UTF-8 line that holds exactly ``value``, decoded by
        the caller, once the parser has :attr:`started`: an object whose type is an entry
        type (not a header). The same entry and problems, without the line's text."""
        self._last, self._last_had_junk = (number, True), False
        if self._blank_run is not None:
            self._end_blank_run()
        index = self._objects
        self._objects += 1
        return self._entry(value, index, number)

    def _end_blank_run(self) -> None:
        """One problem per run of blank lines: a file of blank lines costs one, not millions."""
        if self._blank_run is None:
            return
        start, count = self._blank_run
        self._blank_run = None
        if count == 1:
            self._report(ProblemKind.BLANK_LINE, start, "blank line (Pi skips it)")
        else:
            message = f"{count} blank lines, {start}–{start + count - 1} (Pi skips them)"
            self._report(ProblemKind.BLANK_LINE, start, message)

    def _oversized(self, line: PhysicalLine) -> None:
        self._end_blank_run()
        self._last_had_junk = True  # reported here, not again as a missing final newline
        message = (
            f"line of {line.oversized} bytes is longer than the reader's limit of "
            f"{MAX_LINE_BYTES} bytes; skipped (raw: its first {OVERSIZED_PREVIEW} bytes)"
        )
        self._report(ProblemKind.OVERSIZED_LINE, line.number, message, raw=line.text)

    def _junk(self, junk: str, line: PhysicalLine, *, recovered_after: bool) -> None:
        last_unterminated = not line.terminated and not recovered_after
        kind, message = classify_junk(junk, last_unterminated=last_unterminated)
        if recovered_after:
            message += "; the object after it on this line was recovered"
        self._report(kind, line.number, message, raw=junk)

    def _take(self, piece: Piece, line: int) -> list[EntryLine]:
        value = piece.value
        index = self._objects  # Pi's file-entry index: every parsed value counts
        self._objects += 1
        if not isinstance(value, dict):
            kind_name = _JSON_KIND_NAMES.get(type(value), "value")
            message = f"JSON {kind_name}, not an object"
            self._report(ProblemKind.NOT_AN_OBJECT, line, message, raw=_shown(piece))
            if index == 0:
                self._report(
                    ProblemKind.NOT_SESSION_HEADER,
                    line,
                    "first JSON value is not a session header (Pi treats the file as empty)",
                )
            return []
        if index == 0 and self._take_header(value, _shown(piece), line):
            return []
        if value.get("type") == HEADER_TYPE:
            self._report(
                ProblemKind.EXTRA_HEADER,
                line,
                "a session header after the first object; not an entry (Pi ignores it)",
                raw=_shown(piece),
            )
            return []
        return [EntryLine(entry=self._entry(value, index, line), line=line)]

    def _take_header(self, obj: dict[str, Any], text: str, line: int) -> bool:
        """Read the first object as the header; ``False`` when it is an entry instead."""
        if obj.get("type") != HEADER_TYPE:
            self._report(
                ProblemKind.NOT_SESSION_HEADER,
                line,
                f"first object has type {obj.get('type')!r}, not a session header "
                "(Pi treats the file as empty)",
            )
            return False
        version = written_version(obj)
        if needs_migration(version):
            obj = migrate_header(obj)
        header, field_problems = header_from_json(obj)
        if header is None:
            self._report(
                ProblemKind.NOT_SESSION_HEADER,
                line,
                "session header has no string id (Pi treats the file as empty)",
                field="id",
                raw=text,
            )
            return True
        self._field_problems(field_problems, line, None)
        self._set_header(header, version, line)
        return True

    def _set_header(self, header: SessionHeader, version: int | None, line: int) -> None:
        self.header = header
        self.original_version = version
        if version is not None and version < 1:
            self._migration = Migration(header.id, 1)
            self._report(
                ProblemKind.INVALID_FIELD,
                line,
                f"header version {version} is not a format version (1 or more); read as v1 "
                f"and migrated in memory to v{CURRENT_VERSION}, as Pi does",
                field="version",
            )
        elif version is not None and needs_migration(version):
            self._migration = Migration(header.id, version)
            self._report(
                ProblemKind.LEGACY_VERSION,
                line,
                f"format v{version}, migrated in memory to v{CURRENT_VERSION}",
            )
        elif version is not None and version > CURRENT_VERSION:
            self._report(
                ProblemKind.FUTURE_VERSION,
                line,
                f"format v{version} is newer than v{CURRENT_VERSION}; read as v{CURRENT_VERSION}",
                field="version",
            )

    def _entry(self, obj: dict[str, Any], index: int, line: int) -> Entry:
        if self._migration is not None:
            obj, migration_problems = self._migration.migrate(obj, index)
            self._field_problems(migration_problems, line, obj.get("id"))
        entry, field_problems = self._build(obj)
        entry_id = entry.id
        if field_problems:
            self._field_problems(field_problems, line, entry_id)
        kind = obj.get("type")
        if isinstance(kind, str) and kind not in ENTRY_TYPES:
            self._report(
                ProblemKind.UNKNOWN_ENTRY_TYPE,
                line,
                f"unknown entry type {kind!r}, kept opaque",
                entry_id=entry_id,
            )
        if entry_id is not None:
            self._link(entry_id, entry.parent_id, line)
        return entry

    def _field_problems(
        self, problems: Sequence[FieldProblem], line: int, entry_id: object
    ) -> None:
        eid = entry_id if isinstance(entry_id, str) else None
        for problem in problems:
            kind = (
                ProblemKind.ENTRY_WITHOUT_ID if problem.field == "id" else ProblemKind.INVALID_FIELD
            )
            self._report(kind, line, problem.message, entry_id=eid, field=problem.field)

    def _link(self, entry_id: str, parent_id: str | None, line: int) -> None:
        first = self._id_lines.get(entry_id)
        self._parent_of[entry_id] = None if parent_id == entry_id else parent_id
        if first is not None:
            self._report(
                ProblemKind.DUPLICATE_ID,
                line,
                f"id {entry_id!r} already used at line {first}; this later entry wins lookups",
                entry_id=entry_id,
                field="id",
            )
        else:
            self._id_lines[entry_id] = line
        if parent_id == entry_id:
            self._report(
                ProblemKind.INVALID_FIELD,
                line,
                "entry is its own parent",
                entry_id=entry_id,
                field="parentId",
            )
        elif parent_id is not None and parent_id not in self._id_lines:
            self._unresolved.append((line, entry_id, parent_id))

    def close(self) -> None:
        """End-of-input checks: dangling parents, no header, unterminated last line."""
        if self._closed:
            return
        self._closed = True
        self._end_blank_run()
        for line, entry_id, parent_id in self._unresolved:
            if parent_id not in self._id_lines:
                self._report(
                    ProblemKind.DANGLING_PARENT,
                    line,
                    f"parentId {parent_id!r} names no entry in the file",
                    entry_id=entry_id,
                    field="parentId",
                )
        if self._objects == 0:
            what = "file is empty" if self._last is None else "no JSON value in the file"
            self._report(ProblemKind.MISSING_HEADER, None, f"{what}, so no session header")
        last = self._last
        if last is not None and not last[1] and not self._last_had_junk:
            self._report(
                ProblemKind.MISSING_FINAL_NEWLINE,
                last[0],
                "last line has no final newline; a plain append would glue onto it",
            )
        self._report_cycles()
        self._report_omitted()

    def _report_cycles(self) -> None:
        """``parentId`` links that loop (e1 → e3 → e2 → e1): Pi's ``getBranch`` from any of
        them never ends. The reader's tree cannot loop (a parent must come earlier), so only
        this check sees them; each cycle is reported once, at its first line. Without a
        duplicate id or a parent named before it is defined, every parent precedes its child
        and nothing can loop: the walk is skipped."""
        if not self._unresolved and not self._reported[ProblemKind.DUPLICATE_ID]:
            return
        done: set[str] = set()
        for start in self._parent_of:
            path: dict[str, None] = {}
            node: str | None = start
            while node is not None and node not in done and node not in path:
                path[node] = None
                node = self._parent_of.get(node)
            done.update(path)
            if node is not None and node in path:
                self._report_cycle(list(path)[list(path).index(node) :])

    def _report_cycle(self, members: list[str]) -> None:
        first = min(members, key=lambda member: self._id_lines[member])
        at = members.index(first)
        loop = [*members[at:], *members[:at], first]
        self._report(
            ProblemKind.PARENT_CYCLE,
            self._id_lines[first],
            "parentId cycle " + " → ".join(loop) + ": no root above these entries (a getBranch "
            "from them never ends)",
            entry_id=first,
            field="parentId",
        )

    def _report_omitted(self) -> None:
        for kind, count in self._reported.items():
            if count > MAX_PROBLEMS_PER_KIND:
                omitted = count - MAX_PROBLEMS_PER_KIND
                message = (
                    f"{omitted} more {kind.value} problems not listed (the first "
                    f"{MAX_PROBLEMS_PER_KIND} are)"
                )
                self._problems.append(Problem.of(kind, None, message))

    def result(self, entries: Iterable[EntryLine]) -> LoadedSession:
        pairs = list(entries)  # first: streaming ``entries`` may still be feeding the parser
        self.close()
        return LoadedSession(
            header=self.header,
            entries=tuple(p.entry for p in pairs),
            lines=tuple(p.line for p in pairs),
            problems=self.problems,
            source=self.source,
            original_version=self.original_version,
        )


def _shown(piece: Piece) -> str:
    return piece.text.strip(JSON_WHITESPACE)


def iter_session(lines: Iterable[PhysicalLine], parser: SessionParser) -> Iterator[EntryLine]:
    """Stream entries through ``parser``; its header is known after the first entry, its
    problems are complete once the iterator is exhausted."""
    for line in lines:
        yield from parser.feed(line)
    parser.close()


def iter_session_lines(fp: BinaryIO, parser: SessionParser) -> Iterator[EntryLine]:
    """Stream the entries of an open binary file (the audit's way to read large files)."""
    return iter_session(iter_physical_lines(fp), parser)


def parse_session(text: str, source: str = "<memory>") -> LoadedSession:
    """Read a session from a string (tests, fixtures, bridge payloads)."""
    parser = SessionParser(source)
    return parser.result(iter_session(iter_text_lines(text), parser))


def read_session(path: str | os.PathLike[str]) -> LoadedSession:
    """Read a session file. Raises :class:`UnreadableInputError` only when the file cannot be
    read at all (missing, a directory, a device, no permission, an I/O error)."""
    name = os.fspath(path)
    parser = SessionParser(name)
    try:
        with open_regular(name) as fp:
            return parser.result(iter_session_lines(fp, parser))
    except OSError as exc:
        raise UnreadableInputError(name, os_reason(exc)) from exc


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a regular file for binary reading; anything else (``/dev/zero``, a FIFO, a socket,
    a directory, also behind a symlink named ``.jsonl``) is refused before a byte is read, so
    no reader can grow without end or block on it. Raises ``OSError``."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(errno.EINVAL, _NOT_REGULAR, os.fspath(path))
        os.set_blocking(descriptor, True)
        return open(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


class NotRegularFileError(OSError):
    """A path that names a device, FIFO or socket where a file was expected."""


_NOT_REGULAR: Final = "not a regular file (a device, FIFO or socket); refused"


def os_reason(exc: OSError) -> str:
    """A short, user-facing reason for an unreadable file."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a session file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, NotRegularFileError):
        return _NOT_REGULAR
    return exc.strerror or str(exc)


# --------------------------------------------------------------------------------------------
# Writing


def dumps_json(obj: Mapping[str, Any]) -> str:
    """One object as Pi's ``JSON.stringify`` writes it (:func:`pictx_fsm.js.stringify`:
    compact, non-ASCII kept, JavaScript's numbers and key order, lone surrogates escaped, so
    the line is always valid UTF-8). A non-finite number or a value JSON cannot hold raises
    ``ValueError``/``TypeError``: such a line is never written."""
    return stringify(obj, finite=True)


def dumps_entry(entry: Entry | SessionHeader) -> str:
    """The line (without its newline) Pi writes for an entry or header."""
    return dumps_json(entry.to_json())


def dumps_session(header: SessionHeader, entries: Iterable[Entry] = ()) -> str:
    """A whole session file: header line, entry lines, each ending in ``\\n``."""
    return "".join(f"{dumps_entry(item)}\n" for item in (header, *entries))


class SessionWriter:
    """Writes one session file in Pi's format, one flushed line per entry.

    ``append`` first checks the file's last byte: if a previous writer died mid-line, a
    ``\\n`` is written before the new entries (reported as a ``missing_final_newline``
    problem, and logged), so the torn tail stays a separate, reportable line and the new
    entries are never glued onto it.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = os.fspath(path)
        self._fsync = fsync
        self._problems: list[Problem] = []

    @property
    def problems(self) -> tuple[Problem, ...]:
        """Every tail repair this writer made."""
        return tuple(self._problems)

    def create(self, header: SessionHeader, entries: Iterable[Entry] = ()) -> None:
        """Create the file (it must not exist, like Pi's ``wx`` flag) with header and entries."""
        lines = self._encode((header, *entries))
        try:
            with open(self.path, "xb") as fp:
                self._write_lines(fp, lines)
        except FileExistsError as exc:
            raise SessionWriteError(self.path, "already exists; append to it instead") from exc
        except OSError as exc:
            raise SessionWriteError(self.path, os_reason(exc)) from exc

    def append(self, entries: Iterable[Entry]) -> tuple[Problem, ...]:
        """Append entries; returns the tail repair made first, if any."""
        lines = self._encode(entries)
        try:
            # O_APPEND: every write lands at the end even if another process appended since.
            descriptor = os.open(self.path, os.O_RDWR | os.O_APPEND)
            with open(descriptor, "r+b") as fp:
                fp.seek(0, io.SEEK_END)
                repaired = self._separate_tail(fp)
                self._write_lines(fp, lines)
        except OSError as exc:
            raise SessionWriteError(self.path, os_reason(exc)) from exc
        return repaired

    def _separate_tail(self, fp: BinaryIO) -> tuple[Problem, ...]:
        size = fp.tell()
        if size == 0:
            return ()
        fp.seek(size - 1)
        if fp.read(1) == b"\n":
            return ()
        line = _count_newlines(fp, size) + 1
        fp.seek(size)
        fp.write(b"\n")
        fp.flush()
        problem = Problem.of(
            ProblemKind.MISSING_FINAL_NEWLINE,
            line,
            "unterminated last line; wrote a newline before appending so no entry is glued to it",
        )
        _log.warning("%s", problem.render(self.path))
        self._problems.append(problem)
        return (problem,)

    def _encode(self, items: Iterable[Entry | SessionHeader]) -> list[bytes]:
        """Every line, before anything is written: an entry that is not JSON (NaN, a set)
        fails the whole call with nothing written."""
        lines = []
        for item in items:
            try:
                lines.append(f"{dumps_entry(item)}\n".encode())
            except (TypeError, ValueError) as exc:
                what = "header" if isinstance(item, SessionHeader) else f"{item.type} entry"
                reason = f"{what} {item.id!r} is not JSON: {exc}"
                raise SessionWriteError(self.path, reason) from exc
        return lines

    def _write_lines(self, fp: BinaryIO, lines: Iterable[bytes]) -> None:
        for data in lines:
            fp.write(data)
            fp.flush()
            if self._fsync:
                os.fsync(fp.fileno())


def _count_newlines(fp: BinaryIO, size: int) -> int:
    fp.seek(0)
    count = 0
    while fp.tell() < size:
        chunk = fp.read(min(1 << 20, size - fp.tell()))
        if not chunk:
            break
        count += chunk.count(b"\n")
    return count


__all__ = [
    "EntryLine",
    "LoadedSession",
    "PhysicalLine",
    "SessionParser",
    "SessionWriter",
    "dumps_entry",
    "dumps_json",
    "dumps_session",
    "iter_physical_lines",
    "iter_session",
    "iter_session_lines",
    "iter_text_lines",
    "open_regular",
    "parse_session",
    "read_session",
]
