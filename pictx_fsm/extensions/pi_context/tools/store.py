"""The notes store: write, edit, read, list and search note files (notes spec N14–N54).

A :class:`NoteError` is a refusal the tools return as JSON ``{"error": …}`` (N4a); every
other exception (address validation, filesystem errors) propagates and becomes an error
result (N4b). The store never caches: every call reads the directories again. Source:
``src/notes/store.ts`` of pi-context 0.25.0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import tzinfo
from typing import Any, Final, Literal

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.extensions.pi_context.tools.address import (
    SCOPES,
    SLUG_PATTERN,
    NoteAddress,
    Scope,
    glob_matches,
    glob_regex,
    normalize_pattern,
    pattern_head,
    resolve_pattern,
)
from pictx_fsm.extensions.pi_context.tools.frontmatter import (
    ORIGINS,
    NoteMeta,
    accessed,
    frontmatter_block,
    parse_note,
    serialize_note,
    strip_leading_frontmatter,
)
from pictx_fsm.extensions.pi_context.tools.homes import (
    NotesPlace,
    atomic_write,
    namespace_names,
    read_note_text,
    walk_markdown,
)
from pictx_fsm.extensions.pi_context.tools.output import earliest_match_offset
from pictx_fsm.extensions.shared.tools.diff import diff_text
from pictx_fsm.extensions.shared.tools.edits import apply_edit
from pictx_fsm.extensions.shared.tools.refusals import NoteRefused
from pictx_fsm.session.entries import ABSENT

__all__ = [
    "BAD_HOME_NAME",
    "MAX_NOTE_BYTES",
    "MAX_NOTE_PATH_BYTES",
    "NOTHING_TO_DO",
    "NOT_FOUND",
    "NOT_YOUR_HOME",
    "EditOutcome",
    "HomeRef",
    "NoteError",
    "NoteErrorCode",
    "NoteMatch",
    "NoteRow",
    "NotesStore",
    "SearchRow",
]

MAX_NOTE_BYTES: Final = 1_000_000
MAX_NOTE_PATH_BYTES: Final = 512

NoteErrorCode = Literal[
    "not_found",
    "ambiguous_edit",
    "no_match",
    "nothing_to_do",
    "too_large",
    "invalid_scope",
    "invalid_origin",
]

NOTHING_TO_DO: Final = "nothing to do: provide edits or at least one of origin, stale"
NOT_FOUND: Final = "note not found"
NOT_YOUR_HOME: Final = (
    "{home} is not your home: writable homes are this session, @project/, @human/, @self/, "
    "and the current @model/ home"
)
BAD_HOME_NAME: Final = "who must be a canonical lowercase slug"


class NoteError(NoteRefused[NoteErrorCode]):
    """A typed store refusal (never thrown to the host: the tools turn it into JSON)."""

    def payload(self) -> dict[str, Any]:
        """N4a: ``{"error", "line_numbers"?, "edit_index"?}``, never the code."""
        out: dict[str, Any] = {"error": self.message}
        if self.line_numbers is not None:
            out["line_numbers"] = self.line_numbers
        if self.edit_index is not None:
            out["edit_index"] = self.edit_index
        return out


@frozen(kw_only=True)
class HomeRef:
    """One home a listing scans; ``who`` names an agent/model home other than the current."""

    scope: Scope
    who: str | None = None


@frozen(kw_only=True)
class NoteRow:
    """A listed note: canonical address, home, path inside the home, metadata, body."""

    address: str
    scope: Scope
    path: str
    meta: NoteMeta
    body: str

    @property
    def size_bytes(self) -> int:
        return js.utf8_length(self.body)

    @property
    def updated_at(self) -> float:
        return float(self.meta["updated_at"])

    @property
    def stale(self) -> bool:
        return bool(self.meta["stale"])


@frozen(kw_only=True)
class NoteMatch:
    line: int
    text: str
    offset_chars: int


@frozen(kw_only=True)
class SearchRow:
    row: NoteRow
    matches: tuple[NoteMatch, ...]


@frozen(kw_only=True)
class EditOutcome:
    applied: int
    diff: str


@frozen(kw_only=True)
class NotesStore:
    """The notes under one root for one identity, with the clock and zone timestamps use."""

    place: NotesPlace
    clock: Callable[[], float]
    zone: tzinfo | None = None

    # -- write (N24–N27) -----------------------------------------------------------------------

    def write(
        self, address: NoteAddress, content: str, *, origin: Any = ABSENT, stale: Any = ABSENT
    ) -> None:
        """Create or replace a note; a rewrite keeps ``created_at`` and unknown keys but sets
        ``origin`` (default ``self``), ``status: active`` and ``stale`` (default false)."""
        self._check_writable(address)
        checked_origin = _origin("self" if origin is ABSENT or origin is None else origin)
        path = self.place.note_path(address.scope, address.path, address.who)
        now = self.clock()
        body = strip_leading_frontmatter(content)
        meta = (
            parse_note(read_note_text(path), now, self.zone)[0] if path.exists() else _new_meta(now)
        )
        revived = False if stale is ABSENT or stale is None else stale
        meta.update(origin=checked_origin, status="active", stale=revived, updated_at=now)
        text = serialize_note(meta, body, self.zone)
        _check_size(text)
        atomic_write(path, text)

    def _check_writable(self, address: NoteAddress) -> None:
        size = js.utf8_length(address.path)
        if size > MAX_NOTE_PATH_BYTES:
            raise NoteError(
                "too_large", f"note path exceeds {MAX_NOTE_PATH_BYTES} UTF-8 bytes (got {size})"
            )
        if address.who is None or address.who == self.place.identity.name(address.scope):
            return
        namespace = "agents" if address.scope == "agent" else "models"
        home = f"@{namespace}/{address.who}/"
        raise NoteError("invalid_scope", NOT_YOUR_HOME.format(home=home))

    # -- edit (N28–N33) ------------------------------------------------------------------------

    def edit(
        self,
        address: NoteAddress,
        edits: Sequence[Any],
        *,
        origin: Any = ABSENT,
        stale: Any = ABSENT,
        replace_all: bool = False,
    ) -> EditOutcome:
        """Apply body-only edits in order, all or nothing; ``origin``/``stale`` set metadata."""
        self._check_writable(address)
        if not edits and origin is ABSENT and stale is ABSENT:
            raise NoteError("nothing_to_do", NOTHING_TO_DO)
        path = self.place.note_path(address.scope, address.path, address.who)
        if not path.exists():
            raise NoteError("not_found", NOT_FOUND)
        raw = read_note_text(path)
        meta, body = parse_note(raw, self.clock(), self.zone)
        before = dict(meta)
        edited = body
        for index, edit in enumerate(edits):
            edited, _ = apply_edit(edited, edit, index, replace_all, NoteError)
        if origin is not ABSENT:
            meta["origin"] = _origin(origin)
        if stale is not ABSENT:
            meta["stale"] = stale
        meta["updated_at"] = self.clock()
        serialized = serialize_note(meta, edited, self.zone)
        _check_size(serialized)
        diff = self._edit_diff((raw, body, before), (serialized, edited, meta))
        atomic_write(path, serialized)
        return EditOutcome(applied=len(edits), diff=diff)

    def _edit_diff(self, old: tuple[str, str, NoteMeta], new: tuple[str, str, NoteMeta]) -> str:
        """N32: the whole file when body and metadata changed, else the part that did."""
        body_changed = old[1] != new[1]
        meta_changed = any(
            not js.strict_equals(old[2].get(key), new[2].get(key)) for key in ("origin", "stale")
        )
        if body_changed and meta_changed:
            return diff_text(old[0], new[0])
        if body_changed:
            return diff_text(old[1], new[1])
        if meta_changed:
            return diff_text(
                frontmatter_block(old[2], self.zone), frontmatter_block(new[2], self.zone)
            )
        return ""

    # -- read (N34–N37) ------------------------------------------------------------------------

    def read(self, address: NoteAddress) -> str | None:
        """The note's serialized text after the access bump it writes back (N35), or
        ``None`` when there is no such file."""
        path = self.place.note_path(address.scope, address.path, address.who)
        if not path.exists():
            return None
        now = self.clock()
        meta, body = parse_note(read_note_text(path), now, self.zone)
        text = serialize_note(accessed(meta, now), body, self.zone)
        atomic_write(path, text)
        return text

    # -- list and search (N38–N46, N54) --------------------------------------------------------

    def list_home(self, scope: Scope) -> list[NoteRow]:
        """N54: one home of the boot snapshot, in walk order (the caller sorts)."""
        return self._rows([HomeRef(scope=scope)], None)

    def list_notes(
        self, pattern: object = None, homes: Sequence[HomeRef] | None = None
    ) -> list[NoteRow]:
        """N42/N43: notes of the pattern's homes, newest first, ties by address."""
        rows = self._rows(*self._selection(pattern, homes))
        rows.sort(key=lambda row: (-row.updated_at, js.locale_key(row.address)))
        return rows

    def search_notes(
        self, queries: Sequence[str], pattern: object = None, homes: Sequence[HomeRef] | None = None
    ) -> list[SearchRow]:
        """N45/N46: files with a body line containing any query, by address."""
        found = []
        for row in self._rows(*self._selection(pattern, homes)):
            matches = self._matches(row, queries)
            if matches:
                found.append(SearchRow(row=row, matches=matches))
        found.sort(key=lambda hit: js.locale_key(hit.row.address))
        return found

    def _selection(
        self, pattern: object, homes: Sequence[HomeRef] | None
    ) -> tuple[Sequence[HomeRef], Any]:
        normalized = normalize_pattern(pattern)
        identity = self.place.identity
        matcher = None
        if normalized is not None:
            matcher = glob_regex(resolve_pattern(normalized, identity.agent, identity.model))
        if homes is None:
            homes = self.homes_for(normalized)
        return homes, matcher

    def homes_for(self, pattern: str | None) -> list[HomeRef]:
        """N40: the homes a pattern scans, decided on the pattern as given."""
        if pattern is None or not pattern.startswith("@"):
            return [HomeRef(scope=scope) for scope in SCOPES]
        head = pattern_head(pattern)
        plain = {"project": "project", "human": "human", "self": "agent", "model": "model"}
        if head in plain:
            return [HomeRef(scope=plain[head])]  # type: ignore[arg-type]
        if head not in ("agents", "models"):
            return []
        scope: Scope = "agent" if head == "agents" else "model"
        name = pattern[len(head) + 2 :].split("/")[0]
        if name and "*" not in name and "?" not in name:
            if not SLUG_PATTERN.test(name):
                raise NoteError("invalid_scope", BAD_HOME_NAME)
            return [HomeRef(scope=scope, who=name)]
        self.place.confine(self.place.root / head, f"@{head}/")
        return [HomeRef(scope=scope, who=who) for who in namespace_names(self.place.root, head)]

    def _rows(self, homes: Sequence[HomeRef], matcher: Any) -> list[NoteRow]:
        rows: list[NoteRow] = []
        identity = self.place.identity
        for home in homes:
            directory = self.place.home_dir(home.scope, home.who)
            self.place.confine(directory, identity.address(home.scope, "", home.who) or "./")
            for path, file in walk_markdown(directory):
                address = identity.address(home.scope, path, home.who)
                if matcher is not None and not glob_matches(matcher, address):
                    continue
                meta, body = parse_note(read_note_text(file), self.clock(), self.zone)
                rows.append(
                    NoteRow(address=address, scope=home.scope, path=path, meta=meta, body=body)
                )
        return rows

    def _matches(self, row: NoteRow, queries: Sequence[str]) -> tuple[NoteMatch, ...]:
        """N45: one match per body line holding any query, with the code-point offset a
        following ``notes_read`` would serve the earliest query occurrence at."""
        head = len(serialize_note(accessed(row.meta, self.clock()), "", self.zone))
        matches = []
        base = 0
        for index, line in enumerate(row.body.split("\n")):
            if any(js.includes(line, query) for query in queries):
                offset = head + base + earliest_match_offset(line, queries)
                matches.append(NoteMatch(line=index + 1, text=line, offset_chars=offset))
            base += len(line) + 1
        return tuple(matches)


def _check_size(text: str) -> None:
    """N15: the serialized note is checked before any byte is written."""
    size = js.utf8_length(text)
    if size > MAX_NOTE_BYTES:
        raise NoteError(
            "too_large", f"note exceeds {MAX_NOTE_BYTES} UTF-8 bytes (serialized {size})"
        )


def _new_meta(now: float) -> NoteMeta:
    return {
        "origin": "self",
        "status": "active",
        "stale": False,
        "created_at": now,
        "updated_at": now,
        "last_accessed": now,
        "access_count": 0,
    }


def _origin(value: Any) -> Any:
    if not isinstance(value, str) or value not in ORIGINS:
        raise NoteError(
            "invalid_origin",
            f"origin must be one of user, self, external (got {js.stringify(value)})",
        )
    return value
