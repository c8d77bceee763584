"""Host profiles of the model session: where Pi 0.87.1 and Pi 1.6.0 differ for anything a
lifecycle extension observes (docs/model-session.md, "Pi versions"), and the agent loop's
queue rule both share. The real Pis are compared in ``test_pi_driven``; these pin each
profile's behaviour on the model alone."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.cli import main
from pictx_fsm.extensions.pi_context.adapter import LifecycleExtension
from pictx_fsm.extensions.pi_context.kit.strategies import world_configs
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import (
    PI_CONTEXT_COMMAND,
    WIPE_MEMORY_TOOL,
    WIPE_STATUS_REQUESTED,
)
from pictx_fsm.host.events import HostContext
from pictx_fsm.host.extension import ToolInvocation, ToolOutput
from pictx_fsm.hosts.model import (
    HOST_PROFILES,
    PI_0_87,
    PI_1_6,
    BaseExtension,
    Call,
    FauxCacheUsage,
    HostProfile,
    HostSettings,
    ModelSession,
    ScriptedProvider,
    Text,
    Tools,
    host_profile,
)
from pictx_fsm.hosts.model.provider_usage import ProviderRequest

WIPE = Tools(calls=(Call(name=WIPE_MEMORY_TOOL),))
PROFILES = pytest.mark.parametrize("profile", list(HOST_PROFILES.values()), ids=list(HOST_PROFILES))


def _session(profile: HostProfile, *replies: Any, **kwargs: Any) -> ModelSession:
    extension = LifecycleExtension(lambda tree: LifecycleRuntime(tree, rng=random.Random(1)))
    return ModelSession(
        [extension, *kwargs.pop("extensions", ())],
        provider=ScriptedProvider(list(replies), **kwargs),
        settings=HostSettings(profile=profile),
    )


def _until_hook(session: ModelSession, name: str, count: int = 1) -> None:
    seen = 0
    while seen < count:
        step = session.run_until(lambda s: s.kind == "hook" and s.name == name)
        seen += step.name == name


class Answers(BaseExtension):
    """Registers plain tools that answer with their own name."""

    name = "answers"

    def __init__(self, *names: str) -> None:
        self.names = names

    @property
    def tools(self) -> dict[str, Any]:
        def answer(call: ToolInvocation, ctx: HostContext) -> ToolOutput:
            return ToolOutput(text=f"{call.name} done")

        return {name: answer for name in self.names}


# -- the queue rule both versions share ---------------------------------------------------------


@PROFILES
def test_a_follow_up_queued_in_a_wipe_batch_takes_the_place_of_the_context_only_turn(
    profile: HostProfile,
) -> None:
    # Given a wipe_memory batch (terminating) whose reset boundary asks to continue
    session = _session(profile, WIPE, Text(text="fresh, with the follow-up"))
    session.prompt("please")
    # When a follow-up is queued while the batch runs
    _until_hook(session, "tool_call")
    session.follow_up("and then this")
    session.run_until_idle()
    # Then pi-agent-core's runLoop delivers it before any context-only turn: two requests,
    # and the second carries the follow-up after the new window's boot and continuation
    requests = session.log.requests
    assert len(requests) == 2
    last = requests[-1].messages[-1]
    assert last["role"] == "user" and last["content"][0]["text"] == "and then this"


@PROFILES
def test_without_a_queued_follow_up_the_honoured_continue_runs_one_context_only_turn(
    profile: HostProfile,
) -> None:
    # Given the same reset, nothing queued
    session = _session(profile, WIPE, Text(text="fresh"))
    session.prompt("please")
    session.run_until_idle()
    # Then the continuation is one request on the new window (boot + continuation last)
    assert len(session.log.requests) == 2
    assert session.log.requests[-1].messages[-1]["role"] == "user"


# -- aborts during a batch's preparation -------------------------------------------------------


def _aborted_batch(profile: HostProfile) -> ModelSession:
    calls = (Call(name="first"), Call(name="second"), Call(name="third"))
    session = _session(
        profile, Tools(calls=calls), Text(text="after"), extensions=[Answers("first", "second")]
    )
    session.prompt("please")
    _until_hook(session, "tool_call")  # the first call's preparation
    session.abort()
    session.run_until_idle()
    return session


def _results(session: ModelSession) -> list[tuple[str, str]]:
    return [
        (e.message.raw["toolName"], e.message.text())
        for e in session.entries
        if e.type == "message" and e.message.role == "toolResult"
    ]


def test_pi_0_87_stops_preparing_a_batch_at_an_abort_and_leaves_later_calls_unanswered() -> None:
    # When the run is aborted while the first of three calls is prepared (Pi 0.87)
    session = _aborted_batch(PI_0_87)
    # Then that call is answered "Operation aborted" and the others get no result at all
    assert _results(session) == [("first", "Operation aborted")]
    starts = [e for e in session.log.events if e.name == "tool_execution_start"]
    assert len(starts) == 1


def test_pi_1_6_answers_every_call_of_an_aborted_batch() -> None:
    # When the same abort happens on Pi 1.6 (pi#9986)
    session = _aborted_batch(PI_1_6)
    # Then every call gets "Operation aborted"; the later ones start without a tool_call
    assert [text for _, text in _results(session)] == ["Operation aborted"] * 3
    names = [e.name for e in session.log.events if e.name.startswith("tool_")]
    assert names.count("tool_execution_start") == 3 and names.count("tool_call") == 1


@PROFILES
def test_an_abort_before_the_wipe_call_runs_requests_no_reset_and_ends_the_next_turn(
    profile: HostProfile,
) -> None:
    # Given a wipe_memory call aborted while it is prepared
    session = _session(profile, WIPE, Text(text="after"))
    session.prompt("please")
    _until_hook(session, "tool_call")
    session.abort()
    session.run_until_idle()
    # Then wipe_memory never ran, and the next turn ends as an aborted one (d2) without a
    # provider request
    assert _results(session) == [(WIPE_MEMORY_TOOL, "Operation aborted")]
    assert not any("reset-marker" in str(e.to_json()) for e in session.entries)
    assert len(session.log.requests) == 1
    # recorded as an error by Pi 0.87 (d2), as aborted by Pi 1.6
    replies = [e for e in session.entries if e.type == "message" and e.message.role == "assistant"]
    assert replies[-1].message.raw["stopReason"] == profile.aborted_turn_stop_reason


@PROFILES
def test_an_abort_in_message_start_keeps_no_text(profile: HostProfile) -> None:
    # Given a reply aborted as it starts (nothing has streamed)
    session = _session(profile, Text(text="a long answer that never streams"))
    session.prompt("please")
    session.run_until(
        lambda s: s.name == "message_start" and session.log.events[-1].detail["role"] == "assistant"
    )
    session.abort()
    session.run_until_idle()
    # Then the aborted reply has no content
    [reply] = [e for e in session.entries if e.type == "message" and e.message.role == "assistant"]
    assert reply.message.raw["stopReason"] == "aborted" and reply.message.raw["content"] == []


# -- nested tool calls (ctx.executeTool, Pi >= 0.99) -------------------------------------------


def _nested_wipe(profile: HostProfile) -> ModelSession:
    script = Tools(calls=(Call(name="call_tools", arguments={"calls": [{"name": "wipe_memory"}]}),))
    session = _session(profile, script, Text(text="after the script"))
    session.prompt("please")
    session.run_until_idle()
    return session


def test_pi_1_6_honours_a_nested_wipe_memory_at_the_batch_boundary() -> None:
    # When a tool runs wipe_memory through ctx.executeTool() (docs/decisions.md)
    session = _nested_wipe(PI_1_6)
    # Then the nested call runs with its own events, is recorded on the caller's result,
    # and the reset commits at the batch's turn_end like a direct call's
    [(name, text)] = _results(session)
    assert name == "call_tools" and text.startswith("wipe_memory: ")
    assert json.loads(text.removeprefix("wipe_memory: "))["status"] == WIPE_STATUS_REQUESTED
    nested = [e for e in session.log.events if "parentToolCallId" in e.detail]
    assert [e.name for e in nested] == [
        "tool_execution_start", "tool_call", "tool_result", "tool_execution_end",
    ]  # fmt: skip
    [result] = [
        e for e in session.entries if e.type == "message" and e.message.role == "toolResult"
    ]
    assert result.message.raw["nestedCalls"]["calls"][0]["name"] == WIPE_MEMORY_TOOL
    assert any("reset-marker" in str(e.to_json()) for e in session.entries)


def test_pi_0_87_has_no_nested_calls() -> None:
    # When the model calls the nesting tool on Pi 0.87 / Then it does not exist, no reset
    session = _nested_wipe(PI_0_87)
    assert _results(session) == [("call_tools", "Tool call_tools not found")]
    assert not any("reset-marker" in str(e.to_json()) for e in session.entries)


# -- what ctx, events and usage report ----------------------------------------------------------


@PROFILES
def test_pi_context_status_reports_the_profile_s_pi_version(profile: HostProfile) -> None:
    # When /pi-context asks for the status / Then the notice names the Pi version
    session = _session(profile)
    session.command(PI_CONTEXT_COMMAND, "")
    assert session.log.notices[-1].message.endswith(f"Pi {profile.pi_version}")


@PROFILES
def test_agent_settled_reports_aborted_where_the_version_has_it(profile: HostProfile) -> None:
    session = _session(profile, Text(text="x"))
    session.prompt("please")
    session.run_until_idle()
    [settled] = [e for e in session.log.events if e.name == "agent_settled"]
    assert ("aborted" in settled.detail) is profile.settled_reports_aborted


@PROFILES
def test_replies_record_the_thinking_level_where_the_version_does(profile: HostProfile) -> None:
    session = _session(profile, Text(text="x"))
    session.prompt("please")
    session.run_until_idle()
    [reply] = [e for e in session.entries if e.type == "message" and e.message.role == "assistant"]
    assert ("thinkingLevel" in reply.message.raw) is profile.replies_record_run_details


@given(st.lists(st.text(max_size=300), min_size=1, max_size=5))
def test_faux_usage_of_pi_1_6_moves_the_double_counted_input_into_cache_writes(
    texts: list[str],
) -> None:
    # Given a conversation growing by one user message per request, accounted both ways
    old, new = FauxCacheUsage(), FauxCacheUsage(input_counted_once=True)
    messages: list[dict[str, Any]] = []
    for text in texts:
        messages.append({"role": "user", "content": [{"type": "text", "text": text}]})
        request = ProviderRequest(messages=list(messages), tokens=0, session_id="s")
        before, after = old.usage(request, ()), new.usage(request, ())
        # Then pi-ai 1.5+ reports no input: what 0.87 counted as input (the uncached part,
        # counted a second time) is its cache write; the cache reads agree
        assert after["input"] == 0
        assert after["cacheWrite"] == before["input"]
        assert after["cacheRead"] == before["cacheRead"]


def test_an_unknown_host_profile_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown host profile 'pi-9'"):
        host_profile("pi-9")
    with pytest.raises(ValueError, match="host"):
        WorldConfig(host="pi-9")


@PROFILES
def test_reload_extensions_rebinds_and_keeps_an_unpersisted_leaf(profile: HostProfile) -> None:
    # Given two turns and a navigation back to the first reply (nothing written)
    session = _session(profile, Text(text="A1"), Text(text="A2"))
    for text in ("U1", "U2"):
        session.prompt(text)
        session.run_until_idle()
    first = next(e for e in session.entries if e.type == "message" and e.message.text() == "A1")
    session.navigate(str(first.id))
    # When Pi's /reload runs
    session.reload_extensions()
    # Then the extensions saw shutdown{reload} and start{reload}, and the leaf stayed
    reasons = [e.detail.get("reason") for e in session.log.events if e.name.startswith("session_")]
    assert reasons[-2:] == ["reload", "reload"]
    assert session.leaf_id == first.id


# -- selecting profiles in verify and the testing kit -------------------------------------------


def test_verify_explores_the_chosen_host_profile(capsys: pytest.CaptureFixture[str]) -> None:
    # When verify runs in the Pi 1.6 profile only
    code = main(
        [
            *("verify", "--extension", "pi-context", "--host-profile", "pi-1.6"),
            *("--no-contracts", "--no-scenarios"),
            *("--quiet", "--examples", "5", "--time-budget", "20"),
        ]
    )
    report = capsys.readouterr().out
    # Then the report names it and every invariant held
    assert "host pi-1.6\n" in report and "all held" in report, report
    assert code in (0, 1)  # coverage is judged by the full default run


def test_an_unknown_host_profile_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["verify", "--host-profile", "pi-9"])
    assert exit_.value.code == 2
    assert "invalid choice: 'pi-9'" in capsys.readouterr().err


@given(world_configs(hosts=("pi-1.6",)))
def test_generated_worlds_take_the_host_profile_they_are_given(config: WorldConfig) -> None:
    # Given a world drawn for Pi 1.6 / Then its session behaves as Pi 1.6 and the config
    # survives its JSON form (traces replay in the same profile)
    assert config.host == "pi-1.6"
    session = World(config).session
    session.command(PI_CONTEXT_COMMAND, "")
    assert session.log.notices[-1].message.endswith("Pi 1.6.0")
    assert WorldConfig.from_json(config.to_json()) == config
