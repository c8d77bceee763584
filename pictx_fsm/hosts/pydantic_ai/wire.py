"""A model request as the Pi provider context the lifecycle projects, and back.

Before each model request the lifecycle sees the request's messages as Pi would hand them to
``context`` / ``context_with_system`` (one Pi message per request part, one per response) and
returns the messages the provider may see (R67–R69, R51). Each Pi message built here
remembers the part or response it came from, so the projection maps back to pydantic-ai
messages exactly: kept parts stay the same objects inside a copy of their request; a message
the lifecycle adds (the folded system head, the budget warning) becomes a new part.
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

from pictx_fsm.hosts.pydantic_ai.history import messages_to_entries
from pictx_fsm.session.entries import content_text, entry_from_json
from pictx_fsm.session.projection import entry_messages

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

    messages: tuple[Message, ...]
    sources: Mapping[int, Source]


def provider_context(messages: Sequence[ModelMessage]) -> ProviderContext:
    pi: list[Message] = []
    sources: dict[int, Source] = {}
    for index, message in enumerate(messages):
        units = _units(message)
        for part_index, unit in units:
            for pi_message in _pi_messages(unit):
                pi.append(pi_message)
                sources[id(pi_message)] = Source(message=index, part=part_index)
    return ProviderContext(messages=tuple(pi), sources=sources)


def _units(message: ModelMessage) -> list[tuple[int | None, ModelMessage]]:
    if isinstance(message, ModelResponse):
        return [(None, message)]
    return [(i, ModelRequest(parts=[part])) for i, part in enumerate(message.parts)]


def _pi_messages(unit: ModelMessage) -> list[Message]:
    out: list[Message] = []
    for obj in messages_to_entries([unit], parent_id=None, mint=lambda: "x"):
        entry, _ = entry_from_json(obj)
        out += entry_messages(entry)
    return out


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
