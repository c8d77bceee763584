"""A scripted model for pydantic-ai agents: replies, tool batches and provider errors from a
list, and a record of every request the agent really sent (for the host-neutral checks).

``ScriptedModel(script).model`` is a pydantic-ai ``FunctionModel``: each request takes the next
reply (a ``ModelResponse`` to return, or an exception to raise as the provider would); an
empty script answers ``Done.``. Each request is recorded as the Pi messages the provider
received, with the session's leaf and audit position at that moment. Streamed requests
(``run_stream``, ``run_stream_events``) take the same script: a reply's text arrives as one
chunk per part, its tool calls as one delta each; their usage is ``FunctionModel``'s estimate
(an input of the request, the streamed output), so a scripted ``tokens=`` counts only when a
reply is not streamed.
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeAlias

from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.usage import RequestUsage

from pictx_fsm.host.requests import ProviderRequest
from pictx_fsm.hosts.pydantic_ai.mirror import Mirror
from pictx_fsm.hosts.pydantic_ai.session import PiSession
from pictx_fsm.hosts.pydantic_ai.wire import provider_context
from pictx_fsm.session.projection import convert_to_llm

__all__ = [
    "JSON",
    "MODEL_NAME",
    "Arguments",
    "Reply",
    "ScriptedModel",
    "overflow",
    "provider_error",
    "text",
    "tools",
]

JSON: TypeAlias = Any
Reply: TypeAlias = ModelResponse | Exception
Arguments: TypeAlias = Callable[[Mapping[str, JSON]], Mapping[str, JSON]]
MODEL_NAME = "scripted"


def text(content: str = "Done.", *, tokens: int = 1_000, output: int = 10) -> ModelResponse:
    """A text reply whose request used ``tokens`` input tokens."""
    usage = RequestUsage(input_tokens=tokens, output_tokens=output)
    return ModelResponse(parts=[TextPart(content)], usage=usage, model_name=MODEL_NAME)


def tools(*calls: tuple[str, dict[str, JSON]], tokens: int = 1_000) -> ModelResponse:
    """One reply calling several tools (ids ``call_<n>`` are given by the script)."""
    parts = [ToolCallPart(name, args) for name, args in calls]
    usage = RequestUsage(input_tokens=tokens, output_tokens=10)
    return ModelResponse(parts=parts, usage=usage, model_name=MODEL_NAME)


def overflow(tokens: int = 250_000, window: int = 200_000) -> ModelHTTPError:
    """The provider rejects the prompt as too long (an overflow, R33)."""
    body = f"prompt is too long: {tokens} tokens > {window} maximum"
    return ModelHTTPError(status_code=400, model_name=MODEL_NAME, body=body)


def provider_error(body: str = "invalid_request_error: unsupported parameter") -> ModelHTTPError:
    """An ordinary provider error (never a reset, R38)."""
    return ModelHTTPError(status_code=400, model_name=MODEL_NAME, body=body)


class ScriptedModel:
    """Replies from a script; every request the agent makes is recorded."""

    def __init__(
        self,
        script: Iterable[Reply] = (),
        session: PiSession | None = None,
        arguments: Arguments | None = None,
    ) -> None:
        """``arguments`` completes a scripted call's arguments when the reply is given (a
        history tool's window and item ids exist only then)."""
        self.script: deque[Reply] = deque(script)
        self.session = session
        self.arguments = arguments
        self.requests: list[ProviderRequest] = []
        self.calls = 0
        self.model = FunctionModel(
            self._respond, stream_function=self._stream, model_name=MODEL_NAME
        )

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        reply = self._next(messages)
        # Received now, like a provider's reply (the estimator trusts a reply's usage only
        # when nothing before it is newer), with call ids the script numbers.
        parts = [self._numbered(part) for part in reply.parts]
        return dataclasses.replace(reply, parts=parts, timestamp=datetime.now(tz=UTC))

    async def _stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        reply = self._next(messages)
        for index, part in enumerate(self._numbered(part) for part in reply.parts):
            if isinstance(part, ToolCallPart):
                args = part.args if isinstance(part.args, str) else json.dumps(part.args)
                yield {index: DeltaToolCall(part.tool_name, args, tool_call_id=part.tool_call_id)}
            elif isinstance(part, TextPart):
                yield part.content

    def _next(self, messages: Sequence[ModelMessage]) -> ModelResponse:
        self.requests.append(self._sent(messages))
        reply = self.script.popleft() if self.script else text()
        if isinstance(reply, Exception):
            raise reply
        return reply

    def _numbered(self, part: ModelResponsePart) -> ModelResponsePart:
        if not isinstance(part, ToolCallPart):
            return part
        self.calls += 1
        args: Any = part.args  # a subclass narrows the type; the script gives plain calls
        if self.arguments is not None and isinstance(args, Mapping):
            args = dict(self.arguments(args))
        return dataclasses.replace(part, args=args, tool_call_id=f"call_{self.calls}")

    def _sent(self, messages: Sequence[ModelMessage]) -> ProviderRequest:
        session = self.session
        mirror = session.mirror if session is not None else Mirror.detached()
        pi = convert_to_llm(provider_context(messages, mirror).messages)
        return ProviderRequest(
            messages=tuple(pi),
            leaf_id=None if session is None else session.tree.leaf_id,
            audit_seq=0 if session is None else session.audit_seq,
        )
