"""pi-context-management's tool answers compared with what the spec gives of them (M21–M23,
M72), recomputed from the branch each call saw and the host's usage — not only their shape.

The spec leaves most wire names open (Q2, Q13); where it fixes contents this oracle holds
the answer to them: a read delivers exactly the source's bytes from its offset, at most
3 000 of them (at least one whole character), never splitting one, with ``nextOffset`` the
byte after them or ``null`` at the end (M22); a search hit's excerpt is at most 1 100 bytes
of its source and holds the match (M21); ``context_status`` reports the recall quota left
this turn — min(4 000, W×5 %, W − tokens − max(16 384, W×20 %)) less what this turn's recall
calls returned, none with unknown usage — and the 300 s generation timeout (M23, M72).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from attrs import field

from pictx_fsm import js
from pictx_fsm.extensions.context_management.events import ToolCalled, TurnStarted
from pictx_fsm.extensions.context_management.kit.checks import (
    JournalInvariant,
    branch_at,
    tool_payload,
)
from pictx_fsm.extensions.context_management.kit.world import StepRecord, World
from pictx_fsm.extensions.context_management.policy import (
    EXCERPT_MAX_BYTES,
    READ_MAX_BYTES,
    RECALL_TURN_BYTES_CAP,
    SAFETY_MARGIN_FLOOR,
)
from pictx_fsm.extensions.context_management.texts import (
    NOTES_TOOL,
    READ_TOOL,
    SEARCH_TOOL,
    STATUS_TOOL,
)
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.testing.invariants import Violation, remembering

__all__ = ["CONTENT_INVARIANTS", "ExactRecallAnswers", "recall_budget"]

JSON = Any
_RECALL: Final = (SEARCH_TOOL, READ_TOOL)


def recall_budget(tokens: int | None, window: int | None) -> int:
    """M23: a turn's recall bytes — min(4 000, W×5 %, W − tokens − max(16 384, W×20 %)),
    percentages rounded down (Q4); none while usage is unknown."""
    if tokens is None or not window:
        return 0
    margin = max(SAFETY_MARGIN_FLOOR, window * 20 // 100)
    return max(0, min(RECALL_TURN_BYTES_CAP, window * 5 // 100, window - tokens - margin))


def _bytes(payload: Mapping[str, JSON]) -> int:
    """What M23 counts of an answer: the UTF-8 bytes of its ``JSON.stringify``."""
    return js.utf8_length(js.well_formed_json(js.stringify(payload)))


def _answered(payload: Mapping[str, JSON] | None) -> bool:
    return payload is not None and payload.get("ok") is not False and "error" not in payload


def _user_text(record: StepRecord, source_id: object) -> str | None:
    """M20: the text of a user message of the branch the call saw (``None`` for any other
    source: what those index is the implementation's reading, Q2)."""
    for entry in branch_at(record):
        if entry.id == source_id:
            if not isinstance(entry, MessageEntry) or entry.message.role != "user":
                return None
            content = entry.message.raw.get("content")
            if isinstance(content, str):
                return content
            blocks = content if isinstance(content, list) else []
            return "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    return None


@remembering
class ExactRecallAnswers(JournalInvariant):
    """context_history_read delivers exactly the source's bytes from its offset (≤ 3 000, at
    least one whole character, none split) with nextOffset after them or null at the end; a
    search excerpt is ≤ 1 100 bytes of its source and holds the match; context_status reports
    the host's usage and the turn's recall bytes left (min(4 000, W×5 %, W − tokens − max(16
    384, W×20 %)) less what this turn's recall returned)"""

    name, rule = "exact_recall_answers", "M21, M22, M23"

    used: dict[int, int] = field(init=False, factory=dict)

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        event = record.event
        if isinstance(event, TurnStarted):
            self.used[record.runtime] = 0
            return []
        payload = tool_payload(record)
        if not isinstance(event, ToolCalled) or not _answered(payload):
            return []
        assert payload is not None
        problem = self._problem(record, event, payload)
        recall = event.name in _RECALL or (
            event.name == NOTES_TOOL and event.arguments.get("action") == "read"
        )
        if recall:
            self.used[record.runtime] = self.used.get(record.runtime, 0) + _bytes(payload)
        return [self.violation(f"{event.name}: {problem}", record)] if problem else []

    def _problem(
        self, record: StepRecord, event: ToolCalled, payload: Mapping[str, JSON]
    ) -> str | None:
        if event.name == STATUS_TOOL:
            ctx = record.ctx
            left = max(
                0, recall_budget(ctx.tokens, ctx.context_window) - self.used.get(record.runtime, 0)
            )
            expected = {"tokens": ctx.tokens, "contextWindow": ctx.context_window}
            expected["recallQuotaRemaining"] = left
            given = {key: payload.get(key) for key in expected}
            return None if given == expected else f"reported {given}, expected {expected}"
        if event.arguments.get("scope", "session") != "session":
            return None  # the captured parent branch is judged by its own reads (M24)
        if event.name == READ_TOOL:
            return _read_problem(record, event.arguments, payload)
        if event.name == SEARCH_TOOL:
            return _search_problem(record, event.arguments, payload)
        return None


def _read_problem(
    record: StepRecord, arguments: Mapping[str, JSON], payload: Mapping[str, JSON]
) -> str | None:
    """M22 on one page."""
    offset = arguments.get("offset", 0)
    asked = arguments.get("maxBytes", READ_MAX_BYTES)
    limit = max(1, min(asked, READ_MAX_BYTES)) if isinstance(asked, int) else READ_MAX_BYTES
    delivered = js.to_utf8(str(payload.get("text", "")))
    following = payload.get("nextOffset")
    if payload.get("sourceId") != arguments.get("sourceId"):
        return f"read {arguments.get('sourceId')!r}, answered {payload.get('sourceId')!r}"
    text = _user_text(record, arguments.get("sourceId"))
    if text is None or not isinstance(offset, int):
        return None
    data = js.to_utf8(text)
    end = len(data) if following is None else following
    empty_end = end == offset == len(data)
    if not isinstance(end, int) or not (offset < end <= len(data) or empty_end):
        return f"nextOffset {following!r} after offset {offset} of {len(data)} bytes"
    if following is not None and following >= len(data):
        return f"nextOffset {following} at the end, not null"
    if data[offset:end] != delivered:
        return f"text is not bytes [{offset}, {end}) of the source"
    if end < len(data) and (data[end] & 0xC0) == 0x80:
        return f"nextOffset {end} splits a character"
    first = len(data[offset:end].decode("utf-8", errors="ignore")[:1].encode())
    if end - offset > max(limit, first):
        return f"{end - offset} bytes delivered, at most {limit}"
    return None


def _search_problem(
    record: StepRecord, arguments: Mapping[str, JSON], payload: Mapping[str, JSON]
) -> str | None:
    """M21 on each hit: a bounded excerpt of its source, holding the match."""
    query = arguments.get("query")
    for hit in payload.get("hits") or ():
        excerpt = str(hit.get("excerpt", ""))
        size = js.utf8_length(excerpt)
        if size > EXCERPT_MAX_BYTES:
            return f"an excerpt of {size} bytes"
        text = _user_text(record, hit.get("sourceId"))
        if text is None or not isinstance(query, str):
            continue
        if js.to_utf8(excerpt) not in js.to_utf8(text):
            return f"the excerpt of {hit.get('sourceId')} is not from its source"
        needle = js.to_utf8(query)
        if len(needle) <= EXCERPT_MAX_BYTES and needle not in js.to_utf8(excerpt):
            return f"the excerpt of {hit.get('sourceId')} misses the match"
    return None


CONTENT_INVARIANTS: tuple[type[JournalInvariant], ...] = (ExactRecallAnswers,)
