"""notesoup's boot (S84–S89): identity, protocol, and the "YOUR NOTES" shelves.

A boot is rendered from one closed snapshot of the five homes (S87), read once with the clock
read once; rendering touches neither again. A home whose listing fails with an errno-style
code is an unavailable shelf (the family's isolation, R71); an absent home is empty; any
other failure propagates, so a running reset reports it (S32). Crumpled notes never appear.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, cast

from attrs import frozen

from pictx_fsm.extensions.notesoup.notes.store import NoteRow, NotesStore
from pictx_fsm.extensions.notesoup.texts import (
    CONTEXT_WINDOW_CLOSE_TAG,
    CONTEXT_WINDOW_OPEN_TAG,
    EMPTY_INDEX,
    MAP_BOOT_MAX_CHARS,
    MAP_CUT_LINE,
    NEW_PAGES_HEADING,
    NOTES_HEADING,
    NOTICE_NOTES_INCOMPLETE,
    PROTOCOL_BLOCK,
    SHELF_FRESH_LIMIT,
    SHELF_LABELS,
    TITLE_MAX_CHARS,
    UNAVAILABLE_SHELF,
)
from pictx_fsm.extensions.shared.tools.address import Scope
from pictx_fsm.extensions.shared.tools.failures import isolated_failure

__all__ = [
    "SNAPSHOT_ORDER",
    "Boot",
    "BootIdentity",
    "NotesSnapshot",
    "load_snapshot",
    "relative_time",
    "render_boot",
]

SNAPSHOT_ORDER: Final[tuple[tuple[Scope, str], ...]] = (
    ("session", "this session"),
    ("project", "@project"),
    ("human", "@human"),
    ("agent", "@self"),
    ("model", "@model"),
)
"""S87: the homes a snapshot lists, in order, with the labels the human is told."""
MAP_PATH: Final = "MAP.md"


@frozen(kw_only=True)
class NotesSnapshot:
    """The five homes at one instant: their live rows (newest first) or unavailability."""

    opened_at_ms: float
    rows: tuple[tuple[Scope, tuple[NoteRow, ...]], ...]
    unavailable: tuple[Scope, ...] = ()

    def home(self, scope: Scope) -> tuple[NoteRow, ...]:
        return dict(self.rows).get(scope, ())

    @property
    def unavailable_labels(self) -> tuple[str, ...]:
        return tuple(label for scope, label in SNAPSHOT_ORDER if scope in self.unavailable)


def load_snapshot(store: NotesStore | None, clock: Callable[[], float]) -> NotesSnapshot:
    """S87: read the clock once, then each home once, in order."""
    opened_at = clock()
    if store is None:
        return NotesSnapshot(opened_at_ms=opened_at, rows=())
    rows: list[tuple[Scope, tuple[NoteRow, ...]]] = []
    unavailable: list[Scope] = []
    for scope, _ in SNAPSHOT_ORDER:
        try:
            rows.append((scope, tuple(store.list_home(scope))))
        except Exception as error:
            isolation = isolated_failure(error)
            if isolation is None:
                raise
            if isolation == "unavailable":
                unavailable.append(scope)
    return NotesSnapshot(opened_at_ms=opened_at, rows=tuple(rows), unavailable=tuple(unavailable))


@frozen(kw_only=True)
class BootIdentity:
    agent: str
    model: str
    root_window_id: str
    window_id: str
    previous_window_id: str | None = None


@frozen(kw_only=True)
class Boot:
    """A rendered boot and the human's notice when a notes home was unavailable (S89)."""

    content: str
    notes_warning: str | None = None


def render_boot(identity: BootIdentity, snapshot: NotesSnapshot) -> Boot:
    """S85: identity block, protocol block, notes index, joined by one blank line."""
    lines = [
        f"Agent name: {identity.agent} (brain: {identity.model})",
        f"First context window id: {identity.root_window_id}",
        f"Current context window id: {identity.window_id}",
    ]
    if identity.previous_window_id:
        lines.append(f"Previous context window id: {identity.previous_window_id}")
    head = "\n".join((CONTEXT_WINDOW_OPEN_TAG, *lines, CONTEXT_WINDOW_CLOSE_TAG))
    content = "\n\n".join((head, PROTOCOL_BLOCK, _notes_index(identity, snapshot)))
    labels = snapshot.unavailable_labels
    warning = NOTICE_NOTES_INCOMPLETE.format(labels=", ".join(labels)) if labels else None
    return Boot(content=content, notes_warning=warning)


def _notes_index(identity: BootIdentity, snapshot: NotesSnapshot) -> str:
    """S88/S89: one shelf per home (session, project, agent, model, human)."""
    shelves = []
    for name, template in SHELF_LABELS:
        scope = cast(Scope, name)
        label = template.format(agent=identity.agent, model=identity.model)
        if scope in snapshot.unavailable:
            shelves.append(_section(label, _indent(UNAVAILABLE_SHELF)))
            continue
        shelf = _shelf(snapshot.home(scope), snapshot.opened_at_ms)
        if shelf is not None:
            shelves.append(_section(label, shelf))
    heading = f"{NOTES_HEADING}\n{'─' * len(NOTES_HEADING)}"
    if not shelves:
        return f"{heading}\n\n{EMPTY_INDEX}"
    return "\n\n\n".join((heading, *shelves))


def _shelf(rows: Sequence[NoteRow], now_ms: float) -> str | None:
    live = [row for row in rows if not row.meta.crumpled]
    map_row = next((row for row in live if row.path == MAP_PATH), None)
    fresh = [row for row in live if row.path != MAP_PATH][:SHELF_FRESH_LIMIT]
    parts = []
    if map_row is not None and map_row.body:
        parts.append(f"MAP — {map_row.address}\n\n{_indent(_map_body(map_row))}")
    if fresh:
        pages = "\n\n".join(_page(row, now_ms) for row in fresh)
        parts.append(f"{NEW_PAGES_HEADING}\n\n{pages}")
    return "\n\n".join(parts) if parts else None


def _page(row: NoteRow, now_ms: float) -> str:
    locator = f"{row.address} · {relative_time(row.meta.updated_at, now_ms)}"
    title = _title(row.body)
    return f"  {locator}" if title is None else f"  {title}\n  {locator}"


def _title(body: str) -> str | None:
    """The first heading, else the first non-blank line, cut at 40 code points with ``…``."""
    lines = body.split("\n")
    heading = next((line for line in lines if _is_heading(line)), None)
    raw = heading.lstrip("#").strip() if heading is not None else ""
    if heading is None:
        raw = next((line for line in lines if line.strip()), "").strip()
    if not raw:
        return None
    return raw if len(raw) <= TITLE_MAX_CHARS else f"{raw[:TITLE_MAX_CHARS]}…"


def _is_heading(line: str) -> bool:
    stripped = line.lstrip("#")
    return stripped != line and stripped[:1].isspace() and bool(stripped.strip())


def _map_body(row: NoteRow) -> str:
    body = row.body
    if len(body) <= MAP_BOOT_MAX_CHARS:
        return body
    cut = MAP_CUT_LINE.format(limit=MAP_BOOT_MAX_CHARS, address=row.address)
    return f"{body[:MAP_BOOT_MAX_CHARS]}\n{cut}"


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else line for line in text.split("\n"))


def _section(label: str, body: str) -> str:
    return f"{label}\n{'─' * len(label)}\n\n{body}"


_UNITS: Final = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def relative_time(timestamp_ms: float, now_ms: float) -> str:
    """S88: ``just now``, ``<n><d|h|m|s> ago`` or ``in <n><unit>`` (whole seconds, truncated)."""
    seconds = int((timestamp_ms - now_ms) / 1000)
    if seconds == 0:
        return "just now"
    unit, size = next((u, s) for u, s in _UNITS if abs(seconds) >= s or u == "s")
    amount = f"{abs(int(seconds / size))}{unit}"
    return f"in {amount}" if seconds > 0 else f"{amount} ago"
