"""The same scripted replies on the model session (an executable Pi) and on a pydantic-ai
agent: where the hosts' semantics coincide, the lifecycle takes the same decisions — every
hook, every fired transition. Where they differ is listed in docs/pydantic-ai.md:
``session_before_compact`` (Pi tries a native compaction on overflow, which the lifecycle
cancels; pydantic-ai has none), so those records are left out of the comparison."""

from __future__ import annotations

import contextlib
import random
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.usage import RequestUsage

from pictx_fsm.hosts.model.brain import Call, Overflow, ProviderError, Response, Text, Tools
from pictx_fsm.hosts.pydantic_ai import LifecycleSettings, PiContext, PiSession
from pictx_fsm.hosts.pydantic_ai.scripted import MODEL_NAME, ScriptedModel
from pictx_fsm.policy import StaticSettingsSource
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.testing.world import World, WorldConfig

CONFIG = WorldConfig(
    context_window=100_000,
    max_tokens=4_096,
    reserve_tokens=16_384,
    reminder_margin=24_576,
)
NOT_ON_PYDANTIC_AI = frozenset({"session_before_compact"})
BAD_REQUEST = "invalid_request_error: unsupported parameter"
LONG = "word " * 100_000

SCRIPTS: dict[str, tuple[tuple[str, tuple[Response, ...]], ...]] = {
    "plain text": (("hello", (Text(text="Hi."),)),),
    "two wipes in one batch": (
        ("start over", (Tools(calls=[Call(name="wipe_memory"), Call(name="wipe_memory")]), Text())),
        ("next", (Text(text="fresh"),)),
    ),
    "remaining, then a wipe": (
        ("how much?", (Tools(calls=[Call(name="get_context_remaining")]), Text())),
        ("wipe", (Tools(calls=[Call(name="wipe_memory")]), Text())),
    ),
    "overflow recovered once": (("big", (Overflow(), Text(text="retried"))),),
    "overflow twice": (("big", (Overflow(), Overflow())), ("again", (Text(),))),
    "ordinary provider error": (
        ("hello", (ProviderError(message=BAD_REQUEST),)),
        ("again", (Text(),)),
    ),
    "long replies reach guidance, warning and the reserve": (
        ("one", (Text(text=LONG[: 4 * 40_000]),)),
        ("two", (Text(text="a"),)),
        ("three", (Text(text=LONG[: 4 * 12_000]),)),
        ("four", (Text(text=LONG[: 4 * 8_000]),)),
        ("five", (Text(text=LONG[: 4 * 13_000]),)),
        ("six", (Text(text="c"),)),
        ("seven", (Text(text=LONG[: 4 * 12_000]),)),
        ("eight", (Text(text="d"),)),
    ),
}


EXERCISES = {
    "two wipes in one batch": {"reset_control:request:explicit:request:1"},
    "remaining, then a wipe": {"budget:meter:reading:query_remaining:1"},
    "overflow recovered once": {"reset_control:overflow:pending:before_settle:3"},
    "overflow twice": {"reset_control:overflow:pending_spent:before_settle:3"},
    "long replies reach guidance, warning and the reserve": {
        "budget:guidance:guidance_staged:turn_end:2",
        "budget:warning:warning_staged:turn_end:2",
        "reset_control:request:none:turn_end:3",
    },
}
"""What each script must exercise, so a scenario cannot pass by doing nothing."""


def decisions(records: Any) -> list[tuple[str, list[str]]]:
    """Each audited hook with the transition ids it fired, in order."""
    return [
        (r["hook"], [t["id"] for s in r["steps"] for t in s["transitions"]])
        for r in records
        if r["hook"] not in NOT_ON_PYDANTIC_AI
    ]


def _model_session(script: tuple[tuple[str, tuple[Response, ...]], ...]) -> World:
    world = World(CONFIG)
    for prompt, replies in script:
        world.session.brain.push(*replies)
        world.session.prompt(prompt)
        world.session.run_until_idle()
    return world


def _replies(world: World) -> list[Any]:
    """Every reply the model session's provider gave (continuations included), as
    pydantic-ai replies with the same content and the same usage."""
    return [
        _reply(e.message.raw)
        for e in world.session.entries
        if isinstance(e, MessageEntry) and e.message.role == "assistant"
    ]


def _reply(message: dict[str, Any]) -> Any:
    if message["stopReason"] == "error":
        return ModelHTTPError(400, MODEL_NAME, body=message["errorMessage"])
    usage = message["usage"]
    used = RequestUsage(
        input_tokens=usage["input"] + usage["cacheRead"] + usage["cacheWrite"],
        output_tokens=usage["output"],
        cache_read_tokens=usage["cacheRead"],
        cache_write_tokens=usage["cacheWrite"],
    )
    parts = [_part(block) for block in message["content"]]
    return ModelResponse(parts=parts, usage=used, model_name=MODEL_NAME)


def _part(block: dict[str, Any]) -> Any:
    if block["type"] == "toolCall":
        return ToolCallPart(block["name"], dict(block["arguments"]))
    return TextPart(block["text"])


def _pydantic_ai(
    script: tuple[tuple[str, tuple[Response, ...]], ...], replies: list[Any]
) -> PiSession:
    config = LifecycleSettings(settings=StaticSettingsSource(global_settings=CONFIG.settings))
    session = PiSession.create(None, rng=random.Random(0), config=config)
    model = ScriptedModel(replies, session)
    capability = PiContext(
        session, context_window=CONFIG.context_window, max_tokens=CONFIG.max_tokens
    )
    agent: Agent[None, str] = Agent(model.model, capabilities=[capability])
    for prompt, _ in script:
        with contextlib.suppress(ModelHTTPError):  # the model session settles the same way
            agent.run_sync(prompt)
    return session


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_lifecycle_decides_on_pydantic_ai_as_on_the_model_session(name: str) -> None:
    # Given the same prompts and the same replies (with the same usage) on both hosts
    script = SCRIPTS[name]
    world = _model_session(script)
    session = _pydantic_ai(script, _replies(world))
    # Then every hook both hosts raise fires the same transitions, in the same order
    [audit] = world.audits
    ours = decisions(session.audit.records)
    assert ours == decisions(audit.records)
    assert EXERCISES.get(name, set()) <= {t for _, fired in ours for t in fired}
