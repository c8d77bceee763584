"""The diagnostics log ``<session file>.ctxlog.jsonl`` (M64–M67): what a record may hold,
and the rotating writer.

Records carry only whitelisted field names with enum-like strings, numbers, booleans or
ids (:func:`check_record`): a string with a space, quote or newline is text, and text never
reaches the log (conversation, tool arguments, file contents, secrets, raw error text, note
text — M66). The file never exceeds 2 MiB: before a write that would cross the limit the
file becomes ``.1`` and ``.1`` becomes ``.2`` (older data drops out, M67). A failed write
never blocks the task; the caller shows it in the status bar.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Protocol, TypeAlias

from pictx_fsm.extensions.context_management.policy import LOG_BACKUPS, LOG_MAX_BYTES

__all__ = [
    "FIELDS",
    "JSON",
    "KINDS",
    "LOG_SUFFIX",
    "REPORT_SUFFIX",
    "DiagnosticsLog",
    "LogFiles",
    "OsLogFiles",
    "RecordError",
    "backups",
    "check_record",
    "log_path",
    "read_records",
]

JSON: TypeAlias = Any
LOG_SUFFIX: Final = ".ctxlog.jsonl"
REPORT_SUFFIX: Final = ".ctx-report.json"
KINDS: Final = frozenset(
    {
        "operation_start",
        "operation_end",
        "native_compaction",
        "note_write",
        "auto_trigger",
        "background_discard",
        "handoff_phase",
        "tool_call",
    }
)
FIELDS: Final = frozenset(
    {
        "kind",
        "id",
        "type",
        "model",
        "time",
        "durationMs",
        "flowDurationMs",
        "result",
        "usage",
        "input",
        "output",
        "cost",
        "budget",
        "actual",
        "limit",
        "generationTimeoutMs",
        "trigger",
        "mode",
        "reason",
        "tokens",
        "contextWindow",
        "growthTokens",
        "projectedTokens",
        "retired",
        "batch",
        "batches",
        "requests",
        "phase",
        "session",
        "source",
        "fingerprint",
    }
)
_TOKEN = re.compile(r"[A-Za-z0-9_.:/@+-]{0,160}")


class RecordError(ValueError):
    """A record that would put text or an unknown field into the log."""


def check_record(record: Mapping[str, JSON]) -> None:
    """Refuse anything but whitelisted names and enum/number/id values (M66)."""
    if record.get("kind") not in KINDS:
        raise RecordError(f"unknown record kind {record.get('kind')!r}")
    _check_mapping(record)


def _check_mapping(value: Mapping[str, JSON]) -> None:
    for name, item in value.items():
        if name not in FIELDS:
            raise RecordError(f"field {name!r} is not whitelisted")
        _check_value(name, item)


def _check_value(name: str, value: JSON) -> None:
    if value is None or isinstance(value, bool | int | float):
        return
    if isinstance(value, str):
        if not _TOKEN.fullmatch(value):
            raise RecordError(f"field {name!r} holds text, not an enum or id")
        return
    if isinstance(value, Mapping):
        _check_mapping(value)
        return
    raise RecordError(f"field {name!r} holds a {type(value).__name__}")


class LogFiles(Protocol):
    """The few file operations the log needs (a real directory, or the model host's)."""

    def size(self, path: str) -> int: ...

    def append(self, path: str, data: bytes) -> None: ...

    def rename(self, source: str, target: str) -> None: ...

    def remove(self, path: str) -> None: ...

    def read(self, path: str) -> bytes | None: ...

    def write(self, path: str, data: bytes) -> None: ...


class OsLogFiles:
    """The real file system."""

    def size(self, path: str) -> int:
        try:
            return os.path.getsize(path)
        except FileNotFoundError:
            return 0

    def append(self, path: str, data: bytes) -> None:
        with open(path, "ab") as fp:
            fp.write(data)

    def rename(self, source: str, target: str) -> None:
        if os.path.exists(source):
            os.replace(source, target)

    def remove(self, path: str) -> None:
        Path(path).unlink(missing_ok=True)

    def read(self, path: str) -> bytes | None:
        try:
            return Path(path).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None

    def write(self, path: str, data: bytes) -> None:
        Path(path).write_bytes(data)


def log_path(session_file: str) -> str:
    return session_file + LOG_SUFFIX


def backups(path: str) -> tuple[str, ...]:
    return tuple(f"{path}.{n}" for n in range(1, LOG_BACKUPS + 1))


class DiagnosticsLog:
    """Appends checked records to one session's log, rotating at 2 MiB (M67)."""

    def __init__(self, files: LogFiles, session_file: str) -> None:
        self.files = files
        self.path = log_path(session_file)

    def write(self, record: Mapping[str, JSON]) -> None:
        """Raises :class:`RecordError` for a bad record and ``OSError`` when the disk fails."""
        check_record(record)
        line = (json.dumps(record, separators=(",", ":"), sort_keys=True) + "\n").encode()
        if self.files.size(self.path) + len(line) > LOG_MAX_BYTES:
            self.rotate()
        self.files.append(self.path, line)

    def rotate(self) -> None:
        names = (self.path, *backups(self.path))
        self.files.remove(names[-1])
        for older, newer in zip(reversed(names[:-1]), reversed(names[1:]), strict=True):
            self.files.rename(older, newer)


def read_records(files: LogFiles, path: str) -> tuple[list[dict[str, JSON]], int]:
    """The records of one log file (oldest first) and how many lines were corrupt (M67)."""
    data = files.read(path)
    if data is None:
        return [], 0
    records: list[dict[str, JSON]] = []
    corrupt = 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            corrupt += 1
            continue
        if isinstance(obj, dict):
            records.append(obj)
        else:
            corrupt += 1
    return records, corrupt
