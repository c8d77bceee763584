"""pydantic-ai message history ↔ Pi session entries, property-tested both ways."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    SYNTHESIZED_TOOL_RETURN_METADATA_KEY,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from pictx_fsm import TOOL_SPECS
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
)
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.hosts.pydantic_ai.history import entries_to_messages, messages_to_entries
from pictx_fsm.hosts.pydantic_ai.residual import patch, residual
from pictx_fsm.hosts.pydantic_ai.serial import messages_json
from pictx_fsm.hosts.pydantic_ai.views import METADATA_KEY
from pictx_fsm.session.entries import entry_from_json
from pictx_fsm.session.tree import SessionTree

JSON = Any
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(json_values, json_values)
def test_a_residual_restores_any_json_value_from_any_derived_one(
    actual: JSON, derived: JSON
) -> None:
    restored = patch(derived, residual(actual, derived))
    assert restored == actual and _types(restored) == _types(actual)


def _types(value: JSON) -> JSON:
    """The JSON types all the way down (``True`` and ``1`` are not the same JSON)."""
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


# -- messages → entries → messages ---------------------------------------------------------

stamps = st.datetimes(
    min_value=datetime(2025, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)
)
words = st.text(alphabet="abc xyz\n√é", max_size=12)
tool_content = words | st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2)
tool_details = st.dictionaries(
    st.sampled_from(["address", "total_chars", SYNTHESIZED_TOOL_RETURN_METADATA_KEY]),
    st.none() | st.booleans() | st.integers() | words,
    max_size=3,
)


def _lifecycle_part(
    kind: str, content: str, stamp: datetime, marker: bool, n: int
) -> UserPromptPart:
    window = f"pcw:abcdefgh:{n:08x}"
    entry: dict[str, JSON] = {
        "id": f"e{n:07x}",
        "timestamp": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "customType": kind,
        "display": False,
    }
    if kind == BOOT_TYPE:
        entry["details"] = {"windowId": window}
    stub: dict[str, JSON] = {"entry": entry}
    if marker:
        before = {"type": "custom", "id": f"m{n:07x}", "timestamp": entry["timestamp"]}
        stub["before"] = [{**before, "customType": MARKER_TYPE, "data": {"windowId": window}}]
    return UserPromptPart([TextContent(content, metadata={METADATA_KEY: stub})], timestamp=stamp)


ids = itertools.count()
request_parts = st.one_of(
    st.builds(SystemPromptPart, words, timestamp=stamps),
    st.builds(UserPromptPart, words, timestamp=stamps),
    st.builds(
        ToolReturnPart,
        tool_name=st.sampled_from(["echo", *(spec.name for spec in TOOL_SPECS)]),
        content=tool_content,
        tool_call_id=st.sampled_from(["call_1", "call_2"]),
        timestamp=stamps,
        # ToolFailed's failed return (N4's error), a crash's synthesized interrupted one
        outcome=st.sampled_from(["success", "failed", "interrupted", "denied"]),
        metadata=st.none() | tool_details,  # a notes tool's details (never sent)
    ),
    st.builds(
        lambda kind, text, stamp, marker: _lifecycle_part(kind, text, stamp, marker, next(ids)),
        st.sampled_from([BOOT_TYPE, CONTINUATION_TYPE, GUIDANCE_TYPE]),
        words,
        stamps,
        st.booleans(),
    ),
)
requests = st.builds(
    ModelRequest,
    parts=st.lists(request_parts, min_size=1, max_size=4),
    timestamp=st.none() | stamps,
    instructions=st.none() | words,
    run_id=st.none() | st.just("run-1"),
)
response_parts = st.one_of(
    st.builds(TextPart, words),
    st.builds(ThinkingPart, words),
    st.builds(
        ToolCallPart,
        tool_name=st.sampled_from(["echo", "wipe_memory"]),
        args=st.dictionaries(st.sampled_from(["text", "n"]), words, max_size=2)
        | st.just('{"text": "a"}'),
        tool_call_id=st.sampled_from(["call_1", "call_2"]),
    ),
)
usages = st.builds(
    lambda inp, out, read: RequestUsage(
        input_tokens=inp + read, output_tokens=out, cache_read_tokens=read
    ),
    st.integers(0, 200_000),
    st.integers(0, 9_000),
    st.integers(0, 50_000),
)
responses = st.one_of(
    st.builds(
        ModelResponse,
        parts=st.lists(response_parts, min_size=1, max_size=3),
        usage=usages,
        model_name=st.none() | st.just("scripted"),
        timestamp=stamps,
        finish_reason=st.none() | st.sampled_from(["stop", "length", "tool_call"]),
    ),
    st.builds(
        lambda stamp, text: ModelResponse(
            parts=[],
            model_name="scripted",
            timestamp=stamp,
            finish_reason="error",
            metadata={METADATA_KEY: {"errorMessage": text}},
        ),
        stamps,
        words,
    ),
)
aborted = st.builds(  # Pi's reply to a request the caller aborted
    lambda stamp: ModelResponse(
        parts=[],
        timestamp=stamp,
        metadata={METADATA_KEY: {"stopReason": "aborted", "errorMessage": "Request was aborted"}},
    ),
    stamps,
)


def _marker(n: int, stamp: datetime) -> dict[str, JSON]:
    iso = stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    window = {"windowId": f"pcw:abcdefgh:{n:08x}"}
    return {
        "type": "custom",
        "id": f"x{n:07x}",
        "timestamp": iso,
        "customType": MARKER_TYPE,
        "data": window,
    }


def _carrying(response: ModelResponse, stamp: datetime) -> ModelResponse:
    """A response that carries a marker before it (a reset window whose boot is gone)."""
    own = {"before": [_marker(next(ids), stamp)]}
    metadata = dict(response.metadata or {})
    metadata[METADATA_KEY] = {**metadata.get(METADATA_KEY, {}), **own}
    return ModelResponse(
        parts=response.parts,
        usage=response.usage,
        model_name=response.model_name,
        timestamp=response.timestamp,
        finish_reason=response.finish_reason,
        metadata=metadata,
    )


carried_responses = st.builds(_carrying, st.one_of(responses, aborted), stamps)
histories = st.lists(
    st.one_of(requests, responses, aborted, carried_responses), min_size=1, max_size=6
)


def _mint() -> Any:
    counter = itertools.count()
    return lambda: f"{next(counter):08x}"


@settings(max_examples=150, deadline=None)
@given(histories)
def test_messages_to_entries_to_messages_is_exact(history: list[ModelMessage]) -> None:
    # Given any history the adapter can meet, When it becomes entries and back
    entries = messages_to_entries(history, parent_id=None, mint=_mint())
    back = entries_to_messages(entries)
    # Then pydantic-ai's own serialization of both is the same
    assert messages_json(back) == messages_json(history)


@settings(max_examples=100, deadline=None)
@given(histories)
def test_the_entries_are_a_valid_pi_branch_for_the_session_tree(
    history: list[ModelMessage],
) -> None:
    entries = messages_to_entries(history, parent_id=None, mint=_mint())
    from pictx_fsm.session.entries import SessionHeader

    tree = SessionTree(SessionHeader(id="abcdefgh-0000", timestamp="", cwd=""))
    for obj in entries:
        entry, problems = entry_from_json(obj)
        assert not problems
        tree.append(entry)
    markers = [e for e in entries if e.get("customType") == MARKER_TYPE]
    if markers:
        assert WindowIndex.of(tree).current_window.window_id == markers[-1]["data"]["windowId"]


# -- entries → messages → entries ----------------------------------------------------------


def _pi_user(text: str, ms: int) -> dict[str, JSON]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms}


def _pi_result(text: str, ms: int, error: bool) -> dict[str, JSON]:
    return {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "echo",
        "content": [{"type": "text", "text": text}],
        "isError": error,
        "timestamp": ms,
    }


def _pi_assistant(text: str, ms: int, tokens: int, stop: str) -> dict[str, JSON]:
    content: list[JSON] = [] if stop == "error" else [{"type": "text", "text": text}]
    if stop == "toolUse":
        content.append(
            {"type": "toolCall", "id": "call_1", "name": "echo", "arguments": {"text": text}}
        )
    message = {
        "role": "assistant",
        "content": content,
        "api": "pydantic-ai",
        "provider": "function",
        "model": "scripted",
        "usage": {
            "input": tokens,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": tokens + 5,
        },
        "stopReason": stop,
        "timestamp": ms,
    }
    if stop == "error":
        message["errorMessage"] = text
    return message


def _iso(ms: int) -> str:
    stamp = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _reset(n: int, ms: int) -> list[dict[str, JSON]]:
    window = f"pcw:abcdefgh:{n:08x}"
    base = {"timestamp": _iso(ms)}
    return [
        {
            "type": "custom",
            "id": f"m{n:07x}",
            **base,
            "customType": MARKER_TYPE,
            "data": {"windowId": window},
        },
        {
            "type": "custom_message",
            "id": f"b{n:07x}",
            **base,
            "customType": BOOT_TYPE,
            "content": "boot",
            "display": False,
            "details": {"windowId": window},
        },
        {
            "type": "custom_message",
            "id": f"c{n:07x}",
            **base,
            "customType": CONTINUATION_TYPE,
            "content": "continue",
            "display": False,
        },
    ]


ms_values = st.integers(1_700_000_000_000, 1_900_000_000_000)
steps = st.one_of(
    st.builds(lambda t, ms: [{"type": "message", "message": _pi_user(t, ms)}], words, ms_values),
    st.builds(
        lambda t, ms, e: [{"type": "message", "message": _pi_result(t, ms, e)}],
        words,
        ms_values,
        st.booleans(),
    ),
    st.builds(
        lambda t, ms, n, stop: [{"type": "message", "message": _pi_assistant(t, ms, n, stop)}],
        words,
        ms_values,
        st.integers(0, 200_000),
        st.sampled_from(["stop", "toolUse", "length", "error"]),
    ),
    st.builds(lambda n, ms: _reset(n, ms), st.integers(0, 2**31), ms_values),
    # an entry with no message of its own where no boot follows: a marker alone (a window
    # whose boot was lost), another extension's custom entry
    st.builds(lambda n, ms: _reset(n, ms)[:1], st.integers(0, 2**31), ms_values),
    st.builds(
        lambda n, ms: [
            {"type": "custom", "id": f"o{n:07x}", "timestamp": _iso(ms), "customType": "ext/x"}
        ],
        st.integers(0, 2**31),
        ms_values,
    ),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(steps, min_size=1, max_size=6))
def test_entries_to_messages_to_entries_keeps_everything_the_lifecycle_reads(
    groups: list[list[dict[str, JSON]]],
) -> None:
    # Given a branch of Pi entries as this host writes them (ids of conversation entries aside)
    entries = [
        dict(e, id=e.get("id", f"{i:08x}")) for i, e in enumerate(x for g in groups for x in g)
    ]
    for entry in entries:
        if entry["type"] == "message":
            entry["timestamp"] = _iso(entry["message"]["timestamp"])
    if len({e["id"] for e in entries}) < len(entries):
        return
    # a branch has a message for what has none of its own to travel with (a root boot at least)
    assume(any(e["type"] in ("message", "custom_message") for e in entries))
    # When they become a pydantic-ai history and entries again
    back = messages_to_entries(entries_to_messages(entries), parent_id=None, mint=_mint())
    # Then every entry keeps what the lifecycle reads; its own entries keep ids and times too
    assert [_lifecycle_view(e) for e in back] == [_lifecycle_view(e) for e in entries]


def _lifecycle_view(entry: dict[str, JSON]) -> JSON:
    if entry["type"] == "message":
        return {"type": "message", "message": entry["message"], "timestamp": entry["timestamp"]}
    return {k: v for k, v in entry.items() if k not in ("parentId", "pydanticAi")}
