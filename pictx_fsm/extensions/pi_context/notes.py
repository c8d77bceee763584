"""The notes snapshot a boot is rendered from (R70, R71, R74).

A boot lists five notes homes once, in order: this session, @project, @human, @self,
@model. :func:`load_notes_snapshot` reads the clock once (``opened_at``) and each home once;
rendering (``boot.py``) never touches the clock or the filesystem again. A home whose listing
fails with an errno-style code is recorded empty and unavailable; an absent home is simply
empty; any other failure propagates, so a running reset reports it (R29).

Layout under the notes home (``$PI_NOTES_HOME``, default ``~/.agents/notes``; from
``src/notes/paths.ts`` of astrosheep-zero/pi-context@9878f1dd, R70 for the session dir)::

    pi/session/<sessionId>/   this session        address  <path>
    project/<projectKey>/     @project            address  @project/<path>
    human/                    @human              address  @human/<path>
    agents/<agent>/           @self               address  @agents/<agent>/<path>
    models/<model>/           @model              address  @models/<model>/<path>

Homes, addresses, the walk and the frontmatter belong to the notes tools
(:mod:`pictx_fsm.extensions.pi_context.tools`): :class:`FileNotesSource` lists a home with their
store, so the
boot indexes exactly what ``notes_write`` wrote and ``notes_list`` shows (N54). From a note
the boot keeps ``stale`` (only the JSON ``true`` counts) and ``updated_at`` (epoch ms, or a
date string; missing or unreadable, the snapshot's ``opened_at``).
"""

from __future__ import annotations

import errno as errno_codes
import os
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import tzinfo
from pathlib import Path
from typing import Final, Literal, Protocol, cast

import attrs
from attrs import field, frozen

from pictx_fsm import js
from pictx_fsm.extensions.pi_context.texts import NOTES_HOME_LABELS, NOTES_MAP_PATH
from pictx_fsm.extensions.pi_context.tools.address import Scope
from pictx_fsm.extensions.pi_context.tools.context import HistorySource, ToolContext
from pictx_fsm.extensions.pi_context.tools.frontmatter import parse_note as parse_note_file
from pictx_fsm.extensions.pi_context.tools.homes import (
    NotesIdentity,
    NotesPlace,
    agent_slug,
    default_notes_home,
    model_slug,
    project_key,
    slugify,
)
from pictx_fsm.extensions.pi_context.tools.store import NotesStore

__all__ = [
    "NOTES_HOMES",
    "FileNotesSource",
    "HomeSnapshot",
    "InMemoryNotesSource",
    "NoteRow",
    "NoteSummary",
    "NotesHome",
    "NotesIdentity",
    "NotesSnapshot",
    "NotesSource",
    "Scope",
    "agent_slug",
    "default_notes_home",
    "isolated_failure",
    "load_notes_snapshot",
    "model_slug",
    "note_file",
    "parse_note",
    "project_key",
    "slugify",
]

_ERRNO_CODE: Final = re.compile(r"E[A-Z0-9_]+")


@frozen(kw_only=True)
class NotesHome:
    """One of the five homes of a boot and the label notices use for it."""

    scope: Scope
    label: str


NOTES_HOMES: Final[tuple[NotesHome, ...]] = tuple(
    NotesHome(scope=cast(Scope, scope), label=label) for scope, label in NOTES_HOME_LABELS
)


# -- note rows -----------------------------------------------------------------------------


@frozen(kw_only=True)
class NoteRow:
    """One listed note. ``path`` is relative to its home, ``/``-separated."""

    address: str
    path: str
    body: str
    updated_at_ms: float
    stale: bool = False

    @property
    def size_bytes(self) -> int:
        """UTF-8 bytes of the body (a lone surrogate counts 3, as in Node)."""
        return js.utf8_length(self.body)

    @property
    def line_count(self) -> int:
        """``body.split("\\n").length`` (an empty body is one line)."""
        return self.body.count("\n") + 1

    @property
    def is_map(self) -> bool:
        """Only a home's top-level ``MAP.md`` is its map; nested ones are ordinary notes."""
        return self.path == NOTES_MAP_PATH


def parse_note(raw: str, now_ms: float, zone: tzinfo | None = None) -> tuple[bool, float, str]:
    """``(stale, updated_at_ms, body)`` of a note file, read as the notes tools read it
    (:func:`pictx_fsm.extensions.pi_context.tools.frontmatter.parse_note`)."""
    meta, body = parse_note_file(raw, now_ms, zone)
    return meta["stale"] is True, float(meta["updated_at"]), body


def note_row(
    identity: NotesIdentity,
    scope: Scope,
    path: str,
    raw: str,
    now_ms: float,
    zone: tzinfo | None = None,
) -> NoteRow:
    """A listed note from its file text."""
    stale, updated_at_ms, body = parse_note(raw, now_ms, zone)
    return NoteRow(
        address=identity.address(scope, path),
        path=path,
        body=body,
        updated_at_ms=updated_at_ms,
        stale=stale,
    )


def note_file(body: str, *, updated_at_ms: float, stale: bool = False) -> str:
    """A minimal note file with the frontmatter this module reads (for fixtures)."""
    stale_line = "stale: true\n" if stale else ""
    return f"---\n{stale_line}updated_at: {js.js_string(updated_at_ms)}\n---\n\n{body}"


def sorted_rows(rows: Sequence[NoteRow]) -> tuple[NoteRow, ...]:
    """Most recently updated first; ties by address ``localeCompare`` (N43)."""
    return tuple(sorted(rows, key=lambda row: (-row.updated_at_ms, js.locale_key(row.address))))


# -- sources -------------------------------------------------------------------------------


class NotesSource(Protocol):
    """Lists one home, in any order. Raises ``OSError`` (or an error with a string ``code``)
    on I/O failure; ``now_ms`` is the fallback update time of notes that lack one."""

    def list_home(self, scope: Scope, now_ms: float) -> Sequence[NoteRow]: ...


@frozen(kw_only=True)
class FileNotesSource:
    """Notes on disk under ``home`` (the notes root), listed by the notes tools' store, so
    the boot sees exactly what ``notes_list`` shows (N54). ``zone`` reads offset-less
    date-times (``None``: the host's local zone, as Node does)."""

    home: Path
    identity: NotesIdentity
    zone: tzinfo | None = None

    @classmethod
    def for_session(
        cls,
        session_id: str,
        cwd: str | Path,
        *,
        home: Path | None = None,
        agent: str | None = None,
        model: str | None = None,
    ) -> FileNotesSource:
        """The notes of a session: ``home`` (default ``$PI_NOTES_HOME`` or
        ``~/.agents/notes``) read with :meth:`NotesIdentity.of_session`."""
        if home is None:
            home = default_notes_home(os.environ, Path.home())
        identity = NotesIdentity.of_session(session_id, cwd, agent=agent, model=model)
        return cls(home=home, identity=identity)

    def for_model(self, model_id: str | None) -> FileNotesSource:
        """The same homes for another model: ``@model`` follows ``ctx.model`` live (N9)."""
        model = model_slug(model_id)
        if model == self.identity.model:
            return self
        return attrs.evolve(self, identity=attrs.evolve(self.identity, model=model))

    def tool_context(
        self,
        *,
        model_id: str | None,
        history: HistorySource | None,
        clock: Callable[[], float],
    ) -> ToolContext:
        """What one notes or history tool call sees: this notes root and identity (the
        boot indexes exactly what the tools write here), the session, the host's clock."""
        return ToolContext(
            notes_root=_as_path(self.home),
            identity=self.for_model(model_id).identity,
            history=history,
            clock=clock,
            zone=self.zone,
        )

    def home_dir(self, scope: Scope) -> Path:
        return self.place.home_dir(scope)

    @property
    def place(self) -> NotesPlace:
        return NotesPlace(root=_as_path(self.home), identity=self.identity)

    def list_home(self, scope: Scope, now_ms: float) -> tuple[NoteRow, ...]:
        store = NotesStore(place=self.place, clock=lambda: now_ms, zone=self.zone)
        return tuple(
            NoteRow(
                address=row.address,
                path=row.path,
                body=row.body,
                updated_at_ms=row.updated_at,
                stale=row.stale,
            )
            for row in store.list_home(scope)
        )


_CONCRETE_PATH: Final = type(Path())
"""What ``Path(...)`` builds here (``PosixPath`` or ``WindowsPath``)."""


def _as_path(home: str | os.PathLike[str]) -> Path:
    """``Path(home)``, or ``home`` itself when it is such a path already: a path keeps its
    parts and text once computed, and every listing, boot and tool call asks them again."""
    return home if type(home) is _CONCRETE_PATH else Path(home)  # type: ignore[return-value]


def errno_error(code: int, detail: str = "") -> OSError:
    """An ``OSError`` as the OS would raise it for ``code`` (e.g. ``errno.EIO``)."""
    return OSError(code, os.strerror(code), *((detail,) if detail else ()))


def _default_identity() -> NotesIdentity:
    return NotesIdentity(session_id="session", project_key="project")


def _no_files() -> Mapping[Scope, Mapping[str, str]]:
    return {}


def _no_failures() -> Mapping[Scope, BaseException | int]:
    return {}


@frozen(kw_only=True)
class InMemoryNotesSource:
    """Notes held as file texts per home, for tests and embedding. ``failures`` makes a
    home's listing raise: an ``int`` is an errno (raised as ``OSError``), an exception is
    raised as given."""

    identity: NotesIdentity = field(factory=_default_identity)
    files: Mapping[Scope, Mapping[str, str]] = field(factory=_no_files)
    failures: Mapping[Scope, BaseException | int] = field(factory=_no_failures)

    def with_file(self, scope: Scope, path: str, raw: str) -> InMemoryNotesSource:
        home = {**self.files.get(scope, {}), path: raw}
        return attrs.evolve(self, files={**self.files, scope: home})

    def with_note(
        self,
        scope: Scope,
        path: str,
        body: str,
        *,
        updated_at_ms: float,
        stale: bool = False,
    ) -> InMemoryNotesSource:
        return self.with_file(
            scope, path, note_file(body, updated_at_ms=updated_at_ms, stale=stale)
        )

    def failing(self, scope: Scope, error: BaseException | int) -> InMemoryNotesSource:
        return attrs.evolve(self, failures={**self.failures, scope: error})

    def list_home(self, scope: Scope, now_ms: float) -> tuple[NoteRow, ...]:
        failure = self.failures.get(scope)
        if isinstance(failure, int):
            raise errno_error(failure, f"<memory>/{scope}")
        if failure is not None:
            raise failure
        files = self.files.get(scope, {})
        return tuple(
            note_row(self.identity, scope, path, raw, now_ms) for path, raw in files.items()
        )


# -- the snapshot (R70, R71) ---------------------------------------------------------------


@frozen(kw_only=True)
class NoteSummary:
    """What the pocket shows of a note: never its body."""

    address: str
    lines: int
    size_bytes: int
    updated_at_ms: float


@frozen(kw_only=True)
class HomeSnapshot:
    """One home at boot: its fresh non-empty ``MAP.md`` body, its fresh non-map notes (most
    recent first, all of them; quotas are the renderer's) and whether the listing failed."""

    home: NotesHome
    map_body: str | None = None
    recent: tuple[NoteSummary, ...] = ()
    unavailable: bool = False


@frozen(kw_only=True)
class NotesSnapshot:
    """The five homes of one boot and the instant the boot opened."""

    opened_at_ms: float
    homes: tuple[HomeSnapshot, ...]

    def home(self, scope: str) -> HomeSnapshot:
        for home in self.homes:
            if home.home.scope == scope:
                return home
        raise KeyError(scope)

    @property
    def unavailable(self) -> tuple[NotesHome, ...]:
        return tuple(home.home for home in self.homes if home.unavailable)

    @property
    def unavailable_labels(self) -> tuple[str, ...]:
        return tuple(home.label for home in self.unavailable)


def home_snapshot(home: NotesHome, rows: Sequence[NoteRow]) -> HomeSnapshot:
    """Keep the map body and the pocket candidates of one listed home (rows in order)."""
    fresh = [row for row in rows if not row.stale]
    map_row = next((row for row in fresh if row.is_map), None)
    return HomeSnapshot(
        home=home,
        map_body=map_row.body if map_row is not None and map_row.body else None,
        recent=tuple(
            NoteSummary(
                address=row.address,
                lines=row.line_count,
                size_bytes=row.size_bytes,
                updated_at_ms=row.updated_at_ms,
            )
            for row in fresh
            if not row.is_map
        ),
    )


def isolated_failure(error: Exception) -> Literal["absent", "unavailable"] | None:
    """R71: how a listing error is isolated, or ``None`` when it must propagate.

    An errno-style code (``^E[A-Z0-9_]+$``, not ``ERR_*``) isolates the home; ``ENOENT`` means
    the home is absent (empty, not unavailable). The code is the errno name of an ``OSError``
    or a string ``code`` attribute (Node style).
    """
    code = _error_code(error)
    if code is None or not _ERRNO_CODE.fullmatch(code) or code.startswith("ERR_"):
        return None
    return "absent" if code == "ENOENT" else "unavailable"


def _error_code(error: Exception) -> str | None:
    if isinstance(error, OSError) and isinstance(error.errno, int):
        return errno_codes.errorcode.get(error.errno)
    code = getattr(error, "code", None)
    return code if isinstance(code, str) else None


def load_notes_snapshot(source: NotesSource, clock: Callable[[], float]) -> NotesSnapshot:
    """R70/R71: read the clock once, then list each of the five homes once, in order.

    Deviation from Node, on purpose: an ``ENOENT`` from a listing is an absent home even when
    it comes from a note that vanished mid-listing (Node marks that home unavailable).
    """
    opened_at_ms = clock()
    homes = []
    for home in NOTES_HOMES:
        try:
            rows = source.list_home(home.scope, opened_at_ms)
        except Exception as error:
            isolation = isolated_failure(error)
            if isolation is None:
                raise
            homes.append(HomeSnapshot(home=home, unavailable=isolation == "unavailable"))
            continue
        homes.append(home_snapshot(home, sorted_rows(rows)))
    return NotesSnapshot(opened_at_ms=opened_at_ms, homes=tuple(homes))
