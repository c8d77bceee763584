"""The audit log as a file: resuming, appending, sealing and verifying its hash chain.

:mod:`pictx_fsm.audit.log` decides what a record says; this module decides how records live in a
file so that the file survives crashes and misuse and every damage stays visible:

- **Segments and seals.** Each process appends one segment; a clean close ends it with a
  *seal* record (``{"kind": "seal", "records": n, "head": <hash>}``), so a log cut at a
  record boundary is told from a finished one: its last segment has no seal.
- **Resume.** Opening a log verifies it in one bounded pass. A last record without its final
  newline is terminated before anything is appended (never glued). A damaged tail — a
  record torn by a crash, a blank or edited line — is left in place and *sealed off*: the
  next record is a *segment* record (``{"kind": "segment", "damaged": [first, last],
  "reason": …}``) that chains to the last intact record, so the log keeps working and the
  damage is declared, never hidden.
- **Unusable place.** A log that cannot be opened or written (its directory is a file, no
  permission, a full disk) keeps its records in memory; the lifecycle goes on, and what
  happened is said once (:attr:`AuditFile.notice`, and on stderr).
- **One writer.** A writer holds an exclusive lock on the file while it is open, so the next
  process (Pi re-creates the extension on resume and fork) resumes only after the previous
  one sealed its segment; a log still locked after :data:`LOCK_WAIT_SECONDS` is treated as
  unusable.
- **Verification** (:func:`verify_chain`, ``pictx-fsm log verify``) reads line by line in
  bounded memory. A record must be the canonical serialisation of its content (sorted keys,
  compact, ASCII), chain to the previous hash and carry the next sequence number; a blank line
  is damage. Damage declared by a segment record is reported in :attr:`ChainReport.damage`;
  undeclared damage raises :class:`~pictx_fsm.errors.AuditChainError` at its first line.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, BinaryIO, Final

import attrs
from attrs import define, field, frozen

from pictx_fsm.errors import AuditChainError, UnreadableInputError
from pictx_fsm.session.digest import canonical, digest
from pictx_fsm.session.jsonl import open_regular, os_reason
from pictx_fsm.session.lines import iter_physical_lines

__all__ = [
    "AUDIT_FORMAT",
    "GENESIS",
    "LOCK_WAIT_SECONDS",
    "MAX_RECORD_BYTES",
    "SEAL",
    "SEGMENT",
    "AuditFile",
    "ChainReport",
    "Damage",
    "check_log",
    "hook_records",
    "iter_records",
    "scan",
    "seal_record",
    "segment_record",
    "verify_chain",
    "verify_lines",
    "write_sealed",
]

GENESIS: Final = "0" * 64
AUDIT_FORMAT: Final = "pictx-fsm/audit/2"
"""2: message lists digested as hash lists (``audit.message_list_digest``); 1: whole-list
sha256. Both verify: :func:`verify_chain` checks every record's bytes and hash, not digests."""
SEAL: Final = "seal"
SEGMENT: Final = "segment"
LOCK_WAIT_SECONDS: Final = 3.0
MAX_RECORD_BYTES: Final = 64 * 1024 * 1024
"""The longest line read as a record: a longer one is damage, read past in bounded chunks."""


def seal_record(seq: int, records: int, head: str) -> dict[str, Any]:
    """The record that ends a segment: how many records it holds and the last one's hash."""
    body = {"format": AUDIT_FORMAT, "kind": SEAL, "seq": seq, "records": records, "head": head}
    return _hashed({**body, "prev": head})


def segment_record(
    seq: int, prev: str, damaged: tuple[int, int] | tuple[()], reason: str
) -> dict[str, Any]:
    """The record that opens a segment after damaged lines (``damaged`` is their first and
    last line) or after a segment that ended without its seal (``damaged`` empty), chained to
    the last intact record."""
    body = {
        "format": AUDIT_FORMAT,
        "kind": SEGMENT,
        "seq": seq,
        "damaged": list(damaged),
        "reason": reason,
        "prev": prev,
    }
    return _hashed(body)


def _hashed(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "hash": digest(canonical(body))}


# --------------------------------------------------------------------------------------------
# Reading and verifying


@frozen(kw_only=True)
class Damage:
    """Lines that are not records of the chain, and the segment record that declares them."""

    first_line: int
    last_line: int
    reason: str
    declared_at: int | None
    """The line of the segment record that seals this damage off (``None``: undeclared)."""

    def text(self, source: str) -> str:
        lines = (
            f"line {self.first_line}"
            if self.first_line == self.last_line
            else f"lines {self.first_line}–{self.last_line}"
        )
        after = (
            "not declared by any segment record"
            if self.declared_at is None
            else f"sealed off by the segment record at line {self.declared_at}"
        )
        return f"{source}:{self.first_line}: {self.reason} ({lines}; {after})"


@frozen(kw_only=True)
class ChainReport:
    """What a verified log holds. ``records`` counts every valid record (seals included)."""

    records: int
    last_hash: str
    last_seq: int = 0
    sealed: bool = False
    """The log ends with a seal: it was closed cleanly and not cut since."""
    segments: int = 0
    unsealed: tuple[int, ...] = ()
    """For each earlier segment that ended without its seal (a writer stopped, or the log was
    cut at a record boundary), the line of the segment record that says so."""
    damage: tuple[Damage, ...] = ()
    unterminated: bool = False
    """The last record has no final newline (a crash just before it)."""

    @property
    def intact(self) -> bool:
        """No damage at all and a sealed end: nothing lost, nothing cut."""
        return not self.damage and self.sealed


@define
class _Verifier:
    """The chain state while lines are read one by one."""

    source: str
    previous: str = GENESIS
    seq: int = 0
    records: int = 0
    in_segment: int = 0
    segments: int = 0
    sealed: bool = False
    unsealed: list[int] = field(factory=list)
    damage: list[Damage] = field(factory=list)
    broken_at: int | None = None
    broken_reason: str = ""
    last_line: int = 0

    def feed(self, number: int, line: str, unreadable: str | None = None) -> None:
        self.last_line = number
        record, reason = (
            (None, unreadable) if unreadable else _check(line, self.previous, self.seq + 1)
        )
        if record is None:
            if self.broken_at is None:
                self.broken_at, self.broken_reason = number, reason
            return
        if self.broken_at is not None:
            if not self._declares(record, number):
                return  # still inside the damage: chained records cannot resume by themselves
        elif record.get("kind") == SEGMENT:
            if record.get("damaged") != []:
                self.broken_at = number
                self.broken_reason = "segment record declares damage that is not there"
                return
            self.unsealed.append(number)
        self._accept(record)

    def _declares(self, record: Mapping[str, Any], number: int) -> bool:
        assert self.broken_at is not None
        expected = [self.broken_at, number - 1]
        if record.get("kind") != SEGMENT or record.get("damaged") != expected:
            return False
        self.damage.append(
            Damage(
                first_line=self.broken_at,
                last_line=number - 1,
                reason=self.broken_reason,
                declared_at=number,
            )
        )
        self.broken_at = None
        return True

    def _accept(self, record: Mapping[str, Any]) -> None:
        kind = record.get("kind")
        if kind == SEGMENT or (self.records == 0) or self.sealed:
            self.segments += 1
            self.in_segment = 0
        self.sealed = kind == SEAL and record.get("records") == self.in_segment
        if kind is None:
            self.in_segment += 1
        self.previous, self.seq = str(record["hash"]), int(record["seq"])
        self.records += 1

    def report(self, unterminated: bool = False) -> ChainReport:
        return ChainReport(
            records=self.records,
            last_hash=self.previous,
            last_seq=self.seq,
            sealed=self.sealed and self.broken_at is None,
            segments=self.segments,
            unsealed=tuple(self.unsealed),
            damage=tuple(self.damage),
            unterminated=unterminated,
        )

    def undeclared(self) -> Damage | None:
        if self.broken_at is None:
            return None
        return Damage(
            first_line=self.broken_at,
            last_line=self.last_line,
            reason=self.broken_reason,
            declared_at=None,
        )


def _check(line: str, previous: str, seq: int) -> tuple[dict[str, Any] | None, str]:
    """The record on a line if it is the next link of the chain, else why not."""
    if not line.strip():
        return None, "blank line (never written by the log)"
    if not line.isascii():
        return None, "record is not ASCII (edited)"
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as error:
        message = error.msg if isinstance(error, json.JSONDecodeError) else "unreadable"
        return None, f"record is not valid JSON ({message}): torn or edited"
    if not isinstance(record, dict) or not isinstance(record.get("hash"), str):
        return None, "record has no hash"
    if canonical(record) != line:
        return None, "record bytes are not canonical (edited)"
    body = {key: value for key, value in record.items() if key != "hash"}
    if digest(canonical(body)) != record["hash"]:
        return None, "record hash does not match its content"
    if record.get("prev") != previous:
        return None, "record does not chain to the previous hash"
    if record.get("seq") != seq or isinstance(record.get("seq"), bool):
        return None, f"sequence number {record.get('seq')} != {seq}"
    return record, ""


def _lines(fp: BinaryIO) -> Iterator[tuple[int, str, bool, str | None]]:
    """``(number, text, terminated, why unreadable)`` for each ``\\n``-separated line, in
    bounded memory."""
    for line in iter_physical_lines(fp, MAX_RECORD_BYTES):
        unreadable = None
        if line.oversized is not None:
            unreadable = f"a line of {line.oversized} bytes, longer than any record"
        elif line.undecodable is not None:
            unreadable = "record is not ASCII (edited)"
        yield line.number, line.text, line.terminated, unreadable


def _open(path: str | os.PathLike[str]) -> BinaryIO:
    return open_regular(path)


def scan(path: str | os.PathLike[str]) -> tuple[_Verifier, bool]:
    """Verify a file line by line; returns the state and whether the last line lacks its
    newline. Raises :class:`UnreadableInputError` when it cannot be read."""
    source = os.fspath(path)
    verifier = _Verifier(source=source)
    unterminated = False
    try:
        with _open(source) as fp:
            for number, text, terminated, unreadable in _lines(fp):
                verifier.feed(number, text, unreadable)
                unterminated = not terminated
    except OSError as error:
        raise UnreadableInputError(source, os_reason(error)) from error
    return verifier, unterminated


def verify_chain(path: str | os.PathLike[str]) -> ChainReport:
    """Verify an audit file; undeclared damage raises :class:`AuditChainError` naming the file
    and its first bad line. Records are split on ``\\n`` only, as they were written: a ``\\r``
    inside a line is an edit of that record."""
    verifier, unterminated = scan(path)
    return _finish(verifier, unterminated)


def check_log(path: str | os.PathLike[str]) -> ChainReport:
    """Verify an audit file and report all of it: undeclared damage is in ``damage`` too
    (``declared_at`` ``None``; nothing after it can be verified) instead of raised."""
    verifier, unterminated = scan(path)
    report = verifier.report(unterminated)
    undeclared = verifier.undeclared()
    if undeclared is None:
        return report
    return attrs.evolve(report, damage=(*report.damage, undeclared), sealed=False)


def verify_lines(lines: Iterable[str], source: str = "<memory>") -> ChainReport:
    """Verify a chain given as text lines (without newlines)."""
    verifier = _Verifier(source=source)
    for number, line in enumerate(lines, start=1):
        verifier.feed(number, line.rstrip("\n"))
    return _finish(verifier, False)


def _finish(verifier: _Verifier, unterminated: bool) -> ChainReport:
    undeclared = verifier.undeclared()
    if undeclared is not None:
        raise AuditChainError(verifier.source, undeclared.first_line, undeclared.reason)
    return verifier.report(unterminated)


def iter_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects of an audit file (a line that is not one becomes ``{"__invalid__":
    line}``); raises :class:`UnreadableInputError` on unreadable files only."""
    source = os.fspath(path)
    try:
        with _open(source) as fp:
            for _, text, _, _ in _lines(fp):
                if text.strip():
                    yield _record_or_invalid(text)
    except OSError as error:
        raise UnreadableInputError(source, str(error)) from error


def hook_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The records of handled hooks, in order: no seal or segment record, no damaged line."""
    for record in iter_records(path):
        if "kind" not in record and "__invalid__" not in record:
            yield record


def _record_or_invalid(text: str) -> dict[str, Any]:
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        return {"__invalid__": text}
    return record if isinstance(record, dict) else {"__invalid__": text}


# --------------------------------------------------------------------------------------------
# Appending


class AuditFile:
    """One process's segment of an audit log file (module docstring). Never raises on a
    damaged or unusable log: :attr:`notice` says what happened, once."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fsync: bool = False,
        warn: IO[str] | None = None,
        lock_wait: float = LOCK_WAIT_SECONDS,
    ) -> None:
        self.path = Path(path)
        self._lock_wait = lock_wait
        self.notice: str | None = None
        self.last_hash = GENESIS
        self.seq = 0
        self._fsync = fsync
        self._fp: IO[str] | None = None
        self._in_segment = 0
        try:
            self._open()
        except OSError as error:
            self._fp = None
            self._say(f"cannot write it ({error.strerror or error}); records are kept in memory")
        if self.notice is not None:
            print(f"pictx-fsm: audit log {self.path}: {self.notice}", file=warn or sys.stderr)
        if self._fp is not None:
            atexit.register(self.close)  # an interpreter that exits normally seals the log

    @property
    def writable(self) -> bool:
        return self._fp is not None

    def _say(self, notice: str) -> None:
        self.notice = notice if self.notice is None else f"{self.notice}; {notice}"

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fp = self.path.open("a", encoding="ascii")
        try:
            _lock(fp, self._lock_wait)
        except BaseException:
            fp.close()
            raise
        self._fp = fp
        if self.path.stat().st_size > 0:
            self._resume()

    def _resume(self) -> None:
        verifier, unterminated = scan(self.path)
        assert self._fp is not None
        if unterminated:
            os.write(self._fp.fileno(), b"\n")  # never glue a record onto a cut line
        self.last_hash, self.seq = verifier.previous, verifier.seq
        damage = verifier.undeclared()
        if damage is not None:
            lines = (damage.first_line, damage.last_line)
            self._open_segment(segment_record(self.seq + 1, self.last_hash, lines, damage.reason))
            self._say(
                f"{damage.reason} at line {damage.first_line}; sealed off, and a new segment "
                f"continues the chain from the last intact record (seq {self.seq - 1})"
            )
        elif not verifier.sealed and verifier.records:
            reason = "the previous segment ended without its seal"
            self._open_segment(segment_record(self.seq + 1, self.last_hash, (), reason))
        if unterminated:
            self._say("its last line had no final newline; one was added before appending")

    def _open_segment(self, record: Mapping[str, Any]) -> None:
        self._write(canonical(record))
        self.last_hash, self.seq = str(record["hash"]), int(record["seq"])

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one record (already chained to :attr:`last_hash`) and advance the chain."""
        self.append_line(canonical(record), str(record["hash"]), int(record["seq"]))

    def append_line(self, line: str, hash_: str, seq: int) -> None:
        """Write one record given as its canonical line (encoded once, by its builder)."""
        self.last_hash, self.seq = hash_, seq
        self._in_segment += 1
        if self._fp is not None:
            self._write(line)

    def _write(self, line: str) -> None:
        """One ``write(2)`` of the whole line on the append-only descriptor, no buffer in
        between: the record is the kernel's (it survives this process crashing) before the
        hook returns, and with ``fsync`` on the disk's (it survives the machine)."""
        assert self._fp is not None
        try:
            data = (line + "\n").encode("ascii")
            fd = self._fp.fileno()
            written = os.write(fd, data)
            while written < len(data):  # a short write (a signal, a nearly full disk)
                written += os.write(fd, data[written:])
            if self._fsync:
                os.fsync(fd)
        except OSError as error:
            self._fp = None
            self._say(f"writing failed ({error.strerror or error}); records are kept in memory")
            print(f"pictx-fsm: audit log {self.path}: {self.notice}", file=sys.stderr)

    def close(self) -> None:
        """End this segment with its seal (a clean shutdown), then close the file."""
        atexit.unregister(self.close)
        if self._fp is None:
            return
        seal = seal_record(self.seq + 1, self._in_segment, self.last_hash)
        self._write(canonical(seal))
        self.last_hash, self.seq = seal["hash"], seal["seq"]
        if self._fp is not None:
            self._fp.close()
            self._fp = None


def _lock(fp: IO[str], wait: float) -> None:
    """Hold an exclusive lock on the log, waiting up to ``wait`` seconds for a previous
    writer to seal and exit; ``OSError`` when it does not."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fp.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise OSError(errno.EWOULDBLOCK, "another process is writing this log") from None
            time.sleep(0.05)


def write_sealed(path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]]) -> None:
    """A whole log written at once (a replay's records), ending with its seal."""
    lines = []
    last, seq, count = GENESIS, 0, 0
    for record in records:
        lines.append(canonical(record) + "\n")
        last, seq, count = str(record["hash"]), int(record["seq"]), count + 1
    lines.append(canonical(seal_record(seq + 1, count, last)) + "\n")
    Path(path).write_text("".join(lines), encoding="ascii")


def __getattr__(name: str) -> object:
    """The canonical JSON's ``default`` moved to :mod:`pictx_fsm.session.digest` (0.2)."""
    from pictx_fsm._moved import moved_attribute

    return moved_attribute(__name__, name)
