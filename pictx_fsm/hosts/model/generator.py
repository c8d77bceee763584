"""A scripted generator for pi-context-management's model calls (notes, checkpoints,
handoff packages): each request takes the next scripted reply kind.

Kinds: ``valid`` (a correct candidate: the carried notes plus one note citing the batch),
``invalid_shape`` (not the required JSON), ``bad_boundary`` (confirms the wrong source),
``over_capacity`` (notes far over the byte budget; a following repair request is answered
validly), ``stubborn`` (over capacity, and the repair too), ``repair_invalid`` (over
capacity, and the repair resolves an open item the first candidate did not), ``slow``
(valid, but 400 s), ``failing`` (a provider error), ``incomplete`` (the stream stopped
early), ``aborted`` (the user's cancel). An empty script
answers ``valid``. Usage is estimated from the JSON sizes (bytes / 4).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, TypeAlias, get_args

from pictx_fsm.extensions.context_management.generation import GenerationReply, GenerationRequest
from pictx_fsm.extensions.context_management.generation import ReplyKind as GenReplyKind

__all__ = ["FAST_MS", "REPLY_KINDS", "SLOW_MS", "ReplyKind", "ScriptedGenerator", "reply_text"]

ReplyKind: TypeAlias = Literal[
    "valid",
    "invalid_shape",
    "bad_boundary",
    "over_capacity",
    "stubborn",
    "repair_invalid",
    "slow",
    "failing",
    "incomplete",
    "aborted",
]
REPLY_KINDS: Final[tuple[str, ...]] = get_args(ReplyKind)
_FAILURES: Final[dict[str, GenReplyKind]] = {
    "failing": "error",
    "aborted": "aborted",
    "incomplete": "incomplete",
}
FAST_MS: Final = 2_000
SLOW_MS: Final = 400_000


class ScriptedGenerator:
    """Deterministic replies from a script of (first reply, repair reply) kinds."""

    def __init__(self, script: Iterable[str] = ()) -> None:
        self.script: deque[tuple[str, str]] = deque()
        self.requests: list[GenerationRequest] = []
        self._repair = "valid"
        self.push(*script)

    def push(self, *kinds: str, repair: str | None = None) -> None:
        """Queue replies; ``repair`` answers the repair request that follows a capacity
        failure (default: ``stubborn`` repairs over capacity again, ``repair_invalid``
        resolves an open item, anything else repairs validly)."""
        for kind in (*kinds, *([] if repair is None else [repair])):
            if kind not in REPLY_KINDS:
                raise ValueError(f"unknown reply kind {kind!r}; known: {', '.join(REPLY_KINDS)}")
        defaults = {"repair_invalid": "resolve_open", "stubborn": "over_capacity"}
        for kind in kinds:
            self.script.append((kind, repair or defaults.get(kind, "valid")))

    def generate(self, request: GenerationRequest) -> GenerationReply:
        self.requests.append(request)
        if request.repair:
            return _reply(self._repair, request)
        kind, self._repair = self.script.popleft() if self.script else ("valid", "valid")
        return _reply(kind, request)


def reply_text(kind: str, payload: Mapping[str, Any]) -> str | None:
    """What the scripted model answers a request whose payload (what the model is sent,
    :meth:`GenerationRequest.payload`) is ``payload``: the candidate's JSON text, or
    ``None`` for a failure kind. Only the payload is read, so a scripted model of the real
    Pi (the test fixtures' faux provider) answers the same."""
    if kind in _FAILURES:
        return None
    sources = payload.get("sources") or []
    notes = _notes(payload)
    through = sources[-1]["id"] if sources else None
    if kind == "invalid_shape":
        return "I could not produce the notes."
    if kind == "bad_boundary":
        return _text(notes, "not-a-source")
    if kind in ("over_capacity", "stubborn", "repair_invalid"):
        return _text(notes + _padding(payload), through)
    if kind == "resolve_open":
        resolved = [
            {**n, "status": "resolved"} if n.get("kind") == "open_item" else n for n in notes
        ]
        return _text(resolved, through)
    return _text(notes, through)


def _notes(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    notes = [dict(n) for n in payload.get("notes") or []]
    sources = payload.get("sources") or []
    if sources:
        first = sources[0]
        batch = payload.get("batch", {}).get("index", 0)
        notes.append(
            {
                "key": f"batch-{batch}",
                "kind": "open_item",
                "status": "active",
                "text": f"Continue from the {first['role']} message {first['id']}.",
                "sources": [first["id"]],
                "inferred": True,
            }
        )
    return notes


def _text(notes: list[dict[str, Any]], through: str | None) -> str:
    return json.dumps({"notes": notes, "throughEntryId": through}, separators=(",", ":"))


def _reply(kind: str, request: GenerationRequest) -> GenerationReply:
    size = request.size
    failure = _FAILURES.get(kind)
    text = reply_text(kind, request.payload())
    if failure is not None or text is None:
        return GenerationReply(
            kind=failure or "error", input_tokens=size // 4, output_tokens=0, duration_ms=FAST_MS
        )
    duration = SLOW_MS if kind == "slow" else FAST_MS
    return GenerationReply(
        kind="ok",
        text=text,
        input_tokens=size // 4,
        output_tokens=len(text) // 4,
        duration_ms=duration,
    )


def _padding(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    sources = payload.get("sources") or []
    source = sources[0]["id"] if sources else "none"
    batch = payload.get("batch", {}).get("index", 0)
    text = "x" * 600
    return [
        {
            "key": f"pad-{batch}-{i}",
            "kind": "decision",
            "status": "active",
            "text": text,
            "sources": [source],
        }
        for i in range(40)
    ]
