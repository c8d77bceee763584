"""History retrieval (M19–M24): search and read over the sources of a scope.

A scope is the current branch (the ancestor chain of the leaf, M19) or, with
``scope: "handoff"``, the direct parent's branch as captured at handoff time (M24). Both are
plain lists of :class:`~pictx_fsm.extensions.context_management.sources.Source`; this module never
reads files or calls a model. Cursors are opaque to the model (Q2): they bind the query, the scope,
the session and the leaf they were made on, so they survive appends on the same branch and
are ``stale_scope`` after any other change (M21).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.extensions.context_management.policy import (
    EXCERPT_MAX_BYTES,
    READ_MAX_BYTES,
    SEARCH_PAGE_HITS,
)
from pictx_fsm.extensions.context_management.sizes import digest, json_bytes
from pictx_fsm.extensions.context_management.sources import Source, origin

__all__ = [
    "CURSOR_PREFIX",
    "INVALID_ARGUMENTS",
    "JSON",
    "RECALL_ADVICE",
    "RECALL_BUDGET",
    "SOURCE_NOT_FOUND",
    "STALE_SCOPE",
    "RecallRefusal",
    "Scope",
    "excerpt",
    "make_cursor",
    "read",
    "read_cursor",
    "result_bytes",
    "scope_of",
    "search",
]

JSON: TypeAlias = Any
STALE_SCOPE: Final = "stale_scope"
SOURCE_NOT_FOUND: Final = "source_not_found"
INVALID_ARGUMENTS: Final = "invalid_arguments"
RECALL_BUDGET: Final = "recall_budget"
RECALL_ADVICE: Final = (
    "recall paused: finish the reply or let compaction run, then retry with a smaller page"
)
CURSOR_PREFIX: Final = "c1."


@frozen(kw_only=True)
class Scope:
    """The sources one call may see, and what binds a cursor to them."""

    name: str
    session_id: str
    leaf: str | None
    sources: tuple[Source, ...]
    ancestors: frozenset[str]
    """Entry ids on the scope's branch (a cursor's leaf must still be one of them)."""


@frozen(kw_only=True)
class RecallRefusal(Exception):
    """A history tool's refusal (bad cursor, unknown source …): its code and text are the
    tool's answer, not a failure of the host."""

    code: str
    message: str


def _digest(text: str) -> str:
    return digest(text, 16)


def make_cursor(query: str, scope: Scope, position: int) -> str:
    body: dict[str, JSON] = {"q": _digest(query), "s": scope.name, "i": scope.session_id}
    body.update(l=scope.leaf, p=position)
    raw = json.dumps(body, separators=(",", ":")).encode("utf-8")
    return CURSOR_PREFIX + base64.urlsafe_b64encode(raw).decode("ascii")


def read_cursor(cursor: str, query: str, scope: Scope) -> int:
    """The position a cursor resumes at; :class:`RecallRefusal` ``stale_scope`` when the query,
    scope, session or branch changed (appends on the same branch keep it valid)."""
    try:
        if not cursor.startswith(CURSOR_PREFIX):
            raise ValueError(cursor)
        body = json.loads(base64.urlsafe_b64decode(cursor[len(CURSOR_PREFIX) :]))
        position = int(body["p"])
        same = (body["q"], body["s"], body["i"]) == (_digest(query), scope.name, scope.session_id)
        leaf = body["l"]
    except (ValueError, KeyError, TypeError, binascii.Error, json.JSONDecodeError):
        raise RecallRefusal(
            code=INVALID_ARGUMENTS, message="cursor is not a search cursor"
        ) from None
    if not same or (leaf is not None and leaf not in scope.ancestors):
        raise RecallRefusal(code=STALE_SCOPE, message="query, scope, branch or session changed")
    return position


def excerpt(text: str, at: int, needle: str, width: int = EXCERPT_MAX_BYTES) -> str:
    """At most ``width`` (≤ 1100) UTF-8 bytes around the match, whole characters (a lone
    surrogate is U+FFFD, as in Node's Buffer); the match itself whenever it fits."""
    data = js.to_utf8(text)
    start_byte = len(js.to_utf8(text[:at]))
    width = min(width, EXCERPT_MAX_BYTES)
    room = max(0, width - js.utf8_length(needle))
    lo = max(0, start_byte - room // 2)
    hi = min(len(data), lo + width)
    return data[lo:hi].decode("utf-8", errors="ignore")


def _recall_refused() -> RecallRefusal:
    return RecallRefusal(code=RECALL_BUDGET, message=RECALL_ADVICE)


def _hit(source: Source, at: int, query: str, room: int, *, shorten: bool) -> JSON | None:
    """A hit within ``room`` bytes: with its full excerpt, or — ``shorten`` — the longest
    excerpt that fits and still holds the match; ``None`` when none fits."""
    width = EXCERPT_MAX_BYTES
    floor = min(js.utf8_length(query), EXCERPT_MAX_BYTES) if shorten else width
    while width >= max(floor, 1):
        hit = {
            "sourceId": source.id,
            **origin(source.role, source.custom_type),
            "time": source.time,
            "excerpt": excerpt(source.text, at, query, width),
        }
        excess = json_bytes(hit) - room
        if excess <= 0:
            return hit
        width -= excess
    return None


def search(
    scope: Scope, query: str, cursor: str | None, budget: int | None = None
) -> dict[str, JSON]:
    """M21: case-sensitive literal substring (JavaScript's ``indexOf``); hits in branch
    order, one page at a time. M23: a page holds at most :data:`SEARCH_PAGE_HITS` hits and
    fits ``budget`` bytes of serialized result (the turn's remaining recall quota, or the
    smaller page the model asked for): a hit that does not fit waits for the next page,
    a first hit gets a shorter excerpt around its match, and when not even that fits the
    page is refused (``recall_budget``)."""
    if not query:
        raise RecallRefusal(code=INVALID_ARGUMENTS, message="query must not be empty")
    start = 0 if cursor is None else read_cursor(cursor, query, scope)
    limit = budget if budget is not None else 2**62
    # Room is judged against the longest cursor this search can return.
    size = json_bytes({"hits": [], "cursor": make_cursor(query, scope, len(scope.sources))})
    hits: list[JSON] = []
    for position in range(start, len(scope.sources)):
        source = scope.sources[position]
        at = js.index_of(source.text, query)
        if at < 0:
            continue
        room = limit - size - (1 if hits else 0)
        hit = (
            None
            if len(hits) == SEARCH_PAGE_HITS
            else _hit(source, at, query, room, shorten=not hits)
        )
        if hit is None and not hits:
            raise _recall_refused()
        if hit is None:
            return {"hits": hits, "cursor": make_cursor(query, scope, position)}
        hits.append(hit)
        size += json_bytes(hit) + (1 if len(hits) > 1 else 0)
    page = {"hits": hits, "cursor": None}
    if json_bytes(page) > limit:
        raise _recall_refused()
    return page


def read(
    scope: Scope,
    source_id: str,
    offset: int,
    limit: int = READ_MAX_BYTES,
    budget: int | None = None,
) -> dict[str, JSON]:
    """M22: at most ``limit`` (≤ 3000) bytes of one source from a byte offset, never
    splitting a character (at least one); ``nextOffset`` is ``null`` at the end. M23: the
    page is cut shorter to fit ``budget`` bytes of serialized result, or refused
    (``recall_budget``) when not even one character fits."""
    source = next((s for s in scope.sources if s.id == source_id), None)
    if source is None:
        raise RecallRefusal(code=SOURCE_NOT_FOUND, message=f"no source {source_id!r} in scope")
    data = js.to_utf8(source.text)
    if offset < 0 or offset > len(data) or _inside_character(data, offset):
        raise RecallRefusal(code=INVALID_ARGUMENTS, message="offset is not a nextOffset value")
    width = max(1, min(limit, READ_MAX_BYTES))
    while True:
        page = _read_page(source, data, offset, width)
        excess = 0 if budget is None else json_bytes(page) - budget
        if excess <= 0:
            return page
        if width == 1:
            raise _recall_refused()
        width = max(1, width - excess)


def _read_page(source: Source, data: bytes, offset: int, width: int) -> dict[str, JSON]:
    end = min(len(data), offset + width)
    while end < len(data) and _inside_character(data, end):
        end -= 1
    if end == offset < len(data):  # a page holds at least one character
        end += 1
        while _inside_character(data, end):
            end += 1
    return {
        "sourceId": source.id,
        **origin(source.role, source.custom_type),
        "time": source.time,
        "text": data[offset:end].decode("utf-8"),
        "nextOffset": end if end < len(data) else None,
    }


def _inside_character(data: bytes, index: int) -> bool:
    return 0 < index < len(data) and (data[index] & 0xC0) == 0x80


def scope_of(
    name: str, session_id: str, leaf: str | None, sources: Sequence[Source], ids: Sequence[str]
) -> Scope:
    return Scope(
        name=name,
        session_id=session_id,
        leaf=leaf,
        sources=tuple(sources),
        ancestors=frozenset(ids),
    )


def result_bytes(payload: Mapping[str, JSON]) -> int:
    """M23 counts what a recall call returns: its serialized JSON bytes."""
    return json_bytes(payload)
