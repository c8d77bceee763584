"""In-memory migration of v1 and v2 session files to format v3, as Pi does on load.

- v1 → v2: every entry gets an ``id`` and the previous entry (file order) as ``parentId``;
  a compaction's ``firstKeptEntryIndex`` becomes ``firstKeptEntryId``. The index counts Pi's
  *file entries*: the header is index 0, so entry ``k`` of the file is index ``k``.
- v2 → v3: message role ``hookMessage`` is renamed ``custom``.

Pi draws random ids; here a v1 entry's id is the first 8 hex digits of
``sha256(session id, file index)`` (collision-checked), so loading the same file twice gives the
same ids. Migration works one object at a time in file order, so the reader can stream: a
``firstKeptEntryIndex`` can only name an entry already seen (or the compaction itself), which
is also all Pi can resolve (later entries have no id yet when Pi converts the index).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pictx_fsm.session.entries import FieldProblem

__all__ = [
    "CURRENT_VERSION",
    "HOOK_MESSAGE_ROLE",
    "JSONObject",
    "Migration",
    "derived_id",
    "migrate_file_entries",
    "migrate_header",
    "needs_migration",
    "written_version",
]

CURRENT_VERSION: Final = 3
HOOK_MESSAGE_ROLE: Final = "hookMessage"

JSONObject = dict[str, Any]


def written_version(header: Mapping[str, Any]) -> int | None:
    """The format version a raw header declares: 1 when absent (v1 files have no version),
    ``None`` when the value is not an integer (then nothing is migrated)."""
    version = header.get("version", None)
    if version is None:
        return 1
    if isinstance(version, int) and not isinstance(version, bool):
        return version
    return None


def needs_migration(version: int | None) -> bool:
    return version is not None and version < CURRENT_VERSION


def migrate_header(header: Mapping[str, Any]) -> JSONObject:
    """The header as Pi rewrites it: same keys, ``version`` 3."""
    out = dict(header)
    out["version"] = CURRENT_VERSION
    return out


def derived_id(session_id: str, file_index: int, attempt: int = 0) -> str:
    """A stable 8-hex-digit id for the v1 entry at ``file_index`` of session ``session_id``."""
    seed = f"{session_id}\x00{file_index}" + (f"\x00{attempt}" if attempt else "")
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:8]


class Migration:
    """Migrates the entries of one legacy file, fed in file order."""

    def __init__(self, session_id: str, from_version: int) -> None:
        self._session_id = session_id
        self._from_version = from_version
        self._ids_by_index: dict[int, str] = {}
        self._used: set[str] = set()
        self._previous_id: str | None = None

    @property
    def from_version(self) -> int:
        return self._from_version

    def migrate(
        self, obj: Mapping[str, Any], file_index: int
    ) -> tuple[JSONObject, list[FieldProblem]]:
        """The v3 form of one entry object and any field it could not convert."""
        out = dict(obj)
        problems: list[FieldProblem] = []
        if self._from_version < 2:
            problems += self._to_v2(out, file_index)
        if self._from_version < 3:
            _to_v3(out)
        return out, problems

    def _to_v2(self, out: JSONObject, file_index: int) -> list[FieldProblem]:
        entry_id = self._fresh_id(file_index)
        out["id"] = entry_id
        out["parentId"] = self._previous_id
        self._previous_id = entry_id
        self._ids_by_index[file_index] = entry_id
        if out.get("type") == "compaction" and "firstKeptEntryIndex" in out:
            return self._convert_kept_index(out)
        return []

    def _fresh_id(self, file_index: int) -> str:
        attempt = 0
        candidate = derived_id(self._session_id, file_index)
        while candidate in self._used:
            attempt += 1
            candidate = derived_id(self._session_id, file_index, attempt)
        self._used.add(candidate)
        return candidate

    def _convert_kept_index(self, out: JSONObject) -> list[FieldProblem]:
        index = out["firstKeptEntryIndex"]
        if isinstance(index, bool) or not isinstance(index, int | float):
            return [
                FieldProblem(
                    field="firstKeptEntryIndex",
                    message=f"firstKeptEntryIndex {index!r} is not a number; left as is",
                )
            ]
        del out["firstKeptEntryIndex"]
        if isinstance(index, float) and index.is_integer():
            index = int(index)  # JavaScript has one number type: 3.0 indexes like 3
        target = self._ids_by_index.get(index) if isinstance(index, int) else None
        if target is None:
            return [
                FieldProblem(
                    field="firstKeptEntryIndex",
                    message=f"firstKeptEntryIndex {index!r} names no earlier entry, "
                    "so no firstKeptEntryId is set (as in Pi)",
                )
            ]
        out["firstKeptEntryId"] = target
        return []


def _to_v3(out: JSONObject) -> None:
    message = out.get("message")
    if out.get("type") != "message" or not isinstance(message, Mapping):
        return
    if message.get("role") == HOOK_MESSAGE_ROLE:
        out["message"] = {**message, "role": "custom"}


def migrate_file_entries(file_entries: Sequence[Mapping[str, Any]]) -> list[JSONObject]:
    """Pi's ``migrateSessionEntries`` on a whole file-entry list (header first): the v3 list.

    A list without a leading header, or already at v3, is returned unchanged (copied).
    """
    if not file_entries or file_entries[0].get("type") != "session":
        return [dict(obj) for obj in file_entries]
    header = file_entries[0]
    version = written_version(header)
    if version is None or not needs_migration(version):
        return [dict(obj) for obj in file_entries]
    migration = Migration(str(header.get("id", "")), version)
    out = [migrate_header(header)]
    for index, obj in enumerate(file_entries[1:], start=1):
        if obj.get("type") == "session":
            out.append(dict(obj))
        else:
            out.append(migration.migrate(obj, index)[0])
    return out
