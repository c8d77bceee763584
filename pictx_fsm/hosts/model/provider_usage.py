"""How the scripted provider reports an answer's ``usage``.

Two accountings, because they disagree in a way a lifecycle notices near its thresholds:

* :class:`EstimatedUsage` (the default) reports what a real provider's
  ``input + cacheRead + cacheWrite`` adds up to: the host estimator over the request, and over
  the reply for ``output``.
* :class:`FauxCacheUsage` reproduces pi-ai's faux provider (``withUsageEstimate``), the model
  behind every real-Pi trace: ``ceil(length / 4)`` of the whole serialized prompt, and a
  per-session prompt cache that reports the uncached part twice (as ``input`` *and* as
  ``cacheWrite``). A real Pi run on the faux model therefore sees about twice the context a
  real provider would report; differential tests against the real Pi need the same arithmetic
  on the model side to take the same decisions near a threshold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeAlias

from attrs import frozen

from pictx_fsm.session.estimate import TokenCounter, host_text, js_json, js_length
from pictx_fsm.session.projection import Message, system_content_text

__all__ = [
    "JSON",
    "EstimatedUsage",
    "FauxCacheUsage",
    "ProviderRequest",
    "UsageAccounting",
    "assistant_text",
    "common_prefix_units",
    "faux_tokens",
    "message_text",
    "serialize_context",
    "usage_of",
]

JSON: TypeAlias = Any


def usage_of(
    input_tokens: int, output_tokens: int, *, cache_read: int = 0, cache_write: int = 0
) -> dict[str, JSON]:
    """A pi-ai ``Usage`` object with zero cost."""
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {
        "input": input_tokens,
        "output": output_tokens,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input_tokens + output_tokens + cache_read + cache_write,
        "cost": cost,
    }


@frozen(kw_only=True)
class ProviderRequest:
    """One agent request as the provider receives it."""

    messages: Sequence[Message]
    tokens: int
    """The host estimate of ``messages`` (the scripted provider computes it once, for its overflow
    check)."""
    session_id: str
    """The session the request belongs to: the faux prompt cache's key."""


class UsageAccounting(Protocol):
    """Turns one request and the reply's content blocks into a ``Usage`` object."""

    def usage(self, request: ProviderRequest, content: Sequence[JSON]) -> dict[str, JSON]: ...


class EstimatedUsage:
    """The host estimator over the request and the reply; nothing cached."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter

    def usage(self, request: ProviderRequest, content: Sequence[JSON]) -> dict[str, JSON]:
        reply = {"role": "assistant", "content": list(content)}
        output = self.counter.count(host_text(reply)) if content else 0
        return usage_of(request.tokens, output)


class FauxCacheUsage:
    """pi-ai faux's usage arithmetic, prompt cache included (one cache per session id).

    ``input_counted_once`` is pi-ai 1.5's fix: every prompt token is either read from or
    written to the cache and ``input`` is 0 (the host profile's ``faux_input_counted_once``)."""

    def __init__(self, *, input_counted_once: bool = False) -> None:
        self._previous: dict[str, str] = {}
        self.input_counted_once = input_counted_once

    def usage(self, request: ProviderRequest, content: Sequence[JSON]) -> dict[str, JSON]:
        prompt = serialize_context(request.messages)
        output = faux_tokens(assistant_text(content))
        previous = self._previous.get(request.session_id)
        self._previous[request.session_id] = prompt
        tokens = faux_tokens(prompt)
        if previous is None:
            return usage_of(0 if self.input_counted_once else tokens, output, cache_write=tokens)
        shared = common_prefix_units(previous, prompt)
        read = math.ceil(shared / 4)
        if self.input_counted_once:
            return usage_of(0, output, cache_read=read, cache_write=max(0, tokens - read))
        write = math.ceil((js_length(prompt) - shared) / 4)
        return usage_of(max(0, tokens - read), output, cache_read=read, cache_write=write)


def faux_tokens(text: str) -> int:
    """faux ``estimateTokens``: ``ceil(text.length / 4)`` in UTF-16 code units."""
    return math.ceil(js_length(text) / 4)


def common_prefix_units(left: str, right: str) -> int:
    """The common prefix of two strings in UTF-16 code units (faux ``commonPrefixLength``).

    A binary search over slice comparisons (C-speed), since prompts run to megabytes; two
    different astral characters that share their high surrogate share one more unit."""
    low, high = 0, min(len(left), len(right))
    while low < high:
        middle = (low + high + 1) // 2
        if left[:middle] == right[:middle]:
            low = middle
        else:
            high = middle - 1
    units = js_length(left[:low])
    if low < len(left) and low < len(right) and _high_surrogate(left[low]) is not None:
        units += _high_surrogate(left[low]) == _high_surrogate(right[low])
    return units


def _high_surrogate(char: str) -> int | None:
    point = ord(char)
    return None if point < 0x10000 else 0xD800 + ((point - 0x10000) >> 10)


def serialize_context(messages: Sequence[Message]) -> str:
    """faux ``serializeContext``: ``role:text`` per message, blank-line separated."""
    return "\n\n".join(f"{message.get('role')}:{message_text(message)}" for message in messages)


def message_text(message: Message) -> str:
    """faux ``messageToText``."""
    role = message.get("role")
    if role == "system":
        return _system_text(message)
    if role == "user":
        return _content_text(message.get("content"))
    if role == "assistant":
        return assistant_text(message.get("content") or ())
    name = str(message.get("toolName", ""))
    blocks = message.get("content") or []
    return "\n".join([name, *(_content_text([block]) for block in blocks)])


def assistant_text(content: Sequence[JSON]) -> str:
    """faux ``assistantContentToText``: text, thinking, ``name:JSON(arguments)``."""
    parts: list[str] = []
    for block in content:
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "thinking":
            parts.append(str(block.get("thinking", "")))
        else:
            parts.append(f"{block.get('name')}:{js_json(block.get('arguments', {}))}")
    return "\n".join(parts)


def _content_text(content: Any) -> str:
    """faux ``contentToText``: text blocks, images as ``[image:<mime>:<data length>]``."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or ():
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            data = block.get("data", "")
            parts.append(f"[image:{block.get('mimeType')}:{js_length(str(data))}]")
    return "\n".join(parts)


def _system_text(message: Message) -> str:
    """pi-ai ``getSystemMessageText`` plus the declared tool changes."""
    sections = message.get("sections")
    texts = [system_content_text(message.get("content"))]
    if isinstance(sections, Mapping):
        texts += [value for value in sections.values() if isinstance(value, str)]
    prompt = "\n\n".join(text for text in texts if text)
    removed = [f"tool-:{js_json(tool)}" for tool in message.get("toolsRemoved") or ()]
    added = [f"tool+:{js_json(tool)}" for tool in message.get("toolsAdded") or ()]
    return "\n".join(part for part in (prompt, *removed, *added) if part)
