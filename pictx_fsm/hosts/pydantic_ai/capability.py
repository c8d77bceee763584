"""``PiContext``: pi-context's reset lifecycle as one pydantic-ai capability.

Where each Pi hook happens in pydantic-ai's agent graph:

====================================  ====================================================
Pi hook (lifecycle §6)                pydantic-ai
====================================  ====================================================
``session_start``                     opening the :class:`PiSession` (startup or resume)
``session_tree``                      a run whose history leaves the session's branch
``turn_start``                        ``before_model_request``
``context``, ``context_with_system``  ``prepare_model_request`` (rewrites the request)
tools                                 the capability's toolset
``turn_end``                          ``after_node_run`` of a ``CallToolsNode``; or
                                      ``on_node_run_error`` of a ``ModelRequestNode``
                                      (a provider error is an error turn)
``agent_end``, ``agent_before_settle`` the same hooks when the run would stop
``agent_settled``                     the end of ``wrap_run``
``continue: true``                    the boundary's parts go into the next request
                                      (after a tool batch) or a redirect to a new
                                      ``ModelRequestNode`` (when the run would stop)
====================================  ====================================================
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from pydantic_ai import RunContext
from pydantic_ai._agent_graph import CallToolsNode, ModelRequestNode
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import (
    AgentNode,
    NodeResult,
    WrapRunHandler,
)
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelRequestPart, ModelResponse
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.run import AgentRunResult
from pydantic_ai.toolsets import AbstractToolset

from pictx_fsm import TOOL_SPECS, Applied, ModelInfo, ToolOutcome, ToolResult, ToolSpec
from pictx_fsm.hosts.pydantic_ai.errors import RequestCancelledError, SessionBusyError
from pictx_fsm.hosts.pydantic_ai.glue import Outcome
from pictx_fsm.hosts.pydantic_ai.history import carried_ids
from pictx_fsm.hosts.pydantic_ai.serial import message_json
from pictx_fsm.hosts.pydantic_ai.session import PiSession, lifecycle_request
from pictx_fsm.hosts.pydantic_ai.tools import toolset
from pictx_fsm.hosts.pydantic_ai.views import METADATA_KEY, response_message
from pictx_fsm.hosts.pydantic_ai.wire import as_projection, provider_context, request_messages

JSON: TypeAlias = Any
R = TypeVar("R")


@dataclass
class PiContext(AbstractCapability[Any]):
    """Durable reset windows for any pydantic-ai ``Agent`` (one session, run after run)."""

    session: PiSession
    context_window: int | None = None
    """The serving model's context window in tokens (budget and reset need it)."""
    max_tokens: int | None = None
    """The model's output limit (a ``length`` stop below it is recoverable, R33)."""
    tools: Sequence[ToolSpec] = TOOL_SPECS
    """The tools the model is given: all eleven of pi-context by default."""
    _running: bool = field(default=False, init=False, repr=False)
    _boundary: tuple[int, list[ModelRequestPart]] | None = field(
        default=None, init=False, repr=False
    )
    _last_run: tuple[str | None, list[ModelMessage]] | None = field(
        default=None, init=False, repr=False
    )

    def get_toolset(self) -> AbstractToolset[Any] | None:
        return toolset(self.tools, self._execute)

    def _execute(
        self, name: str, arguments: Mapping[str, JSON], ctx: RunContext[Any]
    ) -> ToolResult | ToolOutcome:
        self._sync(ctx.messages)  # the reply that called the tool is persisted first (Pi)
        call_id = ctx.tool_call_id or ""
        return self.session.lifecycle.tool(name, arguments, call_id, _pending(ctx))

    # -- the run -------------------------------------------------------------------------------

    async def wrap_run(
        self, ctx: RunContext[Any], *, handler: WrapRunHandler
    ) -> AgentRunResult[Any]:
        if self._running:
            raise SessionBusyError("this PiContext session is already running an agent run")
        self._running = True
        try:
            self._begin(ctx.messages)
            self._last_run = None  # a run that fails leaves no history of its own
            try:
                result = await handler()
            except (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt):
                self.session.lifecycle.aborted()  # Pi's abort: nothing commits, all clears
                raise
            # The run's own history (pydantic-ai replaces the list ctx.messages started with)
            self._last_run = (self.session.tree.leaf_id, result.all_messages())
            return result
        finally:
            self._running = False
            self._boundary = None
            self.session.lifecycle.settled()

    def _begin(self, messages: list[ModelMessage]) -> None:
        """Continue the session (an empty history) or follow the history given; either way
        the lifecycle's pending entries (a boot, a repair) join it before the prompt."""
        session = self.session
        waiting = {entry.id for entry in session.pending}
        base = session.pending[0].parent_id if session.pending else session.tree.leaf_id
        request = session.take_pending()
        if not messages:
            messages[:] = self._continued(base, request)
        elif request is not None and not waiting <= carried_ids(messages[-1:]):
            messages.append(request)
        self._sync(messages)

    def _continued(self, base: str | None, pending: ModelRequest | None) -> list[ModelMessage]:
        """The session's history: the previous run's own messages when the session has not
        moved since (nothing to convert), else rebuilt from the branch (``history()``)."""
        last = self._last_run
        if last is None or last[0] != base or _open_calls(last[1]):
            return self.session.history()
        return [*last[1], *([pending] if pending is not None else [])]

    def _sync(self, messages: list[ModelMessage], *extra: ModelMessage) -> None:
        """Mirror the history (and a request not in it yet); a history that left the branch
        is the ``session_tree`` moment, and its repair joins the history at once."""
        session = self.session
        old_leaf = session.tree.leaf_id
        session.mirror.sync([*messages, *extra])
        if not session.mirror.navigated:
            return
        session.mirror.navigated = False
        on_branch = {entry.id for entry in session.mirror.branch}
        session.pending = [entry for entry in session.pending if entry.id in on_branch]
        session.absorb(session.lifecycle.navigated(old_leaf, session.tree.leaf_id))
        request = session.take_pending()
        if request is not None and not extra:
            messages.append(request)
            session.mirror.sync(messages)

    # -- requests ------------------------------------------------------------------------------

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self._tail_first(ctx.messages)
        self._sync(ctx.messages)
        lifecycle = self.session.lifecycle
        lifecycle.select(self._model(request_context.model))
        lifecycle.turn_start(_pending(ctx))
        return request_context

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self._sync(ctx.messages)
        session = self.session
        source = provider_context(request_context.messages, session.mirror)
        source = as_projection(source, session.tree.transcripts)
        provided = session.lifecycle.provider_context(
            source.messages, _pending(ctx), source.conversation
        )
        if provided.cancel:
            raise RequestCancelledError(self.session.notices[-1].message)
        messages = request_messages(provided.messages, source, request_context.messages)
        request_context.messages = messages
        return request_context

    def _model(self, model: Model) -> ModelInfo:
        return ModelInfo(
            provider=model.system,
            id=model.model_name,
            context_window=self.context_window,
            max_tokens=self.max_tokens,
        )

    def _tail_first(self, messages: list[ModelMessage]) -> None:
        """Keep a boundary's reset tail right after the tool results it follows, even when a
        tool enqueued content into the same request (that content is delivered after it)."""
        if self._boundary is None or self._boundary[0] >= len(messages):
            return
        index, tail = self._boundary
        request = messages[index]
        if isinstance(request, ModelRequest):
            ours = [p for p in request.parts if any(p is t for t in tail)]
            results = [p for p in request.parts if _is_result(p) and not _among(p, ours)]
            rest = [p for p in request.parts if not _is_result(p) and not _among(p, ours)]
            request.parts = [*results, *ours, *rest]
        self._boundary = None

    # -- turn ends -----------------------------------------------------------------------------

    async def after_node_run(
        self, ctx: RunContext[Any], *, node: AgentNode[Any], result: NodeResult[Any]
    ) -> NodeResult[Any]:
        if not isinstance(node, CallToolsNode):
            return result
        messages = ctx.messages
        if isinstance(result, ModelRequestNode):
            self._sync(messages, result.request)
        else:
            self._sync(messages)
        message = response_message(message_json(node.model_response))
        applied = self.session.lifecycle.turn_end(message, "completed", _pending(ctx))
        if isinstance(result, ModelRequestNode):
            self._into_next_request(len(messages), result.request, applied)
            return result
        return self._at_stop(ctx, result, "completed", applied)

    def _into_next_request(self, index: int, request: ModelRequest, applied: Applied) -> None:
        """After a tool batch the run goes on anyway: the drafts join the tool results."""
        parts = self._parts(applied)
        if parts:
            request.parts = [*request.parts, *parts]
            self._boundary = (index, parts)

    def _at_stop(
        self, ctx: RunContext[Any], result: R, outcome: Outcome, applied: Applied
    ) -> R | ModelRequestNode[Any, Any]:
        """The run would stop here: ``agent_end`` and ``agent_before_settle`` unless input is
        queued; a ``continue`` redirects the run into one more request."""
        parts = self._parts(applied)
        go_on = applied.continue_
        if not go_on and not _pending(ctx):
            settle = self.session.lifecycle.run_end(outcome, 0)
            parts += self._parts(settle)
            go_on = settle.continue_
        if not parts:
            return result
        if go_on:
            return ModelRequestNode(request=ModelRequest(parts=parts))
        ctx.messages.append(ModelRequest(parts=parts))
        self._sync(ctx.messages)
        return result

    def _parts(self, applied: Applied) -> list[ModelRequestPart]:
        if not applied.appended:
            return []
        self.session.mirror.adopt(applied.appended)
        return list(lifecycle_request(applied.appended).parts)

    async def on_node_run_error(
        self, ctx: RunContext[Any], *, node: AgentNode[Any], error: Exception
    ) -> NodeResult[Any]:
        """A provider error is an error turn (Pi persists the failed reply); an overflow may
        be recovered once (R33–R36), anything else propagates after the lifecycle saw it."""
        if not isinstance(node, ModelRequestNode) or not isinstance(error, ModelAPIError):
            raise error
        failed = self._failed_reply(ctx, error)
        applied = self.session.lifecycle.turn_end(failed, "error", _pending(ctx))
        redirect = self._at_stop(ctx, None, "error", applied)
        if isinstance(redirect, ModelRequestNode):
            return redirect
        raise error

    def _failed_reply(self, ctx: RunContext[Any], error: ModelAPIError) -> dict[str, JSON]:
        model = ctx.model
        reply = ModelResponse(
            parts=[],
            model_name=model.model_name,
            provider_name=model.system,
            finish_reason="error",
            metadata={METADATA_KEY: {"errorMessage": str(error)}},
        )
        ctx.messages.append(reply)
        self._sync(ctx.messages)
        return response_message(message_json(reply))


def _pending(ctx: RunContext[Any]) -> int:
    """Input queued for this run (``enqueue``): Pi's pending messages."""
    return len(ctx.pending_messages or ())


def _open_calls(messages: Sequence[ModelMessage]) -> bool:
    """The history ends with tool calls nothing answered (a run failed inside a batch)."""
    return (
        bool(messages) and isinstance(messages[-1], ModelResponse) and bool(messages[-1].tool_calls)
    )


def _is_result(part: ModelRequestPart) -> bool:
    return getattr(part, "part_kind", "") in ("tool-return", "retry-prompt")


def _among(part: ModelRequestPart, parts: Sequence[ModelRequestPart]) -> bool:
    return any(part is other for other in parts)
