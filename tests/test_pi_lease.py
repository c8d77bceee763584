"""The lease on quiet hooks (pictx_fsm/hosts/pi/lease.py, lease.mjs): its bound covers both of
Pi's estimates, the server grants it only when every covered hook is a no-op, and checks
every leased answer against its own decision."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from node_batch import NodeBatch
from session_builders import SessionBuilder

from pictx_fsm.hosts.pi import lease
from pictx_fsm.hosts.pi.server import BridgeSession, answer
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.estimate import CharsCounter, TiktokenCounter, TokenCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import branch_tokens_of, window_tokens_of

# -- generated entries -------------------------------------------------------------------------

TEXT = st.text(st.characters(codec=None, exclude_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["", "\ud83d", "a\udc00b", "emoji 😀 and 中文", "quote \" and \\ back", "\u2028"]
)
"""Unicode text, lone UTF-16 surrogates (a cut emoji) and characters JSON escapes."""
NUMBER = st.integers(-5, 10**6) | st.floats(-1e6, 1e6, allow_nan=False) | st.none()
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
IMAGE = st.fixed_dictionaries({"type": st.just("image"), "data": TEXT, "mimeType": st.just("image/png")})
TEXT_BLOCK = st.builds(lambda t: {"type": "text", "text": t}, TEXT)
THINKING = st.builds(lambda t: {"type": "thinking", "thinking": t}, TEXT)
TOOL_CALL = st.builds(
    lambda n, a: {"type": "toolCall", "id": "c", "name": n, "arguments": a}, TEXT, JSON_VALUE
)
USAGE = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "input": NUMBER,
        "output": NUMBER,
        "cacheRead": NUMBER,
        "cacheWrite": NUMBER,
        "totalTokens": NUMBER,
    },
)
STAMP = st.integers(0, 10**13) | st.none()


def _message(role: str, content: Any, stamp: Any, **fields: Any) -> dict[str, Any]:
    message = {"role": role, "content": content, **fields}
    if stamp is not None:
        message["timestamp"] = stamp
    return {"type": "message", "message": message}


USER = st.builds(
    lambda c, s: _message("user", c, s),
    TEXT | st.lists(TEXT_BLOCK | IMAGE, max_size=3),
    STAMP,
)
ASSISTANT = st.builds(
    lambda c, s, u, stop: _message(
        "assistant", c, s, stopReason=stop, **({} if u is None else {"usage": u})
    ),
    st.lists(TEXT_BLOCK | THINKING | TOOL_CALL, max_size=3),
    STAMP,
    USAGE,
    st.sampled_from(["stop", "toolUse", "length", "aborted", "error"]),
)
TOOL_RESULT = st.builds(
    lambda c, s: _message("toolResult", c, s, toolCallId="c", toolName="t", isError=False),
    st.lists(TEXT_BLOCK | IMAGE, max_size=3),
    STAMP,
)
CUSTOM_MESSAGE = st.builds(
    lambda c, d: {"type": "custom_message", "customType": "other", "content": c, "display": d},
    TEXT | st.lists(TEXT_BLOCK | IMAGE, max_size=2),
    st.booleans(),
)
OTHER = st.sampled_from(
    [
        {"type": "custom", "customType": "note", "data": {"k": 1}},
        {"type": "model_change", "provider": "faux", "modelId": "faux-1"},
        {"type": "thinking_level_change", "thinkingLevel": "off"},
    ]
)
APPENDED = st.lists(USER | ASSISTANT | TOOL_RESULT | CUSTOM_MESSAGE | OTHER, max_size=8)


def _grow(builder: SessionBuilder, raw: Mapping[str, Any]) -> None:
    fields = {k: v for k, v in raw.items() if k != "type"}
    builder.add(str(raw["type"]), **fields)


def _base(builder: SessionBuilder, marked: bool) -> None:
    builder.system()
    builder.user("the first prompt")
    builder.assistant("the first answer", total=500)
    if marked:
        builder.marker("pcw:w1")
        builder.boot("pcw:w1")
        builder.continuation()


def _json(entries: list[Entry]) -> list[dict[str, Any]]:
    return json.loads(json.dumps([e.to_json() for e in entries], ensure_ascii=True))


def _estimate(tree: SessionTree, marked: bool, counter: TokenCounter) -> int | None:
    branch = tree.branch()
    if marked:
        return window_tokens_of(branch, tree.current_window, counter)
    return branch_tokens_of(branch, counter)


def _js_bound(
    node: NodeBatch, base: int, leaf: str | None, chunks: list[list[Entry]], per_byte: bool
) -> int | None:
    request = {"op": "bound", "base": base, "leaf": leaf, "perByte": per_byte}
    request["chunks"] = [_json(chunk) for chunk in chunks]
    return node.ask(request)["bound"]  # type: ignore[no-any-return]


ESTIMATES = [
    pytest.param(False, CharsCounter, False, id="host-chars"),
    pytest.param(True, CharsCounter, False, id="window-chars"),
    pytest.param(True, TiktokenCounter, True, id="window-tiktoken"),
]


@pytest.mark.parametrize(("marked", "counter", "per_byte"), ESTIMATES)
@settings(max_examples=60, deadline=None)
@given(appended=APPENDED, split=st.integers(0, 8))
def test_R47_R48_the_lease_bound_covers_the_estimate_after_any_appended_entries(
    node: NodeBatch,
    marked: bool,
    counter: type[CharsCounter] | type[TiktokenCounter],
    per_byte: bool,
    appended: list[dict[str, Any]],
    split: int,
) -> None:
    # Given a session whose window estimate is known, the lease's base
    builder = SessionBuilder()
    _base(builder, marked)
    tree = builder.tree
    base = _estimate(tree, marked, counter())
    assume(base is not None)
    assert base is not None
    leaf, before = tree.leaf_id, len(tree.entries)
    # When entries are appended (unicode, images, tool calls, usages, stamps out of order)
    # and the extension observes them in two deltas
    for raw in appended:
        _grow(builder, raw)
    new = list(tree.entries[before:])
    bound = _js_bound(node, base, leaf, [new[:split], new[split:]], per_byte)
    # Then its bound is the Python twin's, and at least the estimate wherever that is known
    twin = lease.bound_after(base, [e.to_json() for e in new], per_byte)
    assert bound is not None and twin is not None
    estimate = _estimate(tree, marked, counter())
    if estimate is not None:
        assert bound >= estimate
        assert twin >= estimate


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "custom", "customType": "pi-context/reset-marker", "data": {"windowId": "pcw:x"}},
        {"type": "custom_message", "customType": "pi-context/boot", "content": "b"},
        {"type": "compaction", "summary": "s", "firstKeptEntryId": "x", "tokensBefore": 1},
        {"type": "message", "message": {"role": "system", "content": "new prompt"}},
        {"type": "message", "message": {"role": "bashExecution", "command": "ls", "output": ""}},
        {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "1e+21"}]}},
    ],
    ids=["marker", "boot", "compaction", "system", "bash", "exponent"],
)
def test_an_entry_the_bound_cannot_cover_voids_the_lease(
    node: NodeBatch, raw: dict[str, Any]
) -> None:
    # Given a held lease; When an entry arrives that may change the estimate otherwise
    entry = {"id": "e1", "parentId": "base", "timestamp": "t", **raw}
    # Then both the extension and its twin void the lease
    assert node.ask({"op": "bound", "base": 10, "leaf": "base", "perByte": False, "chunks": [[entry]]})["bound"] is None
    assert lease.bound_after(10, [entry], False) is None


def test_entries_on_another_branch_void_the_lease(node: NodeBatch) -> None:
    # Given a lease held at leaf "base"; When the next delta does not continue from it
    entry = {"type": "custom", "id": "e1", "parentId": "elsewhere", "timestamp": "t", "customType": "n", "data": {}}
    # Then the lease is void
    assert node.ask({"op": "bound", "base": 10, "leaf": "base", "perByte": False, "chunks": [[entry]]})["bound"] is None
