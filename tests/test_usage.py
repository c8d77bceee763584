"""Token usage of the active window (lifecycle R47–R48), from scratch and incrementally."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_builders import OPS, SessionBuilder, grow
from shared_paths import TRACES

from pictx_fsm.extensions.pi_context.usage import (
    UsageIndex,
    WindowEstimate,
    active_tokens_of,
    window_tokens_of,
)
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.session.entries import AgentMessage, Entry, MessageEntry
from pictx_fsm.session.estimate import (
    CharsCounter,
    EstimateError,
    MessageText,
    TiktokenCounter,
    _host_text,
    estimate_host,
    estimate_window,
    host_text,
    js_json,
    js_length,
    window_text,
)
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import HostEstimate, branch_tokens_of
from pictx_fsm.session.usage_tally import Tally

CHARS = CharsCounter()
W1 = "pcw:01a22a68:00000001"


@cache
def tiktoken_counter() -> TiktokenCounter:
    return TiktokenCounter()


def reply(tokens: int, *, stop: str = "stop", stamp: int = 10, text: str = "") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens},
        "stopReason": stop,
        "timestamp": stamp,
    }


def said(text: str, stamp: int = 10) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": stamp}


# -- the estimator (pi-ai estimateContextTokens) ------------------------------------------------


def test_r48_estimate_is_the_last_usage_plus_the_messages_after_it() -> None:
    messages = [said("x" * 40), reply(500), said("y" * 8), said("z" * 5)]
    assert estimate_window(messages, CHARS) == 500 + 2 + 2


def test_r48_without_usage_every_message_is_estimated() -> None:
    assert estimate_window([said("x" * 40), said("y" * 8)], CHARS) == 10 + 2


@pytest.mark.parametrize("stop", ["aborted", "error"])
def test_r48_usage_of_an_aborted_or_failed_reply_is_not_trusted(stop: str) -> None:
    messages = [said("x" * 40), reply(300), said("q" * 4), reply(9000, stop=stop, text="abcd")]
    assert estimate_window(messages, CHARS) == 300 + 1 + 1


def test_r48_zero_usage_is_not_trusted() -> None:
    assert estimate_window([said("x" * 40), reply(0, text="abcd")], CHARS) == 10 + 1


def test_r48_usage_older_than_an_earlier_message_is_not_trusted() -> None:
    # Given a compaction summary (newer timestamp) placed before a kept reply
    messages = [said("summary" * 4, stamp=99), said("q" * 4, stamp=5), reply(7000, stamp=6)]
    # Then the reply's usage does not describe this prefix: everything is estimated
    assert estimate_window(messages, CHARS) == 7 + 1 + 0


def test_usage_total_falls_back_to_the_sum_of_its_parts() -> None:
    message = reply(0)
    message["usage"] = {"input": 100, "output": 20, "cacheRead": 3, "cacheWrite": 4}
    assert estimate_window([message], CHARS) == 127


def test_r48_a_trusted_reply_without_usage_makes_the_estimate_fail() -> None:
    message = reply(1)
    del message["usage"]
    with pytest.raises(EstimateError):
        estimate_window([message], CHARS)
    assert estimate_host([message], CHARS) == 0


# -- what a message shows -----------------------------------------------------------------------


def test_window_estimate_counts_only_the_content_of_a_system_message() -> None:
    system = {"role": "system", "content": "", "sections": {"p": "x" * 400}, "toolsAdded": [{}]}
    assert window_text(system) == MessageText()
    with pytest.raises(EstimateError):
        window_text({**system, "content": "instructions"})


def test_host_estimate_counts_the_system_prompt_sections_and_tools() -> None:
    system = {"role": "system", "content": "", "sections": {"p": "abcd"}, "toolsAdded": [{"n": 1}]}
    assert host_text(system).parts == ("", "abcd", '[{"n":1}]')


def test_assistant_text_counts_text_thinking_and_tool_call_name_with_json_arguments() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "thinking", "thinking": "hmm"},
            {"type": "toolCall", "id": "c", "name": "echo", "arguments": {"text": "A", "ms": 40.0}},
        ],
    }
    expected = ("hi", "hmm", "echo", '{"text":"A","ms":40}')
    assert window_text(message).parts == expected
    assert host_text(message).parts == expected


def test_host_counts_bash_runs_summaries_and_custom_content() -> None:
    assert host_text({"role": "bashExecution", "command": "ls", "output": "a"}).parts == ("ls", "a")
    assert host_text({"role": "compactionSummary", "summary": "S"}).parts == ("S",)
    assert host_text({"role": "custom", "content": "c"}).parts == ("c",)


_BLOCKS = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=4)}),
    st.fixed_dictionaries({"type": st.just("image")}),
    st.fixed_dictionaries(
        {"type": st.just("toolCall"), "name": st.text(max_size=3), "arguments": st.just({"a": 1.0})}
    ),
    st.integers(),
)
_MESSAGES = st.fixed_dictionaries(
    {
        "role": st.sampled_from(("user", "assistant", "toolResult", "custom", "system", "other")),
        "content": st.one_of(st.text(max_size=4), st.lists(_BLOCKS, max_size=3), st.none()),
    },
    optional={"summary": st.text(max_size=3), "sections": st.just({"p": "x"})},
)


@given(st.lists(_MESSAGES, min_size=1, max_size=4))
def test_a_messages_host_text_is_what_reading_it_afresh_gives(messages: list[Any]) -> None:
    # Given messages read twice (the second time their kept texts)
    for _ in range(2):
        for message in messages:
            # When each one's host text is taken
            # Then it is the text the message gives when read afresh
            assert host_text(message) == _host_text(message)
    # And an equal message that is another object gives the same text
    for message in messages:
        assert host_text(dict(message)) == host_text(message)


def test_chars_counter_is_ceil_of_js_length_over_four_with_images_as_4800() -> None:
    assert CHARS.count(MessageText(parts=("abcde",))) == 2
    assert js_length("a😀") == 3
    assert CHARS.count(MessageText(parts=("😀😀",))) == 1
    assert CHARS.count(MessageText(images=1)) == 1200


def test_tiktoken_counter_counts_cl100k_tokens() -> None:
    counter = tiktoken_counter()
    assert counter.count(MessageText(parts=("hello world",))) == 2
    assert counter.count(MessageText(parts=("hello world",), images=1)) == 2 + 1200
    assert counter.count(MessageText()) == 0


def test_js_json_prints_like_json_stringify() -> None:
    assert js_json({"a": [1.0, 2.5, "é"], "b": None}) == '{"a":[1,2.5,"é"],"b":null}'


# -- R47/R48 over a branch ----------------------------------------------------------------------


def window_session() -> SessionBuilder:
    builder = SessionBuilder()
    builder.system()
    builder.user("x" * 400)
    builder.assistant("y" * 400, total=90_000)
    builder.marker(W1)
    return builder


def test_r48_usage_recorded_before_the_marker_is_never_used() -> None:
    builder = window_session()
    builder.boot(W1, "b" * 40)
    builder.continuation("c" * 8)
    assert (
        window_tokens_of(builder.tree.branch(), WindowIndex.of(builder.tree).current_window, CHARS)
        == 10 + 2
    )


def test_r48_a_reply_in_the_window_anchors_the_estimate() -> None:
    builder = window_session()
    builder.boot(W1, "b" * 40)
    builder.assistant("a", total=1500)
    builder.user("q" * 12)
    assert (
        window_tokens_of(builder.tree.branch(), WindowIndex.of(builder.tree).current_window, CHARS)
        == 1503
    )


def test_r48_missing_boot_makes_usage_unknown() -> None:
    builder = window_session()
    builder.user("after the marker")
    assert (
        window_tokens_of(builder.tree.branch(), WindowIndex.of(builder.tree).current_window, CHARS)
        is None
    )


def test_r48_a_hidden_boot_makes_usage_unknown() -> None:
    builder = window_session()
    boot = builder.boot(W1)
    builder.edit(boot, None)
    assert (
        window_tokens_of(builder.tree.branch(), WindowIndex.of(builder.tree).current_window, CHARS)
        is None
    )


def test_r47_root_window_usage_is_the_host_estimate_of_the_whole_branch() -> None:
    builder = SessionBuilder()
    builder.system({"p": "abcd"})
    builder.user("x" * 8)
    branch = builder.tree.branch()
    assert active_tokens_of(branch, WindowIndex.of(builder.tree).current_window, CHARS) == 1 + 2


def test_host_usage_is_unknown_after_a_compaction_until_a_settled_reply() -> None:
    builder = SessionBuilder()
    builder.user("q")
    builder.assistant("a", total=5000)
    builder.compaction("S")
    assert branch_tokens_of(builder.tree.branch(), CHARS) is None
    builder.assistant("", total=0, stop="error")
    assert branch_tokens_of(builder.tree.branch(), CHARS) is None
    builder.assistant("b", total=700)
    assert branch_tokens_of(builder.tree.branch(), CHARS) == 700


# -- the host estimate against real Pi runs ---------------------------------------------------

KNOWN_DIVERGENCES = {("e_overflow", "b0b5b8f7"), ("e2_overflow_twice", "8bdded3e")}
"""After overflow recovery hides the failed reply, Pi reported a chars-only estimate (2332,
2334) although the earlier replies' usage still qualifies by every rule visible in the
session file; the cause lies in the host's in-memory agent state, not in the file."""


def unrewritten(entries: tuple[Entry, ...], padding: int) -> list[Entry]:
    """Undo the traces' path rewrite in the system prompt's length (README: character counts
    were taken before paths were shortened)."""
    restored: list[Entry] = []
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.message.role == "system":
            raw = dict(entry.message.raw)
            raw["sections"] = {**raw["sections"], "cwd": raw["sections"]["cwd"] + "x" * padding}
            entry = attrs.evolve(entry, message=AgentMessage(role="system", raw=raw))
        restored.append(entry)
    return restored


def trace_usages() -> list[Any]:
    if not TRACES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{TRACES} is absent"))]
    return [
        pytest.param(name, id=name)
        for name in sorted(p.name.split(".")[0] for p in TRACES.glob("*.events.jsonl"))
        if not name.startswith("cli_")  # no provider lines: the rewrite offset is unknown
    ]


@pytest.mark.corpus
@pytest.mark.parametrize("name", trace_usages())
def test_host_estimate_equals_every_usage_pi_reported(name: str) -> None:
    # Given the events of one run and the session files it wrote
    events = [
        json.loads(line) for line in (TRACES / f"{name}.events.jsonl").read_text().splitlines()
    ]
    prompt_chars = next(e["payload"]["systemPromptChars"] for e in events if e["src"] == "provider")
    trees = []
    for path in TRACES.glob(f"{name}*.session.jsonl"):
        loaded = read_session(path)
        assert loaded.header is not None
        system = next(
            e for e in loaded.entries if getattr(e, "message", None) and e.message.role == "system"
        )
        padding = prompt_chars - len(
            "\n\n".join(s for s in system.message.raw["sections"].values() if s)
        )
        trees.append(SessionTree.from_entries(loaded.header, unrewritten(loaded.entries, padding)))
    # When each reported usage is recomputed at the leaf Pi was at
    mismatches = set()
    for event in events:
        ctx = event.get("ctx") or {}
        if "usage" not in ctx or not ctx.get("leaf"):
            continue
        tree = next(t for t in trees if ctx["leaf"] in t)
        if branch_tokens_of(tree.branch(ctx["leaf"]), CHARS) != ctx["usage"]["tokens"]:
            mismatches.add((name, ctx["leaf"]))
    # Then they all agree, except the documented overflow-recovery points
    assert mismatches == {d for d in KNOWN_DIVERGENCES if d[0] == name}


# -- the incremental index --------------------------------------------------------------------


def assert_index_matches_scratch(ops: list[tuple[str, int]], counter: Any) -> None:
    builder = SessionBuilder()
    index = UsageIndex(builder.tree, counter)
    ids: list[str] = []
    for serial, (kind, pick) in enumerate(ops):
        grow(builder, kind, pick, ids, serial)
        branch = builder.tree.branch()
        window = WindowIndex.of(builder.tree).current_window
        assert index.branch_tokens() == branch_tokens_of(branch, counter)
        assert index.active_window_tokens() == active_tokens_of(branch, window, counter)
        if not window.is_root:
            assert index.window_tokens() == window_tokens_of(branch, window, counter)


@settings(max_examples=250, deadline=None)
@given(OPS)
def test_property_incremental_usage_equals_recomputation(ops: list[tuple[str, int]]) -> None:
    # Given any sequence of appends, edits, compactions and navigations
    # Then after every step the index answers what a from-scratch computation gives
    assert_index_matches_scratch(ops, CHARS)


@settings(max_examples=30, deadline=None)
@given(OPS)
def test_property_incremental_usage_equals_recomputation_with_tiktoken(ops: Any) -> None:
    assert_index_matches_scratch(ops, tiktoken_counter())


class SpyCounter(CharsCounter):
    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: MessageText) -> int:
        self.calls += 1
        return super().count(text)


def retry_window() -> tuple[SessionBuilder, UsageIndex, SpyCounter]:
    builder = window_session()
    counter = SpyCounter()
    index = UsageIndex(builder.tree, counter)
    builder.boot(W1, "b" * 40)
    builder.assistant("a", total=1200)
    builder.user("q" * 40)
    return builder, index, counter


def test_a_retry_hiding_the_failed_reply_updates_usage_without_recounting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a window whose last reply failed
    builder, index, counter = retry_window()
    failed = builder.assistant("partial" * 10, stop="error")
    before = counter.calls

    def no_recount(*_: Any, **__: Any) -> None:
        raise AssertionError("the retry shape must be handled incrementally")

    monkeypatch.setattr(WindowEstimate, "recount", no_recount)
    monkeypatch.setattr(HostEstimate, "recount", no_recount)
    # When Pi's retry hides it
    builder.edit(failed, None)
    # Then usage drops by the failed reply, nothing was recounted or re-encoded
    assert index.active_window_tokens() == 1200 + 10
    assert counter.calls == before


def test_hiding_the_newest_message_lets_a_later_reply_anchor_again() -> None:
    # Given a window holding a message stamped after every later reply
    builder, index, _ = retry_window()
    future = builder.user("from the future", stamp=10**13)
    # When it is hidden and a reply follows
    builder.edit(future, None)
    builder.assistant("fresh", total=4321)
    # Then the reply's usage is trusted, as a recomputation says
    branch = builder.tree.branch()
    assert index.active_window_tokens() == 4321
    assert window_tokens_of(branch, WindowIndex.of(builder.tree).current_window, CHARS) == 4321


def test_a_message_stamped_after_a_reply_discounts_the_reply_until_hidden() -> None:
    builder, index, _ = retry_window()
    future = builder.user("from the future", stamp=10**13)
    builder.assistant("stale", total=4321)
    discounted = index.active_window_tokens()
    builder.edit(future, None)
    assert discounted != 4321
    assert index.active_window_tokens() == 4321


def test_every_entry_is_counted_once_per_estimate() -> None:
    builder, index, counter = retry_window()
    calls = counter.calls
    for serial in range(50):
        builder.user(f"question {serial}")
        index.active_window_tokens()
        index.active_window_tokens()
    assert counter.calls - calls == 50 * 2


def test_an_index_attached_to_an_existing_tree_replays_it() -> None:
    builder, _, _ = retry_window()
    late = UsageIndex(builder.tree, CHARS)
    branch = builder.tree.branch()
    assert late.active_window_tokens() == window_tokens_of(
        branch, WindowIndex.of(builder.tree).current_window, CHARS
    )


@given(st.lists(st.one_of(st.integers(), st.booleans(), st.none(), st.floats()), min_size=1))
def test_a_tally_copy_has_every_slot_of_the_tally_and_is_another_object(values: list[Any]) -> None:
    # Given a tally whose every slot holds some value
    tally = Tally()
    for index, name in enumerate(Tally.__slots__):
        setattr(tally, name, values[index % len(values)])
    # When it is copied
    twin = tally.copy()
    # Then the copy is another tally holding the very same value in every slot
    assert type(twin) is Tally and twin is not tally
    assert all(getattr(twin, name) is getattr(tally, name) for name in Tally.__slots__)
