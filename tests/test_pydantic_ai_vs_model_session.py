"""The same scripted replies on the model session (an executable Pi) and on a pydantic-ai
agent: where the hosts' semantics coincide, the lifecycle takes the same decisions — every
hook, every fired transition, every notes and history tool's outcome (ok, refusal, error).
Where they differ is listed in docs/pydantic-ai.md: ``session_before_compact`` (Pi tries a
native compaction on overflow, which the lifecycle cancels; pydantic-ai has none), so those
records are left out of the comparison."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Mapping
from typing import Any, TypeAlias

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.usage import RequestUsage

from pictx_fsm.extensions.pi_context.kit.notes_sandbox import NotesSandbox, resolve_arguments
from pictx_fsm.extensions.pi_context.kit.tool_coverage import tool_outcomes
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig
from pictx_fsm.host.settings import StaticSettingsSource
from pictx_fsm.hosts.model.scripted_provider import (
    Call,
    Overflow,
    ProviderError,
    Response,
    Text,
    Tools,
)
from pictx_fsm.hosts.pydantic_ai import LifecycleSettings, PiContext, PiSession
from pictx_fsm.hosts.pydantic_ai.scripted import MODEL_NAME, ScriptedModel
from pictx_fsm.session.entries import MessageEntry

CONFIG = WorldConfig(
    context_window=100_000,
    max_tokens=4_096,
    reserve_tokens=16_384,
    reminder_margin=24_576,
)
NOT_ON_PYDANTIC_AI = frozenset({"session_before_compact"})
BAD_REQUEST = "invalid_request_error: unsupported parameter"
LONG = "word " * 100_000
NOTE = {"address": "plan.md", "content": "alpha needle"}

Script: TypeAlias = tuple[tuple[str, tuple[Response, ...]], ...]
SCRIPTS: dict[str, Script] = {
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
    "a note written, then a wipe, then read back": (
        (
            "plan, then start over",
            (
                Tools(calls=[Call(name="notes_write", arguments=NOTE), Call(name="wipe_memory")]),
                Tools(
                    calls=[
                        Call(name="notes_read", arguments={"address": "plan.md"}),
                        Call(name="notes_search", arguments={"query": "needle"}),
                        Call(name="notes_list", arguments={"pattern": "**"}),
                    ]
                ),
                Text(text="read it"),
            ),
        ),
    ),
    "history across a reset": (
        ("the code is zebra-17", (Text(text="noted"),)),
        ("start over", (Tools(calls=[Call(name="wipe_memory")]), Text(text="fresh"))),
        (
            "what was the code?",
            (
                Tools(
                    calls=[
                        Call(name="history_search", arguments={"query": "zebra-17"}),
                        Call(name="history_windows"),
                        Call(name="history_list", arguments={"window_id": {"$window": 0}}),
                        Call(
                            name="history_read",
                            arguments={"window_id": {"$window": 0}, "item_id": {"$item": [0, 1]}},
                        ),
                    ]
                ),
                Text(text="zebra-17"),
            ),
        ),
    ),
    "refused and failing notes calls": (
        (
            "write badly",
            (
                Tools(
                    calls=[
                        Call(name="notes_write", arguments={"address": "../x.md", "content": "x"}),
                        Call(name="notes_read", arguments={"address": "missing.md"}),
                        Call(
                            name="notes_write",
                            arguments={"address": "@agents/other/x.md", "content": "x"},
                        ),
                        Call(name="history_read", arguments={"window_id": "pcw:nope:x"}),
                    ]
                ),
                Text(),
            ),
        ),
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
    "a note written, then a wipe, then read back": {
        "notes_write:ok",
        "notes_read:ok",
        "notes_search:ok",
        "notes_list:ok",
        "reset_control:request:explicit:turn_end:3",
    },
    "history across a reset": {
        "history_search:ok",
        "history_windows:ok",
        "history_list:ok",
        "history_read:ok",
    },
    "refused and failing notes calls": {
        "notes_write:error",
        "notes_read:refusal",
        "notes_write:refusal",
        "history_read:refusal",
    },
    "long replies reach guidance, warning and the reserve": {
        "budget:guidance:guidance_staged:turn_end:2",
        "budget:warning:warning_staged:turn_end:2",
        "reset_control:request:none:turn_end:3",
    },
}
"""What each script must exercise, so a scenario cannot pass by doing nothing."""


def decisions(records: Any) -> list[tuple[str, list[str]]]:
    """Each audited hook with the transition ids it fired (and a notes or history tool's
    ``<tool>:<status>``), in order."""
    return [
        (r["hook"], [t["id"] for s in r["steps"] for t in s["transitions"]] + [*tool_outcomes([r])])
        for r in records
        if r["hook"] not in NOT_ON_PYDANTIC_AI
    ]


def _model_session(script: Script) -> World:
    world = World(CONFIG)
    for prompt, replies in script:
        world.session.provider.push(*replies)
        world.session.prompt(prompt)
        world.session.run_until_idle()
    return world


def _replies(world: World, script: Script) -> list[Any]:
    """Every reply the model session's provider gave (continuations included), as
    pydantic-ai replies with the same content and the same usage; tool calls keep the
    script's arguments (history ids are resolved against each host's own session)."""
    scripted = iter(
        [
            c.arguments
            for _, replies in script
            for r in replies
            if isinstance(r, Tools)
            for c in r.calls
        ]
    )
    return [
        _reply(e.message.raw, scripted)
        for e in world.session.entries
        if isinstance(e, MessageEntry) and e.message.role == "assistant"
    ]


def _reply(message: dict[str, Any], scripted: Iterator[Mapping[str, Any]]) -> Any:
    if message["stopReason"] == "error":
        return ModelHTTPError(400, MODEL_NAME, body=message["errorMessage"])
    usage = message["usage"]
    used = RequestUsage(
        input_tokens=usage["input"] + usage["cacheRead"] + usage["cacheWrite"],
        output_tokens=usage["output"],
        cache_read_tokens=usage["cacheRead"],
        cache_write_tokens=usage["cacheWrite"],
    )
    parts = [_part(block, scripted) for block in message["content"]]
    return ModelResponse(parts=parts, usage=used, model_name=MODEL_NAME)


def _part(block: dict[str, Any], scripted: Iterator[Mapping[str, Any]]) -> Any:
    if block["type"] == "toolCall":
        return ToolCallPart(block["name"], dict(next(scripted)))
    return TextPart(block["text"])


def _pydantic_ai(script: Script, replies: list[Any], notes: NotesSandbox) -> PiSession:
    config = LifecycleSettings(
        settings=StaticSettingsSource(global_settings=CONFIG.settings), notes_home=notes.root
    )
    session = PiSession.create(None, rng=random.Random(0), config=config)
    model = ScriptedModel(
        replies, session, arguments=lambda arguments: resolve_arguments(arguments, session.tree)
    )
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
    session = _pydantic_ai(script, _replies(world, script), NotesSandbox())
    # Then every hook both hosts raise fires the same transitions, in the same order
    [audit] = world.audits
    ours = decisions(session.audit.records)
    assert ours == decisions(audit.records)
    assert EXERCISES.get(name, set()) <= {t for _, fired in ours for t in fired}
