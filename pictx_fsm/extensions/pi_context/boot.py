"""The boot text: identity, notes index and protocol of one context window (R72–R74, D1, D5).

Rendering is pure: everything comes from :class:`BootIdentity`, a
:class:`~pictx_fsm.extensions.pi_context.notes.NotesSnapshot` (which carries the boot's
``opened_at``) and the
profile's :class:`~pictx_fsm.extensions.pi_context.texts.Texts`. Parts are joined by a blank line:

1. ``RESET_SUMMARY`` — reset boots only, and only when the profile has one (0.25.0; D1);
2. the ``<context_window>`` identity block;
3. the notes-home instructions;
4. the incomplete-notes notice, when a home was unavailable (R73; D5 wording in 0.25.1);
5. the notes index, when non-empty: resident ``MAP.md`` bodies, then the pocket;
6. ``PROTOCOL_BLOCK``.

Identity and protocol are always present, even when all five homes failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from attrs import frozen

from pictx_fsm.extensions.pi_context.notes import NotesSnapshot, NoteSummary
from pictx_fsm.extensions.pi_context.texts import (
    CONTEXT_WINDOW_CLOSE_TAG,
    CONTEXT_WINDOW_OPEN_TAG,
    NOTICE_NOTES_INCOMPLETE,
    POCKET_LIMITS,
    PROTOCOL_BLOCK,
    RESIDENT_MAP_SCOPES,
    Texts,
)

__all__ = [
    "BootIdentity",
    "human_incomplete_notice",
    "identity_block",
    "incomplete_notice",
    "notes_index",
    "pocket",
    "pocket_notes",
    "relative_time",
    "render_boot",
    "resident_maps",
]

_UNITS: Final = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


@frozen(kw_only=True)
class BootIdentity:
    """The window ids and names a boot states. ``previous_window_id`` is ``None`` for a root
    boot; reset boots name the window they replace (R15)."""

    agent_name: str
    model_name: str
    root_window_id: str
    current_window_id: str
    previous_window_id: str | None = None


def identity_block(identity: BootIdentity) -> str:
    """The ``<context_window>`` block (R72)."""
    lines = [
        CONTEXT_WINDOW_OPEN_TAG,
        f"Agent name: {identity.agent_name} (brain: {identity.model_name})",
        f"First context window id: {identity.root_window_id}",
        f"Current context window id: {identity.current_window_id}",
    ]
    if identity.previous_window_id:
        lines.append(f"Previous context window id: {identity.previous_window_id}")
    lines.append(CONTEXT_WINDOW_CLOSE_TAG)
    return "\n".join(lines)


def relative_time(timestamp_ms: float, now_ms: float) -> str:
    """``<n><d|h|m|s> ago`` or ``in <n><unit>``: the largest unit that fits, truncated.

    pre: abs(timestamp_ms - now_ms) < 1e18
    post: __return__.endswith(" ago") or __return__.startswith("in ")
    """
    seconds = int((timestamp_ms - now_ms) / 1000)
    unit, size = next((u, s) for u, s in _UNITS if abs(seconds) >= s or u == "s")
    amount = f"{abs(int(seconds / size))}{unit}"
    return f"in {amount}" if seconds > 0 else f"{amount} ago"


def incomplete_notice(labels: Sequence[str], texts: Texts) -> str | None:
    """R73 / D5: the model-facing notice naming the unavailable homes; never OS error text."""
    if not labels:
        return None
    template = texts.incomplete_notes_one if len(labels) == 1 else texts.incomplete_notes_many
    return template.format(labels=", ".join(labels))


def human_incomplete_notice(labels: Sequence[str]) -> str | None:
    """R74: the human's warning; the runtime shows it at most once per window id."""
    if not labels:
        return None
    return NOTICE_NOTES_INCOMPLETE.format(labels=", ".join(labels))


def resident_maps(snapshot: NotesSnapshot) -> list[str]:
    """Fresh non-empty ``MAP.md`` bodies of human, project, agent, model — broadest first.
    The session home is never resident: its ``MAP.md`` is an ordinary note."""
    bodies = (snapshot.home(scope).map_body for scope in RESIDENT_MAP_SCOPES)
    return [body for body in bodies if body]


def pocket_notes(snapshot: NotesSnapshot) -> list[NoteSummary]:
    """The pocket's seats: each home's most recent fresh notes up to its quota, in home order."""
    seats: list[NoteSummary] = []
    for scope, limit in POCKET_LIMITS:
        seats.extend(snapshot.home(scope).recent[:limit])
    return seats


def pocket(snapshot: NotesSnapshot, texts: Texts) -> str | None:
    """The pocket section: a header and one metadata line per seat; bodies never appear."""
    seats = pocket_notes(snapshot)
    if not seats:
        return None
    limits = dict(POCKET_LIMITS)
    header = texts.pocket_header.format(
        count=len(seats), plural="" if len(seats) == 1 else "s", **limits
    )
    lines = [header]
    for note in seats:
        updated = relative_time(note.updated_at_ms, snapshot.opened_at_ms)
        lines.append(
            f"- {note.address} ({note.lines} lines, {note.size_bytes} UTF-8 bytes, "
            f"updated {updated})"
        )
    return "\n".join(lines)


def notes_index(snapshot: NotesSnapshot, texts: Texts) -> str:
    """Resident maps then the pocket, blank-line separated; empty when there is neither."""
    sections = resident_maps(snapshot)
    section = pocket(snapshot, texts)
    if section is not None:
        sections.append(section)
    return "\n\n".join(sections)


def render_boot(
    identity: BootIdentity, snapshot: NotesSnapshot, texts: Texts, reset_boot: bool
) -> str:
    """The boot's content (R72). ``reset_boot`` is true for a marker window's boot."""
    parts: list[str] = []
    if reset_boot and texts.reset_summary:
        parts.append(texts.reset_summary)
    parts.append(identity_block(identity))
    parts.append(texts.notes_home_block)
    notice = incomplete_notice(snapshot.unavailable_labels, texts)
    if notice is not None:
        parts.append(notice)
    index = notes_index(snapshot, texts)
    if index:
        parts.append(index)
    parts.append(PROTOCOL_BLOCK)
    return "\n\n".join(parts)
