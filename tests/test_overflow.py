"""Overflow classification of a turn's final message (lifecycle spec R33, §20.7)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shared_paths import SHARED

from pictx_fsm.host.events import ModelInfo
from pictx_fsm.host.overflow import (
    PI_0_87,
    PI_MONO_LEGACY,
    OverflowPatterns,
    is_context_overflow,
    is_overflow_like,
    is_recoverable_length,
)
from pictx_fsm.session.entries import AgentMessage

MODEL = ModelInfo(provider="anthropic", id="claude", context_window=200_000, max_tokens=4096)


def assistant(
    stop_reason: str,
    error: str | None = None,
    *,
    provider: str = "anthropic",
    input_tokens: int = 0,
    output: int = 0,
    cache_read: int = 0,
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [],
        "provider": provider,
        "stopReason": stop_reason,
        "usage": {"input": input_tokens, "output": output, "cacheRead": cache_read},
    }
    if error is not None:
        message["errorMessage"] = error
    return message


# -- R33 spec fixtures --------------------------------------------------------------------------


def test_r33_prompt_too_long_error_is_overflow() -> None:
    # Given the T-AL@5a9d error turn
    message = assistant("error", "Prompt too long: context exceeds maximum context length")
    # When it is classified with and without a model
    # Then it is overflow-like either way
    assert is_overflow_like(message, MODEL) is True
    assert is_overflow_like(message, None) is True


def test_r33_length_stop_below_max_tokens_is_overflow_like() -> None:
    # Given stopReason "length" with 1 output token and maxTokens 4096
    message = assistant("length", output=1)
    # Then it is recoverable, hence overflow-like, but only when a model is known
    assert is_recoverable_length(message, 4096) is True
    assert is_overflow_like(message, MODEL) is True
    assert is_overflow_like(message, None) is False


def test_r33_rate_limit_error_is_ordinary() -> None:
    # Given a rate-limit error
    message = assistant("error", "rate limit: try again later")
    # Then it is not overflow
    assert is_overflow_like(message, MODEL) is False


def test_r33_legacy_pattern_list_misses_prompt_too_long_without_is() -> None:
    # Given the older pi-mono list (first pattern "prompt is too long")
    spec_fixture = assistant("error", "Prompt too long: context exceeds maximum context length")
    anthropic = assistant("error", "prompt is too long: 213462 tokens > 200000 maximum")
    # Then only the Pi 0.87 list matches the spec fixture; both match Anthropic's text
    assert is_context_overflow(spec_fixture, None, PI_MONO_LEGACY) is False
    assert is_context_overflow(spec_fixture, None, PI_0_87) is True
    assert is_context_overflow(anthropic, None, PI_MONO_LEGACY) is True


def test_r33_only_assistant_messages_can_be_overflow_like() -> None:
    # Given a user message carrying overflow-looking fields
    message = {**assistant("error", "prompt is too long"), "role": "user"}
    # Then it is never overflow-like
    assert is_overflow_like(message, MODEL) is False


# -- R33 the three detector cases -------------------------------------------------------------


def test_r33_silent_overflow_is_a_stop_whose_prompt_exceeds_the_window() -> None:
    # Given stop turns whose input + cacheRead is above, at, and without a window
    above = assistant("stop", input_tokens=150_000, cache_read=50_001)
    at = assistant("stop", input_tokens=150_000, cache_read=50_000)
    # Then only strictly above a known, non-zero window is overflow
    assert is_context_overflow(above, 200_000) is True
    assert is_context_overflow(at, 200_000) is False
    assert is_context_overflow(above, None) is False
    assert is_context_overflow(above, 0) is False


def test_r33_length_with_zero_output_and_a_full_window_is_overflow() -> None:
    # Given length stops with no output at and below 99% of the window
    full = assistant("length", input_tokens=198_000, output=0)
    short = assistant("length", input_tokens=197_999, output=0)
    # Then 99% is the inclusive bound
    assert is_context_overflow(full, 200_000) is True
    assert is_context_overflow(short, 200_000) is False


def test_r33_length_stop_at_max_tokens_is_not_recoverable() -> None:
    # Given a length stop that used the whole output budget, and a model without maxTokens
    message = assistant("length", output=4096)
    # Then it is not recoverable
    assert is_recoverable_length(message, 4096) is False
    assert is_recoverable_length(assistant("length", output=1), 0) is False
    assert is_recoverable_length(assistant("length", output=1), None) is False


def test_r33_cerebras_bodyless_pattern_applies_only_to_cerebras() -> None:
    # Given a body-less 413 from cerebras and the same text from another provider
    cerebras = assistant("error", "413 status code (no body)", provider="cerebras")
    other = assistant("error", "413 status code (no body)", provider="openai")
    # Then only the cerebras one is overflow
    assert is_context_overflow(cerebras, None) is True
    assert is_context_overflow(other, None) is False


def test_r33_missing_usage_numbers_never_signal_a_silent_or_length_overflow() -> None:
    # Given stop and length turns without usage (JS: NaN comparisons are false)
    stop = {"role": "assistant", "stopReason": "stop"}
    length = {"role": "assistant", "stopReason": "length"}
    # Then neither is overflow
    assert is_context_overflow(stop, 200_000) is False
    assert is_overflow_like(length, MODEL) is False


def test_r33_agent_message_and_mapping_classify_alike() -> None:
    # Given the same raw message as a persisted AgentMessage and as a mapping
    raw = assistant("error", "prompt is too long: 213462 tokens > 200000 maximum")
    message = AgentMessage(role="assistant", raw=raw)
    # Then both adapters agree
    assert is_overflow_like(message, MODEL) is is_overflow_like(raw, MODEL) is True


def test_r33_patterns_use_javascript_ascii_digits() -> None:
    # Given "\d" patterns fed Arabic-Indic digits (JS \d is ASCII only)
    message = assistant("error", "maximum prompt length is ١٣١٠٧٢")
    # Then the pattern does not match, as in Pi
    assert is_context_overflow(message, None) is False
    assert is_context_overflow(assistant("error", "maximum prompt length is 131072"), None)


def test_r33_pattern_lists_are_configurable_values() -> None:
    # Given a host whose detector knows one extra provider text
    custom = OverflowPatterns(
        overflow=(*PI_0_87.overflow, r"my provider ran out of room"),
        non_overflow=PI_0_87.non_overflow,
        bodyless=PI_0_87.bodyless,
    )
    message = assistant("error", "My Provider ran out of room")
    # Then only that configuration classifies the text as overflow
    assert is_context_overflow(message, None, custom) is True
    assert is_context_overflow(message, None) is False
    assert custom != PI_0_87


# -- non-overflow veto (property) ------------------------------------------------------------------

OVERFLOW_TEXTS = (
    "prompt is too long: 213462 tokens > 200000 maximum",
    "Too many tokens",
    "model_context_window_exceeded",
    "context_length_exceeded",
    "413 status code (no body)",
)
VETO_FRAGMENTS = (
    "rate limit",
    "RATE LIMIT",
    "Rate Limit",
    "too many requests",
    "Too Many Requests",
)
VETO_PREFIXES = ("Throttling error:", "Service unavailable:", "THROTTLING ERROR:")


@st.composite
def vetoed_errors(draw: st.DrawFn) -> str:
    overflow = draw(st.sampled_from(OVERFLOW_TEXTS))
    filler = draw(st.text(max_size=20))
    if draw(st.booleans()):
        return draw(st.sampled_from(VETO_PREFIXES)) + filler + overflow
    fragment = draw(st.sampled_from(VETO_FRAGMENTS))
    parts = [filler, fragment, overflow]
    order = draw(st.permutations(parts))
    return " ".join(order)


@given(
    error=vetoed_errors(),
    provider=st.sampled_from(["cerebras", "openai"]),
    patterns=st.sampled_from([PI_0_87, PI_MONO_LEGACY]),
)
def test_r33_an_error_matching_a_non_overflow_pattern_is_never_overflow(
    error: str, provider: str, patterns: OverflowPatterns
) -> None:
    # Given an error text that contains a non-overflow pattern, whatever else it says
    message = assistant("error", error, provider=provider)
    # When it is classified
    # Then the veto holds
    assert is_context_overflow(message, 200_000, patterns) is False


@given(stop_reason=st.text(max_size=10).filter(lambda s: s not in ("error", "stop", "length")))
def test_r33_other_stop_reasons_are_never_overflow(stop_reason: str) -> None:
    # Given any other stop reason with overflow-looking fields
    message = assistant(
        stop_reason, "prompt is too long", input_tokens=10**9, output=0, cache_read=10**9
    )
    # Then it is never overflow-like
    assert is_overflow_like(message, MODEL) is False


# -- real error messages --------------------------------------------------------------------------


def _assistant_messages(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            yield number, message


def _shared(relative: str) -> Path:
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{relative} is not available beside the repository")
    return path


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("relative", "error", "overflow"),
    [
        (
            "corpora/pi-sessions/real/openclaw-rs__chairong-5f89f070.jsonl",
            "Unhandled stop reason: model_context_window_exceeded",
            True,
        ),
        (
            "pi-traces/e_overflow.session.jsonl",
            "prompt is too long: 213462 tokens > 200000 maximum",
            True,
        ),
        ("pi-traces/e3_retryable_error.session.jsonl", "529 overloaded_error: Overloaded", False),
    ],
)
def test_r33_real_error_messages_classify_as_pi_did(
    relative: str, error: str, overflow: bool
) -> None:
    # Given the real assistant error messages of a recorded session
    found = [
        message
        for _, message in _assistant_messages(_shared(relative))
        if message.get("errorMessage") == error
    ]
    assert found, f"{relative} has no message {error!r}"
    # When each is classified against a 200k model
    # Then each has the expected class
    assert all(is_overflow_like(message, MODEL) is overflow for message in found)


@pytest.mark.corpus
def test_r33_the_corpus_overflow_errors_are_exactly_the_context_window_ones() -> None:
    # Given every assistant error message in the real and synthetic session corpora
    corpus = _shared("corpora/pi-sessions")
    errors = {
        message["errorMessage"]
        for path in sorted(corpus.glob("*/*.jsonl"))
        for _, message in _assistant_messages(path)
        if message.get("stopReason") == "error" and isinstance(message.get("errorMessage"), str)
    }
    # When each is classified
    overflow = {error for error in errors if is_overflow_like(assistant("error", error), None)}
    # Then only the model_context_window_exceeded ones are overflow (quota, 429, 401, ... are not)
    assert overflow
    assert all("model_context_window_exceeded" in error for error in overflow)
    assert {e for e in errors if "model_context_window_exceeded" in e} == overflow
