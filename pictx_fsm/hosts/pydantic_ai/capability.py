"""``PiContext``: pi-context's reset lifecycle as one pydantic-ai capability.

Where each Pi hook happens in pydantic-ai's agent graph:

====================================  ====================================================
Pi hook (lifecycle §6)                pydantic-ai
====================================  ====================================================
``session_start``                     opening the :class:`PiSession` (startup or resume)
``session_tree``                      a run whose history leaves the session's branch
``turn_start``                        ``before_model_request``
``context``, ``context_with_system``  ``prepare_model_request`` (rewrites the request)
the reply persisted (``message_end``) ``before_node_run`` of a ``CallToolsNode``: before any
                                      tool of the reply runs
tools                                 the capability's toolset
``turn_end``                          ``after_node_run`` of a ``CallToolsNode``; or
                                      ``on_node_run_error`` of a ``ModelRequestNode``
                                      (a provider error is an error turn); or, for
                                      ``run_stream``, the node that ends the run after
                                      the streamed answer
``agent_end``, ``agent_before_settle`` the same hooks when the run would stop
``agent_settled``                     the end of ``wrap_run``
``continue: true``                    the boundary's parts go into the next request
                                      (after a tool batch) or a redirect to a new
                                      ``ModelRequestNode`` (when the run would stop); after
                                      ``run_stream``'s answer they wait for the next run
====================================  ====================================================
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from pydantic_ai import CallToolsNode, ModelRequestNode, RunContext
from pydantic_ai.capabilities import (
    AbstractCapability,
    CombinedCapability,
    ProcessHistory,
    WrapperCapability,
)
from pydantic_ai.capabilities.abstract import AgentNode, NodeResult, WrapRunHandler
from pydantic_ai.exceptions import ModelAPIError, ModelContextWindowExceededError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelRequestPart, ModelResponse
from pydantic_ai.models import AbstractModel, Model, ModelRequestContext
from pydantic_ai.run import AgentRunResult
from pydantic_ai.toolsets import AbstractToolset

from pictx_fsm import TOOL_SPECS, ModelInfo, ToolOutcome
from pictx_fsm.extensions.pi_context.texts import WIPE_MEMORY_TOOL
from pictx_fsm.extensions.pi_context.tools import ToolSpec
from pictx_fsm.extensions.pi_context.windows import is_valid_marker
from pictx_fsm.host.apply import Applied
from pictx_fsm.host.effects import Notify, ToolResult
from pictx_fsm.host.overflow import PI_0_87
from pictx_fsm.hosts.pydantic_ai.errors import (
    CapabilityConflictError,
    RequestCancelledError,
    SettingsError,
    WindowTooSmallError,
)
from pictx_fsm.hosts.pydantic_ai.glue import Outcome
from pictx_fsm.hosts.pydantic_ai.history import carried_ids
from pictx_fsm.hosts.pydantic_ai.serial import message_json
from pictx_fsm.hosts.pydantic_ai.session import PiSession, close_open_calls, lifecycle_request
from pictx_fsm.hosts.pydantic_ai.settings import fresh_window_problem, tokens_setting
from pictx_fsm.hosts.pydantic_ai.texts import (
    CANCELLED_ADVICE,
    COMPACTION_REFUSED,
    HISTORY_PROCESSOR_REFUSED,
    NO_WINDOW,
    OVERFLOW_CODE,
    REQUEST_ABORTED,
    RESET_LOOP,
    SETTING_POSITIVE,
    WINDOW_FIX,
)
from pictx_fsm.hosts.pydantic_ai.tools import toolset
from pictx_fsm.hosts.pydantic_ai.views import ABORTED, METADATA_KEY, response_message
from pictx_fsm.hosts.pydantic_ai.wire import as_projection, provider_context, request_messages

__all__ = ["PiContext"]

JSON: TypeAlias = Any
R = TypeVar("R")


@dataclass
class PiContext(AbstractCapability[Any]):
    """Durable reset windows for any pydantic-ai ``Agent`` (one session, run after run)."""

    session: PiSession
    context_window: int | None = None
    """The serving model's context window in tokens (the budget and the automatic reset
    need it; without it they are off, and the session says so)."""
    max_tokens: int | None = None
    """The model's output limit (a ``length`` stop below it is recoverable, R33)."""
    tools: Sequence[ToolSpec] = TOOL_SPECS
    """The tools the model is given: all eleven of pi-context by default."""
    _boundary: tuple[int, list[ModelRequestPart]] | None = field(
        default=None, init=False, repr=False
    )
    _checked: set[tuple[str, str] | None] = field(default_factory=set, init=False, repr=False)
    """The models whose reserve was checked against the window (``None``: no model yet)."""
    _ended: ModelResponse | None = field(default=None, init=False, repr=False)
    """The last reply ``turn_end`` saw (a streamed answer is ended once)."""
    _run_start: int = field(default=0, init=False, repr=False)
    """Where the running run's own messages start in its history."""
    _history: list[ModelMessage] = field(default_factory=list, init=False, repr=False)
    """The running run's history as its hooks last saw it (``ctx.messages``)."""
    _first: ModelRequest | None = field(default=None, init=False, repr=False)
    """The run's first request until it is prepared (it takes in the requests before it)."""
    _started: bool = field(default=False, init=False, repr=False)
    """The running run has reached its first model request node."""
    _asked: ModelMessage | None = field(default=None, init=False, repr=False)
    """The request a model is answering now (a cancel before its reply gets Pi's aborted one)."""
    _asked_model: Model | None = field(default=None, init=False, repr=False)
    _unsent: ModelRequest | None = field(default=None, init=False, repr=False)
    """The request the session recorded before pydantic-ai put it into the history."""
    _resets: int = field(default=0, init=False, repr=False)
    """Automatic resets in a row in the running run, nothing but their continuation between."""

    def __post_init__(self) -> None:
        self.context_window = tokens_setting(self.context_window, "PiContext.context_window")
        self.max_tokens = tokens_setting(self.max_tokens, "PiContext.max_tokens")
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise SettingsError(
                SETTING_POSITIVE.format(field="PiContext.max_tokens", value=self.max_tokens)
            )
        if self.context_window is None:
            self.session.notify(Notify(message=NO_WINDOW, level="warning"))
        self._check_window(None)

    def _check_window(self, model: ModelInfo | None) -> None:
        """Refuse a window the reserve (for ``model``: Pi's per-model overrides) leaves no
        room in, once per model, before its first request."""
        key = None if model is None else (model.provider, model.id)
        if self.context_window is None or key in self._checked:
            return
        self._checked.add(key)
        lifecycle = self.session.lifecycle
        reserve, automatic = lifecycle.reserve(model)
        fresh = lifecycle.fresh_window_tokens(self.tools) if automatic else 0
        problem = fresh_window_problem(
            self.context_window,
            reserve,
            fresh,
            window_name="PiContext.context_window",
            reserve_name=self.session.config.reserve_name,
        )
        if problem is not None:
            raise SettingsError(problem + WINDOW_FIX)

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
        _refuse_rewriters(ctx)
        session = self.session
        with session.running():
            try:
                self._begin(ctx.messages)
                session.last_run = None  # a run that fails leaves no history of its own
                try:
                    result = await handler()
                except (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt):
                    self._abort()
                    raise
                except Exception as error:
                    if isinstance(error, ModelAPIError):
                        self._unanswered(error)
                    self._keep_unsent(self._history)
                    self._sync(self._history)
                    raise
                # The run's own history (pydantic-ai replaces the list ctx.messages started with)
                messages = result.all_messages()
                self._sync(messages)
                session.last_run = (session.tree.leaf_id, messages)
                self._unended_answer(messages)
                return result
            finally:
                self._boundary = None
                session.lifecycle.settled()

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
        self._run_start, self._ended, self._history = len(messages), None, messages
        self._first, self._started, self._resets = None, False, 0
        self._asked = self._unsent = None

    def _continued(self, base: str | None, pending: ModelRequest | None) -> list[ModelMessage]:
        """The session's history: the previous run's own messages when the session has not
        moved since (nothing to convert), else rebuilt from the branch (``history()``)."""
        last = self.session.last_run
        if last is None or last[0] != base or _open_calls(last[1]):
            return self.session.history()
        return [*last[1], *([pending] if pending is not None else [])]

    def _sync(self, messages: list[ModelMessage], *extra: ModelMessage) -> None:
        """Mirror the history (and a request not in it yet); a history that left the branch
        is the ``session_tree`` moment, and its repair joins the history at once."""
        self._history = messages
        session = self.session
        old_leaf = session.tree.leaf_id
        waiting = [lifecycle_request(session.pending)] if session.pending else []
        session.mirror.sync([*messages, *waiting, *extra])  # what waits for the next run stays
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
        self._unsent = None  # the request is the history's now
        self._tail_first(ctx.messages)
        self._take_in(ctx.messages, request_context)
        self._sync(ctx.messages)
        model = self._model(request_context.model)
        self._check_window(model)
        lifecycle = self.session.lifecycle
        lifecycle.select(model)
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
            raise RequestCancelledError(self.session.notices[-1].message + CANCELLED_ADVICE)
        messages = request_messages(provided.messages, source, request_context.messages)
        request_context.messages = messages
        self._asked = ctx.messages[-1] if ctx.messages else None
        self._asked_model = request_context.model
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        """A reply is never older than its request: one whose ``timestamp`` is (a reply built
        before it was asked for, as a ``FunctionModel`` may return) is stamped with the
        request's, or Pi's estimator would take its usage for stale (R48)."""
        self._asked = None
        sent = _sent_at(request_context.messages)
        if sent is not None and response.timestamp < sent:
            response.timestamp = sent
        return response

    def _take_in(self, messages: list[ModelMessage], request: ModelRequestContext) -> None:
        """The run's first request takes in the requests the history ends with (the
        lifecycle's entries waiting for the run, the closing of open calls): pydantic-ai
        merges adjacent requests when a run starts, so taking them in now leaves the history
        as every later run holds it, and the session records it once."""
        first, self._first = self._first, None
        at = next((i for i, m in enumerate(messages) if m is first), None)
        if first is None or at is None:
            return
        start = at
        while start > 0 and _taken_in(messages[start - 1]):
            start -= 1
        if start == at:
            return
        taken = messages[start:at]
        parts = [
            part for message in taken if isinstance(message, ModelRequest) for part in message.parts
        ]
        first.parts = [*parts, *first.parts]
        del messages[start:at]
        request.messages = [m for m in request.messages if not _among(m, taken)]

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

    async def before_node_run(
        self, ctx: RunContext[Any], *, node: AgentNode[Any]
    ) -> AgentNode[Any]:
        """The reply is in the session file before any of its tools runs (Pi persists it at
        ``message_end``): a cancel or a crash while they run leaves the call, and a resumed
        history closes it with pydantic-ai's ``interrupted`` result."""
        if isinstance(node, CallToolsNode):
            self._sync(ctx.messages)
        elif isinstance(node, ModelRequestNode) and self._first is None and not self._started:
            self._first, self._started = node.request, True
        return node

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
        reply = node.model_response
        applied = self._turn_end(reply, "completed", _pending(ctx))
        if isinstance(result, ModelRequestNode):
            self._into_next_request(len(messages), result.request, applied)
            self._unsent = result.request
            self._count_resets(reply, applied)
            return result
        stop = self._at_stop(ctx, result, "completed", applied)
        self._count_resets(reply, applied)
        return stop

    def _turn_end(self, reply: ModelResponse, outcome: Outcome, pending: int) -> Applied:
        self._ended = reply
        message = response_message(message_json(reply))
        return self.session.lifecycle.turn_end(message, outcome, pending)

    def _abort(self) -> None:
        """The caller cancelled the run (Pi's abort): what pydantic-ai kept of it is recorded,
        with the calls of the last reply that have no result closed as pydantic-ai closes them
        (``interrupted``; Pi records an error result for a tool the abort stopped); a turn under
        way ends ``aborted`` — a request cancelled before its reply came gets Pi's aborted
        reply — and ``agent_end`` says the run was aborted (R37)."""
        messages = self._history
        if self._asked is not None and messages and messages[-1] is self._asked:
            messages.append(_aborted_reply(self._asked_model))
        self._keep_unsent(messages)
        messages[:] = close_open_calls(messages)
        self._sync(messages)
        replies = [m for m in messages[self._run_start :] if isinstance(m, ModelResponse)]
        session = self.session
        if replies and replies[-1] is not self._ended:
            session.absorb(self._turn_end(replies[-1], "aborted", 0))
        session.lifecycle.aborted()  # Pi's abort: nothing commits, all clears

    def _keep_unsent(self, messages: list[ModelMessage]) -> None:
        """The request the session recorded ahead of pydantic-ai (a tool batch's results with
        what its boundary committed, a boundary's continuation) joins the history of a run
        that ends before sending it: what the session holds, the run's history holds."""
        unsent, self._unsent = self._unsent, None
        if unsent is not None and not _among(unsent, messages):
            messages.append(unsent)

    def _unanswered(self, error: ModelAPIError) -> None:
        """A provider error no node hook saw (``run_stream`` streams its request outside
        them) is the same error turn: the failed reply recorded, ``turn_end`` and the settle
        hooks; what they commit (an overflow's recovery) waits for the next run."""
        messages, asked, self._asked = self._history, self._asked, None
        last = messages[-1] if len(messages) > self._run_start else None
        if last is None or (last is not asked and not self._unended(last)):
            return
        failed = self._failed_reply(messages, error, self._asked_model)
        session = self.session
        session.absorb(self._turn_end(failed, "error", 0))
        session.absorb(session.lifecycle.run_end("error", 0))

    def _count_resets(self, reply: ModelResponse, applied: Applied) -> None:
        """Stop a run whose fresh window is at the reserve after its first reply: the second
        automatic reset in a row (no ``wipe_memory`` asked for either) would not be the last."""
        reset = any(is_valid_marker(entry) for entry in applied.appended)
        if not reset or any(call.tool_name == WIPE_MEMORY_TOOL for call in reply.tool_calls):
            self._resets = 0
            return
        self._resets += 1
        if self._resets >= 2:
            usage = reply.usage
            tokens = usage.input_tokens + usage.output_tokens
            reserve, _ = self.session.lifecycle.reserve(self.session.lifecycle.model)
            raise WindowTooSmallError(
                RESET_LOOP.format(tokens=tokens, window=self.context_window, reserve=reserve)
            )

    def _unended_answer(self, messages: list[ModelMessage]) -> None:
        """A run that ended on a reply no tool-call node handled (``run_stream``'s streamed
        answer; an ``iter`` left after a model request): the reply ends the turn and the run
        stops there. What that boundary commits (a reset at the reserve, a reminder) waits
        for the next run, as a command's entries do: the run and its result are over."""
        reply = messages[-1] if len(messages) > self._run_start else None
        if not isinstance(reply, ModelResponse) or reply is self._ended:
            return
        session = self.session
        session.absorb(self._turn_end(reply, "completed", 0))
        session.absorb(session.lifecycle.run_end("completed", 0))

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
            self._unsent = ModelRequest(parts=parts)
            return ModelRequestNode(request=self._unsent)
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
        self._asked = None
        if not isinstance(node, ModelRequestNode) or not isinstance(error, ModelAPIError):
            raise error
        failed = self._failed_reply(ctx.messages, error, ctx.model)
        applied = self._turn_end(failed, "error", _pending(ctx))
        redirect = self._at_stop(ctx, None, "error", applied)
        if isinstance(redirect, ModelRequestNode):
            return redirect
        raise error

    def _unended(self, message: ModelMessage) -> bool:
        return isinstance(message, ModelResponse) and message is not self._ended

    def _failed_reply(
        self, messages: list[ModelMessage], error: ModelAPIError, model: AbstractModel | None
    ) -> ModelResponse:
        """The reply of a request the provider failed: what pydantic-ai kept of a broken
        stream, or an empty one, marked with the error (Pi persists the failed reply)."""
        last = messages[-1] if len(messages) > self._run_start else None
        if isinstance(last, ModelResponse) and self._unended(last):
            failed = _as_failed(last, error)  # marked before the session first records it
            self._sync(messages)
            return failed
        provider = None if model is None else model.system
        reply = ModelResponse(
            parts=[],
            model_name=None if model is None else model.model_name,
            provider_name=provider,
            finish_reason="error",
            metadata={METADATA_KEY: {"errorMessage": error_message(error, provider)}},
        )
        messages.append(reply)
        self._sync(messages)
        return reply


def _as_failed(reply: ModelResponse, error: ModelAPIError) -> ModelResponse:
    """``reply`` (a stream's response so far) as the failed reply of ``error``."""
    own = dict((reply.metadata or {}).get(METADATA_KEY) or {})
    own["errorMessage"] = error_message(error, reply.provider_name)
    reply.metadata = {**(reply.metadata or {}), METADATA_KEY: own}
    reply.finish_reason = "error"
    return reply


def _aborted_reply(model: Model | None) -> ModelResponse:
    """Pi's reply to a request the caller aborted: no content, ``stopReason: aborted``."""
    return ModelResponse(
        parts=[],
        model_name=None if model is None else model.model_name,
        provider_name=None if model is None else model.system,
        metadata={METADATA_KEY: {"stopReason": ABORTED, "errorMessage": REQUEST_ABORTED}},
    )


def error_message(error: ModelAPIError, provider: str | None) -> str:
    """The failed reply's ``errorMessage``: the error's text, which pydantic-ai's typed
    ``ModelContextWindowExceededError`` makes an overflow (R33) even when its text has none
    of Pi's overflow phrases: it is prefixed with ``model_context_window_exceeded``, one of
    them."""
    text = str(error)
    typed = isinstance(error, ModelContextWindowExceededError)
    if typed and not PI_0_87.is_overflow_error(text, provider):
        return f"{OVERFLOW_CODE}: {text}"
    return text


def _refuse_rewriters(ctx: RunContext[Any]) -> None:
    """Refuse, before the first request, a capability that would rewrite the history the
    session mirrors: a history processor, or a compaction handler (R62)."""
    root = ctx.root_capability
    if root is None:
        return
    registered: list[AbstractCapability[Any]] = []
    root.apply(registered.append)
    for capability in _unwrapped(registered):
        name = type(capability).__name__
        if isinstance(capability, ProcessHistory):
            raise CapabilityConflictError(HISTORY_PROCESSOR_REFUSED.format(capability=name))
        if _compacts(capability):
            raise CapabilityConflictError(COMPACTION_REFUSED.format(capability=name))


def _unwrapped(capabilities: Sequence[AbstractCapability[Any]]) -> list[AbstractCapability[Any]]:
    """``capabilities`` and, for each wrapper among them, what it wraps (all the way in)."""
    out: list[AbstractCapability[Any]] = []
    for capability in capabilities:
        current: AbstractCapability[Any] | None = capability
        while current is not None:
            out.append(current)
            current = current.wrapped if isinstance(current, WrapperCapability) else None
    return out


def _compacts(capability: AbstractCapability[Any]) -> bool:
    """The capability has a ``compact_history`` hook of its own, where pydantic-ai calls one
    (≥ 2.7x; 2.68 has no compaction)."""
    hook = getattr(type(capability), "compact_history", None)
    if getattr(AbstractCapability, "compact_history", None) is None:
        return False
    # A wrapper or a group delegates the hook to what it holds, which is visited on its own.
    delegating = (WrapperCapability, CombinedCapability, AbstractCapability)
    base = next(cls for cls in delegating if isinstance(capability, cls))
    return hook is not getattr(base, "compact_history", None)


def _taken_in(message: ModelMessage) -> bool:
    """A request the run's first request takes in: no instructions or metadata of its own
    (pydantic-ai would merge it into the request after it; these fields could stop that)."""
    return isinstance(message, ModelRequest) and not message.instructions and not message.metadata


def _sent_at(messages: Sequence[ModelMessage]) -> Any:
    """When the last request of ``messages`` was stamped, if it was."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            return message.timestamp
    return None


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


def _among(item: object, items: Sequence[object]) -> bool:
    return any(item is other for other in items)
