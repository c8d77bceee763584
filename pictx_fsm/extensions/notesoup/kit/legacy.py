"""Mixed histories: a world that starts from a pi-context 0.25 session (and its notes).

notesoup 0.38 does not migrate 0.25 sessions (S133): its markers are foreign, so the whole
erased transcript goes back to the provider. This port migrates them; to verify that, a world
can open a session file written in 0.25's shape — windows opened by ``pi-context/reset-marker``
entries, each with its ``pi-context/boot`` and ``pi-context/continuation``, a root boot,
conversation in every window, perhaps a 0.25 warning in the current window and a bare or
half-repaired last tail — and a notes home holding 0.25 notes (snake_case metadata, a closed
``stale: true`` note, the 0.25 ``@self`` home ``agents/root/``).

The builder knows only 0.25's persisted shapes (its custom types, ids and metadata keys), not
pi-context's code: the kit may not import another extension, and a file on disk is all a
resumed session has of 0.25 anyway.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Final, Literal

import attrs
from attrs import field, frozen

from pictx_fsm.extensions.notesoup.texts import (
    LEGACY_BOOT_TYPE,
    LEGACY_CONTINUATION_TYPE,
    LEGACY_MARKER_TYPE,
    LEGACY_WARNING_TYPE,
)
from pictx_fsm.extensions.shared.tools.homes import LEGACY_AGENT_NAME
from pictx_fsm.extensions.shared.windows import mint_window_id, root_window_id
from pictx_fsm.session.entries import SessionHeader
from pictx_fsm.session.ids import uuid_draws
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.writer import SessionWriter, iso

__all__ = [
    "LEGACY_SECRET",
    "LegacyHistory",
    "LegacyNotes",
    "legacy_tree",
    "plant_legacy_notes",
]

LEGACY_SECRET: Final = "legacy-erased"
"""Every 0.25 message behind a 0.25 marker carries this word (what must never be sent)."""
Tail = Literal["complete", "boot_only", "bare"]
TAILS: Final[tuple[Tail, ...]] = ("complete", "boot_only", "bare")
LEGACY_BOOT_TEXT: Final = (
    "<context_window>\nAgent name: root\nCurrent context window id: {window_id}\n"
    "</context_window>\n<context_window_protocol>\nUse notes_* and call wipe_memory when the "
    "window runs low.\n</context_window_protocol>"
)
LEGACY_CONTINUATION: Final = (
    "Your memory was just erased. Your head is blank. Good news: your notes are still here, "
    "and history remains... searchable. Do try to keep up."
)
LEGACY_WARNING: Final = (
    "<context_window_guidance>\nYour memory is about to be erased. Write the note. NOW. Then "
    "call wipe_memory IMMEDIATELY.\n</context_window_guidance>"
)


@frozen(kw_only=True)
class LegacyHistory:
    """The 0.25 session a world resumes: ``windows`` committed 0.25 resets (0: only the 0.25
    root window), ``turns`` exchanges in each window, the last window's ``tail`` (a complete
    0.25.1 tail, a 0.25.0 boot-only tail, or a bare marker), and a 0.25 warning in the current
    window."""

    windows: int = 1
    turns: int = 1
    tail: Tail = field(default="complete")
    warning: bool = False
    chars: int = 400

    def to_json(self) -> dict[str, Any]:
        """Every field, as a trace's ``config.legacy`` holds it."""
        return attrs.asdict(self)


@frozen(kw_only=True)
class LegacyNotes:
    """0.25 notes planted in the notes home, with what the migration must make of them."""

    fresh: tuple[str, ...] = ()
    """Addresses (relative to the session home) of open notes."""
    stale: tuple[str, ...] = ()
    """Addresses of notes 0.25 closed (``stale: true``): crumpled once migrated."""
    self_notes: tuple[str, ...] = ()
    """Notes in 0.25's ``@self`` home, ``agents/root/``."""


def legacy_tree(
    history: LegacyHistory, session_id: str, cwd: str, *, seed: int, start_ms: int
) -> SessionTree:
    """A session file written by pi-context 0.25 (its shapes only), ready to resume."""
    header = SessionHeader(id=session_id, timestamp=iso(start_ms), cwd=cwd)
    tree = SessionTree(header)
    clock = _Clock(start_ms)
    writer = SessionWriter(tree, ids=random.Random(seed), clock=clock)
    rng = random.Random(seed + 1)
    writer.add(lambda i, p, t: _model_change(i, p, t))
    root = root_window_id(session_id)
    writer.custom_message(
        LEGACY_BOOT_TYPE, LEGACY_BOOT_TEXT.format(window_id=root), False, {"windowId": root}
    )
    taken: set[str] = set()
    for window in range(history.windows + 1):
        last = window == history.windows
        _exchanges(writer, history, window)
        if last:
            if history.warning:
                writer.custom_message(LEGACY_WARNING_TYPE, LEGACY_WARNING, False)
            break
        window_id = mint_window_id(session_id, uuid_draws(rng), taken)
        taken.add(window_id)
        writer.custom(LEGACY_MARKER_TYPE, {"windowId": window_id})
        final = window == history.windows - 1
        tail = history.tail if final else "complete"
        if tail != "bare":
            boot = LEGACY_BOOT_TEXT.format(window_id=window_id)
            writer.custom_message(LEGACY_BOOT_TYPE, boot, False, {"windowId": window_id})
        if tail == "complete":
            writer.custom_message(LEGACY_CONTINUATION_TYPE, LEGACY_CONTINUATION, False)
        if final and tail != "complete":
            return tree  # a crash-truncated 0.25 tail: nothing after it
    return tree


def _exchanges(writer: SessionWriter, history: LegacyHistory, window: int) -> None:
    for turn in range(history.turns):
        label = f"{LEGACY_SECRET}-w{window}-t{turn}"
        text = (label + " lorem") * max(1, history.chars // (len(label) + 6))
        now = writer.now()
        writer.message({"role": "user", "content": text, "timestamp": now})
        writer.message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"{label} answered"}],
                "api": "faux",
                "provider": "faux",
                "model": "faux-1",
                "usage": {
                    "input": 0,
                    "output": 0,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 0,
                },
                "stopReason": "stop",
                "timestamp": now,
            }
        )


def _model_change(i: str, p: str | None, t: str) -> Any:
    from pictx_fsm.session.entries import ModelChangeEntry

    return ModelChangeEntry(id=i, parent_id=p, timestamp=t, provider="faux", model_id="faux-1")


class _Clock:
    """A clock that ticks one second per entry (0.25's files are days old; times only order)."""

    def __init__(self, start_ms: int) -> None:
        self.now = start_ms

    def __call__(self) -> int:
        self.now += 1000
        return self.now


def plant_legacy_notes(root: Path, session_id: str, notes: LegacyNotes, now_ms: int) -> None:
    """Write 0.25 notes under ``root``: snake_case metadata (N17), ``stale: true`` for the
    closed ones, the ``@self`` ones in ``agents/root/``."""
    session_home = root / "pi" / "session" / session_id
    for index, path in enumerate(notes.fresh):
        _note(session_home / f"{path}.md", f"0.25 note {path}", now_ms - 86_400_000 * (index + 2))
    for index, path in enumerate(notes.stale):
        _note(
            session_home / f"{path}.md",
            f"closed 0.25 note {path}",
            now_ms - 86_400_000 * (index + 2),
            stale=True,
        )
    for index, path in enumerate(notes.self_notes):
        home = root / "agents" / LEGACY_AGENT_NAME
        _note(home / f"{path}.md", f"0.25 diary {path}", now_ms - 3_600_000 * (index + 1))


def _note(path: Path, body: str, updated_ms: int, *, stale: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = iso(updated_ms)
    lines = [
        "origin: self",
        "status: active",
        f"stale: {'true' if stale else 'false'}",
        f"created_at: {stamp}",
        f"updated_at: {stamp}",
        f"last_accessed: {stamp}",
        "access_count: 0",
    ]
    path.write_text("---\n" + "\n".join(lines) + f"\n---\n\n# {body}\n", encoding="utf-8")
