"""Where notes live: the notes root, the five homes, file names, the walk, atomic writes —
the same for pi-context 0.25 and notesoup 0.38 (S95: "physical layout unchanged").

The notes root is ``$PI_NOTES_HOME`` (resolved) or ``~/.agents/notes`` (N6); each home is a
directory below it (N7); a virtual path ``a/b`` is the file ``a/b.md`` (N12). Sources:
``src/notes/paths.ts`` and ``src/notes/store.ts`` of pi-context 0.25.0. What differs is the
default agent name (``root`` in 0.25, ``anonymous`` in 0.38): each extension passes its own.

The root is a security boundary here, on purpose stricter than the anchor (which follows
any symbolic link, N12): no file is read or written, and no directory walked, whose real
path lies outside the real notes root. A planted link that points out of the root makes
the operation fail with :class:`OutsideNotesRoot` (an ``EACCES`` error) instead.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.extensions.shared.tools.address import Scope, canonical_address
from pictx_fsm.js_regex import compile_regex

__all__ = [
    "DEFAULT_MODEL_NAME",
    "DEFAULT_NOTES_HOME_PARTS",
    "LEGACY_AGENT_NAME",
    "NOTES_AGENT_ENV",
    "NOTES_HOME_ENV",
    "NOTE_SUFFIX",
    "OUTSIDE_ROOT",
    "SESSION_NOTES_PARTS",
    "TEMP_SUFFIX",
    "NotesIdentity",
    "NotesPlace",
    "OutsideNotesRoot",
    "agent_slug",
    "atomic_write",
    "default_notes_home",
    "display_name",
    "model_slug",
    "namespace_names",
    "note_file_name",
    "project_key",
    "read_note_text",
    "slugify",
    "walk_markdown",
]

NOTES_HOME_ENV: Final = "PI_NOTES_HOME"
NOTES_AGENT_ENV: Final = "PI_NOTES_AGENT"
DEFAULT_NOTES_HOME_PARTS: Final = (".agents", "notes")  # under the user's home directory
SESSION_NOTES_PARTS: Final = ("pi", "session")  # <notes home>/pi/session/<sessionId>/
DEFAULT_MODEL_NAME: Final = "default"
LEGACY_AGENT_NAME: Final = "root"
"""pi-context 0.25's default agent (and slug fallback); notesoup's is ``anonymous``."""
NOTE_SUFFIX: Final = ".md"
TEMP_SUFFIX: Final = ".tmp"
OUTSIDE_ROOT: Final = "note path resolves outside the notes root through a symbolic link: {what}"


class OutsideNotesRoot(PermissionError):
    """A path under the notes root whose real location is outside it (a planted symlink).
    Errno ``EACCES``, so a boot isolates the home as unavailable (R71)."""

    def __init__(self, what: str) -> None:
        super().__init__(errno.EACCES, OUTSIDE_ROOT.format(what=what))

    def __str__(self) -> str:
        return str(self.strerror)


# -- identity (N8, N9) ---------------------------------------------------------------------------


_NOT_SLUG: Final = compile_regex("[^a-z0-9]+", "g")


def slugify(value: str, fallback: str = LEGACY_AGENT_NAME) -> str:
    """A home name: lowercase ``[a-z0-9]`` runs joined by single dashes (``fallback`` if
    empty)."""
    slug = _NOT_SLUG.replace(value.lower(), "-").strip("-")
    return slug or fallback


def agent_slug(configured: str | None, default: str = LEGACY_AGENT_NAME) -> str:
    """The @self home and the boot's agent name: ``$PI_NOTES_AGENT`` slugified, or the
    extension's ``default``."""
    return slugify(default if configured is None else configured, default)


def model_slug(model_id: str | None, fallback: str = LEGACY_AGENT_NAME) -> str:
    """The @model home and the boot's brain name: the last ``/`` segment of the model id
    (``default`` without one; ``fallback`` when the segment has no slug characters)."""
    if not model_id:
        return DEFAULT_MODEL_NAME
    return slugify(model_id.split("/")[-1], fallback)


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


_GITDIR: Final = compile_regex(r"^gitdir:\s*(.+)$", "m")
"""The anchor's reading of a worktree's ``.git`` file (a JavaScript regex)."""


def _repository_root(directory: Path) -> Path:
    dot_git = directory / ".git"
    if dot_git.is_dir():
        return directory
    try:
        pointer = dot_git.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return directory
    match = _GITDIR.execute(pointer)
    if match is None or match[1] is None:
        return directory
    target = Path(os.path.abspath(directory / match[1].strip()))
    parts = target.parts
    if len(parts) >= 3 and parts[-2] == "worktrees" and parts[-3] == ".git":
        return Path(*parts[:-3])
    return directory


def default_notes_home(env: Mapping[str, str], user_home: Path) -> Path:
    """N6: ``resolve($PI_NOTES_HOME)`` when set and non-empty, else ``~/.agents/notes``."""
    configured = env.get(NOTES_HOME_ENV)
    if configured:
        return Path(os.path.abspath(configured))
    return user_home.joinpath(*DEFAULT_NOTES_HOME_PARTS)


@frozen(kw_only=True)
class NotesIdentity:
    """Who is running: names the session, project, agent and model homes."""

    session_id: str
    project_key: str
    agent: str = LEGACY_AGENT_NAME
    model: str = DEFAULT_MODEL_NAME

    @classmethod
    def of_session(
        cls,
        session_id: str,
        cwd: str | Path,
        *,
        agent: str | None = None,
        model: str | None = None,
        default_agent: str = LEGACY_AGENT_NAME,
    ) -> NotesIdentity:
        """The identity of a session: its id, the project of ``cwd`` (the repository root's
        key), the configured agent name (else ``default_agent``) and the model id, slugged
        as the family does."""
        return cls(
            session_id=session_id,
            project_key=project_key(Path(cwd)),
            agent=agent_slug(agent, default_agent),
            model=model_slug(model, default_agent),
        )

    def name(self, scope: Scope, who: str | None = None) -> str:
        """The agent/model home's name: ``who`` when named, else the current one."""
        if who is not None:
            return who
        return self.agent if scope == "agent" else self.model

    def home_parts(self, scope: Scope, who: str | None = None) -> tuple[str, ...]:
        """The home's directory below the notes root."""
        if scope == "session":
            return (*SESSION_NOTES_PARTS, self.session_id)
        if scope == "project":
            return ("project", self.project_key)
        if scope == "human":
            return ("human",)
        return ("agents" if scope == "agent" else "models", self.name(scope, who))

    def address(self, scope: Scope, path: str, who: str | None = None) -> str:
        """N13: the canonical address (``@self``/``@model`` render resolved names)."""
        return canonical_address(scope, path, self.name(scope, who))


def note_file_name(vpath: str) -> str:
    """N12: ``a/b`` and ``a/b.md`` are the same file (case-sensitive suffix)."""
    return vpath if vpath.endswith(NOTE_SUFFIX) else vpath + NOTE_SUFFIX


@frozen(kw_only=True)
class NotesPlace:
    """The notes root and the identity that names its homes: everything a path needs."""

    root: Path
    identity: NotesIdentity

    def home_dir(self, scope: Scope, who: str | None = None) -> Path:
        return self.root.joinpath(*self.identity.home_parts(scope, who))

    def note_path(self, scope: Scope, vpath: str, who: str | None = None) -> Path:
        """The file of a (validated) virtual path, checked to stay inside the root."""
        path = self.home_dir(scope, who).joinpath(*note_file_name(vpath).split("/"))
        self.confine(path, self.identity.address(scope, vpath, who))
        return path

    def confine(self, path: Path, what: str) -> None:
        """Raise :class:`OutsideNotesRoot` unless ``path`` really lies inside the root."""
        if _plainly_below(self.root, path):
            return
        root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        if os.path.commonpath((root, real)) != root:
            raise OutsideNotesRoot(what)


def _plainly_below(root: Path, path: Path) -> bool:
    """Whether ``path`` is the root joined with plain names, none of them a symbolic link:
    then its real path is the root's joined with the same names, inside the root whatever
    the root itself resolves to (``os.path.realpath`` walks the same components and finds
    nothing to resolve below the root). A name that does not exist is no link, for
    ``realpath`` too. At the first link (or ``.``/``..``) the full check decides."""
    root_parts, parts = root.parts, path.parts
    if parts[: len(root_parts)] != root_parts:
        return False
    current = str(root)
    for name in parts[len(root_parts) :]:
        if name in ("", ".", ".."):
            return False
        current = os.path.join(current, name)
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return False
        except OSError:
            continue
    return True


# -- the walk (N42) and namespaces (N40) ---------------------------------------------------------


def display_name(name: str) -> str:
    """A file name as Node reads it: undecodable bytes become U+FFFD."""
    return name.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def walk_markdown(directory: Path) -> list[tuple[str, Path]]:
    """``(relative /-path, file)`` of every ``*.md`` regular file below ``directory``, in
    ``localeCompare`` order, depth first; symbolic links are never followed. A missing
    directory is empty; every other listing error propagates (N42)."""
    found: list[tuple[str, Path]] = []
    _walk(directory, "", found)
    return found


def _walk(directory: Path, prefix: str, found: list[tuple[str, Path]]) -> None:
    try:
        with os.scandir(directory) as scan:
            entries = [(display_name(entry.name), entry) for entry in scan]
    except FileNotFoundError:
        return
    entries.sort(key=lambda pair: js.locale_key(pair[0]))
    for name, entry in entries:
        if entry.is_dir(follow_symlinks=False):
            _walk(Path(entry.path), f"{prefix}{name}/", found)
        elif entry.is_file(follow_symlinks=False) and name.endswith(NOTE_SUFFIX):
            found.append((prefix + name, Path(entry.path)))


def namespace_names(root: Path, namespace: str) -> list[str]:
    """N40: the home names under ``<root>/agents`` (or ``models``): real sub-directories in
    UTF-16 code-unit order; any listing error means none."""
    try:
        with os.scandir(root / namespace) as scan:
            names = [e.name for e in scan if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    return sorted(names, key=lambda name: name.encode("utf-16-be", errors="surrogatepass"))


# -- files ---------------------------------------------------------------------------------------


def read_note_text(path: Path) -> str:
    """A note file as Node's ``readFileSync(path, "utf8")`` reads it."""
    return path.read_bytes().decode("utf-8", errors="replace")


def atomic_write(path: Path, text: str) -> None:
    """N51: write ``text`` to ``<path>.<pid>.<uuid>.tmp`` beside it, then rename it over
    ``path``; on any failure the temp file is removed. Readers see the old or the new note,
    never a torn one, also across processes (last writer wins, N50)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4()}{TEMP_SUFFIX}")
    try:
        with open(temp, "xb") as handle:
            handle.write(js.to_utf8(text))
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
