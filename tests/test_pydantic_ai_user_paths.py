"""Issue 25: what pydantic-ai users do around ``PiContext`` — small and local models, bad
settings, cancels and crashes, web servers running agents concurrently, streaming UIs,
pydantic-ai's own overflow error and context features — each item on a real ``Agent``
(``FunctionModel``/``TestModel``, offline), on every supported pydantic-ai."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import (
    AbstractCapability,
    CombinedCapability,
    ProcessHistory,
    WrapperCapability,
)
from pydantic_ai.exceptions import (
    ModelContextWindowExceededError,
    ModelHTTPError,
    UsageLimitExceeded,
)
from pydantic_ai.messages import (
    INTERRUPTED_TOOL_RETURN_CONTENT,
    ModelMessage,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage
from pydantic_ai_kit import agent_for, conversation, kinds, lifecycle, new_session, texts

from pictx_fsm import TOOL_SPECS, read_session
from pictx_fsm.audit import verify_chain
from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import audit_file
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    MARKER_TYPE,
    WIPE_MEMORY_TOOL,
)
from pictx_fsm.hosts.pydantic_ai import (
    CapabilityConflictError,
    LifecycleSettings,
    PiContext,
    PiSession,
    RequestCancelledError,
    SessionBusyError,
    SettingsError,
    WindowTooSmallError,
    audit_path_of,
)
from pictx_fsm.hosts.pydantic_ai.scripted import MODEL_NAME, ScriptedModel, overflow, text, tools
from pictx_fsm.hosts.pydantic_ai.serial import messages_json
from pictx_fsm.hosts.pydantic_ai.texts import NO_WINDOW

RESET = [MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE]
COMPACTION_HOOK = hasattr(AbstractCapability, "compact_history")
"""pydantic-ai ≥ 2.7x has native compaction (``compact_history``); 2.68 has none."""


def _never_called(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise AssertionError("the model was called")


# -- (1) a window not larger than the reserve ---------------------------------------------------


@pytest.mark.parametrize("window", [8192, 16_384, 16_700])
def test_item1_a_window_the_reserve_leaves_no_room_in_is_refused_before_any_request(
    window: int,
) -> None:
    # Given a small local model's window with the default reserve (16384 tokens)
    session = new_session()
    # When the capability is made / Then it is refused, naming both settings
    with pytest.raises(SettingsError) as refused:
        PiContext(session, context_window=window)
    message = str(refused.value)
    assert "PiContext.context_window" in message and "LifecycleSettings.reserve_tokens" in message
    # And nothing was sent or written: the session still holds only its pending root boot
    assert kinds(conversation(session)) == [BOOT_TYPE]


def test_item1_a_small_window_runs_with_a_reserve_that_fits_it() -> None:
    # Given an 8k model and a reserve of 2048 tokens
    session = new_session(config=lifecycle(reserve_tokens=2048))
    agent, model = agent_for(session, text("a", tokens=900), text("b", tokens=1800), window=8192)
    # When two prompts run
    agent.run_sync("one")
    agent.run_sync("two")
    # Then each got one request, and no window was reset
    assert len(model.requests) == 2 and MARKER_TYPE not in kinds(conversation(session))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    window=st.integers(1, 60_000),
    reserve=st.integers(0, 40_000),
    tokens=st.integers(0, 60_000),
)
def test_item1_any_window_and_reserve_is_refused_or_never_resets_in_a_loop(
    window: int, reserve: int, tokens: int
) -> None:
    # Given any window and reserve, and a model whose every reply reports `tokens` of input
    session = new_session(config=lifecycle(reserve_tokens=reserve))
    try:
        agent, model = agent_for(session, *[text(tokens=tokens)] * 60, window=window)
    except SettingsError as refused:  # Then either the settings are refused, by name
        assert "PiContext.context_window" in str(refused)
        return
    # Or the run ends (with its answer, or stopped at the second reset in a row): no loop
    with contextlib.suppress(WindowTooSmallError):
        agent.run_sync("go")
    assert len(model.requests) <= 2
    assert kinds(conversation(session)).count(MARKER_TYPE) <= 2


def test_item1_a_fresh_window_already_at_the_reserve_stops_the_run_after_two_resets() -> None:
    # Given a window that leaves room above the reserve for the lifecycle's own boot and
    # tools, but not for what this agent sends: every reply reports 9000 tokens of input
    session = new_session()
    agent, model = agent_for(session, *[text(tokens=9_000)] * 60, window=24_000)
    # When a prompt runs / Then the second automatic reset in a row stops it, saying why
    with pytest.raises(WindowTooSmallError, match=r"Lower the reserve"):
        agent.run_sync("go")
    assert len(model.requests) == 2  # not 50 and UsageLimitExceeded


# -- (2) bad settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"context_window": -5}, "PiContext.context_window must be positive"),
        ({"context_window": 0}, "PiContext.context_window must be positive"),
        ({"context_window": "200k"}, "PiContext.context_window must be a whole number"),
        ({"context_window": 200_000.0}, "PiContext.context_window must be a whole number"),
        ({"context_window": True}, "PiContext.context_window must be a whole number"),
        ({"context_window": 200_000, "max_tokens": 0}, "PiContext.max_tokens must be positive"),
        ({"context_window": 200_000, "max_tokens": "4k"}, "PiContext.max_tokens must be a whole"),
    ],
)
def test_item2_a_bad_capability_setting_is_refused_where_it_is_given(
    options: dict[str, Any], named: str
) -> None:
    session = new_session()
    with pytest.raises(SettingsError, match=named):
        PiContext(session, **options)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"reserve_tokens": "16k"}, "LifecycleSettings.reserve_tokens must be a whole number"),
        ({"reserve_tokens": -1}, "LifecycleSettings.reserve_tokens must not be negative"),
        ({"automatic_reset": "no"}, "LifecycleSettings.automatic_reset must be True or False"),
        ({"profile": "0.25"}, "LifecycleSettings.profile must be one of '0.25.0', '0.25.1'"),
        ({"notes_home": 5}, "LifecycleSettings.notes_home must be a path"),
    ],
)
def test_item2_a_bad_session_setting_is_refused_where_it_is_given(
    options: dict[str, Any], named: str
) -> None:
    with pytest.raises(SettingsError, match=named):
        LifecycleSettings(**options)


# -- (3) the reply is durable before any tool runs ---------------------------------------------


def _calls_in(path: Path) -> list[str]:
    """The tool call ids of the assistant messages in a session file."""
    ids = []
    for line in path.read_text().splitlines():
        message = json.loads(line).get("message") or {}
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                ids.append(block["id"])
    return ids


def test_item3_the_reply_is_in_the_session_file_before_any_of_its_tools_runs(
    tmp_path: Path,
) -> None:
    # Given a session file and a reply that calls only the user's own tool
    path = tmp_path / "s.jsonl"
    session = new_session(path)
    model = ScriptedModel([tools(("lookup", {"key": "k"})), text("done")], session)
    agent: Agent[None, str] = Agent(model.model, capabilities=[PiContext(session, 100_000)])
    seen: list[list[str]] = []

    @agent.tool_plain
    def lookup(key: str) -> str:
        """Look a key up."""
        seen.append(_calls_in(path))  # what a crash now would leave on disk
        return key

    # When it runs / Then the reply with its call was on disk while the tool ran
    agent.run_sync("go")
    assert seen == [["call_1"]]


def test_item3_after_a_cancel_and_a_resume_the_call_gets_pydantic_ais_interrupted_result(
    tmp_path: Path,
) -> None:
    # Given a reply whose tool (the user's own) is still running when the caller cancels
    path = tmp_path / "s.jsonl"
    session = new_session(path)
    model = ScriptedModel([tools(("slow", {}))], session)
    agent: Agent[None, str] = Agent(model.model, capabilities=[PiContext(session, 100_000)])
    started = asyncio.Event()

    @agent.tool_plain
    async def slow() -> str:
        """Take a long time."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    async def cancel_while_the_tool_runs() -> None:
        task = asyncio.create_task(agent.run("go"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_the_tool_runs())
    session.close()
    # When the file is opened again and the next prompt runs
    resumed = PiSession.open(path, rng=random.Random(2), config=session.config)
    agent2, model2 = agent_for(resumed, text("back"))
    agent2.run_sync("next")
    # Then the call is closed with pydantic-ai's interrupted result, an error result on file
    [result] = [e for e in conversation(resumed) if kinds([e]) == ["toolResult"]]
    assert result.message.raw["toolCallId"] == "call_1" and result.message.raw["isError"]
    assert result.message.text() == INTERRUPTED_TOOL_RETURN_CONTENT
    assert INTERRUPTED_TOOL_RETURN_CONTENT in texts(model2.requests[0].messages)
    assert [f.name for f in audit_file(path, session_checks()).findings if f.is_defect] == []


def test_item3_a_crash_while_the_tool_runs_leaves_the_call_for_the_resumed_history(
    tmp_path: Path,
) -> None:
    # Given the session file as a process death during the user's tool leaves it
    path = tmp_path / "s.jsonl"
    crashed = tmp_path / "crashed.jsonl"
    session = new_session(path)
    model = ScriptedModel([tools(("lookup", {"key": "k"})), text("done")], session)
    agent: Agent[None, str] = Agent(model.model, capabilities=[PiContext(session, 100_000)])

    @agent.tool_plain
    def lookup(key: str) -> str:
        """Look a key up."""
        crashed.write_bytes(path.read_bytes())
        return key

    agent.run_sync("go")
    # When it is opened / Then its history ends with the call closed as interrupted
    resumed = PiSession.open(crashed, rng=random.Random(3), config=session.config)
    closing = resumed.history()[-1]
    assert [p.part_kind for p in closing.parts] == ["tool-return"]
    assert closing.parts[0].outcome == "interrupted"


# -- (4) one run at a time per session ---------------------------------------------------------


def test_item4_a_second_concurrent_run_on_the_same_session_gets_session_busy_error() -> None:
    # Given two agents (two PiContexts) on one session, as two requests of a web server
    session = new_session()
    model = ScriptedModel([tools(("wait", {})), text("first"), text("second")], session)
    first: Agent[None, str] = Agent(model.model, capabilities=[PiContext(session, 100_000)])
    second: Agent[None, str] = Agent(model.model, capabilities=[PiContext(session, 100_000)])
    inside = asyncio.Event()
    release = asyncio.Event()

    @first.tool_plain
    async def wait() -> str:
        """Wait for the test."""
        inside.set()
        await release.wait()
        return "ok"

    async def both() -> tuple[str, BaseException | None]:
        running = asyncio.create_task(first.run("one"))
        await inside.wait()
        refused = None
        try:
            await second.run("two")
        except SessionBusyError as error:
            refused = error
        release.set()
        return (await running).output, refused

    # When the second runs while the first is inside a tool
    output, refused = asyncio.run(both())
    # Then it is refused, the first completes, and the file is one branch
    assert isinstance(refused, SessionBusyError) and output == "first"
    assert len(session.tree.leaves()) == 1
    # And once the first is done the second runs on the same session
    assert second.run_sync("two").output == "second"
    assert len(session.tree.leaves()) == 1


# -- (5) history() is exact ---------------------------------------------------------------------


def test_item5_history_is_exactly_the_history_the_agent_holds(tmp_path: Path) -> None:
    # Given runs with tool results (their requests are completed after the results are on
    # file), a reset, and a first prompt after the session's boot
    path = tmp_path / "s.jsonl"
    session = new_session(path)
    agent, _ = agent_for(
        session, tools(("echo", {"text": "x"})), text("a"), tools((WIPE_MEMORY_TOOL, {})), text()
    )
    first = agent.run_sync("one")
    # Then history() is the run's history, field for field (timestamps, run and conversation)
    assert messages_json(session.history()) == messages_json(first.all_messages())
    assert first.all_messages()[0].run_id is not None  # the boot joined the prompt's request
    second = agent.run_sync("two")
    assert messages_json(session.history()) == messages_json(second.all_messages())
    # And a session opened from the file has the same history
    session.close()
    reopened = PiSession.open(path, rng=random.Random(4), config=session.config)
    assert messages_json(reopened.history()) == messages_json(second.all_messages())


# -- (6) a refused create -----------------------------------------------------------------------


def _failing_settings(ctx: Any) -> Any:
    raise OSError("settings disk gone")


def test_item6_a_create_that_fails_leaves_no_file_and_holds_no_lock(tmp_path: Path) -> None:
    # Given a session that cannot be made (its settings cannot be read at startup)
    path = tmp_path / "s.jsonl"
    broken = LifecycleSettings(settings=_failing_settings, notes_home=tmp_path / "notes")
    with pytest.raises(OSError, match="settings disk gone"):
        PiSession.create(path, rng=random.Random(1), config=broken)
    # Then no session file or audit log is left behind
    assert not path.exists() and not audit_path_of(path).exists()
    # And the corrected retry makes the session, its audit records on file
    session = PiSession.create(path, rng=random.Random(1), config=LifecycleSettings())
    session.close()
    chain = verify_chain(audit_path_of(path))
    assert chain.sealed and chain.records >= 2 and not chain.damage  # a record and the seal


def test_item6_a_bad_profile_is_refused_before_a_file_is_made(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with pytest.raises(SettingsError, match="profile"):
        PiSession.create(path, config=LifecycleSettings(profile="0.25"))
    assert not path.exists()
    PiSession.create(path, config=LifecycleSettings(profile="0.25.0")).close()
    assert path.exists()


# -- (7) recovery does not fork -----------------------------------------------------------------


def _window_without_boot(path: Path) -> LifecycleSettings:
    """A session file whose last reset window lost its boot and continuation: its marker is
    followed directly by the reply (R65 refuses to repair it)."""
    session = new_session(path)
    agent, _ = agent_for(session, tools((WIPE_MEMORY_TOOL, {})), text("ok"))
    agent.run_sync("go")
    session.close()
    objs = [json.loads(line) for line in path.read_text().splitlines()]
    kept, dropped = [], set()
    for obj in objs:
        if obj.get("customType") in (BOOT_TYPE, CONTINUATION_TYPE, "pydantic-ai/request") and (
            kept and any(o.get("customType") == MARKER_TYPE for o in kept)
        ):
            dropped.add(obj["id"])
            continue
        while obj.get("parentId") in dropped:
            obj["parentId"] = next(o["parentId"] for o in objs if o.get("id") == obj["parentId"])
        kept.append(obj)
    path.write_text("".join(json.dumps(obj) + "\n" for obj in kept))
    audit_path_of(path).unlink()
    return session.config


def test_item7_recovering_a_window_without_a_boot_keeps_one_branch(tmp_path: Path) -> None:
    # Given a reset window whose boot and continuation are gone (a reply follows the marker)
    path = tmp_path / "s.jsonl"
    config = _window_without_boot(path)
    before = [f.name for f in audit_file(path, session_checks()).findings if f.is_defect]
    session = PiSession.open(path, rng=random.Random(5), config=config)
    assert kinds(conversation(session))[-2:] == [MARKER_TYPE, "assistant"]
    agent, model = agent_for(session, text("after the wipe"))
    # When a run is cancelled (R68), then the documented recovery: /wipe-memory and a run
    with pytest.raises(RequestCancelledError):
        agent.run_sync("next")
    session.command("wipe-memory")
    assert agent.run_sync("again").output == "after the wipe"
    session.close()
    # Then the session is still one branch, and the audit finds no new defect
    assert len(session.tree.leaves()) == 1
    assert [f.name for f in audit_file(path, session_checks()).findings if f.is_defect] == before
    loaded = read_session(path)
    assert len({e.id for e in loaded.entries}) == len(loaded.entries)
    assert "go" not in texts(model.requests[-1].messages)


# -- (8) run_stream -----------------------------------------------------------------------------


def test_item8_run_stream_records_its_answer_and_commits_the_reset_it_crossed(
    tmp_path: Path,
) -> None:
    # Given a streamed answer long enough to cross the reserve of a 100k window
    path = tmp_path / "s.jsonl"
    session = new_session(path)
    agent, model = agent_for(session, text("word " * 90_000), text("fresh"), text("later"))

    async def stream(prompt: str) -> Any:
        async with agent.run_stream(prompt) as result:
            await result.get_output()
        return result

    streamed = asyncio.run(stream("secret plan"))
    # Then the answer is in the session file, and the reset it crossed is committed after it
    assert kinds(conversation(session))[-4:] == ["assistant", *RESET]
    assert kinds(conversation(PiSession.open(path, rng=random.Random(6), config=session.config)))[
        -4:
    ] == ["assistant", *RESET]
    # And history() is the streamed run's history with the reset waiting for the next run
    history = session.history()
    assert messages_json(history[:-1]) == messages_json(streamed.all_messages())
    # When the next run streams too / Then it starts in the new window, on one branch
    asyncio.run(stream("next"))
    sent = texts(model.requests[-1].messages)
    assert "secret plan" not in sent and "next" in sent
    assert any("Your memory was just erased" in t for t in sent)
    assert len(session.tree.leaves()) == 1
    assert agent.run_sync("and run").output == "later"
    assert "secret plan" not in texts(model.requests[-1].messages)


# -- (9) pydantic-ai's typed overflow -----------------------------------------------------------


def _typed_overflow() -> Exception:
    """pydantic-ai's ``ModelContextWindowExceededError`` with a text none of Pi's overflow
    phrases matches."""
    return ModelHTTPError.for_category(
        ModelContextWindowExceededError,
        status_code=400,
        model_name=MODEL_NAME,
        body="the input is larger than this model accepts",
    )


def test_item9_a_model_context_window_exceeded_error_is_recovered_once() -> None:
    # Given a provider that rejects the request with pydantic-ai's typed overflow error
    session = new_session()
    agent, model = agent_for(session, _typed_overflow(), text("done in a fresh window"))
    # When the agent runs / Then the lifecycle recovers in a new window (R33–R36)
    assert agent.run_sync("too big").output == "done in a fresh window"
    assert kinds(conversation(session))[-5:] == ["assistant", *RESET, "assistant"]
    failed = next(e for e in conversation(session) if kinds([e]) == ["assistant"])
    assert failed.message.raw["errorMessage"].startswith("model_context_window_exceeded: ")
    assert "too big" not in texts(model.requests[1].messages)


def test_item9_the_same_text_without_the_typed_error_is_an_ordinary_provider_error() -> None:
    session = new_session()
    plain = ModelHTTPError(400, MODEL_NAME, "the input is larger than this model accepts")
    agent, _ = agent_for(session, plain)
    with pytest.raises(ModelHTTPError):
        agent.run_sync("hello")
    assert MARKER_TYPE not in kinds(conversation(session))  # R38: never a reset


def test_item9_a_typed_overflow_whose_text_is_already_an_overflow_keeps_its_text() -> None:
    session = new_session()
    agent, _ = agent_for(session, overflow(), text("ok"))
    agent.run_sync("too big")
    failed = next(e for e in conversation(session) if kinds([e]) == ["assistant"])
    assert failed.message.raw["errorMessage"].startswith("status_code: 400")


# -- (10) pydantic-ai's own context features ----------------------------------------------------


def test_item10_a_history_processor_is_refused_before_the_first_request() -> None:
    # Given an agent that trims its history with a ProcessHistory capability
    session = new_session()
    capability = PiContext(session, context_window=100_000)
    trim = ProcessHistory(lambda messages: messages[-3:])
    agent: Agent[None, str] = Agent(FunctionModel(_never_called), capabilities=[capability, trim])
    # When it runs / Then it is refused before any request, and the session is untouched
    with pytest.raises(CapabilityConflictError, match="ProcessHistory"):
        agent.run_sync("hello")
    assert kinds(conversation(session)) == [BOOT_TYPE] and len(session.tree.leaves()) == 1


@dataclass
class _Compacts(AbstractCapability[Any]):
    """A summarizing compaction handler (a ``compact_history`` hook), as users write them."""

    async def compact_history(self, ctx: RunContext[Any], request: Any) -> Any:
        raise AssertionError("compacted")


def test_item10_a_compaction_handler_is_refused_where_pydantic_ai_compacts() -> None:
    session = new_session()
    model = ScriptedModel([text("ok")], session)
    capability = PiContext(session, context_window=100_000)
    agent: Agent[None, str] = Agent(model.model, capabilities=[capability, _Compacts()])
    if COMPACTION_HOOK:  # pydantic-ai ≥ 2.7x would compact (and on an overflow, retry)
        with pytest.raises(CapabilityConflictError, match="_Compacts"):
            agent.run_sync("hello")
        assert model.requests == []
    else:  # 2.68 has no compaction: the method is never called, nothing to refuse
        assert agent.run_sync("hello").output == "ok"


def test_item10_native_compaction_is_refused_where_pydantic_ai_has_it() -> None:
    if not COMPACTION_HOOK:
        assert not hasattr(__import__("pydantic_ai.capabilities").capabilities, "NativeCompaction")
        return
    from pydantic_ai.capabilities import NativeCompaction

    session = new_session()
    capability = PiContext(session, context_window=100_000)
    agent: Agent[None, str] = Agent(
        FunctionModel(_never_called), capabilities=[capability, NativeCompaction()]
    )
    with pytest.raises(CapabilityConflictError, match="NativeCompaction"):
        agent.run_sync("hello")


def test_item10_a_capability_that_wraps_another_is_not_taken_for_a_compaction_handler() -> None:
    # Given a wrapper capability (it delegates every hook, compact_history too) around a plain
    # one, and a group of capabilities
    session = new_session()
    model = ScriptedModel([text("ok")], session)
    wrapped = WrapperCapability(wrapped=_RequestNote())
    group = CombinedCapability([_RequestNote()])
    capabilities = [PiContext(session, context_window=100_000), wrapped, group]
    agent: Agent[None, str] = Agent(model.model, capabilities=capabilities)
    # When it runs / Then nothing is refused: neither compacts anything
    assert agent.run_sync("hello").output == "ok"
    # And a wrapper around a compaction handler is refused where pydantic-ai compacts
    compacting: Agent[None, str] = Agent(
        ScriptedModel([text("ok")], new_session()).model,
        capabilities=[PiContext(new_session(), 100_000), WrapperCapability(wrapped=_Compacts())],
    )
    if COMPACTION_HOOK:
        with pytest.raises(CapabilityConflictError, match="_Compacts"):
            compacting.run_sync("hello")
    else:
        assert compacting.run_sync("hello").output == "ok"


def test_item10_a_compaction_request_without_a_handler_leaves_the_session_as_it_was() -> None:
    session = new_session()
    agent, _ = agent_for(session, text("a"), text("b"))
    agent.run_sync("one")
    if COMPACTION_HOOK:
        with pytest.warns(UserWarning, match="no capability of this run can compact"):
            second = agent.run_sync("two", compact=True)
        with pytest.warns(UserWarning, match="no capability of this run can compact"):
            compacted = asyncio.run(agent.compact_history(second.all_messages()))
        assert messages_json(compacted.all_messages()) == messages_json(second.all_messages())
    else:
        second = agent.run_sync("two")
    assert messages_json(session.history()) == messages_json(second.all_messages())
    assert len(session.tree.leaves()) == 1


@dataclass
class _RequestNote(AbstractCapability[Any]):
    """A request-only change: a note every request carries, never in the history."""

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        last = request_context.messages[-1]
        request_context.messages[-1] = type(last)(
            parts=[*last.parts, UserPromptPart("note for this request")]
        )
        return request_context


def test_item10_a_request_only_change_of_another_capability_composes() -> None:
    session = new_session()
    model = ScriptedModel([text("a"), text("b")], session)
    capabilities = [PiContext(session, context_window=100_000), _RequestNote()]
    agent: Agent[None, str] = Agent(model.model, capabilities=capabilities)
    agent.run_sync("one")
    result = agent.run_sync("two")
    assert all("note for this request" in texts(r.messages) for r in model.requests)
    assert "note for this request" not in json.dumps(messages_json(session.history()))
    assert messages_json(session.history()) == messages_json(result.all_messages())
    assert len(session.tree.leaves()) == 1


# -- (11) the small things ----------------------------------------------------------------------


def test_item11_a_cancelled_request_names_the_recovery_that_exists(tmp_path: Path) -> None:
    config = _window_without_boot(tmp_path / "s.jsonl")
    session = PiSession.open(tmp_path / "s.jsonl", rng=random.Random(7), config=config)
    agent, _ = agent_for(session, text())
    with pytest.raises(RequestCancelledError) as cancelled:
        agent.run_sync("next")
    assert "session.command('wipe-memory')" in str(cancelled.value)
    assert "PiContext.wipe_memory" not in str(cancelled.value)


def test_item11_the_reserve_and_automatic_resets_are_settings() -> None:
    # Given a reserve of 40000 tokens: 60000 of a 100k window is at it
    session = new_session(config=lifecycle(reserve_tokens=40_000))
    agent, _ = agent_for(session, text(tokens=60_000), text("after"))
    agent.run_sync("work")
    assert kinds(conversation(session))[-4:] == [*RESET, "assistant"]
    # And with automatic resets off, even 90000 tokens reset nothing; wipe_memory still does
    off = new_session(config=lifecycle(automatic_reset=False))
    agent, _ = agent_for(off, text(tokens=90_000), tools((WIPE_MEMORY_TOOL, {})), text())
    agent.run_sync("work")
    assert MARKER_TYPE not in kinds(conversation(off))
    agent.run_sync("wipe")
    assert kinds(conversation(off)).count(MARKER_TYPE) == 1


def test_item11_a_context_without_a_window_says_what_is_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = new_session()
    with caplog.at_level(logging.WARNING, logger="pictx_fsm.hosts.pydantic_ai"):
        PiContext(session)
    assert [(n.level, n.message) for n in session.notices] == [("warning", NO_WINDOW)]
    assert caplog.records[-1].getMessage() == NO_WINDOW


def test_item11_every_notice_reaches_logging_and_the_callback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    told: list[str] = []
    session = new_session(on_notice=lambda notice: told.append(notice.message))
    agent, _ = agent_for(session, tools((WIPE_MEMORY_TOOL, {})), text())
    with caplog.at_level(logging.INFO, logger="pictx_fsm.hosts.pydantic_ai"):
        agent.run_sync("start over")
    cleared = [m for m in told if m.startswith("pi-context: memory cleared")]
    assert cleared and cleared == [
        r.getMessage() for r in caplog.records if r.getMessage().startswith("pi-context: memory")
    ]
    assert [n.message for n in session.notices] == told


def test_item11_a_function_model_reply_built_ahead_of_time_keeps_its_usage() -> None:
    # Given replies built before the run (their timestamps predate the prompt)
    replies = [
        ModelResponse(parts=[TextPart("long")], usage=RequestUsage(input_tokens=90_000)),
        ModelResponse(parts=[TextPart("fresh")]),
    ]
    session = new_session()
    agent: Agent[None, str] = Agent(
        FunctionModel(lambda messages, info: replies.pop(0)),
        capabilities=[PiContext(session, context_window=100_000)],
    )
    # When the run gets the first, at the reserve / Then its usage counts: the reset happens
    assert agent.run_sync("work").output == "fresh"
    assert kinds(conversation(session))[-4:] == [*RESET, "assistant"]


def test_item11_test_model_runs_given_the_tools_to_call() -> None:
    # TestModel() calls every tool at every request of a fresh window, wipe_memory included:
    # a reset at each window until the request limit (the model's choice, as in Pi)
    session = new_session()
    looping: Agent[None, str] = Agent(
        TestModel(), capabilities=[PiContext(session, context_window=200_000)]
    )
    with pytest.raises(UsageLimitExceeded):
        looping.run_sync("hello")
    # Given the tools to call instead, it runs as in any agent test
    session = new_session()
    names = [spec.name for spec in TOOL_SPECS if spec.name != WIPE_MEMORY_TOOL]
    agent: Agent[None, str] = Agent(
        TestModel(call_tools=names), capabilities=[PiContext(session, context_window=200_000)]
    )
    assert "get_context_remaining" in agent.run_sync("hello").output
    assert MARKER_TYPE not in kinds(conversation(session))
