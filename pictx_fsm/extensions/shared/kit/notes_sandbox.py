"""A notes home for generated runs, with its security boundary planted and watched — the
family's (pi-context's and notesoup's notes tools share the root confinement, S95).

Every world of ``pictx-fsm verify`` gets a fresh temporary ``PI_NOTES_HOME``. Beside it lies
a directory the tools must never touch, holding a sentinel note with a secret line; inside
it, links point out of the root (a home, a directory within a home, a note file). The
:class:`NotesConfined` invariant checks after every action that nothing outside the root
changed and that the secret never reached a session — no address, glob or pattern read or
wrote outside the notes root (the boundary of ``pictx_fsm.extensions.shared.tools.homes``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from pictx_fsm.extensions.shared.kit.view import SessionWorld
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.testing.invariants import PerItem, Violation

__all__ = [
    "ESCAPES",
    "HOME_PATTERN",
    "PREFIX",
    "SECRET",
    "SENTINEL",
    "NotesConfined",
    "NotesSandbox",
    "sandbox_parent",
]

SECRET: Final = "pictx-sentinel: this line lies outside the notes root"
SENTINEL: Final = "sentinel.md"
ESCAPES: Final[Mapping[str, str]] = {
    "agents/evil": "",  # a whole agent home
    "human/escape": "",  # a directory inside a home
    "human/leak.md": SENTINEL,  # a note file
}
"""Links planted under the notes root → what they point at in the outside directory."""


PREFIX: Final = "pictx-notes-"
HOME_PATTERN: Final = rf"/[^\s\"']*{PREFIX}[A-Za-z0-9_]+"
"""A sandbox's path, as a name the exhaustive check renames (it is minted per world:
``Kit.name_patterns``)."""

MEMORY_DIR: Final = Path("/dev/shm")
"""Where sandboxes go when it is there (a tmpfs): every world creates and removes one, which
on a loaded disk took longer than a whole generated run's host work."""


def sandbox_parent() -> str | None:
    """A memory-backed directory for sandboxes when one is writable, else the default temp
    directory (``None``)."""
    return str(MEMORY_DIR) if os.access(MEMORY_DIR, os.W_OK | os.X_OK) else None


class NotesSandbox:
    """A temporary notes root and the outside it must never touch; removed with the object."""

    def __init__(self, parent: str | None = None) -> None:
        base = tempfile.mkdtemp(prefix=PREFIX, dir=parent or sandbox_parent())
        self.base = Path(base)
        self.root = self.base / "notes"
        self.outside = self.base / "outside"
        self.outside.mkdir()
        (self.outside / SENTINEL).write_text(f"{SECRET}\n", encoding="utf-8")
        for link, target in ESCAPES.items():
            path = self.root / link
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(self.outside / target if target else self.outside)
        self._stamped = (str(self.base), str(self.outside), str(self.outside / SENTINEL))
        self.baseline = self.outside_state()
        self.stamp = self.outside_stamp()
        self._planted = _entries(base)
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.base, ignore_errors=True)

    @classmethod
    def fresh(cls) -> NotesSandbox:
        """A sandbox as planted: a released one that is still pristine, or a new one."""
        return _SPARE.pop() if _SPARE else cls()

    def release(self) -> None:
        """Done with: kept for the next world when nothing in it moved, else removed.
        Creating and removing a sandbox cost more than a short generated run's checks."""
        if len(_SPARE) < SPARE_SANDBOXES and self.pristine():
            _SPARE.append(self)
        else:
            self.close()

    def contents(self) -> tuple[tuple[str, int, str | bytes | None], ...]:
        """Everything below the sandbox as the tools left it, in path order: each entry's
        relative path, a directory's mode (-1 otherwise), a link's target or a file's bytes
        (part of a world's canonical state: a boot indexes these notes)."""
        found = []
        for name, mode, target in sorted(_entries(str(self.base))):
            content: str | bytes | None = target
            if mode == -1 and target is None:
                content = (self.base / name).read_bytes()
            found.append((name, mode, content))
        return tuple(found)

    def pristine(self) -> bool:
        """Whether everything is as planted: the outside unmoved (:meth:`outside_stamp`), and
        the same entries everywhere else — directories with their modes, the same links to
        the same targets, no note or home the tools made."""
        try:
            return self.outside_stamp() == self.stamp and _entries(str(self.base)) == self._planted
        except OSError:
            return False

    def outside_state(self) -> dict[str, tuple[int, int, bytes]]:
        """Everything outside the notes root: each path with its size, mtime and bytes."""
        state: dict[str, tuple[int, int, bytes]] = {}
        for directory, _, files in os.walk(self.outside):
            for name in files:
                path = Path(directory, name)
                stat = path.stat()
                state[str(path.relative_to(self.base))] = (
                    stat.st_size,
                    stat.st_mtime_ns,
                    path.read_bytes(),
                )
        for entry in self.base.iterdir():
            if entry.name not in (self.root.name, self.outside.name):
                state[entry.name] = (-1, -1, b"")
        return state

    def outside_stamp(self) -> tuple[tuple[int, int, int, int], ...]:
        """What any change outside the root moves, in three ``stat`` calls: the base and
        outside directories (an entry created, removed or renamed in them changes their
        mtime) and the sentinel (a write, truncation, chmod or replacement changes its size,
        mtime, ctime or inode). The invariant compares this after every action and reads
        the whole outside (:meth:`outside_state`) only when it moved."""
        stamps = []
        for path in self._stamped:
            try:
                stat = os.lstat(path)
            except OSError:
                stamps.append((-1, -1, -1, -1))
                continue
            stamps.append((stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns))
        return tuple(stamps)

    def changed(self) -> bool:
        """Whether anything outside the notes root differs from how it was planted."""
        return self.outside_stamp() != self.stamp and self.outside_state() != self.baseline

    def close(self) -> None:
        self._cleanup()


SPARE_SANDBOXES: Final = 4
_SPARE: list[NotesSandbox] = []
"""Released pristine sandboxes of this process, for the next worlds."""


def _entries(top: str) -> frozenset[tuple[str, int, str | None]]:
    """Every entry below ``top``, links not followed: (relative path, a directory's mode or
    -1, a link's target)."""
    found: set[tuple[str, int, str | None]] = set()
    pending = [("", top)]
    while pending:
        prefix, directory = pending.pop()
        with os.scandir(directory) as scan:
            for entry in scan:
                name = prefix + entry.name
                if entry.is_symlink():
                    found.add((name, -1, os.readlink(entry.path)))
                elif entry.is_dir(follow_symlinks=False):
                    found.add((name, entry.stat(follow_symlinks=False).st_mode, None))
                    pending.append((name + "/", entry.path))
                else:
                    found.add((name, -1, None))
    return frozenset(found)


# -- the invariant ---------------------------------------------------------------------------


class NotesConfined(PerItem[SessionWorld, Entry]):
    """(k) no notes tool reads or writes outside the notes root: the planted outside stays byte
    for byte, and its secret never reaches a session"""

    name = "notes_confined"
    rule = "notes root boundary (issue 10, N11, N12)"

    def check(self, world: SessionWorld) -> list[Violation]:
        """The outside compared whole, then every entry persisted since the last check."""
        sandbox = getattr(world, "notes", None)
        if not isinstance(sandbox, NotesSandbox):
            return []
        found = []
        if sandbox.changed():
            found.append(self.violation(f"{sandbox.outside} changed under the notes tools"))
        return found + super().check(world)

    def items(self, world: SessionWorld) -> Sequence[Entry]:
        return world.session.log.persisted

    def judge(self, world: SessionWorld, entry: Entry) -> list[Violation]:
        if _leaks(entry):
            return [self.violation(f"entry {entry.id} carries the sentinel's secret")]
        return []


def _leaks(entry: Entry) -> bool:
    if not isinstance(entry, MessageEntry) or entry.message.raw.get("role") != "toolResult":
        return False
    content = entry.message.raw.get("content")
    blocks = content if isinstance(content, list) else []
    return any(SECRET in str(block.get("text", "")) for block in blocks)
