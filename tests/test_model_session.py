"""The model session's agent loop, queues, aborts, recovery and session operations
(pi-host §3–§8, §11): each test names the host rule it pins."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from attrs import evolve
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.adapter import LifecycleExtension
from pictx_fsm.extensions.pi_context.texts import WIPE_MEMORY_COMMAND, WIPE_MEMORY_TOOL
from pictx_fsm.host.effects import (
    AbortRun,
    BoundaryResult,
    CancelResult,
    ContextEditDraft,
    CustomDraft,
    CustomMessageDraft,
    HookResult,
    MessagesResult,
    Notify,
    SendMessage,
    ToolResult,
    TreeSummaryResult,
)
from pictx_fsm.host.events import (
    AgentBeforeSettle,
    Command,
    HookEvent,
    HostContext,
    ModelInfo,
    SessionShutdown,
    SessionStart,
    ToolCall,
    TurnEnd,
)
from pictx_fsm.host.extension import HOST_HOOKS, Reply
from pictx_fsm.hosts.model import (
    OVERLOADED,
    AgentBusyError,
    BaseExtension,
    Call,
    CompactionSettings,
    HostSettings,
    LengthStop,
    ModelSession,
    Overflow,
    ProviderError,
    RetrySettings,
    ScriptedProvider,
    Text,
    Tools,
)
from pictx_fsm.hosts.model.compaction import OVERFLOW_RECOVERY_FAILED
from pictx_fsm.hosts.model.settings import FAUX_MODEL
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.session.tree import SessionTree

Answer = Callable[[HookEvent, HostContext], Reply]


class Recorder(BaseExtension):
    """Sees every typed hook with its ``ctx``; answers with ``answer``."""

    hooks = HOST_HOOKS

    def __init__(self, answer: Answer | None = None, name: str = "recorder") -> None:
        self.name = name
        self.answer = answer or (lambda event, ctx: None)
        self.seen: list[tuple[HookEvent, HostContext]] = []
        self.bound: list[SessionTree] = []

    def bind(self, tree: SessionTree) -> None:
        self.bound.append(tree)

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        self.seen.append((event, ctx))
        return self.answer(event, ctx)

    def events(self, kind: type[Any]) -> list[Any]:
        return [event for event, _ in self.seen if isinstance(event, kind)]


def on(hook: str, make: Callable[[HookEvent], Reply], *, times: int = 1) -> Answer:
    """Answer ``hook`` with ``make(event)`` the first ``times`` times, else nothing."""
    count = [0]

    def answer(event: HookEvent, ctx: HostContext) -> Reply:
        if hook != type(event).HOOK or count[0] >= times:
            return None
        count[0] += 1
        return make(event)

    return answer


def boundary(*drafts: Any, more: bool = False, keep: bool = True) -> Callable[[HookEvent], Reply]:
    def make(event: HookEvent) -> Reply:
        incoming = tuple(getattr(event, "entries", ())) if keep else ()
        value = BoundaryResult(entries=(*incoming, *drafts), continue_=more)
        return HookResult(hook=type(event).HOOK, value=value)

    return make


def kinds(entries: Any) -> list[str]:
    """``type`` plus role or customType: a readable signature of entries in order."""
    out = []
    for entry in entries:
        obj = entry.to_json()
        detail = obj.get("customType") or (obj.get("message") or {}).get("role")
        out.append(f"{obj['type']}:{detail}" if detail else obj["type"])
    return out


def after_prompt(session: ModelSession) -> list[str]:
    """Kinds of the entries after the last prompt's user message, in file order."""
    prompt_id = [d.entry_id for d in session.log.deliveries if d.kind == "prompt"][-1]
    ids = [e.id for e in session.entries]
    return kinds(session.entries[ids.index(prompt_id) + 1 :])


def hooks(session: ModelSession, *names: str) -> list[str]:
    wanted = set(names)
    return [r.name for r in session.log.events if r.name in wanted]


def run(session: ModelSession, text: str = "go") -> ModelSession:
    session.prompt(text)
    session.run_until_idle()
    return session


MARKER = CustomDraft(custom_type="test/marker", data={"n": 1})
BOOT = CustomMessageDraft(custom_type="test/boot", content="BOOT", display=False)
PARALLEL = Tools(
    calls=[
        Call(name="echo", arguments={"text": "A", "ms": 40}, id="call_A"),
        Call(name="echo", arguments={"text": "B", "ms": 5}, id="call_B"),
    ]
)


# -- turn_end drafts, continue, invalid drafts -------------------------------------------------


def test_turn_end_drafts_follow_the_last_tool_result_in_draft_order() -> None:
    # Given a parallel batch whose second call finishes first, and drafts at turn_end
    ext = Recorder(on("turn_end", boundary(MARKER, BOOT)))
    session = ModelSession([ext], provider=ScriptedProvider([PARALLEL, Text(text="done")]))
    # When the run settles
    run(session)
    # Then results are stored in call order and the drafts follow them, in draft order
    assert after_prompt(session) == [
        "message:assistant",
        "message:toolResult",
        "message:toolResult",
        "custom:test/marker",
        "custom_message:test/boot",
        "message:assistant",
    ]
    results = [e for e in session.entries if kinds([e]) == ["message:toolResult"]]
    assert [e.message.tool_call_id for e in results] == ["call_A", "call_B"]  # type: ignore[union-attr]


def test_tool_completions_arrive_in_completion_order_before_the_stored_results() -> None:
    # Given echo A (40 ms) and echo B (5 ms) in one batch
    session = run(ModelSession(provider=ScriptedProvider([PARALLEL, Text()])))
    # Then all starts come first, B completes before A, and results persist afterwards
    names = [
        (r.name, r.detail.get("toolCallId"))
        for r in session.log.events
        if r.name.startswith("tool_")
        or (r.name == "message_start" and r.detail["role"] == "toolResult")
    ]
    assert names == [
        ("tool_execution_start", "call_A"),
        ("tool_call", "call_A"),
        ("tool_execution_start", "call_B"),
        ("tool_call", "call_B"),
        ("tool_execution_update", "call_B"),
        ("tool_result", "call_B"),
        ("tool_execution_end", "call_B"),
        ("tool_execution_update", "call_A"),
        ("tool_result", "call_A"),
        ("tool_execution_end", "call_A"),
        ("message_start", None),
        ("message_start", None),
    ]


def test_continue_after_a_text_turn_runs_one_more_turn_in_the_same_run() -> None:
    # Given turn_end answers a text-only turn with a custom message and continue
    ext = Recorder(on("turn_end", boundary(MARKER, BOOT, more=True)))
    session = run(
        ModelSession([ext], provider=ScriptedProvider([Text(text="one"), Text(text="two")]))
    )
    # Then a second turn follows in the same low-level run and the boot goes out as user
    assert hooks(session, "agent_start", "turn_start") == [
        "agent_start",
        "turn_start",
        "turn_start",
    ]
    assert [r.detail["turnIndex"] for r in session.log.events if r.name == "turn_start"] == [0, 1]
    assert session.log.requests[-1].roles == ("system", "user", "assistant", "user")


def test_continue_without_runnable_context_is_refused_but_drafts_commit() -> None:
    # Given turn_end returns only a custom entry and continue after a text-only turn
    ext = Recorder(on("turn_end", boundary(MARKER, more=True)))
    session = run(ModelSession([ext], provider=ScriptedProvider([Text(text="only")])))
    # Then Pi's refusal is recorded, the marker is committed, and no second request is made
    assert [(e.extension, e.error) for e in session.log.errors] == [
        ("<boundary>", "turn_end requested continuation without runnable model context")
    ]
    assert after_prompt(session) == ["message:assistant", "custom:test/marker"]
    assert len(session.log.requests) == 1


def test_one_invalid_draft_voids_every_draft_and_the_continue_flag() -> None:
    # Given a first extension proposes a boot plus an edit of an unknown entry, and continue
    bad = ContextEditDraft(target_id="no-such-entry", replacement=None)
    first = Recorder(on("turn_end", boundary(BOOT, bad, more=True)), name="first")
    second = Recorder(name="second")
    session = run(ModelSession([first, second], provider=ScriptedProvider([Text(text="a")])))
    # Then the error names the first extension, the second sees nothing, nothing commits
    assert [(e.extension, e.error) for e in session.log.errors] == [
        ("first", "Invalid boundary entries: Entry no-such-entry not found")
    ]
    assert second.events(TurnEnd)[0].entries == ()
    assert after_prompt(session) == ["message:assistant"]
    assert len(session.log.requests) == 1


def test_returned_entries_replace_the_accumulated_list() -> None:
    # Given a first extension drafts a marker and a second one returns only its own boot
    first = Recorder(on("turn_end", boundary(MARKER)), name="first")
    second = Recorder(on("turn_end", boundary(BOOT, keep=False)), name="second")
    session = run(ModelSession([first, second], provider=ScriptedProvider([Text(text="a")])))
    # Then the second saw the marker, and only the boot is committed
    assert second.events(TurnEnd)[0].entries == (MARKER,)
    assert after_prompt(session) == ["message:assistant", "custom_message:test/boot"]


def test_an_extension_error_is_recorded_and_the_chain_goes_on() -> None:
    # Given an extension that raises on turn_end before one that drafts
    def explode(event: HookEvent, ctx: HostContext) -> Reply:
        if isinstance(event, TurnEnd):
            raise ValueError("boom")
        return None

    later = Recorder(on("turn_end", boundary(MARKER)), name="later")
    session = run(
        ModelSession([Recorder(explode, name="broken"), later], provider=ScriptedProvider([Text()]))
    )
    # Then the error is recorded and the later extension's draft still commits
    assert [(e.event, e.extension, e.error) for e in session.log.errors] == [
        ("turn_end", "broken", "ValueError: boom")
    ]
    assert after_prompt(session) == ["message:assistant", "custom:test/marker"]


def test_before_settle_continue_starts_a_new_low_level_run_at_turn_zero() -> None:
    # Given agent_before_settle answers once with a boot and continue
    ext = Recorder(on("agent_before_settle", boundary(MARKER, BOOT, more=True)))
    session = run(ModelSession([ext], provider=ScriptedProvider([Text(text="1"), Text(text="2")])))
    # Then agent_start fires again, turns restart at 0, and a second settle boundary follows
    assert hooks(session, "agent_start", "turn_start", "agent_before_settle", "agent_settled") == [
        "agent_start",
        "turn_start",
        "agent_before_settle",
        "agent_start",
        "turn_start",
        "agent_before_settle",
        "agent_settled",
    ]
    assert [r.detail["turnIndex"] for r in session.log.events if r.name == "turn_start"] == [0, 0]
    assert hooks(session, "input", "before_agent_start") == ["input", "before_agent_start"]


def test_before_settle_continue_without_runnable_context_is_refused() -> None:
    # Given agent_before_settle asks to continue with nothing runnable
    ext = Recorder(on("agent_before_settle", boundary(more=True)))
    session = run(ModelSession([ext], provider=ScriptedProvider([Text()])))
    # Then Pi's refusal is recorded and the run settles
    assert [e.error for e in session.log.errors] == [
        "agent_before_settle requested continuation without runnable model context"
    ]
    assert hooks(session, "agent_start") == ["agent_start"]


# -- queues ------------------------------------------------------------------------------------


def slow_tool(ms: int = 300) -> Tools:
    return Tools(calls=[Call(name="echo", arguments={"text": "work", "ms": ms})])


def test_prompt_while_running_throws_already_processing() -> None:
    # Given a run waiting on a slow tool
    session = ModelSession(provider=ScriptedProvider([slow_tool(), Text()]))
    session.prompt("start")
    session.run_until(lambda step: step.name == "tools_running")
    # When another prompt arrives without a streaming behaviour / Then Pi's error is raised
    with pytest.raises(AgentBusyError, match="Agent is already processing"):
        session.prompt("again")
    assert [r.detail.get("text") for r in session.log.events if r.name == "input"] == [
        "start",
        "again",
    ]


def test_steer_goes_out_at_the_next_turn_and_follow_up_after_the_agent_would_stop() -> None:
    # Given a steer and a follow-up queued while a tool runs
    session = ModelSession(provider=ScriptedProvider([slow_tool(), Text(text="s"), Text(text="f")]))
    session.prompt("start")
    session.run_until(lambda step: step.name == "tools_running")
    session.follow_up("FOLLOW")
    session.steer("STEER")
    session.run_until_idle()
    # Then the steer is the user message of turn 1 (after the tool result), the follow-up of
    # turn 2, all in one low-level run
    assert after_prompt(session) == [
        "message:assistant",
        "message:toolResult",
        "message:user",
        "message:assistant",
        "message:user",
        "message:assistant",
    ]
    assert [d.text for d in session.log.deliveries if d.kind != "prompt"] == ["STEER", "FOLLOW"]
    assert hooks(session, "agent_start") == ["agent_start"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 99)), min_size=1, max_size=6))
def test_every_queued_message_is_delivered_exactly_once_in_order(
    queued: list[tuple[bool, int]],
) -> None:
    # Given any mix of steers and follow-ups queued while a tool runs
    session = ModelSession(provider=ScriptedProvider([slow_tool()]))
    session.prompt("start")
    session.run_until(lambda step: step.name == "tools_running")
    texts = [(steer, f"{'S' if steer else 'F'}{i}-{n}") for i, (steer, n) in enumerate(queued)]
    for steer, text in texts:
        (session.steer if steer else session.follow_up)(text)
    # When the run settles
    session.run_until_idle()
    # Then each is delivered once: all steers (in order) before all follow-ups (in order)
    delivered = [d.text for d in session.log.deliveries if d.kind in ("steer", "follow_up")]
    expected = [t for s, t in texts if s] + [t for s, t in texts if not s]
    assert delivered == expected
    assert session.pending_messages == 0


def test_has_pending_messages_counts_queued_user_texts_until_their_message_start() -> None:
    # Given a follow-up queued during a tool, seen by a recording extension
    ext = Recorder()
    session = ModelSession([ext], provider=ScriptedProvider([slow_tool(), Text()]))
    session.prompt("start")
    session.run_until(lambda step: step.name == "tools_running")
    session.follow_up("later")
    session.send_message("test/aside", "aside")  # custom messages never count
    session.run_until_idle()
    # Then ctx.hasPendingMessages holds from the queueing until the follow-up's message_start
    # (turn 1 answers the tool result, turn 2 delivers the follow-up)
    starts = [c.has_pending_messages for e, c in ext.seen if type(e).HOOK == "turn_start"]
    assert starts == [False, True, True]
    assert ext.seen[-1][1].has_pending_messages is False
    delivered = [r.pending for r in session.log.events if r.detail.get("role") == "user"]
    assert delivered == [False, False, False, False]


def test_held_send_message_is_appended_after_the_turn_end_drafts() -> None:
    # Given a custom message sent while a tool runs, and drafts at turn_end
    ext = Recorder(on("turn_end", boundary(MARKER)))
    session = ModelSession([ext], provider=ScriptedProvider([slow_tool(), Text()]))
    session.prompt("start")
    session.run_until(lambda step: step.name == "tools_running")
    session.send_message("test/aside", "ASIDE")
    session.run_until_idle()
    # Then it is counted as pending at turn_end and lands after the drafts, with no events
    assert ext.events(TurnEnd)[0].pending_messages == 1
    assert after_prompt(session)[:4] == [
        "message:assistant",
        "message:toolResult",
        "custom:test/marker",
        "custom_message:test/aside",
    ]
    custom_events = [r for r in session.log.events if r.detail.get("role") == "custom"]
    assert custom_events == []


class EarlySender(BaseExtension):
    """Sends one custom message before the first prompt (as a root boot is)."""

    @property
    def commands(self) -> Mapping[str, Any]:
        effect = SendMessage(custom_type="test/early", content="EARLY", display=False)
        return {"send": lambda args, ctx: HookResult(hook="command", effects=(effect,))}


def test_an_unchanged_conversation_keeps_the_system_message_in_transcript_order() -> None:
    # Given a custom message appended before the first prompt declares the system message,
    # and a context handler that leaves the conversation alone
    session = ModelSession(
        [EarlySender(), Recorder()], provider=ScriptedProvider([Text(text="ok")])
    )
    session.command("send")
    # When the prompt runs
    run(session)
    # Then the provider sees the transcript order: the early message before the system message
    # (Pi's restoreSystemMessages keeps every system message in place)
    assert session.log.requests[0].roles[:3] == ("user", "system", "user")


def test_a_changed_conversation_gets_the_current_system_message_as_its_one_head() -> None:
    # Given the same early message, and a context handler that returns a new list
    def reversed_list(event: HookEvent) -> Reply:
        messages = tuple(reversed(getattr(event, "messages", ())))
        return HookResult(hook="context", value=MessagesResult(messages=messages))

    ext = Recorder(on("context", reversed_list))
    session = ModelSession([EarlySender(), ext], provider=ScriptedProvider([Text(text="ok")]))
    session.command("send")
    # When the prompt runs
    run(session)
    # Then the folded system message leads, followed by the handler's list
    request = session.log.requests[0]
    assert request.roles[0] == "system"
    assert [m.get("role") for m in request.messages[1:]] == ["user", "user"]
    assert "EARLY" in str(request.messages[-1])


def test_send_message_while_idle_is_appended_at_once() -> None:
    # Given an idle session / When an extension command sends a custom message
    class Sender(BaseExtension):
        @property
        def commands(self) -> Mapping[str, Any]:
            effect = SendMessage(custom_type="test/sent", content="hi", display=False)
            return {"send": lambda args, ctx: HookResult(hook="command", effects=(effect,))}

    session = ModelSession([Sender()])
    session.command("send")
    # Then the custom_message is the new leaf and no run starts
    assert kinds(session.entries)[-1] == "custom_message:test/sent"
    assert session.is_idle


def test_next_turn_message_goes_out_after_the_next_prompt() -> None:
    # Given a nextTurn custom message queued while idle
    session = ModelSession(provider=ScriptedProvider([Text()]))
    session.send_message("test/next", "NEXT", deliver_as="nextTurn")
    # When a prompt runs / Then the message follows the user message
    run(session)
    assert after_prompt(session)[:1] == ["custom_message:test/next"]


def test_a_triggering_send_message_while_idle_starts_a_run_without_input() -> None:
    # Given an idle session
    session = ModelSession(provider=ScriptedProvider([Text(text="answer")]))
    # When a custom message asks for a turn
    session.send_message("test/ping", "PING", trigger_turn=True)
    session.run_until_idle()
    # Then a run answers it, with no input and no before_agent_start
    assert hooks(session, "input", "before_agent_start", "agent_start") == ["agent_start"]
    assert kinds(session.entries)[-2:] == ["custom_message:test/ping", "message:assistant"]


# -- aborts ------------------------------------------------------------------------------------


def test_abort_while_streaming_keeps_the_partial_reply_and_skips_before_settle() -> None:
    # Given a long reply being streamed
    session = ModelSession(provider=ScriptedProvider([Text(text="word " * 40)]))
    session.prompt("long")
    session.run_until(lambda step: step.name == "streaming")
    # When the user aborts
    session.abort()
    session.run_until_idle()
    # Then the partial reply is persisted as aborted, turn_end says aborted, no settle boundary
    reply = session.entries[-1].message.raw  # type: ignore[union-attr]
    assert (reply["stopReason"], reply["errorMessage"]) == ("aborted", "Request was aborted")
    assert 0 < len(reply["content"][0]["text"]) < len("word " * 40)
    assert hooks(session, "turn_end", "agent_end", "agent_before_settle", "agent_settled") == [
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    assert [r.detail["outcome"] for r in session.log.events if r.name == "turn_end"] == ["aborted"]


def test_abort_during_a_tool_fails_it_and_the_next_turn_never_reaches_the_provider() -> None:
    # Given a slow echo running
    session = ModelSession(provider=ScriptedProvider([slow_tool(5000), Text()]))
    session.prompt("go")
    session.run_until(lambda step: step.name == "tools_running")
    # When the user aborts
    session.abort()
    session.run_until_idle()
    # Then the tool fails, turn 1 records the aborted operation without a request (d2)
    assert after_prompt(session) == ["message:assistant", "message:toolResult", "message:assistant"]
    result, error = session.entries[-2].message.raw, session.entries[-1].message.raw  # type: ignore[union-attr]
    assert (result["isError"], result["content"][0]["text"]) == (True, "echo aborted")
    assert (error["stopReason"], error["errorMessage"]) == ("error", "This operation was aborted")
    assert len(session.log.requests) == 1
    assert [r.detail["outcome"] for r in session.log.events if r.name == "turn_end"] == [
        "completed",
        "error",
    ]
    assert "agent_before_settle" not in session.log.event_names()


def test_abort_run_effect_cancels_the_request_being_built() -> None:
    # Given an extension that aborts from context_with_system (lifecycle R68)
    ext = Recorder(
        on(
            "context_with_system",
            lambda e: HookResult(hook="context_with_system", effects=(AbortRun(),)),
        )
    )
    session = run(ModelSession([ext], provider=ScriptedProvider([Text()])))
    # Then no provider request is made, the turn ends aborted-by-signal, and nothing settles
    assert session.log.requests == []
    turn_end = ext.events(TurnEnd)[0]
    assert turn_end.message["errorMessage"] == "This operation was aborted"
    assert [c.signal_aborted for e, c in ext.seen if isinstance(e, TurnEnd)] == [True]
    assert "agent_before_settle" not in session.log.event_names()


# -- provider errors ---------------------------------------------------------------------------


def small_model(window: int) -> HostSettings:
    return HostSettings(
        model=evolve(FAUX_MODEL, context_window=window),
        compaction=CompactionSettings(keep_recent_tokens=10, reserve_tokens=0),
    )


def warm(session: ModelSession, count: int) -> None:
    for n in range(count):
        run(session, f"question {n} " + "context " * 20)


def test_overflow_is_hidden_compacted_and_retried_once() -> None:
    # Given warm turns, then an overflow error, then a good reply
    session = ModelSession(
        provider=ScriptedProvider(
            [Text(text="a " * 30), Text(text="b " * 30), Overflow(), Text(text="ok")]
        ),
        settings=HostSettings(compaction=CompactionSettings(keep_recent_tokens=10)),
    )
    warm(session, 3)
    # Then the error is hidden, a compaction (reason overflow) is written, and one retry follows
    assert after_prompt(session) == [
        "message:assistant",
        "context_edit",
        "compaction",
        "message:assistant",
    ]
    before = [r.detail for r in session.log.events if r.name == "session_before_compact"]
    assert before == [{"reason": "overflow", "willRetry": True}]
    assert hooks(session, "agent_start")[-2:] == ["agent_start", "agent_start"]


def test_a_second_overflow_in_the_chain_gives_up_without_another_compaction() -> None:
    # Given an overflow, a compaction, and an overflow again on the retry
    session = ModelSession(
        provider=ScriptedProvider([Text(text="a " * 30), Overflow(), Overflow()]),
        settings=HostSettings(compaction=CompactionSettings(keep_recent_tokens=10)),
    )
    warm(session, 2)
    # Then Pi reports the failed recovery and settles with the error (outcome error)
    assert hooks(session, "session_before_compact", "session_compact_failed") == [
        "session_before_compact",
        "session_compact_failed",
    ]
    settle = [r.detail["outcome"] for r in session.log.events if r.name == "agent_before_settle"]
    assert settle[-1] == "error"
    assert after_prompt(session)[-1] == "message:assistant"


def test_pi_host_continue_after_a_failed_overflow_recovery_runs_the_queued_follow_up() -> None:
    # Given an overflow, its compact-and-retry overflowing again, and a follow-up queued
    # while the run was under way
    session = ModelSession(
        provider=ScriptedProvider([Text(text="a " * 30), Overflow(), Overflow(), Text(text="ok")]),
        settings=HostSettings(compaction=CompactionSettings(keep_recent_tokens=10)),
    )
    warm(session, 1)
    session.prompt("question " + "context " * 20)
    session.run_until(lambda step: step.name == "agent_start")
    session.follow_up("and then")
    # When the failed recovery leaves the error reply last and Pi calls agent.continue()
    session.run_until_idle()
    # Then pi-agent-core's Agent.continue() runs the follow-up as its prompt, right after
    # the error (no context-only turn re-sending what overflowed), and the run settles
    follow_up = next(d for d in session.log.deliveries if d.kind == "follow_up")
    ids = [e.id for e in session.entries]
    before = session.entries[ids.index(follow_up.entry_id) - 1]
    assert isinstance(before, MessageEntry) and before.message.raw["stopReason"] == "error"
    assert session.is_idle and hooks(session, "agent_settled")[-1:] == ["agent_settled"]


def test_pi_host_a_delivered_follow_up_earns_its_own_compact_and_retry() -> None:
    # Given the same failed recovery, and the follow-up's own request overflowing too
    session = ModelSession(
        provider=ScriptedProvider([Text(text="a " * 30), Overflow(), Overflow(), Overflow()]),
        settings=HostSettings(compaction=CompactionSettings(keep_recent_tokens=10)),
    )
    warm(session, 1)
    session.prompt("question " + "context " * 20)
    session.run_until(lambda step: step.name == "agent_start")
    session.follow_up("and then")
    session.run_until_idle()
    # Then the follow-up's message_start reset Pi's _overflowRecoveryAttempted: its overflow
    # is hidden for a recovery of its own (one compact-and-retry per user message, pi-host
    # §7 e), not refused as a second attempt
    failures = [
        r.detail["errorMessage"] for r in session.log.events if r.name == "session_compact_failed"
    ]
    assert failures[0] == OVERFLOW_RECOVERY_FAILED and failures[1:] != [OVERFLOW_RECOVERY_FAILED]
    assert kinds(session.entries[-3:]) == ["message:user", "message:assistant", "context_edit"]


def test_a_cancelled_overflow_compaction_settles_without_a_host_retry() -> None:
    # Given an extension that cancels automatic compactions (as the lifecycle does, R62)
    ext = Recorder(
        on(
            "session_before_compact",
            lambda e: HookResult(hook="session_before_compact", value=CancelResult()),
        )
    )
    session = ModelSession(
        [ext],
        provider=ScriptedProvider([Text(text="a " * 30), Overflow()]),
        settings=HostSettings(compaction=CompactionSettings(keep_recent_tokens=10)),
    )
    warm(session, 2)
    # Then only the hiding edit is written, and the run settles on the error
    assert after_prompt(session) == ["message:assistant", "context_edit"]
    assert ext.events(AgentBeforeSettle)[-1].outcome == "error"
    assert len(session.log.requests) == 2


def threshold_host(window: int = 1_000, reserve: int = 400) -> HostSettings:
    """A window whose compaction threshold (window − reserve) one long reply crosses."""
    return HostSettings(
        model=evolve(FAUX_MODEL, context_window=window),
        compaction=CompactionSettings(keep_recent_tokens=10, reserve_tokens=reserve),
    )


def compaction_reasons(session: ModelSession) -> list[tuple[str, bool]]:
    events = [r.detail for r in session.log.events if r.name == "session_before_compact"]
    return [(d["reason"], d["willRetry"]) for d in events]


def test_a_reply_crossing_the_threshold_mid_run_is_compacted_before_the_next_turn() -> None:
    # Given a long reply (~700 tokens, threshold 600) that calls a tool, then a short answer
    long_call = Tools(calls=[Call(name="echo", arguments={"text": "x"})], text="w " * 1_400)
    session = ModelSession(
        provider=ScriptedProvider([long_call, Text(text="ok")]), settings=threshold_host()
    )
    # When one prompt runs
    run(session)
    # Then Pi's prepareNextTurn check compacts between that turn's end and the next turn's
    # start (reason threshold, no retry), before the second request
    names = hooks(session, "turn_end", "session_before_compact", "turn_start")
    assert names[:4] == ["turn_start", "turn_end", "session_before_compact", "turn_start"]
    assert compaction_reasons(session)[0] == ("threshold", False)
    assert "compaction" in after_prompt(session)[:4]


def test_a_reply_crossing_the_threshold_at_the_end_of_a_run_is_compacted_after_it() -> None:
    # Given one long text reply that ends the run above the threshold
    session = ModelSession(
        provider=ScriptedProvider([Text(text="w " * 1_400)]), settings=threshold_host()
    )
    # When one prompt runs
    run(session)
    # Then the post-run check compacts once after agent_end (reason threshold, no retry)
    names = hooks(session, "agent_end", "session_before_compact", "turn_start")
    assert names == ["turn_start", "agent_end", "session_before_compact"]
    assert compaction_reasons(session) == [("threshold", False)]


def test_replies_below_the_threshold_are_never_compacted() -> None:
    # Given short replies on the same window, one of them with a tool call
    short_call = Tools(calls=[Call(name="echo", arguments={"text": "x"})], text="short")
    session = ModelSession(
        provider=ScriptedProvider([short_call, Text(text="ok"), Text(text="again")]),
        settings=threshold_host(),
    )
    # When two prompts run
    run(run(session), "more")
    # Then no check point (next turn, end of run, before the prompt) compacts
    assert compaction_reasons(session) == []


def test_the_brain_overflows_when_a_request_exceeds_the_window_without_using_the_script() -> None:
    # Given a tiny window and a scripted reply
    session = ModelSession(provider=ScriptedProvider([Text(text="kept")]), settings=small_model(10))
    run(session)
    # Then the provider answered with an overflow error and the script is untouched
    assert session.log.requests[0].tokens > 10
    assert session.provider.pending == 1
    first_reply = next(e for e in session.entries if kinds([e]) == ["message:assistant"])
    assert first_reply.message.error_message.startswith("prompt is too long:")  # type: ignore[union-attr]


def test_retryable_errors_are_hidden_and_retried_up_to_max_retries() -> None:
    # Given two overloaded errors then success, with two retries allowed
    session = ModelSession(
        provider=ScriptedProvider([ProviderError(), ProviderError(), Text(text="third")]),
        settings=HostSettings(retry=RetrySettings(max_retries=2)),
    )
    run(session)
    # Then each failure is hidden by a context_edit and a new low-level run retries
    assert after_prompt(session) == [
        "message:assistant",
        "context_edit",
        "message:assistant",
        "context_edit",
        "message:assistant",
    ]
    assert hooks(session, "agent_start") == ["agent_start"] * 3
    assert session.log.requests[-1].roles == ("system", "user")


def test_an_abort_during_the_retry_backoff_stops_the_run_without_before_settle() -> None:
    # Given a retryable error and the host waiting to retry
    session = ModelSession(provider=ScriptedProvider([ProviderError(), Text()]))
    session.prompt("go")
    session.run_until(lambda step: step.name == "retry_wait")
    # When the user aborts / Then no retry runs and the run settles at once
    session.abort()
    session.run_until_idle()
    assert hooks(session, "agent_start", "agent_before_settle", "agent_settled") == [
        "agent_start",
        "agent_settled",
    ]
    assert session.provider.pending == 1


def test_exhausted_retries_settle_with_the_error_left_in_context() -> None:
    # Given more overloaded errors than retries
    session = ModelSession(
        provider=ScriptedProvider([ProviderError(message=OVERLOADED)] * 3),
        settings=HostSettings(retry=RetrySettings(max_retries=1)),
    )
    run(session)
    # Then one retry is made and the last error stays
    assert after_prompt(session) == ["message:assistant", "context_edit", "message:assistant"]
    assert [r.detail["outcome"] for r in session.log.events if r.name == "agent_before_settle"] == [
        "error"
    ]


def test_a_non_retryable_error_is_not_retried() -> None:
    # Given an error text no retry pattern matches
    session = run(
        ModelSession(provider=ScriptedProvider([ProviderError(message="invalid api key")]))
    )
    # Then nothing is hidden and no second request is made
    assert after_prompt(session) == ["message:assistant"]
    assert len(session.log.requests) == 1


def test_a_length_stop_below_the_output_limit_is_hidden_and_compacted_like_an_overflow() -> None:
    # Given a reply cut short of the model's output limit (Pi's isRecoverableLength: found by
    # the generated differential runs against the real Pi)
    session = run(ModelSession(provider=ScriptedProvider([LengthStop(text="cut")])))
    # Then its turn completed, and the host hid it for an overflow compaction — which, with
    # nothing to cut in so small a session, never starts (no compaction event), so the run
    # ends there
    assert [r.detail["outcome"] for r in session.log.events if r.name == "turn_end"] == [
        "completed"
    ]
    hidden = session.entries[-1]
    assert hidden.type == "context_edit"
    assert session.tree.node(hidden.target_id).entry.message.stop_reason == "length"  # type: ignore[attr-defined,union-attr]
    assert not {"session_before_compact", "session_compact_failed"} & set(session.log.event_names())
    assert len(session.log.requests) == 1


# -- compaction --------------------------------------------------------------------------------


def test_a_cancelled_manual_compaction_writes_nothing() -> None:
    # Given a session with history and an extension that cancels /compact
    ext = Recorder(
        on("session_before_compact", lambda e: HookResult(hook="x", value=CancelResult()))
    )
    session = ModelSession([ext], provider=ScriptedProvider(), settings=small_model(200_000))
    warm(session, 2)
    count = len(session.entries)
    # When /compact runs / Then it is cancelled and the file is unchanged
    assert session.compact().status == "cancelled"
    assert len(session.entries) == count
    assert session.log.event_names()[-1] == "session_compact_failed"


def test_a_manual_compaction_writes_a_compaction_and_usage_is_unknown_until_a_reply() -> None:
    # Given a session with history
    ext = Recorder()
    session = ModelSession([ext], provider=ScriptedProvider(), settings=small_model(200_000))
    warm(session, 2)
    # When /compact runs
    outcome = session.compact()
    # Then a compaction entry is written, and ctx usage is null until the next reply
    assert outcome.status == "compacted"
    assert kinds(session.entries)[-1] == "compaction"
    run(session, "after")
    contexts = [c for e, c in ext.seen if type(e).HOOK in ("context", "agent_settled")]
    assert contexts[-2].usage is not None and contexts[-2].usage.tokens is None
    assert contexts[-1].usage is not None and contexts[-1].usage.tokens is not None


def test_nothing_to_compact_fails_without_asking_extensions() -> None:
    # Given a tiny session and Pi's default keepRecentTokens
    session = run(ModelSession(provider=ScriptedProvider([Text()])))
    # Then /compact fails at once: no session_before_compact
    assert session.compact().status == "nothing_to_compact"
    assert "session_before_compact" not in session.log.event_names()


# -- tree, fork, reload ------------------------------------------------------------------------


def two_turns() -> tuple[ModelSession, Recorder]:
    ext = Recorder()
    session = ModelSession([ext], provider=ScriptedProvider([Text(text="A1"), Text(text="A2")]))
    run(session, "U1")
    run(session, "U2")
    return session, ext


def entry_where(session: ModelSession, kind: str, index: int = 0) -> Entry:
    return [e for e in session.entries if kinds([e]) == [kind]][index]


def test_navigating_to_a_user_message_lands_on_its_parent_and_writes_nothing() -> None:
    # Given two turns
    session, _ = two_turns()
    u2 = entry_where(session, "message:user", 1)
    count = len(session.entries)
    # When the user navigates to U2 without a summary
    outcome = session.navigate(str(u2.id))
    # Then the leaf is A1 (U2's parent), U2's text returns to the editor, nothing is written
    assert session.leaf_id == u2.parent_id
    assert outcome.editor_text == "U2"
    assert len(session.entries) == count
    assert hooks(session, "session_before_tree", "session_tree") == [
        "session_before_tree",
        "session_tree",
    ]


def test_a_navigation_summary_writes_one_branch_summary_and_a_label() -> None:
    # Given two turns and an extension that supplies the summary
    supplied = HookResult(hook="session_before_tree", value=TreeSummaryResult(summary="S"))
    session, _ = two_turns()
    session._host.extensions.append(Recorder(on("session_before_tree", lambda e: supplied)))
    a1 = entry_where(session, "message:assistant", 0)
    # When navigating to A1 with a summary and a label
    session.navigate(str(a1.id), summarize=True, label="back")
    # Then exactly a branch_summary (child of A1) and its label are appended
    assert kinds(session.entries)[-2:] == ["branch_summary", "label"]
    summary = session.entries[-2]
    assert summary.parent_id == a1.id and summary.to_json()["summary"] == "S"


def test_an_empty_supplied_summary_writes_no_branch_summary() -> None:
    # Given two turns and an extension that suppresses the summary (R75: {summary: ""})
    supplied = HookResult(hook="session_before_tree", value=TreeSummaryResult(summary=""))
    session, _ = two_turns()
    session._host.extensions.append(Recorder(on("session_before_tree", lambda e: supplied)))
    a1 = entry_where(session, "message:assistant", 0)
    count = len(session.entries)
    # When navigating to A1 with a summary requested
    session.navigate(str(a1.id), summarize=True)
    # Then, as Pi's navigateTree (`if (summaryText)`), nothing is written; the leaf moves
    assert len(session.entries) == count
    assert session.leaf_id == a1.id


def test_a_cancelled_navigation_keeps_the_leaf() -> None:
    # Given an extension that cancels tree navigation
    session, _ = two_turns()
    session._host.extensions.append(
        Recorder(on("session_before_tree", lambda e: HookResult(hook="t", value=CancelResult())))
    )
    leaf = session.leaf_id
    # When navigating / Then the leaf does not move and session_tree never fires
    assert session.navigate(str(entry_where(session, "message:user").id)).cancelled
    assert session.leaf_id == leaf
    assert "session_tree" not in session.log.event_names()


def test_reload_reads_the_file_back_so_an_unpersisted_navigation_is_lost() -> None:
    # Given a navigation without summary (a leaf move in memory only)
    session, ext = two_turns()
    last = session.entries[-1].id
    session.navigate(str(entry_where(session, "message:assistant", 0).id))
    # When the session is reloaded from its JSONL
    session.reload()
    # Then the leaf is the last entry in file order and a fresh bind saw resume
    assert session.leaf_id == last
    starts = [e.reason for e in ext.events(SessionStart)]
    shutdowns = [e.reason for e in ext.events(SessionShutdown)]
    assert (starts, shutdowns) == (["startup", "resume"], ["resume"])
    assert len(ext.bound) == 2


def test_fork_writes_a_new_file_with_a_new_id_and_rebinds_extensions() -> None:
    # Given two turns
    session, ext = two_turns()
    original = session.session_file
    u2 = entry_where(session, "message:user", 1)
    # When forking before U2
    path = session.fork(str(u2.id))
    # Then the new file holds the path up to A1 with the same ids, parentSession set,
    # and the extensions saw shutdown{fork} then start{fork} on the new tree
    assert session.session_file == path != original
    assert session.tree.header.parent_session == original
    assert session.tree.header.id != session.files[original].tree.header.id
    assert [e.id for e in session.entries] == [
        e.id for e in session.files[original].tree.branch(u2.parent_id)
    ]
    assert [e.reason for e in ext.events(SessionShutdown)] == ["fork"]
    assert [e.reason for e in ext.events(SessionStart)] == ["startup", "fork"]
    assert ext.bound[-1] is session.tree


def test_switching_back_to_the_original_file_resumes_at_its_last_entry() -> None:
    # Given a fork
    session, _ = two_turns()
    original = session.session_file
    last = session.entries[-1].id
    session.fork(str(entry_where(session, "message:user", 1).id))
    # When switching back / Then the original file is current again, leaf at its last entry
    session.switch_session(original)
    assert (session.session_file, session.leaf_id) == (original, last)


def test_a_new_runtime_on_a_branch_without_messages_records_the_model_and_thinking_level() -> None:
    # Given a session not written yet, and a written one
    fresh = ModelSession()
    written, _ = two_turns()
    first = written.entries[0]
    # When the fresh one is resumed (a new, empty session at its path) and the written one is
    # forked at its first entry (the copy holds its model change, no message)
    fresh.reload()
    written.fork(str(first.id), "at")
    # Then each new runtime appended the model and the thinking level, as Pi's
    # createAgentSession does before any extension binds
    assert kinds(fresh.entries) == ["model_change", "thinking_level_change"]
    assert kinds(written.entries) == ["model_change", "model_change", "thinking_level_change"]
    # And a branch that holds messages and its thinking level gets nothing
    written.switch_session(str(written.tree.header.parent_session))
    assert kinds(written.entries[-2:]) == ["message:user", "message:assistant"]


def test_session_operations_need_an_idle_session() -> None:
    # Given a run in progress
    session = ModelSession(provider=ScriptedProvider([slow_tool()]))
    session.prompt("go")
    session.run_until(lambda step: step.name == "tools_running")
    # Then tree operations are refused
    with pytest.raises(AgentBusyError):
        session.fork(str(session.entries[0].id))
    with pytest.raises(AgentBusyError):
        session.reload()


def test_jsonl_round_trip_keeps_every_entry() -> None:
    # Given a session with tools and drafts
    ext = Recorder(on("turn_end", boundary(MARKER, BOOT)))
    session = run(ModelSession([ext], provider=ScriptedProvider([PARALLEL, Text()])))
    # When it is opened from its own JSONL
    copy = ModelSession(jsonl=session.jsonl())
    # Then the same entries are there and the leaf is the last one
    assert [e.to_json() for e in copy.entries] == [e.to_json() for e in session.entries]
    assert copy.leaf_id == session.entries[-1].id


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32))
def test_a_run_is_reproducible_from_its_seed(seed: int) -> None:
    # Given two sessions with the same seed, script and actions
    def play() -> str:
        session = ModelSession(
            provider=ScriptedProvider([PARALLEL, Text()]), rng=random.Random(seed)
        )
        return run(session).jsonl()

    # Then their files are identical
    assert play() == play()


# -- commands, model, the lifecycle adapter ----------------------------------------------------


class FakeRuntime:
    """The runtime's ``handle`` signature, answering tools and commands."""

    def __init__(self, tree: SessionTree) -> None:
        self.tree = tree
        self.events: list[HookEvent] = []

    def handle(self, event: HookEvent, ctx: HostContext | None = None) -> HookResult:
        self.events.append(event)
        if isinstance(event, ToolCall):
            return HookResult(
                hook="tool", value=ToolResult(payload={"status": "ok"}, terminate=True)
            )
        if isinstance(event, Command):
            notice = Notify(message=f"ran {event.name} {event.args}", level="info")
            return HookResult(hook="command", effects=(notice,))
        return HookResult(hook=type(event).HOOK)


def test_lifecycle_extension_binds_a_fresh_runtime_per_session_replacement() -> None:
    # Given the adapter over a fake runtime factory
    runtimes: list[FakeRuntime] = []

    def factory(tree: SessionTree) -> FakeRuntime:
        runtimes.append(FakeRuntime(tree))
        return runtimes[-1]

    ext = LifecycleExtension(factory)
    session = ModelSession([ext], provider=ScriptedProvider([Text()]))
    run(session)
    # When the session forks
    session.fork(str(entry_where(session, "message:user").id))
    # Then the old runtime got shutdown{fork} last, the new one starts with start{fork}
    assert len(runtimes) == 2 and runtimes[1].tree is session.tree
    assert runtimes[0].events[-1] == SessionShutdown(reason="fork")
    assert runtimes[1].events == [SessionStart(reason="fork")]
    assert {type(e).HOOK for e in runtimes[0].events} <= ext.hooks


def test_lifecycle_extension_forwards_tools_and_commands_to_the_runtime() -> None:
    # Given the adapter and a model that calls wipe_memory
    ext = LifecycleExtension(FakeRuntime)
    session = run(
        ModelSession([ext], provider=ScriptedProvider([Tools(calls=[Call(name=WIPE_MEMORY_TOOL)])]))
    )
    session.command(WIPE_MEMORY_COMMAND)
    # Then the tool result is the runtime's pretty JSON and terminates the batch
    result = entry_where(session, "message:toolResult")
    assert result.message.text() == '{\n  "status": "ok"\n}'  # type: ignore[union-attr]
    assert len(session.log.requests) == 1
    assert [n.message for n in session.log.notices] == [f"ran {WIPE_MEMORY_COMMAND} "]


def test_wipe_memory_command_is_refused_while_running() -> None:
    # Given a run in progress with the adapter loaded
    session = ModelSession(
        [LifecycleExtension(FakeRuntime)], provider=ScriptedProvider([slow_tool()])
    )
    session.prompt("go")
    session.run_until(lambda step: step.name == "tools_running")
    # Then /wipe-memory needs idle (Pi waits for idle)
    with pytest.raises(AgentBusyError):
        session.command(WIPE_MEMORY_COMMAND)


def test_set_model_appends_a_model_change_then_emits_model_select() -> None:
    # Given a recording extension
    ext = Recorder()
    session = ModelSession([ext])
    model = ModelInfo(provider="faux", id="faux-2", context_window=1000, max_tokens=100)
    # When the model changes
    session.set_model(model)
    # Then the entry is written first and the ctx reports the new model
    assert kinds(session.entries)[-1] == "model_change"
    event, ctx = ext.seen[-1]
    assert type(event).HOOK == "model_select" and ctx.model == model


def test_ctx_reports_model_window_and_host_usage() -> None:
    # Given a recording extension over one text turn
    ext = Recorder()
    run(ModelSession([ext], provider=ScriptedProvider([Text()])))
    # Then every ctx carries the model and a usage with the model's context window
    contexts = [c for _, c in ext.seen]
    assert all(c.model == FAUX_MODEL for c in contexts)
    assert all(c.usage is not None and c.usage.context_window == 200_000 for c in contexts)
    settled = contexts[-1].usage
    assert settled is not None and settled.tokens is not None and settled.tokens > 0


def test_the_lifecycle_runtime_resets_after_the_tool_batch_on_the_model() -> None:
    # Given pi-context's runtime plugged in through the adapter, and a model calling wipe_memory
    from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime

    ext = LifecycleExtension(lambda tree: LifecycleRuntime(tree, rng=random.Random(1)))
    provider = ScriptedProvider([Tools(calls=[Call(name=WIPE_MEMORY_TOOL)]), Text(text="fresh")])
    session = run(ModelSession([ext], provider=provider))
    # Then marker → boot → continuation follow the tool result and one more request runs
    assert after_prompt(session) == [
        "message:assistant",
        "message:toolResult",
        "custom:pi-context/reset-marker",
        "custom_message:pi-context/boot",
        "custom_message:pi-context/continuation",
        "message:assistant",
    ]
    assert session.log.errors == []
    assert session.log.requests[-1].roles == ("system", "user", "user")
