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

A note is any ``*.md`` file below its home (recursively; symlinks are not followed), read as
UTF-8. Its optional frontmatter block supplies ``stale`` (only the JSON ``true`` counts) and
``updated_at`` (a number of epoch ms, or a date string); a missing or unreadable
``updated_at`` falls back to the snapshot's ``opened_at``.
"""

from __future__ import annotations

import errno as errno_codes
import hashlib
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, Protocol, cast

import attrs
from attrs import field, frozen

from pictx_fsm import _jscompat as js
from pictx_fsm.protocol import (
    DEFAULT_AGENT_NAME,
    DEFAULT_MODEL_NAME,
    DEFAULT_NOTES_HOME_PARTS,
    NOTES_HOME_ENV,
    NOTES_HOME_LABELS,
    NOTES_MAP_PATH,
    SESSION_NOTES_PARTS,
)

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
    "errno_error",
    "home_snapshot",
    "isolated_failure",
    "load_notes_snapshot",
    "model_slug",
    "note_file",
    "note_row",
    "parse_note",
    "project_key",
    "slugify",
    "sorted_rows",
]

Scope = Literal["session", "project", "human", "agent", "model"]

_ERRNO_CODE: Final = re.compile(r"E[A-Z0-9_]+")
_FRONTMATTER_KEY: Final = re.compile("([A-Za-z_][A-Za-z0-9_-]*):([^\r\u2028\u2029]*)")
_SEQUENCE_ITEM: Final = js.compile_regex(r"^\s*-\s+")


@frozen(kw_only=True)
class NotesHome:
    """One of the five homes of a boot and the label notices use for it."""

    scope: Scope
    label: str


NOTES_HOMES: Final[tuple[NotesHome, ...]] = tuple(
    NotesHome(scope=cast(Scope, scope), label=label) for scope, label in NOTES_HOME_LABELS
)


# -- identity and layout -------------------------------------------------------------------


def slugify(value: str) -> str:
    """A home name: lowercase ``[a-z0-9]`` runs joined by single dashes (``root`` if empty)."""
    slug = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
    return slug or DEFAULT_AGENT_NAME


def agent_slug(configured: str | None) -> str:
    """The @self home and the boot's agent name: ``$PI_NOTES_AGENT`` slugified, or ``root``."""
    return slugify(DEFAULT_AGENT_NAME if configured is None else configured)


def model_slug(model_id: str | None) -> str:
    """The @model home and the boot's brain name: the last ``/`` segment of the model id."""
    if not model_id:
        return DEFAULT_MODEL_NAME
    return slugify(model_id.split("/")[-1])


def project_key(cwd: Path) -> str:
    """``<basename(root)>-<sha1(root)[:8]>`` of the git root above ``cwd`` (or ``cwd``).

    Linked worktrees resolve to their main checkout, so all worktrees share one key.
    """
    root = _git_root(Path(os.path.abspath(cwd))) or Path(os.path.abspath(cwd))
    digest = hashlib.sha1(str(root).encode("utf-8")).hexdigest()[:8]
    return f"{root.name}-{digest}"


def _git_root(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return _repository_root(directory)
    return None


def _repository_root(directory: Path) -> Path:
    dot_git = directory / ".git"
    if dot_git.is_dir():
        return directory
    try:
        pointer = dot_git.read_text(encoding="utf-8")
    except OSError:
        return directory
    match = re.search(r"^gitdir:\s*(.+)$", pointer, re.MULTILINE)
    if match is None:
        return directory
    target = Path(os.path.abspath(directory / match.group(1).strip()))
    parts = target.parts
    if len(parts) >= 3 and parts[-2] == "worktrees" and parts[-3] == ".git":
        return Path(*parts[:-3])
    return directory


def default_notes_home(env: Mapping[str, str], user_home: Path) -> Path:
    """``$PI_NOTES_HOME``, else ``~/.agents/notes``."""
    configured = env.get(NOTES_HOME_ENV)
    return Path(configured) if configured else user_home.joinpath(*DEFAULT_NOTES_HOME_PARTS)


@frozen(kw_only=True)
class NotesIdentity:
    """Who is running: names the session, project, agent and model homes."""

    session_id: str
    project_key: str
    agent: str = DEFAULT_AGENT_NAME
    model: str = DEFAULT_MODEL_NAME

    @classmethod
    def of_session(
        cls, session_id: str, cwd: str | Path, *, agent: str | None = None, model: str | None = None
    ) -> NotesIdentity:
        """The identity of a session: its id, the project of ``cwd`` (the repository root's
        key), the configured agent name and the model id, slugged as pi-context does."""
        return cls(
            session_id=session_id,
            project_key=project_key(Path(cwd)),
            agent=agent_slug(agent),
            model=model_slug(model),
        )

    def home_parts(self, scope: Scope) -> tuple[str, ...]:
        """The home's directory below the notes home."""
        if scope == "session":
            return (*SESSION_NOTES_PARTS, self.session_id)
        if scope == "project":
            return ("project", self.project_key)
        if scope == "human":
            return ("human",)
        if scope == "agent":
            return ("agents", self.agent)
        return ("models", self.model)

    def address(self, scope: Scope, path: str) -> str:
        """The public address of a note (``@self``/``@model`` render resolved names)."""
        if scope == "session":
            return path
        if scope in ("project", "human"):
            return f"@{scope}/{path}"
        return f"@{'/'.join(self.home_parts(scope))}/{path}"


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
        return len(self.body.encode("utf-8", errors="surrogatepass"))

    @property
    def line_count(self) -> int:
        """``body.split("\\n").length`` (an empty body is one line)."""
        return self.body.count("\n") + 1

    @property
    def is_map(self) -> bool:
        """Only a home's top-level ``MAP.md`` is its map; nested ones are ordinary notes."""
        return self.path == NOTES_MAP_PATH


def parse_note(raw: str, now_ms: float) -> tuple[bool, float, str]:
    """``(stale, updated_at_ms, body)`` of a note file. Without a closed leading ``---``
    block the whole text is the body and the defaults apply."""
    fields, body = _split_frontmatter(raw)
    stale = fields.get("stale") is True
    return stale, _epoch_ms(fields.get("updated_at"), now_ms), body


def _split_frontmatter(raw: str) -> tuple[dict[str, Any], str]:
    lines = [line.removesuffix("\r") for line in raw.removeprefix("\ufeff").split("\n")]
    if js.trim(lines[0]) != "---":
        return {}, raw
    close = next((i for i in range(1, len(lines)) if js.trim(lines[i]) == "---"), None)
    if close is None:
        return {}, raw
    fields: dict[str, Any] = {}
    index = 1
    while index < close:
        match = _FRONTMATTER_KEY.fullmatch(lines[index])
        index += 1
        if match is None:
            continue
        key, rest = match.groups()
        if js.trim(rest):
            fields[key] = _scalar(rest)
            continue
        items = []
        while index < close and _SEQUENCE_ITEM.search(lines[index]):
            items.append(_scalar(_SEQUENCE_ITEM.sub("", lines[index], count=1)))
            index += 1
        fields[key] = items
    rest_lines = lines[close + 1 :]
    if rest_lines[:1] == [""]:
        rest_lines = rest_lines[1:]
    return fields, "\n".join(rest_lines)


def _scalar(text: str) -> Any:
    trimmed = js.trim(text)
    if not trimmed:
        return ""
    try:
        return js.parse_json(trimmed)
    except ValueError:
        if trimmed[0] in "\"'" and trimmed[-1] == trimmed[0]:
            return trimmed[1:-1]
        return trimmed


def _epoch_ms(value: object, fallback: float) -> float:
    if isinstance(value, int | float) and js.is_number(value):
        number = js.to_number(value)
        if math.isfinite(number):
            return number
    if isinstance(value, str):
        parsed = js.parse_date_ms(value)
        if parsed is not None:
            return parsed
    return fallback


def note_row(identity: NotesIdentity, scope: Scope, path: str, raw: str, now_ms: float) -> NoteRow:
    """A listed note from its file text."""
    stale, updated_at_ms, body = parse_note(raw, now_ms)
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
    """Most recently updated first; ties by address (an approximation of ``localeCompare``:
    case-insensitive first, lowercase before uppercase)."""
    return tuple(sorted(rows, key=_row_order))


def _row_order(row: NoteRow) -> tuple[float, str, str]:
    return (-row.updated_at_ms, row.address.casefold(), row.address.swapcase())


# -- sources -------------------------------------------------------------------------------


class NotesSource(Protocol):
    """Lists one home, in any order. Raises ``OSError`` (or an error with a string ``code``)
    on I/O failure; ``now_ms`` is the fallback update time of notes that lack one."""

    def list_home(self, scope: Scope, now_ms: float) -> Sequence[NoteRow]: ...


@frozen(kw_only=True)
class FileNotesSource:
    """Notes on disk under ``home`` (the notes home, passed explicitly by the runtime)."""

    home: Path
    identity: NotesIdentity

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

    def home_dir(self, scope: Scope) -> Path:
        return Path(self.home).joinpath(*self.identity.home_parts(scope))

    def list_home(self, scope: Scope, now_ms: float) -> tuple[NoteRow, ...]:
        root = self.home_dir(scope)
        return tuple(
            note_row(self.identity, scope, path, _read_text(root / path), now_ms)
            for path in _walk_markdown(root, "")
        )


def _walk_markdown(directory: Path, prefix: str) -> Iterator[str]:
    """Relative ``/``-paths of the ``*.md`` files below ``directory``. A directory that does
    not exist is empty; every other listing error propagates."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except FileNotFoundError:
        return
    for entry in entries:
        relative = f"{prefix}{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            yield from _walk_markdown(Path(entry.path), relative + "/")
        elif entry.is_file(follow_symlinks=False) and entry.name.endswith(".md"):
            yield relative


def _read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def errno_error(code: int, detail: str = "") -> OSError:
    """An ``OSError`` as the OS would raise it for ``code`` (e.g. ``errno.EIO``)."""
    return OSError(code, os.strerror(code), *((detail,) if detail else ()))


def _no_files() -> Mapping[Scope, Mapping[str, str]]:
    return {}


def _no_failures() -> Mapping[Scope, BaseException | int]:
    return {}


@frozen(kw_only=True)
class InMemoryNotesSource:
    """Notes held as file texts per home, for tests and embedding. ``failures`` makes a
    home's listing raise: an ``int`` is an errno (raised as ``OSError``), an exception is
    raised as given."""

    identity: NotesIdentity = NotesIdentity(session_id="session", project_key="project")
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
