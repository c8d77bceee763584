"""Sources: the raw messages of the current branch that notes may cite and history serves
(M9, M19–M20), their coverage (M33), the background selection (M39) and batching (M27).

A source is read from one session entry: a ``message`` (user, assistant, tool result), a
foreign plain-text ``custom_message``, or a compaction summary (role ``summary``, derived
history). Thinking, images, ``details``, plain ``custom`` entries, branch summaries and
``!!`` shell output (``excludeFromContext``) are never sources.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, TypeAlias

from attrs import frozen

from pictx_fsm.extensions.context_management.sizes import json_bytes, string_json_bytes
from pictx_fsm.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
)
from pictx_fsm.session.estimate import js_json, js_length

__all__ = [
    "JSON",
    "OWN_PREFIX",
    "Piece",
    "Source",
    "after",
    "batches",
    "branch_sources",
    "closed_prefix",
    "origin",
    "pending_bytes",
    "pieces",
    "source_of",
    "split_text",
    "unsupported",
]

JSON: TypeAlias = Any
OWN_PREFIX: Final = "context-memory"
"""Every custom type this extension writes starts with it (never a foreign source)."""
_ROLES: Final[Mapping[str, str]] = {"user": "user", "assistant": "assistant", "toolResult": "tool"}


def origin(role: str, custom_type: str | None) -> dict[str, JSON]:
    """M20: who wrote a source — its role, and for another extension's message (role
    ``custom``) that extension's type — as search hits, reads and generation input show it."""
    if custom_type is None:
        return {"role": role}
    return {"role": role, "customType": custom_type}


@frozen(kw_only=True)
class Source:
    """One citable message: entry id, history role, entry time and indexed text."""

    id: str
    role: str
    time: str
    text: str
    tool_calls: tuple[str, ...] = ()
    """Tool-call ids of an assistant message (M39 never separates them from results)."""
    tool_call_id: str | None = None
    custom_type: str | None = None
    """The extension type of a foreign ``custom_message`` (M20)."""

    def to_json(self) -> dict[str, JSON]:
        return {
            "id": self.id,
            **origin(self.role, self.custom_type),
            "time": self.time,
            "text": self.text,
        }

    @property
    def size(self) -> int:
        """Serialized JSON bytes (M27 measures batches this way)."""
        return json_bytes(self.to_json())


def _text_blocks(content: JSON) -> tuple[str, bool]:
    """The text of a content value and whether it held a non-text block."""
    if isinstance(content, str):
        return content, False
    if not isinstance(content, list):
        return "", content is not None
    parts: list[str] = []
    other = False
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif isinstance(block, Mapping) and block.get("type") in ("thinking", "toolCall"):
            continue
        else:
            other = True
    return "\n".join(parts), other


def _call_text(block: Mapping[str, JSON]) -> str:
    return f"[tool {block.get('name', '')}] {js_json(block.get('arguments', {}))}"


def source_of(entry: Entry) -> Source | None:
    """The source ``entry`` is, or ``None`` (M20)."""
    if isinstance(entry, MessageEntry):
        return _message_source(entry)
    if isinstance(entry, CustomMessageEntry) and not entry.custom_type.startswith(OWN_PREFIX):
        text, other = _text_blocks(entry.content)
        if other:
            return None
        return Source(
            id=entry.id,
            role="custom",
            time=entry.timestamp,
            text=text,
            custom_type=entry.custom_type,
        )
    if isinstance(entry, CompactionEntry):
        return Source(id=entry.id, role="summary", time=entry.timestamp, text=entry.summary)
    return None


def _message_source(entry: MessageEntry) -> Source | None:
    raw = entry.message.raw
    role = _ROLES.get(entry.message.role)
    if role is None or raw.get("excludeFromContext"):
        return None
    text, _ = _text_blocks(raw.get("content"))
    content = raw.get("content")
    calls = (
        [b for b in content if isinstance(b, Mapping) and b.get("type") == "toolCall"]
        if (isinstance(content, list))
        else []
    )
    if calls:
        text = "\n".join([text, *(_call_text(b) for b in calls)]).strip("\n")
    call_id = raw.get("toolCallId")
    return Source(
        id=entry.id,
        role=role,
        time=entry.timestamp,
        text=text,
        tool_calls=tuple(str(b.get("id", "")) for b in calls),
        tool_call_id=str(call_id) if isinstance(call_id, str) else None,
    )


def branch_sources(branch: Iterable[Entry]) -> list[Source]:
    return [s for s in (source_of(e) for e in branch) if s is not None]


def unsupported(entry: Entry) -> bool:
    """M34: content a checkpoint cannot carry (native fallback; background defers)."""
    if isinstance(entry, BranchSummaryEntry):
        return True
    if isinstance(entry, CustomMessageEntry) and not entry.custom_type.startswith(OWN_PREFIX):
        return _text_blocks(entry.content)[1]
    if isinstance(entry, MessageEntry):
        known = (*_ROLES, "bashExecution", "system", "custom", "compactionSummary", "branchSummary")
        return entry.message.role not in known
    return False


def after(branch: Sequence[Entry], through: str | None) -> Sequence[Entry]:
    """The entries after ``through`` on the branch (all of it when ``through`` is absent
    or not on the branch)."""
    if through is None:
        return branch
    for index in range(len(branch) - 1, -1, -1):
        if branch[index].id == through:
            return branch[index + 1 :]
    return branch


def pending_bytes(branch: Sequence[Entry], through: str | None) -> int:
    """M38: bytes of source after the coverage position."""
    return sum(s.size for s in branch_sources(after(branch, through)))


def closed_prefix(sources: Sequence[Source], limit: int) -> list[Source]:
    """M39: a prefix of about ``limit`` bytes ending where no tool call waits for its result
    (at least one source; one oversized source is taken whole and batched later). A prefix
    that cannot be closed (a call still unanswered at the end) is cut before that call."""
    taken: list[Source] = []
    size = 0
    for source in sources:
        if taken and size + source.size > limit and not _open_calls(taken):
            break
        taken.append(source)
        size += source.size
    while taken and _open_calls(taken):
        taken.pop()
    return taken


def _open_calls(sources: Sequence[Source]) -> set[str]:
    calls: set[str] = set()
    for source in sources:
        calls.update(source.tool_calls)
        if source.tool_call_id is not None:
            calls.discard(source.tool_call_id)
    return calls


@frozen(kw_only=True)
class Piece:
    """A source or a slice of one overlong source (M27): same id, UTF-16 offsets kept."""

    id: str
    role: str
    time: str
    text: str
    start: int = 0
    """UTF-16 offset of ``text`` in the source's text."""
    custom_type: str | None = None

    @classmethod
    def of(cls, source: Source, text: str, start: int = 0) -> Piece:
        return cls(
            id=source.id,
            role=source.role,
            time=source.time,
            text=text,
            start=start,
            custom_type=source.custom_type,
        )

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"id": self.id, **origin(self.role, self.custom_type)}
        out["time"] = self.time
        if self.start:
            out["offset"] = self.start
        out["text"] = self.text
        return out

    @property
    def size(self) -> int:
        return json_bytes(self.to_json())


def split_text(text: str, limit: int) -> Iterator[tuple[int, str]]:
    """Slices of ``text`` of at most ``limit`` bytes inside a JSON string each (at least one
    character), never inside a character, with each slice's UTF-16 offset. A slice is cut
    to the share of ``limit`` its measured bytes allow, until it fits."""
    if not text:
        yield 0, ""
        return
    offset = position = 0
    while position < len(text):
        end = min(len(text), position + max(1, limit))
        width = string_json_bytes(text[position:end])
        while width > limit and end - position > 1:
            end = position + max(1, min(end - position - 1, (end - position) * limit // width))
            width = string_json_bytes(text[position:end])
        piece = text[position:end]
        yield offset, piece
        offset += js_length(piece)
        position = end


def pieces(sources: Sequence[Source], limit: int) -> list[Piece]:
    """Every source as one piece, or split when its piece alone would exceed ``limit``."""
    out: list[Piece] = []
    for source in sources:
        whole = Piece.of(source, source.text)
        if whole.size <= limit:
            out.append(whole)
            continue
        overhead = Piece.of(source, "").size
        room = max(1, limit - overhead - 16)
        for start, text in split_text(source.text, room):
            out.append(Piece.of(source, text, start))
    return out


def batches(sources: Sequence[Source], limit: int) -> list[tuple[Piece, ...]]:
    """M27: chronological batches whose pieces total at most ``limit`` bytes."""
    out: list[tuple[Piece, ...]] = []
    current: list[Piece] = []
    size = 0
    for piece in pieces(sources, limit):
        if current and size + piece.size > limit:
            out.append(tuple(current))
            current, size = [], 0
        current.append(piece)
        size += piece.size
    if current:
        out.append(tuple(current))
    return out
