"""Pi ``AgentMessage`` objects as the model host creates them (pi-host §8.5), and its clock.

Message timestamps are epoch milliseconds, entry timestamps ISO strings; both come from one
injected clock so a run is reproducible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from pictx_fsm.host.events import ModelInfo
from pictx_fsm.hosts.model.provider_usage import usage_of
from pictx_fsm.hosts.model.scripted_provider import ABORTED_STREAM, AssistantReply
from pictx_fsm.js import is_plain_object
from pictx_fsm.session.entries import ABSENT

__all__ = [
    "ABORTED_BEFORE_REQUEST",
    "JSON",
    "SYSTEM_PREAMBLE",
    "TickClock",
    "aborted_before_request",
    "aborted_partial",
    "assistant_message",
    "custom_message",
    "message_text",
    "role_of",
    "system_message",
    "tool_declaration",
    "tool_result_message",
    "user_message",
]

JSON: TypeAlias = Any

ABORTED_BEFORE_REQUEST = "This operation was aborted"
"""``errorMessage`` when the signal was aborted before the provider was called (``d2``)."""
SYSTEM_PREAMBLE = "You are a coding assistant running inside the pictx model host."


class TickClock:
    """A deterministic clock: starts at ``start`` and advances ``step`` ms per reading."""

    def __init__(self, start: int = 1_796_007_840_000, step: int = 1) -> None:
        self._now = start
        self._step = step

    def __call__(self) -> int:
        now = self._now
        self._now += self._step
        return now

    def peek(self) -> int:
        """The current time without moving it."""
        return self._now


def user_message(text: str, ms: int) -> dict[str, JSON]:
    """An SDK prompt: content as a list of text blocks."""
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms}


def custom_message(
    custom_type: str, content: JSON, display: bool, details: JSON, ms: int
) -> dict[str, JSON]:
    """A role-``custom`` message (persisted as a ``custom_message`` entry)."""
    message: dict[str, JSON] = {
        "role": "custom",
        "customType": custom_type,
        "content": content,
        "display": display,
    }
    if details is not ABSENT:
        message["details"] = details
    message["timestamp"] = ms
    return message


def tool_result_message(
    call_id: str, name: str, text: str, is_error: bool, details: JSON, ms: int
) -> dict[str, JSON]:
    message: dict[str, JSON] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
    }
    if details is not ABSENT:
        message["details"] = details
    message.update(isError=is_error, timestamp=ms)
    return message


def assistant_message(reply: AssistantReply, model: ModelInfo, ms: int) -> dict[str, JSON]:
    message: dict[str, JSON] = {
        "role": "assistant",
        "content": list(reply.content),
        "api": model.provider,
        "provider": model.provider,
        "model": model.id,
        "usage": dict(reply.usage),
        "stopReason": reply.stop_reason,
        "timestamp": ms,
    }
    if reply.error_message is not None:
        message["errorMessage"] = reply.error_message
    return message


def aborted_partial(
    reply: AssistantReply, model: ModelInfo, ms: int, *, streamed: bool = True
) -> dict[str, JSON]:
    """A reply aborted mid-stream: the first half of its text, no tool calls (``d``); aborted
    before anything streamed (in ``message_start``): no content at all."""
    text = reply.text[: len(reply.text) // 2] if streamed else ""
    partial = AssistantReply(
        content=({"type": "text", "text": text},) if text else (),
        stop_reason="aborted",
        usage=reply.usage,
        error_message=ABORTED_STREAM,
    )
    return assistant_message(partial, model, ms)


def aborted_before_request(
    model: ModelInfo, ms: int, stop_reason: str = "error"
) -> dict[str, JSON]:
    """The message Pi records when a turn starts with an aborted signal: ``error`` in 0.87
    (``d2``), ``aborted`` in 1.6 (the host profile's ``aborted_turn_stop_reason``)."""
    reply = AssistantReply(
        content=(),
        stop_reason=stop_reason,
        usage=usage_of(0, 0),
        error_message=ABORTED_BEFORE_REQUEST,
    )
    return assistant_message(reply, model, ms)


def system_message(tools: Sequence[Mapping[str, JSON]], cwd: str, ms: int) -> dict[str, JSON]:
    """The full system message of a session's first request: named sections + tools."""
    sections = {"preamble": SYSTEM_PREAMBLE, "cwd": f"<cwd>\n{cwd}\n</cwd>"}
    return {
        "role": "system",
        "content": "",
        "sections": sections,
        "toolsAdded": [dict(tool) for tool in tools],
        "timestamp": ms,
    }


def tool_declaration(name: str) -> dict[str, JSON]:
    """A tool as the system message declares it (descriptions are not modelled)."""
    schema = {"type": "object", "properties": {}, "additionalProperties": True}
    return {"name": name, "description": f"The {name} tool.", "parameters": schema}


def role_of(message: Mapping[str, JSON]) -> str:
    role = message.get("role")
    return role if isinstance(role, str) else "?"


def message_text(message: Mapping[str, JSON]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", "")) for b in content if is_plain_object(b) and "text" in b
        )
    return ""
