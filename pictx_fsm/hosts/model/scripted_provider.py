"""The scripted faux provider: each agent request takes the next scripted response.

Like pi-ai's faux provider (pi-host §9) it answers from a script and reports usage
estimated from text length, by default ``input`` = the estimated tokens of the request and
``output`` = those of the reply (:mod:`pictx_fsm.hosts.model.provider_usage` also offers the
faux provider's own cache arithmetic). A request whose estimate exceeds the model's context
window is answered with an overflow error *without* consuming the script (the provider
rejects the prompt before generating), so long generated runs overflow and reset naturally.
An empty script answers with a short text. Nothing here reads a clock or a global random source.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from attrs import field, frozen

from pictx_fsm.host.events import ModelInfo
from pictx_fsm.hosts.model.provider_usage import (
    EstimatedUsage,
    ProviderRequest,
    UsageAccounting,
    usage_of,
)
from pictx_fsm.session.estimate import CharsCounter, TokenCounter, host_text
from pictx_fsm.session.projection import Message

__all__ = [
    "ABORTED_STREAM",
    "JSON",
    "OVERLOADED",
    "Aborted",
    "ArgumentResolver",
    "AssistantReply",
    "Call",
    "LengthStop",
    "Overflow",
    "ProviderError",
    "Response",
    "ScriptedProvider",
    "Text",
    "Tools",
    "overflow_text",
]

JSON: TypeAlias = Any
OVERLOADED = "529 overloaded_error: Overloaded"
"""The retryable provider error of the ``e3`` trace."""
ABORTED_STREAM = "Request was aborted"
"""``errorMessage`` of a reply aborted while streaming (``d``)."""


def _calls(items: Iterable[Call]) -> tuple[Call, ...]:
    return tuple(items)


@frozen(kw_only=True)
class Text:
    """A text-only reply (``stopReason: "stop"``); ``usage`` is the prompt tokens the provider
    reports (``input``) when the script fixes it, instead of the accounting's figure;
    ``context`` fixes the context tokens the reply reports in all (``totalTokens``: ``input``
    is what the reply's own ``output`` leaves of it), so a turn ends at a chosen usage."""

    text: str = "Done."
    usage: int | None = None
    context: int | None = None


@frozen(kw_only=True)
class Call:
    """One tool call of a batch; ``id`` defaults to ``call_<n>`` (n counts the scripted provider's
    calls)."""

    name: str
    arguments: Mapping[str, JSON] = field(factory=dict)
    id: str | None = None


@frozen(kw_only=True)
class Tools:
    """One assistant message with several ``toolCall`` blocks (``stopReason: "toolUse"``)."""

    calls: tuple[Call, ...] = field(converter=_calls)
    text: str = ""
    usage: int | None = None


@frozen(kw_only=True)
class ProviderError:
    """An ordinary provider error (retryable when its text matches Pi's retry patterns)."""

    message: str = OVERLOADED


@frozen(kw_only=True)
class Overflow:
    """An overflow error ``prompt is too long: N tokens > M maximum``; ``tokens`` defaults to
    the request estimate (or the window + 1 when that is smaller)."""

    tokens: int | None = None


@frozen(kw_only=True)
class LengthStop:
    """A reply cut at the output limit (``stopReason: "length"``)."""

    text: str = "Truncated"
    usage: int | None = None


@frozen(kw_only=True)
class Aborted:
    """A reply the provider aborted while streaming (``stopReason: "aborted"``, Pi's
    ``Request was aborted``): what a host sees when the user interrupts elsewhere."""

    text: str = ""


Response: TypeAlias = Text | Tools | ProviderError | Overflow | LengthStop | Aborted
ArgumentResolver: TypeAlias = Callable[[Mapping[str, JSON]], Mapping[str, JSON]]
"""Completes a scripted call's arguments when the reply is generated: a script written
before the run can name what exists only then (a history window or item id)."""


@frozen(kw_only=True)
class AssistantReply:
    """What the provider streamed; the loop turns it into an assistant message."""

    content: tuple[JSON, ...]
    stop_reason: str
    usage: Mapping[str, JSON]
    error_message: str | None = None

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")


def overflow_text(tokens: int, window: int) -> str:
    return f"prompt is too long: {tokens} tokens > {window} maximum"


class ScriptedProvider:
    """A deterministic scripted model."""

    def __init__(
        self,
        script: Iterable[Response] = (),
        *,
        counter: TokenCounter | None = None,
        default_text: str = "Done.",
        usage: UsageAccounting | None = None,
        arguments: ArgumentResolver | None = None,
    ) -> None:
        self._script: deque[Response] = deque(script)
        self.arguments = arguments
        self.counter: TokenCounter = counter or CharsCounter()
        self.accounting: UsageAccounting = usage or EstimatedUsage(self.counter)
        self.default_text = default_text
        self.calls_made = 0
        self.requests = 0

    def push(self, *responses: Response) -> None:
        """Append responses to the script."""
        self._script.extend(responses)

    @property
    def pending(self) -> int:
        """Scripted responses not used yet."""
        return len(self._script)

    def request(self, messages: Sequence[Message], session_id: str = "") -> ProviderRequest:
        """One agent request of session ``session_id`` (the faux cache's key), with its
        estimate: every message counted as the host counts it."""
        tokens = sum(self.counter.count(host_text(message)) for message in messages)
        return ProviderRequest(messages=messages, tokens=tokens, session_id=session_id)

    def respond(self, request: ProviderRequest, model: ModelInfo) -> AssistantReply:
        """Answer one agent request."""
        self.requests += 1
        window = model.context_window
        if window is not None and request.tokens > window:
            return self._error(overflow_text(request.tokens, window), request)
        response = self._script.popleft() if self._script else Text(text=self.default_text)
        return self._reply(response, request, window)

    def _reply(
        self, response: Response, request: ProviderRequest, window: int | None
    ) -> AssistantReply:
        tokens = request.tokens
        if isinstance(response, ProviderError):
            return self._error(response.message, request)
        if isinstance(response, Overflow):
            limit = window if window is not None else tokens
            claimed = response.tokens if response.tokens is not None else max(tokens, limit + 1)
            return self._error(overflow_text(claimed, limit), request)
        if isinstance(response, Aborted):
            content = tuple(_text_block(response.text))
            usage = self.accounting.usage(request, content)
            return AssistantReply(
                content=content, stop_reason="aborted", usage=usage, error_message=ABORTED_STREAM
            )
        if isinstance(response, Tools):
            blocks = [*_text_block(response.text), *map(self._tool_block, response.calls)]
            return self._answer(tuple(blocks), "toolUse", request, response.usage)
        stop = "length" if isinstance(response, LengthStop) else "stop"
        context = response.context if isinstance(response, Text) else None
        content = tuple(_text_block(response.text))
        return self._answer(content, stop, request, response.usage, context)

    def _answer(
        self,
        content: tuple[JSON, ...],
        stop: str,
        request: ProviderRequest,
        figure: int | None,
        context: int | None = None,
    ) -> AssistantReply:
        usage = self.accounting.usage(request, content)
        if figure is not None:
            usage = usage_of(figure, usage["output"])
        if context is not None:
            output = usage["output"]
            usage = usage_of(max(0, context - output), output)
        return AssistantReply(content=content, stop_reason=stop, usage=usage)

    def _error(self, message: str, request: ProviderRequest) -> AssistantReply:
        usage = self.accounting.usage(request, ())
        return AssistantReply(content=(), stop_reason="error", usage=usage, error_message=message)

    def _tool_block(self, call: Call) -> JSON:
        self.calls_made += 1
        call_id = call.id if call.id is not None else f"call_{self.calls_made}"
        return {
            "type": "toolCall",
            "id": call_id,
            "name": call.name,
            "arguments": dict(self.arguments(call.arguments) if self.arguments else call.arguments),
        }


def _text_block(text: str) -> list[JSON]:
    return [{"type": "text", "text": text}] if text else []


def __getattr__(name: str) -> object:
    """``Brain``, this class's 0.1 name, with a :class:`DeprecationWarning`."""
    if name == "Brain":
        import warnings

        warnings.warn(
            "pictx_fsm.hosts.model.scripted_provider.Brain is now ScriptedProvider",
            DeprecationWarning,
            stacklevel=2,
        )
        return ScriptedProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
