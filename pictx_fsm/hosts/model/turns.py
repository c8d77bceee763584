"""One low-level agent run (pi-agent-core ``agentLoop``/``runLoop``, pi-host §7 step 1).

``agent_start`` → turns → ``agent_end``. Each turn after the first begins with Pi's threshold
check (``prepareNextTurn``). Each turn: ``turn_start`` → pending messages
(prompts, then one steering message) → ``context`` → ``context_with_system`` → the provider
request → the assistant message → the tool batch → ``turn_end`` with its boundary drafts →
held custom messages. The loop goes on while tools ask for more, ``continue`` was honoured,
or steering is queued; then one follow-up at a time; an error or aborted reply ends the run
at once. A turn that starts with an aborted signal records ``This operation was aborted``
without calling the provider (``d2``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from pictx_fsm.host.effects import MessagesResult
from pictx_fsm.host.events import (
    AgentEnd,
    Context,
    ContextWithSystem,
    HookEvent,
    TurnEnd,
    TurnStart,
)
from pictx_fsm.host.events import Outcome as HookOutcome
from pictx_fsm.hosts.model.boundary import can_continue, chain, commit
from pictx_fsm.hosts.model.compaction import compact_before_next_turn
from pictx_fsm.hosts.model.dispatch import call, emit, error, record, subscribers
from pictx_fsm.hosts.model.messages import (
    aborted_before_request,
    aborted_partial,
    assistant_message,
    role_of,
)
from pictx_fsm.hosts.model.persist import persist
from pictx_fsm.hosts.model.queues import Queued
from pictx_fsm.hosts.model.records import DeliveryRecord, ProviderRequestRecord, step_at
from pictx_fsm.hosts.model.state import HostState, RunState
from pictx_fsm.hosts.model.steps import Steps
from pictx_fsm.hosts.model.tools import run_batch, tool_calls
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.projection import Message, convert_to_llm, fold_system
from pictx_fsm.session.transcript import Transcript

__all__ = [
    "BOUNDARY",
    "CHAIN_GOES_ON",
    "JSON",
    "UNFINISHED",
    "context_chain",
    "deliver",
    "finish_turn",
    "flush_held",
    "low_level_run",
    "messages_chain",
    "outcome_of",
    "record_delivery",
    "request",
]

JSON: TypeAlias = Any
BOUNDARY = "<boundary>"
UNFINISHED = frozenset({"error", "aborted"})
CHAIN_GOES_ON = frozenset({"error", "length"})
"""Replies after which a failure chain goes on (Pi keeps ``_overflowRecoveryAttempted``)."""


def outcome_of(message: Mapping[str, JSON] | None) -> HookOutcome:
    stop = None if message is None else message.get("stopReason")
    if stop == "aborted":
        return "aborted"
    return "error" if stop == "error" else "completed"


def _run(host: HostState) -> RunState:
    if host.run is None:
        raise RuntimeError("the agent loop runs only inside a run")
    return host.run


def low_level_run(host: HostState, prompts: Sequence[Queued]) -> Steps[None]:
    """``agent_start`` … ``agent_end``."""
    run = _run(host)
    run.signal_live = True
    run.turn_index = None
    yield record(host, "agent_start")
    # A prompt's run polls the steering queue once its prompts are in (pi-agent-core's
    # runLoop): a steer queued while they were delivered joins the first request.
    pending = list(prompts) if prompts else _first_pending(host)
    yield from _turns(host, run, pending, poll_first=bool(prompts))
    emit(host, AgentEnd())
    yield step_at("hook", "agent_end")
    run.signal_live = False
    run.turn_index = None


def _first_pending(host: HostState) -> list[Queued]:
    """A run without prompts: one steering message; for ``agent.continue()`` from an assistant
    message with none,
    one follow-up: pi-agent-core runs it as the prompt (``Agent.continue``), so a continuation
    after a failed overflow recovery delivers the queued work instead of re-sending the
    context that overflowed."""
    steering = host.queues.take_steering()
    if steering or not _ends_on_assistant(host):
        return steering
    return host.queues.take_follow_up()


def _ends_on_assistant(host: HostState) -> bool:
    messages = host.store.context_messages()
    return bool(messages) and role_of(messages[-1]) == "assistant"


def _turns(
    host: HostState, run: RunState, pending: list[Queued], *, poll_first: bool = False
) -> Steps[None]:
    """pi-agent-core's ``runLoop``: turns while tools ask for more or steering is queued;
    then the follow-ups, one at a time; only when no follow-up is queued does a ``continue``
    the last boundary honoured run one context-only turn (a queued follow-up takes its place)."""
    index = -1
    explicit = False
    while True:
        more = True
        while more or pending:
            index += 1
            turn = yield from _turn(host, run, index, pending, poll=poll_first and index == 0)
            if turn is None:
                return
            more, explicit = turn
            pending = host.queues.take_steering()
            if more or pending:
                explicit = False
        pending = host.queues.take_follow_up()
        if not pending and not explicit:
            return
        explicit = False


def _turn(
    host: HostState, run: RunState, index: int, pending: list[Queued], *, poll: bool = False
) -> Steps[tuple[bool, bool] | None]:
    """One turn: whether the tools ask for another turn and whether the boundary's
    ``continue`` was honoured; ``None`` when the reply ended the run (error or aborted)."""
    run.turn_index = index
    if index > 0:
        yield from compact_before_next_turn(host)
        # Preparation can take long (a compaction): steering queued meanwhile joins this turn.
        pending = pending or host.queues.take_steering()
    emit(host, TurnStart(turn_index=index), turnIndex=index)
    yield step_at("hook", "turn_start")
    yield from deliver(host, pending)
    if poll:
        yield from deliver(host, host.queues.take_steering())
    message = yield from request(host, run)
    if message.get("stopReason") in UNFINISHED:
        yield from finish_turn(host, message)
        return None
    calls = tool_calls(message)
    tools_more = False
    if calls:
        _, tools_more = yield from run_batch(host, calls)
    continued = yield from finish_turn(host, message)
    return tools_more, continued


def deliver(host: HostState, items: Sequence[Queued]) -> Steps[None]:
    """Persist the turn's pending messages; a user message's ``message_start`` grants its
    own compact-and-retry (Pi resets ``_overflowRecoveryAttempted`` there, pi-host §7 ``e``)."""
    for item in items:
        host.queues.started(item)
        if role_of(item.message) == "user":
            host.overflow_attempted = False
        entry = yield from persist(host, item.message)
        if role_of(item.message) != "system":
            record_delivery(host, item, entry)


def record_delivery(host: HostState, item: Queued, entry: Entry) -> None:
    host.log.deliveries.append(
        DeliveryRecord(kind=item.kind, text=item.text, entry_id=str(entry.id))
    )


# -- the request -------------------------------------------------------------------------------


def request(host: HostState, run: RunState) -> Steps[Mapping[str, JSON]]:
    """Context hooks, then the provider (unless aborted), then the persisted reply."""
    full = yield from context_chain(host, host.store.transcript())
    full = yield from messages_chain(
        host, "context_with_system", lambda ms: ContextWithSystem(messages=ms), full
    )
    message: Mapping[str, JSON]
    if run.aborted:
        stop = host.settings.profile.aborted_turn_stop_reason
        message = _with_run_details(host, aborted_before_request(host.model, host.clock(), stop))
        entry = yield from persist(host, message)
        run.last_entry_id = entry.id
    else:
        message = yield from _provider(host, run, convert_to_llm(full))
    if message.get("stopReason") not in CHAIN_GOES_ON:
        host.overflow_attempted = False
    if message.get("stopReason") not in UNFINISHED:
        run.retry_attempt = 0
    run.last_message = message
    return message


def context_chain(host: HostState, messages: Transcript) -> Steps[Sequence[Message]]:
    """``context``: each handler sees the conversation only (no system messages). A handler
    that changes it gets the current system message as the one leading message; an unchanged
    conversation keeps every system message in place (Pi's ``restoreSystemMessages``), so a
    root boot appended before the first system message stays first in the request. Until a
    handler changes it, the conversation is the store's (a transcript that knows its
    digests)."""
    current: Sequence[Message] = messages
    conversation = host.store.conversation()
    record(host, "context", count=len(conversation))
    for ext in subscribers(host, "context"):
        visible = conversation if current is messages else _without_system(current)
        reply = call(host, ext, Context(messages=visible), host.host_context())
        value = getattr(reply, "value", None)
        if isinstance(value, MessagesResult) and not _same(value.messages, visible):
            head = fold_system(current)
            current = [*([head] if head is not None else []), *value.messages]
    yield step_at("hook", "context")
    return current


def _as_tuple(messages: Sequence[Message]) -> tuple[Message, ...]:
    """A tuple as it is (a transcript stays one), anything else copied into one."""
    return messages if isinstance(messages, tuple) else tuple(messages)


def _without_system(messages: Sequence[Message]) -> tuple[Message, ...]:
    return tuple(m for m in messages if m.get("role") != "system")


def _same(left: Sequence[Message], right: Sequence[Message]) -> bool:
    """Pi's ``sameMessages``: the same message objects in the same order."""
    return len(left) == len(right) and all(a is b for a, b in zip(left, right, strict=True))


def messages_chain(
    host: HostState,
    hook: str,
    make: Callable[[tuple[Message, ...]], HookEvent],
    messages: Sequence[Message],
) -> Steps[Sequence[Message]]:
    """``context_with_system``: each handler may replace the list."""
    record(host, hook, count=len(messages))
    for ext in subscribers(host, hook):
        reply = call(host, ext, make(_as_tuple(messages)), host.host_context())
        value = getattr(reply, "value", None)
        if isinstance(value, MessagesResult):
            messages = list(value.messages)
    yield step_at("hook", hook)
    return messages


def _provider(host: HostState, run: RunState, llm: list[Message]) -> Steps[Mapping[str, JSON]]:
    request = host.provider.request(llm, host.store.header.id)
    roles = tuple(role_of(m) for m in llm)
    turn = run.turn_index if run.turn_index is not None else 0
    host.log.requests.append(
        ProviderRequestRecord(
            roles=roles,
            messages=tuple(llm),
            tokens=request.tokens,
            turn_index=turn,
            leaf_id=host.store.leaf_id,
        )
    )
    reply = host.provider.respond(request, host.model)
    yield record(host, "message_start", role="assistant")
    streamed = not run.aborted  # aborted in message_start: nothing has streamed yet
    yield step_at("pause", "streaming")
    if run.aborted:
        built = aborted_partial(reply, host.model, host.clock(), streamed=streamed)
    else:
        built = assistant_message(reply, host.model, host.clock())
    message = _with_run_details(host, built)
    yield record(host, "message_end", role="assistant", stopReason=message["stopReason"])
    entry = host.store.message(message)
    run.last_entry_id = entry.id
    yield step_at("persist", entry.type)
    return message


def _with_run_details(host: HostState, message: Mapping[str, JSON]) -> Mapping[str, JSON]:
    """Pi 1.x records the requested thinking level and the request's duration (0: the model
    host has no wall clock) on every reply."""
    if not host.settings.profile.replies_record_run_details:
        return message
    return {**message, "durationMs": 0, "thinkingLevel": host.settings.thinking_level}


# -- the end of a turn -------------------------------------------------------------------------


def finish_turn(host: HostState, message: Mapping[str, JSON]) -> Steps[bool]:
    """``turn_end``: chain the handlers, commit the drafts, honour ``continue`` only with
    runnable context, then append the held custom messages."""
    run = _run(host)
    index = run.turn_index if run.turn_index is not None else 0
    outcome = outcome_of(message)

    def event(drafts: tuple[Any, ...]) -> TurnEnd:
        return TurnEnd(
            message=message,
            outcome=outcome,
            entries=drafts,
            pending_messages=host.queues.pending_messages(),
            turn_index=index,
        )

    boundary = chain(host, "turn_end", event, turnIndex=index, outcome=outcome)
    yield step_at("hook", "turn_end")
    yield from commit(host, boundary.entries)
    continued = boundary.continue_ and message.get("stopReason") not in UNFINISHED
    if continued and not can_continue(host):
        error(
            host,
            "turn_end",
            BOUNDARY,
            "turn_end requested continuation without runnable model context",
        )
        continued = False
    yield from flush_held(host)
    return continued


def flush_held(host: HostState) -> Steps[None]:
    """Held ``sendMessage`` customs: appended with no extension message events."""
    for item in host.queues.take_held():
        entry = host.store.message(item.message)
        record_delivery(host, item, entry)
        yield step_at("persist", entry.type)
