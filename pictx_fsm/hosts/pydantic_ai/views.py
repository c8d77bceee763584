"""One pydantic-ai part or response as the Pi message the lifecycle reads, and back.

Everything here works on JSON (pydantic-ai's own serialization of its messages), so the
:mod:`~pictx_fsm.hosts.pydantic_ai.residual` of each message can be computed field by field.
The ``*_message`` functions give the Pi view (pi-host §8.5): a system prompt is a ``system``
message, a user prompt a ``user`` message, a tool return (or a retry prompt for a tool) a
``toolResult``, a response an ``assistant`` message with ``text``/``thinking``/``toolCall``
blocks, Pi's ``usage`` and ``stopReason``. The ``*_json`` functions derive pydantic-ai JSON
back from a Pi message; the residual stored beside it supplies the rest.

A response the provider refused (an error the lifecycle must see, R33) has no pydantic-ai
form; it is kept as an empty ``ModelResponse`` with ``finish_reason='error'`` whose metadata
holds the ``errorMessage``. A request the caller cancelled before its reply came is Pi's
aborted reply: an empty ``ModelResponse`` whose metadata holds ``stopReason: aborted`` (a
stop reason pydantic-ai has no ``finish_reason`` for) and the ``errorMessage``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeAlias

from pydantic_ai.messages import (
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from pictx_fsm.hosts.pydantic_ai.serial import message_json

__all__ = [
    "ABORTED",
    "API",
    "JSON",
    "METADATA_KEY",
    "epoch_ms",
    "part_json",
    "part_message",
    "pi_usage",
    "response_json",
    "response_message",
    "user_blocks",
]

JSON: TypeAlias = Any

METADATA_KEY: Final = "pictx_fsm"
"""The namespace this adapter owns in pydantic-ai ``metadata`` (never sent to a model)."""
API: Final = "pydantic-ai"
"""``message.api`` of the assistant messages this host writes."""
ABORTED: Final = "aborted"
"""Pi's ``stopReason`` of a reply the caller cancelled."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_FINISH: Final = {"error": "error", "length": "length", "tool_call": "toolUse"}
_STOP: Final = {"error": "error", "length": "length", "toolUse": "tool_call", "stop": "stop"}


# -- time ----------------------------------------------------------------------------------


def epoch_ms(stamp: JSON) -> int:
    """Epoch milliseconds of a pydantic-ai ISO timestamp (0 when absent)."""
    if not isinstance(stamp, str):
        return 0
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // timedelta(milliseconds=1)


def _datetime(ms: JSON) -> datetime:
    """A Pi message timestamp (epoch ms) as a pydantic-ai datetime."""
    return _EPOCH + timedelta(milliseconds=ms if isinstance(ms, int) else 0)


# -- request parts -------------------------------------------------------------------------


def part_message(part: Mapping[str, JSON]) -> dict[str, JSON] | None:
    """The Pi message of one request part; ``None`` for bookkeeping parts Pi has no message
    for (instruction and tool-availability deltas: kept as ``custom`` entries instead)."""
    kind = part.get("part_kind")
    ms = epoch_ms(part.get("timestamp"))
    if kind == "system-prompt":
        return {"role": "system", "content": part.get("content", ""), "timestamp": ms}
    if kind == "user-prompt":
        return {"role": "user", "content": user_blocks(part.get("content")), "timestamp": ms}
    if part.get("tool_name") is not None and "tool_call_id" in part and "content" in part:
        return _tool_result(part, ms)
    if kind in ("retry-prompt", "retry-feedback"):
        return {"role": "user", "content": [_text(_model_text(part))], "timestamp": ms}
    return None


def _tool_result(part: Mapping[str, JSON], ms: int) -> dict[str, JSON]:
    failed = part.get("outcome", "success") != "success"
    return {
        "role": "toolResult",
        "toolCallId": part.get("tool_call_id", ""),
        "toolName": part.get("tool_name", ""),
        "content": [_text(_model_text(part))],
        "isError": failed,
        "timestamp": ms,
    }


def _model_text(part: Mapping[str, JSON]) -> str:
    """The text a model reads for a tool return or retry prompt (for estimates and history)."""
    content = part.get("content")
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"))


def user_blocks(content: JSON) -> list[JSON]:
    """Pi text blocks of a user prompt (other media stay in the residual only)."""
    items = [content] if isinstance(content, str) else list(content or ())
    blocks = []
    for item in items:
        if isinstance(item, str):
            blocks.append(_text(item))
        elif isinstance(item, Mapping) and item.get("kind") == "text-content":
            blocks.append(_text(str(item.get("content", ""))))
    return blocks


def _text(text: str) -> dict[str, JSON]:
    return {"type": "text", "text": text}


def part_json(message: Mapping[str, JSON]) -> dict[str, JSON]:
    """The request part a Pi ``system``/``user``/``toolResult`` message derives."""
    stamp = _datetime(message.get("timestamp"))
    role = message.get("role")
    text = _joined(message.get("content"))
    part: ModelRequestPart
    if role == "system":
        part = SystemPromptPart(content=text, timestamp=stamp)
    elif role == "toolResult":
        part = ToolReturnPart(
            tool_name=str(message.get("toolName", "")),
            content=text,
            tool_call_id=str(message.get("toolCallId", "")),
            timestamp=stamp,
            outcome="failed" if message.get("isError") is True else "success",
        )
    else:
        part = UserPromptPart(content=text, timestamp=stamp)
    dumped: dict[str, JSON] = message_json(ModelRequest(parts=[part]))["parts"][0]
    return dumped


def _joined(content: JSON) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )


# -- responses -----------------------------------------------------------------------------


def response_message(response: Mapping[str, JSON]) -> dict[str, JSON]:
    """The Pi ``assistant`` message of a response (content blocks, usage, stop reason)."""
    parts = response.get("parts") or []
    blocks = [block for part in parts if (block := _block(part)) is not None]
    message: dict[str, JSON] = {
        "role": "assistant",
        "content": blocks,
        "api": API,
        "provider": response.get("provider_name") or "",
        "model": response.get("model_name") or "",
        "usage": pi_usage(response.get("usage") or {}),
        "stopReason": _stop_reason(response, blocks),
        "timestamp": epoch_ms(response.get("timestamp")),
    }
    error = _own_metadata(response).get("errorMessage")
    if isinstance(error, str):
        message["errorMessage"] = error
    if response.get("provider_response_id"):
        message["responseId"] = response["provider_response_id"]
    return message


def _block(part: Mapping[str, JSON]) -> dict[str, JSON] | None:
    kind = part.get("part_kind")
    if kind == "text":
        return _text(str(part.get("content", "")))
    if kind == "thinking":
        return {"type": "thinking", "thinking": str(part.get("content", ""))}
    if kind == "tool-call":
        return {
            "type": "toolCall",
            "id": part.get("tool_call_id", ""),
            "name": part.get("tool_name", ""),
            "arguments": _arguments(part.get("args")),
        }
    return None


def _arguments(args: JSON) -> JSON:
    """A tool call's arguments as an object (pydantic-ai may hold them as a JSON string)."""
    if isinstance(args, str):
        try:
            parsed = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return args
        return parsed
    return {} if args is None else args


def _stop_reason(response: Mapping[str, JSON], blocks: list[JSON]) -> str:
    if _own_metadata(response).get("stopReason") == ABORTED:
        return ABORTED
    finish = response.get("finish_reason")
    if finish in _FINISH and finish != "tool_call":
        return _FINISH[finish]
    return "toolUse" if any(b.get("type") == "toolCall" for b in blocks) else "stop"


def _own_metadata(message: Mapping[str, JSON]) -> Mapping[str, JSON]:
    metadata = message.get("metadata")
    own = metadata.get(METADATA_KEY) if isinstance(metadata, Mapping) else None
    return own if isinstance(own, Mapping) else {}


def pi_usage(usage: Mapping[str, JSON]) -> dict[str, int]:
    """Pi's usage of one request: pydantic-ai's ``input_tokens`` include cache reads and
    writes, Pi's ``input`` does not (pi-host §8.4)."""
    read = int(usage.get("cache_read_tokens", 0) or 0)
    write = int(usage.get("cache_write_tokens", 0) or 0)
    prompt = int(usage.get("input_tokens", 0) or 0)
    output = int(usage.get("output_tokens", 0) or 0)
    return {
        "input": max(0, prompt - read - write),
        "output": output,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": prompt + output,
    }


def response_json(message: Mapping[str, JSON]) -> dict[str, JSON]:
    """The response JSON a Pi ``assistant`` message derives."""
    raw_usage = message.get("usage")
    usage: Mapping[str, JSON] = raw_usage if isinstance(raw_usage, Mapping) else {}
    read, write = int(usage.get("cacheRead", 0)), int(usage.get("cacheWrite", 0))
    response = ModelResponse(
        parts=[_part_of(block) for block in _blocks(message)],
        usage=RequestUsage(
            input_tokens=int(usage.get("input", 0)) + read + write,
            output_tokens=int(usage.get("output", 0)),
            cache_read_tokens=read,
            cache_write_tokens=write,
        ),
        model_name=message.get("model") or None,
        timestamp=_datetime(message.get("timestamp")),
        provider_name=message.get("provider") or None,
        provider_response_id=message.get("responseId"),
        finish_reason=_STOP.get(str(message.get("stopReason"))),  # type: ignore[arg-type]
        metadata=_metadata(message),
    )
    return message_json(response)


def _metadata(message: Mapping[str, JSON]) -> dict[str, JSON] | None:
    """The metadata a Pi message's error (and an aborted stop) derive."""
    own: dict[str, JSON] = {}
    if message.get("stopReason") == ABORTED:
        own["stopReason"] = ABORTED
    if isinstance(message.get("errorMessage"), str):
        own["errorMessage"] = message["errorMessage"]
    return {METADATA_KEY: own} if own else None


def _blocks(message: Mapping[str, JSON]) -> list[Mapping[str, JSON]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _part_of(block: Mapping[str, JSON]) -> ModelResponsePart:
    kind = block.get("type")
    if kind == "toolCall":
        return ToolCallPart(
            tool_name=str(block.get("name", "")),
            args=block.get("arguments"),
            tool_call_id=str(block.get("id", "")),
        )
    if kind == "thinking":
        return ThinkingPart(content=str(block.get("thinking", "")))
    return TextPart(content=str(block.get("text", "")))
