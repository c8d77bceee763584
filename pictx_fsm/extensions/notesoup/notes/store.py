"""notesoup's notes store (S94–S106): write, update, rename, read, list and search note files
with typed refusals.

A :class:`NoteRefusal` is an expected refusal (a code of S93 and a message); the tools turn it
into a typed outcome. Address and pattern validation failures are refusals too
(``invalid_address``, ``invalid_pattern``); a filesystem error becomes ``io_error`` in the tool
layer; anything else propagates. Homes, paths, the walk and atomic writes are the family's
(:mod:`pictx_fsm.extensions.shared.tools.homes`), and so is the root confinement: no file
whose real path leaves the notes root is read or written.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from datetime import tzinfo
from pathlib import Path
from typing import Any, Final, Literal

from attrs import frozen

from pictx_fsm import js, js_date
from pictx_fsm.extensions.notesoup.notes.meta import (
    ORIGINS,
    NoteMeta,
    frontmatter_block,
    parse_note,
    serialize_note,
)
from pictx_fsm.extensions.shared.tools.address import (
    SCOPES,
    SLUG_PATTERN,
    AddressError,
    NoteAddress,
    Scope,
    decode_address,
    glob_matches,
    glob_regex,
    normalize_pattern,
    pattern_head,
    resolve_pattern,
)
from pictx_fsm.extensions.shared.tools.edits import apply_edit
from pictx_fsm.extensions.shared.tools.frontmatter import strip_leading_frontmatter
from pictx_fsm.extensions.shared.tools.homes import (
    NotesIdentity,
    NotesPlace,
    atomic_write,
    namespace_names,
    note_file_name,
    read_note_text,
    walk_markdown,
)
from pictx_fsm.extensions.shared.tools.refusals import NoteRefused
from pictx_fsm.js_regex import JsRegExp

__all__ = [
    "INVALID_ADDRESS",
    "MAX_NOTE_BYTES",
    "MAX_NOTE_PATH_BYTES",
    "ChangeKind",
    "NoteRefusal",
    "NoteRow",
    "NotesStore",
    "QueryStatus",
    "RenameResult",
    "SearchRow",
    "UpdateResult",
    "WriteOutcome",
    "address_for",
    "earliest_match_offset",
]

MAX_NOTE_BYTES: Final = 1_000_000
MAX_NOTE_PATH_BYTES: Final = 512
"""S95/Q9: the 0.25 limits (N15); notesoup's constants file was not stored."""

INVALID_ADDRESS: Final = (
    "invalid note address: no @ for this session's notes; @project/, @human/, @self/ or "
    "@agents/<name>/, @model/ or @models/<name>/ for the other homes"
)
"""S94: names the forms (the reference's exact text was not stored, Q1)."""
NOTHING_TO_DO: Final = "nothing to do: provide edits or at least one of origin, crumpled"
NOT_FOUND: Final = "note not found"
SAME_NOTE: Final = "rename_to resolves to the same note"
LIVE_TARGET: Final = "rename_to target is a live note; crumple it first or pick another address"
NOT_YOUR_HOME: Final = (
    "{home} is not your home: writable homes are this session, @project/, @human/, @self/, "
    "and the current @model/ home"
)
BAD_HOME_NAME: Final = "who must be a canonical lowercase slug"
MAX_ANCHOR_LINES: Final = 8

RefusalCode = Literal[
    "not_found",
    "already_exists",
    "ambiguous_edit",
    "no_match",
    "nothing_to_do",
    "too_large",
    "invalid_scope",
    "invalid_origin",
    "invalid_address",
    "invalid_pattern",
    "invalid_query",
    "invalid_offset",
    "io_error",
    "output_too_large",
]
ChangeKind = Literal["none", "body", "metadata", "file"]
WriteOutcome = Literal["created", "overwrote", "uncrumpled"]


class NoteRefusal(NoteRefused[RefusalCode]):
    """A typed refusal (S93): never an error result, always a refusal the model reads."""


@frozen(kw_only=True)
class NoteRow:
    """A listed note: the address shown, its home, its path inside it, metadata and body."""

    address: str
    scope: Scope
    path: str
    meta: NoteMeta
    body: str


@frozen(kw_only=True)
class SearchRow:
    row: NoteRow
    matches: tuple[tuple[int, str, int], ...]
    """``(line, text, offset_chars)`` of every matching body line (offsets body-relative)."""


@frozen(kw_only=True)
class QueryStatus:
    crumpled_excluded: int = 0
    homes_unavailable: tuple[str, ...] = ()


@frozen(kw_only=True)
class UpdateResult:
    meta: NoteMeta
    scope: Scope
    applied: int
    kind: ChangeKind
    before: str
    after: str


@frozen(kw_only=True)
class RenameResult:
    meta: NoteMeta
    replaced_crumpled_target: bool


def address_for(identity: NotesIdentity, scope: Scope, path: str, who: str | None) -> str:
    """S94: the address shown for a note: the current agent and model homes as ``@self/`` and
    ``@model/``, other named homes as ``@agents/<slug>/`` and ``@models/<slug>/``."""
    if scope == "session":
        return path
    if scope in ("project", "human"):
        return f"@{scope}/{path}"
    current = identity.agent if scope == "agent" else identity.model
    if who is None or who == current:
        return f"@{'self' if scope == 'agent' else 'model'}/{path}"
    return f"@{'agents' if scope == 'agent' else 'models'}/{who}/{path}"


def earliest_match_offset(text: str, queries: Sequence[str]) -> int:
    """S104 ``earliestMatchOffsetChars``: the code-point offset of the earliest
    case-insensitive literal match of any query, ``-1`` when none occurs."""
    found = [
        match.start()
        for query in queries
        if (match := re.search(re.escape(query), text, re.IGNORECASE)) is not None
    ]
    return min(found) if found else -1


_STAMP_LOCK: Final = threading.Lock()
_LAST_STAMP: dict[str, float] = {}


@frozen(kw_only=True)
class _HomeRef:
    scope: Scope
    who: str | None = None


class NotesStore:
    """The notes under one root for one identity, with the clock and zone timestamps use."""

    def __init__(
        self, place: NotesPlace, clock: Callable[[], float], zone: tzinfo | None = None
    ) -> None:
        self.place = place
        self.clock = clock
        self.zone = zone

    @property
    def identity(self) -> NotesIdentity:
        return self.place.identity

    # -- addresses ----------------------------------------------------------------------------

    def decode(self, address: object) -> NoteAddress:
        try:
            return decode_address(address, INVALID_ADDRESS)
        except AddressError as error:
            raise NoteRefusal("invalid_address", str(error)) from None

    def shown(self, address: NoteAddress) -> str:
        """The receipt address of a decoded address: the resolved home, ``.md`` appended."""
        return address_for(self.identity, address.scope, note_file_name(address.path), address.who)

    def _path(self, address: NoteAddress) -> Path:
        return self.place.note_path(address.scope, address.path, address.who)

    def _stamp(self) -> float:
        """S98: write stamps are strictly increasing within the process, per notes root."""
        key = str(self.place.root)
        with _STAMP_LOCK:
            now = self.clock()
            last = _LAST_STAMP.get(key, 0.0)
            stamp = now if now > last else last + 1
            _LAST_STAMP[key] = stamp
        return stamp

    def _check_writable(self, address: NoteAddress) -> None:
        size = js.utf8_length(address.path)
        if size > MAX_NOTE_PATH_BYTES:
            raise NoteRefusal(
                "too_large", f"note path exceeds {MAX_NOTE_PATH_BYTES} UTF-8 bytes (got {size})"
            )
        if address.who is None or address.who == self.identity.name(address.scope):
            return
        namespace = "agents" if address.scope == "agent" else "models"
        home = f"@{namespace}/{address.who}/"
        raise NoteRefusal("invalid_scope", NOT_YOUR_HOME.format(home=home))

    def _read_raw(self, path: Path) -> str | None:
        try:
            return read_note_text(path)
        except FileNotFoundError:
            return None

    # -- write (S98) ---------------------------------------------------------------------------

    def write(
        self, address_text: object, content: str, origin: object = None
    ) -> tuple[NoteAddress, WriteOutcome]:
        address = self.decode(address_text)
        self._check_writable(address)
        checked = _origin("self" if origin is None else origin)
        path = self._path(address)
        now = self._stamp()
        body = strip_leading_frontmatter(content)
        raw = self._read_raw(path)
        if raw is None:
            project = self.identity.project_key if address.scope == "session" else None
            meta = NoteMeta.new(now, checked, project)
            outcome: WriteOutcome = "created"
        else:
            existing = parse_note(raw, now, self.zone)[0]
            outcome = "uncrumpled" if existing.crumpled else "overwrote"
            meta = existing.evolve(origin=checked, crumpled_at=None, updated_at=now)
        text = serialize_note(meta, body, self.zone)
        _check_size(text)
        atomic_write(path, text)
        return address, outcome

    # -- read (S102) ---------------------------------------------------------------------------

    def read(self, address_text: object) -> tuple[NoteAddress, NoteMeta, str] | None:
        """The note after the access bump a read writes back, or ``None`` when missing."""
        address = self.decode(address_text)
        path = self._path(address)
        raw = self._read_raw(path)
        if raw is None:
            return None
        now = self.clock()
        meta, body = parse_note(raw, now, self.zone)
        meta = meta.evolve(last_accessed=now, access_count=meta.access_count + 1)
        atomic_write(path, serialize_note(meta, body, self.zone))
        return address, meta, body

    # -- update (S99, S100) --------------------------------------------------------------------

    def update(
        self,
        address_text: object,
        edits: Sequence[Any],
        *,
        origin: object = None,
        crumpled: bool | None = None,
        replace_all: bool = False,
    ) -> tuple[NoteAddress, UpdateResult]:
        address = self.decode(address_text)
        self._check_writable(address)
        if not edits and origin is None and crumpled is None:
            raise NoteRefusal("nothing_to_do", NOTHING_TO_DO)
        path = self._path(address)
        raw = self._read_raw(path)
        if raw is None:
            raise NoteRefusal("not_found", NOT_FOUND)
        now = self.clock()
        before, body = parse_note(raw, now, self.zone)
        edited = body
        applied = 0
        for index, edit in enumerate(edits):
            edited, changed = apply_edit(
                edited, edit, index, replace_all, NoteRefusal, MAX_ANCHOR_LINES
            )
            applied += changed
        meta = before
        if origin is not None:
            meta = meta.evolve(origin=_origin(origin))
        if crumpled is True and not meta.crumpled:
            meta = meta.evolve(crumpled_at=js_date.local_iso(now, self.zone))
        if crumpled is False:
            meta = meta.evolve(crumpled_at=None)
        body_changed = edited != body
        origin_changed = before.origin != meta.origin
        if body_changed or origin_changed:
            meta = meta.evolve(updated_at=self._stamp())
        text = serialize_note(meta, edited, self.zone)
        _check_size(text)
        metadata_changed = origin_changed or before.crumpled_at != meta.crumpled_at
        kind: ChangeKind
        if body_changed and metadata_changed:
            kind, old, new = "file", raw, text
        elif body_changed:
            kind, old, new = "body", body, edited
        elif metadata_changed:
            old = frontmatter_block(before, self.zone)
            kind, new = "metadata", frontmatter_block(meta, self.zone)
        else:
            kind, old, new = "none", "", ""
        atomic_write(path, text)
        result = UpdateResult(
            meta=meta, scope=address.scope, applied=applied, kind=kind, before=old, after=new
        )
        return address, result

    # -- rename (S101) -------------------------------------------------------------------------

    def rename(
        self, from_text: object, to_text: object
    ) -> tuple[NoteAddress, NoteAddress, RenameResult]:
        source = self.decode(from_text)
        target = self.decode(to_text)
        self._check_writable(target)
        self._check_writable(source)
        source_path, target_path = self._path(source), self._path(target)
        if source_path.resolve() == target_path.resolve():
            raise NoteRefusal("nothing_to_do", SAME_NOTE)
        raw = self._read_raw(source_path)
        if raw is None:
            raise NoteRefusal("not_found", NOT_FOUND)
        now = self._stamp()
        target_raw = self._read_raw(target_path)
        if target_raw is not None and not parse_note(target_raw, now, self.zone)[0].crumpled:
            raise NoteRefusal("already_exists", LIVE_TARGET)
        meta, body = parse_note(raw, now, self.zone)
        if source.scope != "session" and target.scope == "session":
            meta = meta.evolve(project=self.identity.project_key)
        if source.scope == "session" and target.scope != "session":
            meta = meta.evolve(project=None)
        meta = meta.evolve(updated_at=now)
        text = serialize_note(meta, body, self.zone)
        _check_size(text)
        atomic_write(target_path, text)
        source_path.unlink(missing_ok=True)
        result = RenameResult(meta=meta, replaced_crumpled_target=target_raw is not None)
        return source, target, result

    # -- list and search (S103–S105) -----------------------------------------------------------

    def list_notes(
        self, pattern: object = None, *, wastebasket: bool = False
    ) -> tuple[list[NoteRow], QueryStatus]:
        """S103: the rows of the pattern's homes, newest first (ties by address)."""
        rows, status = self._scan(pattern, wastebasket)
        rows.sort(key=lambda row: (-row.meta.updated_at, js.locale_key(row.address)))
        return rows, status

    def search_notes(
        self, queries: Sequence[str], pattern: object = None, *, wastebasket: bool = False
    ) -> tuple[list[SearchRow], QueryStatus]:
        """S104: files with a body line matching any query (case-insensitive), newest first."""
        rows, status = self.list_notes(pattern, wastebasket=wastebasket)
        found = []
        for row in rows:
            matches = _matches(row.body, queries)
            if matches:
                found.append(SearchRow(row=row, matches=matches))
        return found, status

    def list_home(self, scope: Scope) -> list[NoteRow]:
        """S87: one home of the boot snapshot, live notes only, newest first; a listing error
        propagates (the snapshot isolates it)."""
        rows: list[NoteRow] = []
        self._home_rows(_HomeRef(scope=scope), None, False, rows)
        rows.sort(key=lambda row: (-row.meta.updated_at, js.locale_key(row.address)))
        return rows

    def _scan(self, pattern: object, wastebasket: bool) -> tuple[list[NoteRow], QueryStatus]:
        try:
            normalized = normalize_pattern(pattern)
        except AddressError as error:
            raise NoteRefusal("invalid_pattern", str(error)) from None
        identity = self.identity
        matcher = None
        if normalized is not None:
            matcher = glob_regex(resolve_pattern(normalized, identity.agent, identity.model))
        unavailable: list[str] = []
        try:
            homes = self._homes_for(normalized)
        except OSError:
            head = "@agents" if str(normalized).startswith("@agents/") else "@models"
            return [], QueryStatus(homes_unavailable=(head,))
        rows: list[NoteRow] = []
        excluded = 0
        for home in homes:
            try:
                home_rows: list[NoteRow] = []
                home_excluded = self._home_rows(home, matcher, wastebasket, home_rows)
            except OSError:
                shown = address_for(identity, home.scope, "", home.who).rstrip("/")
                unavailable.append(shown or "session")
                continue
            excluded += home_excluded
            rows += home_rows
        return rows, QueryStatus(crumpled_excluded=excluded, homes_unavailable=tuple(unavailable))

    def _homes_for(self, pattern: str | None) -> list[_HomeRef]:
        """N40/S105: the homes a pattern scans, decided on the pattern as given."""
        if pattern is None or not pattern.startswith("@"):
            return [_HomeRef(scope=scope) for scope in SCOPES]
        head = pattern_head(pattern)
        plain: dict[str | None, Scope] = {
            "project": "project",
            "human": "human",
            "self": "agent",
            "model": "model",
        }
        if head in plain:
            return [_HomeRef(scope=plain[head])]
        if head not in ("agents", "models"):
            return []
        scope: Scope = "agent" if head == "agents" else "model"
        name = pattern[len(head) + 2 :].split("/")[0]
        if name and "*" not in name and "?" not in name:
            if not SLUG_PATTERN.test(name):
                raise NoteRefusal("invalid_pattern", BAD_HOME_NAME)
            return [_HomeRef(scope=scope, who=name)]
        self.place.confine(self.place.root / head, f"@{head}/")
        return [_HomeRef(scope=scope, who=who) for who in namespace_names(self.place.root, head)]

    def _home_rows(
        self, home: _HomeRef, matcher: JsRegExp | None, wastebasket: bool, out: list[NoteRow]
    ) -> int:
        """Append the home's rows that match and are (not) crumpled; return how many crumpled
        rows were left out."""
        identity = self.identity
        directory = self.place.home_dir(home.scope, home.who)
        canonical_root = identity.address(home.scope, "", home.who)
        self.place.confine(directory, canonical_root or "./")
        excluded = 0
        now = self.clock()
        for path, file in walk_markdown(directory):
            canonical = identity.address(home.scope, path, home.who)
            if matcher is not None and not glob_matches(matcher, canonical):
                continue
            self.place.confine(file, canonical)
            meta, body = parse_note(read_note_text(file), now, self.zone)
            if meta.crumpled != wastebasket:
                excluded += meta.crumpled
                continue
            shown = address_for(identity, home.scope, path, home.who)
            out.append(NoteRow(address=shown, scope=home.scope, path=path, meta=meta, body=body))
        return excluded


def _matches(body: str, queries: Sequence[str]) -> tuple[tuple[int, str, int], ...]:
    found = []
    base = 0
    for index, line in enumerate(body.split("\n")):
        offset = earliest_match_offset(line, queries)
        if offset >= 0:
            found.append((index + 1, line, base + offset))
        base += len(line) + 1
    return tuple(found)


def _check_size(text: str) -> None:
    size = js.utf8_length(text)
    if size > MAX_NOTE_BYTES:
        raise NoteRefusal(
            "too_large", f"note exceeds {MAX_NOTE_BYTES} UTF-8 bytes (serialized {size})"
        )


def _origin(value: object) -> str:
    if not isinstance(value, str) or value not in ORIGINS:
        raise NoteRefusal(
            "invalid_origin",
            f"origin must be one of user, self, external (got {js.stringify(value)})",
        )
    return value
