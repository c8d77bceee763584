"""The scripted provider's usage accountings: the default estimate, and pi-ai faux's cache
arithmetic
checked against every faux reply of the real Pi 0.87.1 traces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shared_paths import TRACES

from pictx_fsm.hosts.model import EstimatedUsage, FauxCacheUsage
from pictx_fsm.hosts.model.provider_usage import (
    ProviderRequest,
    common_prefix_units,
    serialize_context,
)
from pictx_fsm.session.estimate import CharsCounter
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.projection import context_messages, convert_to_llm, iso_to_epoch_ms
from pictx_fsm.session.tree import SessionTree

SYSTEM = {"role": "system", "content": "", "sections": {"preamble": "You are pi."}}
PROMPT = {"role": "user", "content": [{"type": "text", "text": "Say hello"}]}
REPLY = ({"type": "text", "text": "Hello there."},)


def _request(messages: list[Any], session: str = "s1", tokens: int = 0) -> ProviderRequest:
    return ProviderRequest(messages=messages, tokens=tokens, session_id=session)


def _figures(usage: dict[str, Any]) -> tuple[int, int, int, int]:
    return usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]


def test_faux_counts_a_session_s_first_prompt_twice_as_input_and_as_cache_write() -> None:
    # Given a fresh faux accounting
    faux = FauxCacheUsage()
    # When a session sends its first request
    usage = faux.usage(_request([SYSTEM, PROMPT]), REPLY)
    # Then the whole prompt (ceil(chars / 4) of the serialized context) is both input and
    # cacheWrite, and totalTokens adds everything up
    prompt = -(-len(serialize_context([SYSTEM, PROMPT])) // 4)
    assert _figures(usage) == (prompt, 3, 0, prompt)
    assert usage["totalTokens"] == 2 * prompt + 3


def test_faux_reads_the_shared_prefix_from_cache_and_writes_the_rest_per_session() -> None:
    # Given a session that sent one request
    faux = FauxCacheUsage()
    first = faux.usage(_request([SYSTEM, PROMPT]), REPLY)
    follow = [SYSTEM, PROMPT, {"role": "assistant", "content": list(REPLY)}, PROMPT]
    # When the same session extends the prompt, and another session sends the same prompt
    second = faux.usage(_request(follow), REPLY)
    other = faux.usage(_request(follow, "s2"), REPLY)
    # Then the first prompt is read from cache in its session only; the rest is counted twice
    assert second["cacheRead"] == first["cacheWrite"]
    assert second["input"] == second["cacheWrite"] > 0
    assert other["cacheRead"] == 0
    assert other["input"] == other["cacheWrite"]


def test_estimated_usage_reports_the_host_estimate_and_nothing_cached() -> None:
    # Given the default accounting
    usage = EstimatedUsage(CharsCounter()).usage(_request([SYSTEM, PROMPT], tokens=42), REPLY)
    # Then input is the scripted provider's estimate of the request, output the reply's, no cache
    # figures
    assert _figures(usage) == (42, 3, 0, 0)
    assert usage["totalTokens"] == 45


def test_faux_serializes_roles_tool_calls_results_and_images_like_pi_ai() -> None:
    # Given one message of each role
    messages = [
        SYSTEM,
        {"role": "user", "content": [{"type": "image", "mimeType": "image/png", "data": "QUJD"}]},
        {"role": "assistant", "content": [{"type": "toolCall", "name": "echo", "arguments": {}}]},
        {"role": "toolResult", "toolName": "echo", "content": [{"type": "text", "text": "x"}]},
    ]
    # Then each is role:text, blank-line separated
    assert serialize_context(messages) == (
        "system:You are pi.\n\nuser:[image:image/png:4]\n\nassistant:echo:{}\n\ntoolResult:echo\nx"
    )


@given(st.text(max_size=20), st.text(max_size=6), st.text(max_size=6))
def test_the_cached_prefix_is_measured_in_utf16_code_units(
    shared: str, left: str, right: str
) -> None:
    # Given two strings with a common start (astral characters included)
    a, b = shared + left, shared + right
    # Then the common prefix equals a unit-by-unit comparison of their UTF-16 forms
    ua, ub = a.encode("utf-16-le"), b.encode("utf-16-le")
    units = (
        [ua[i : i + 2] for i in range(0, len(ua), 2)],
        [ub[i : i + 2] for i in range(0, len(ub), 2)],
    )
    naive = 0
    while naive < min(map(len, units)) and units[0][naive] == units[1][naive]:
        naive += 1
    assert common_prefix_units(a, b) == naive


def test_two_astral_characters_sharing_a_high_surrogate_share_one_unit() -> None:
    # Given 😀 (U+1F600) and 😁 (U+1F601): same high surrogate, different low ones
    assert common_prefix_units("a\U0001f600", "a\U0001f601") == 2


def _faux_replies() -> list[Path]:
    return sorted(TRACES.glob("*.session.jsonl")) if TRACES.is_dir() else []


@pytest.mark.skipif(not _faux_replies(), reason="../shared/pi-traces is absent")
@pytest.mark.parametrize("path", _faux_replies(), ids=lambda p: p.name)
def test_faux_accounting_reproduces_the_usage_of_every_faux_reply_in_the_real_traces(
    path: Path,
) -> None:
    # Given a real Pi 0.87.1 session written with pi-ai's faux model, and each reply's request
    # rebuilt from the session (the context up to the reply's parent)
    session = read_session(path)
    tree = SessionTree.from_entries(session.header, session.entries)
    started = iso_to_epoch_ms(session.header.timestamp) or 0
    faux, offset, checked = FauxCacheUsage(), None, 0
    for entry in session.entries:
        raw = entry.message.raw if entry.type == "message" else None
        if raw is None or raw.get("role") != "assistant" or raw.get("provider") != "faux":
            continue
        want = raw["usage"]
        if not any(want[k] for k in ("input", "output", "cacheRead", "cacheWrite")):
            continue  # aborted before the request: no provider call, no cache update
        request = convert_to_llm(context_messages(tree.branch(entry.parent_id)))
        # a fork copies its parent's replies, which were cached under the parent's session
        key = session.header.id if raw["timestamp"] >= started else "parent"
        got = faux.usage(_request(request, key), raw.get("content") or [])
        # The traces' machine paths were rewritten to shorter /workspace/... paths after the
        # run: the first prompt lost the same few tokens in every session
        if offset is None:
            offset = want["cacheWrite"] - got["cacheWrite"]
            assert 0 <= offset <= 16
        if raw.get("stopReason") == "aborted":
            continue  # the usage of the whole scripted reply, the content a streamed part
        # When its usage is recomputed with the faux arithmetic
        # Then output is exact, the prompt is exact up to that offset (±1 rounding), and
        # after the first request the cache figures match
        assert got["output"] == want["output"]
        prompt, wanted = got["input"] + got["cacheRead"] + offset, want["input"] + want["cacheRead"]
        assert abs(prompt - wanted) <= 1
        assert (got["cacheRead"] == 0) == (want["cacheRead"] == 0)
        if got["cacheRead"]:
            assert abs(got["cacheWrite"] - want["cacheWrite"]) <= 1
        checked += 1
    assert checked > 0
