"""A model request as the Pi provider context the lifecycle projects, and back.

Before each model request the lifecycle sees the request's messages as Pi would hand them to
``context`` / ``context_with_system`` (one Pi message per request part, one per response) and
returns the messages the provider may see (R67–R69, R51). Each Pi message built here
remembers the part or response it came from, so the projection maps back to pydantic-ai
messages exactly: kept parts stay the same objects inside a copy of their request; a message
the lifecycle adds (the folded system head, the budget warning) becomes a new part.

When the request is exactly the session's projection (the common case: the history the run
holds is the branch the session mirrors), the lifecycle is handed the tree's own
:class:`~pictx_fsm.session.transcript.Transcript` lists instead, which know their digests, boots
and system messages: the hooks and their audit records then cost O(window), not O(session).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from attrs import frozen
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    UserPromptPart,
)

from pictx_fsm.hosts.pydantic_ai.mirror import Mirror
from pictx_fsm.session.entries import content_text
from pictx_fsm.session.transcript import TranscriptIndex

__all__ = [
    "JSON",
    "Message",
    "ProviderContext",
    "Source",
    "as_projection",
    "provider_context",
    "request_messages",
]

JSON: TypeAlias = Any
Message: TypeAlias = Mapping[str, JSON]


@frozen(kw_only=True)
class Source:
    """Where a Pi message came from: a response, or one part of a request."""

    message: int
    part: int | None


@frozen(kw_only=True)
class ProviderContext:
    """The Pi messages of a request and the source of each (by object identity)."""

    messages: Sequence[Message]
    sources: Mapping[int, Source]
    conversation: Sequence[Message] | None = None
    """``messages`` without system messages, when known (a transcript's)."""


def provider_context(messages: Sequence[ModelMessage], mirror: Mirror) -> ProviderContext:
    """The Pi messages of ``messages`` (each part converted once per session, by the mirror)."""
    pi: list[Message] = []
    sources: dict[int, Source] = {}
    for index, message in enumerate(messages):
        response = isinstance(message, ModelResponse)
        for part_index, unit in enumerate(mirror.units(message)):
            for pi_message in unit.messages:
                pi.append(pi_message)
                sources[id(pi_message)] = Source(
                    message=index, part=None if response else part_index
                )
    return ProviderContext(messages=tuple(pi), sources=sources)


def as_projection(context: ProviderContext, transcripts: TranscriptIndex) -> ProviderContext:
    """The same request carried by the tree's transcripts, when it equals the session's
    projection (checked message by message); else ``context`` unchanged."""
    full = transcripts.transcript()
    if full != context.messages:
        return context
    by_id = context.sources
    sources = {id(t): by_id[id(m)] for t, m in zip(full, context.messages, strict=True)}
    return ProviderContext(messages=full, sources=sources, conversation=transcripts.conversation())


def request_messages(
    projected: Sequence[Message], context: ProviderContext, messages: Sequence[ModelMessage]
) -> list[ModelMessage]:
    """The pydantic-ai messages of a projected Pi context. A response the provider refused
    (no parts) is never sent."""
    out: list[ModelMessage] = []
    origin: list[int | None] = []
    for pi_message in projected:
        source = context.sources.get(id(pi_message))
        if source is None:
            out.append(ModelRequest(parts=[_new_part(pi_message)]))
            origin.append(None)
            continue
        message = messages[source.message]
        if isinstance(message, ModelResponse):
            if message.parts:
                out.append(message)
                origin.append(None)
            continue
        assert source.part is not None
        part = message.parts[source.part]
        last = out[-1] if out else None
        if origin and origin[-1] == source.message and isinstance(last, ModelRequest):
            last.parts = [*last.parts, part]
        else:
            out.append(dataclasses.replace(message, parts=[part]))
            origin.append(source.message)
    return out


def _new_part(message: Message) -> ModelRequestPart:
    """A message the lifecycle added: the folded system head, or a custom message."""
    text = content_text(message.get("content"))
    if message.get("role") == "system":
        return SystemPromptPart(content=text)
    return UserPromptPart(content=text)
