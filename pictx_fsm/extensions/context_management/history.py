"""History retrieval (M19–M24): search and read over the sources of a scope.

A scope is the current branch (the ancestor chain of the leaf, M19) or, with
``scope: "handoff"``, the direct parent's branch as captured at handoff time (M24). Both are
plain lists of :class:`~pictx_fsm.extensions.context_management.sources.Source`; this module never
reads
files or calls a model. Cursors are opaque to the model (Q2): they bind the query, the scope,
the session and the leaf they were made on, so they survive appends on the same branch and
are ``stale_scope`` after any other change (M21).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

from attrs import frozen

from pictx_fsm.extensions.context_management.policy import (
    EXCERPT_MAX_BYTES,
    READ_MAX_BYTES,
    SEARCH_PAGE_HITS,
)
from pictx_fsm.extensions.context_management.sources import Source

JSON: TypeAlias = Any
STALE_SCOPE: Final = "stale_scope"
SOURCE_NOT_FOUND: Final = "source_not_found"
INVALID_ARGUMENTS: Final = "invalid_arguments"
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
class HistoryError(Exception):
    code: str
    message: str


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def make_cursor(query: str, scope: Scope, position: int) -> str:
    body: dict[str, JSON] = {"q": _digest(query), "s": scope.name, "i": scope.session_id}
    body.update(l=scope.leaf, p=position)
    raw = json.dumps(body, separators=(",", ":")).encode("utf-8")
    return CURSOR_PREFIX + base64.urlsafe_b64encode(raw).decode("ascii")


def read_cursor(cursor: str, query: str, scope: Scope) -> int:
    """The position a cursor resumes at; :class:`HistoryError` ``stale_scope`` when the query,
    scope, session or branch changed (appends on the same branch keep it valid)."""
    try:
        if not cursor.startswith(CURSOR_PREFIX):
            raise ValueError(cursor)
        body = json.loads(base64.urlsafe_b64decode(cursor[len(CURSOR_PREFIX) :]))
        position = int(body["p"])
        same = (body["q"], body["s"], body["i"]) == (_digest(query), scope.name, scope.session_id)
        leaf = body["l"]
    except (ValueError, KeyError, TypeError, binascii.Error, json.JSONDecodeError):
        raise HistoryError(
            code=INVALID_ARGUMENTS, message="cursor is not a search cursor"
        ) from None
    if not same or (leaf is not None and leaf not in scope.ancestors):
        raise HistoryError(code=STALE_SCOPE, message="query, scope, branch or session changed")
    return position


def excerpt(text: str, at: int, needle: str) -> str:
    """At most :data:`EXCERPT_MAX_BYTES` UTF-8 bytes around the match, whole characters."""
    data = text.encode("utf-8")
    start_byte = len(text[:at].encode("utf-8"))
    room = max(0, EXCERPT_MAX_BYTES - len(needle.encode("utf-8")))
    lo = max(0, start_byte - room // 2)
    hi = min(len(data), lo + EXCERPT_MAX_BYTES)
    return data[lo:hi].decode("utf-8", errors="ignore")


def search(scope: Scope, query: str, cursor: str | None) -> dict[str, JSON]:
    """M21: case-sensitive literal substring; hits in branch order, one page at a time."""
    if not query:
        raise HistoryError(code=INVALID_ARGUMENTS, message="query must not be empty")
    start = 0 if cursor is None else read_cursor(cursor, query, scope)
    hits: list[dict[str, JSON]] = []
    position = start
    for position in range(start, len(scope.sources)):
        source = scope.sources[position]
        at = source.text.find(query)
        if at < 0:
            continue
        if len(hits) == SEARCH_PAGE_HITS:
            return {"hits": hits, "cursor": make_cursor(query, scope, position)}
        hits.append(
            {
                "sourceId": source.id,
                "role": source.role,
                "time": source.time,
                "excerpt": excerpt(source.text, at, query),
            }
        )
    return {"hits": hits, "cursor": None}


def read(scope: Scope, source_id: str, offset: int, limit: int = READ_MAX_BYTES) -> dict[str, JSON]:
    """M22: at most ``limit`` (≤ 3000) bytes of one source from a byte offset, never
    splitting a character; ``nextOffset`` is ``null`` at the end."""
    source = next((s for s in scope.sources if s.id == source_id), None)
    if source is None:
        raise HistoryError(code=SOURCE_NOT_FOUND, message=f"no source {source_id!r} in scope")
    data = source.text.encode("utf-8")
    if offset < 0 or offset > len(data) or _inside_character(data, offset):
        raise HistoryError(code=INVALID_ARGUMENTS, message="offset is not a nextOffset value")
    end = min(len(data), offset + max(1, min(limit, READ_MAX_BYTES)))
    while end < len(data) and _inside_character(data, end):
        end -= 1
    text = data[offset:end].decode("utf-8")
    return {
        "sourceId": source.id,
        "role": source.role,
        "time": source.time,
        "text": text,
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
    return len(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
