"""Lifecycle §8 through the runtime: overflow recovery (R33–R39)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import MODEL, WINDOW, Kit, audits_verify  # noqa: F401

from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
)
from pictx_fsm.host import overflow
from pictx_fsm.host.effects import BoundaryResult, CancelResult, CustomDraft, HookResult
from pictx_fsm.host.events import ModelInfo, Outcome, TurnEnd
from pictx_fsm.host.settings import StaticSettingsSource

RESET_TAIL = [MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE]
INCOMING = (CustomDraft(custom_type="other/ext", data={}),)


def _started(**kw: Any) -> Kit:
    kit = Kit.create(**kw)
    kit.start()
    kit.build.user("task")
    return kit


def _types(result: HookResult) -> list[str]:
    assert isinstance(result.value, BoundaryResult)
    return [d.custom_type for d in result.value.entries]  # type: ignore[union-attr]


def _recovery(kit: Kit, **kw: Any) -> HookResult:
    return kit.before_settle(**kw)


def _recovered(result: HookResult) -> bool:
    return isinstance(result.value, BoundaryResult) and result.value.continue_ is True


def _overflow_state(kit: Kit) -> str:
    return kit.configuration("reset_control")["overflow"]


# -- R33 -----------------------------------------------------------------------------------------


def test_r33_spec_fixture_prompt_too_long_error_is_overflow() -> None:
    # Given the spec's error fixture
    kit = _started()
    kit.turn_end("", stop="error", error="Prompt too long: context exceeds maximum context length")
    # Then recovery is armed
    assert _overflow_state(kit) == "pending"


def test_r33_spec_fixture_recoverable_length_stop_is_overflow() -> None:
    # Given a length stop with 1 output token below maxTokens 4096
    kit = _started()
    model = attrs.evolve(MODEL, max_tokens=4096)
    message = {"role": "assistant", "stopReason": "length", "usage": {"input": 10, "output": 1}}
    kit.handle(TurnEnd(message=message), model=model)
    # Then recovery is armed
    assert _overflow_state(kit) == "pending"


def test_r33_spec_fixture_rate_limit_is_ordinary() -> None:
    kit = _started()
    kit.turn_end("", stop="error", error="rate limit: try again later")
    assert _overflow_state(kit) == "idle"


def test_r33_silent_overflow_stop_with_input_past_the_window() -> None:
    # Given a "stop" whose input + cacheRead exceeds the model's window
    kit = _started()
    message = {
        "role": "assistant",
        "stopReason": "stop",
        "usage": {"input": WINDOW, "cacheRead": 1},
    }
    kit.handle(TurnEnd(message=message))
    # Then it is overflow-like
    assert _overflow_state(kit) == "pending"


_STOP = st.sampled_from(["stop", "length", "error", "toolUse", "aborted"])
_ERRORS = st.sampled_from(
    [None, "prompt is too long: 1 > 0", "rate limit", "exceeds the context window", "boom",
     "Throttling error: prompt too long", "400 (no body)"]
)  # fmt: skip
_NUMBER = st.integers(min_value=0, max_value=2 * WINDOW)


@settings(max_examples=80, deadline=None)
@given(
    stop=_STOP,
    error=_ERRORS,
    provider=st.sampled_from(["faux", "cerebras"]),
    usage=st.fixed_dictionaries({"input": _NUMBER, "output": _NUMBER, "cacheRead": _NUMBER}),
    max_tokens=st.one_of(st.none(), st.integers(min_value=0, max_value=20_000)),
)
def test_r33_the_runtime_arms_exactly_when_pi_s_detector_says_overflow(
    stop: str, error: str | None, provider: str, usage: dict[str, int], max_tokens: int | None
) -> None:
    # Given any assistant message and model
    message: dict[str, Any] = {"role": "assistant", "stopReason": stop, "usage": usage}
    message["provider"] = provider
    if error is not None:
        message["errorMessage"] = error
    model = ModelInfo(provider=provider, id="m", context_window=WINDOW, max_tokens=max_tokens)
    kit = _started()
    # When a non-aborted turn ends with it
    outcome: Outcome = "error" if stop == "error" else "completed"
    kit.handle(TurnEnd(message=message, outcome=outcome), model=model)
    # Then recovery is armed iff Pi's overflow detector classifies the message as overflow
    expected = stop != "aborted" and overflow.is_overflow_like(message, model)
    assert (_overflow_state(kit) == "pending") is expected


# -- R34 -----------------------------------------------------------------------------------------


def test_r34_native_overflow_compaction_is_cancelled_silently() -> None:
    # Given an overflow turn (the host then tries its own overflow compaction)
    kit = _started()
    kit.overflow_turn()
    kit.agent_end()
    # When the host's compaction asks
    result = kit.compact("overflow")
    # Then pi-context cancels it without a notice
    assert isinstance(result.value, CancelResult) and result.notices == ()


# -- R35 -----------------------------------------------------------------------------------------


def test_r35_settle_recovers_with_incoming_drafts_then_the_reset_tail() -> None:
    # Given an armed overflow and a staged guidance
    kit = _started(tokens=WINDOW - 35_000)
    kit.context()
    kit.overflow_turn()
    kit.agent_end()
    # When the run is about to settle with incoming drafts
    result = _recovery(kit, incoming=INCOMING, outcome="error")
    # Then incoming ++ marker → boot → continuation with continue, and no budget draft here
    assert _types(result) == ["other/ext", *RESET_TAIL] and _recovered(result)
    assert _overflow_state(kit) == "spent"


def test_r35_the_guidance_staged_before_the_overflow_commits_at_its_turn_end() -> None:
    # Given a staged guidance when the overflow turn ends (R22: error turns keep drafts)
    kit = _started(tokens=WINDOW - 35_000)
    kit.context()
    result = kit.overflow_turn()
    # Then the guidance is in that turn_end's drafts, not in the recovery's
    assert _types(result) == [GUIDANCE_TYPE]
    assert GUIDANCE_TYPE not in _types(_recovery(kit))


def test_r35_nothing_armed_or_inactive_returns_undefined() -> None:
    kit = _started()
    assert _recovery(kit).value is None
    kit.overflow_turn()
    kit.shutdown()
    assert _recovery(kit).value is None


@pytest.mark.parametrize("queue", [{"pending": 1}, {"has_pending_messages": True}])
def test_r35_a_queued_turn_runs_first_and_keeps_recovery_armed(queue: dict[str, Any]) -> None:
    # Given an armed overflow and a queued message at settle time
    kit = _started()
    kit.overflow_turn()
    # When the run is about to settle
    result = _recovery(kit, **queue)
    # Then nothing is done and the flag stays set
    assert result.value is None and _overflow_state(kit) == "pending"
    # And if the queued turn overflows again, recovery still happens once
    kit.overflow_turn()
    assert _recovered(_recovery(kit))


@pytest.mark.parametrize("why", ["disabled", "automatic_off", "aborted_outcome", "signal"])
def test_r35_settle_clears_the_flag_without_reset_when_recovery_is_not_allowed(why: str) -> None:
    # Given an armed overflow
    source = StaticSettingsSource(global_settings={"compaction": {"enabled": True}})
    kit = _started(settings=source, cache_policy=False)
    kit.overflow_turn()
    kw: dict[str, Any] = {}
    if why == "disabled":
        kit.set_toggle("off")  # off without its clear
    elif why == "automatic_off":
        kit.runtime.settings = StaticSettingsSource(
            global_settings={"compaction": {"enabled": False}}
        )
    elif why == "aborted_outcome":
        kw["outcome"] = "aborted"
    else:
        kw["signal_aborted"] = True
    # When the run is about to settle
    result = _recovery(kit, **kw)
    # Then no reset and the flag is cleared (the chain is idle, recovery unused)
    assert result.value is None and _overflow_state(kit) == "idle"


# -- R36 -----------------------------------------------------------------------------------------


def test_r36_a_second_overflow_in_the_chain_does_not_reset_again() -> None:
    # Given a recovery that ran
    kit = _started()
    kit.overflow_turn()
    assert _recovered(_recovery(kit))
    # When the retry overflows again
    kit.turn_start()
    kit.overflow_turn()
    assert _overflow_state(kit) == "pending_spent"
    # Then the settle does not reset a second time, and the run settles with the error
    assert _recovery(kit).value is None
    assert _overflow_state(kit) == "spent"
    assert len(kit.of_type(MARKER_TYPE)) == 1


# -- R37 -----------------------------------------------------------------------------------------

Clearer = Callable[[Kit], Any]
CLEARERS: dict[str, Clearer] = {
    "successful_turn": lambda k: k.turn_end("ok"),
    "aborted_turn": lambda k: k.turn_end("partial", stop="aborted"),
    "agent_settled": lambda k: k.settled(),
    "agent_end_aborted": lambda k: k.agent_end(signal_aborted=True),
    "session_start": lambda k: k.start("reload"),
    "session_tree": lambda k: k.navigate(k.tree.leaf_id),
    "shutdown_then_start": lambda k: (k.shutdown(), k.start()),
    "pi_context_off_on": lambda k: (k.toggle("off"), k.toggle("on")),
    "wipe_memory_command": lambda k: k.wipe(),
}


@pytest.mark.parametrize("name", sorted(CLEARERS))
def test_r37_each_clearing_event_starts_a_fresh_failure_chain(name: str) -> None:
    # Given a spent chain (one recovery ran)
    kit = _started()
    kit.overflow_turn()
    assert _recovered(_recovery(kit))
    # When a clearing event happens
    CLEARERS[name](kit)
    # Then a new overflow recovers again
    assert _overflow_state(kit) == "idle"
    kit.overflow_turn()
    assert _recovered(_recovery(kit))


def test_r37_agent_end_without_abort_keeps_the_chain() -> None:
    kit = _started()
    kit.overflow_turn()
    _recovery(kit)
    kit.agent_end()
    assert _overflow_state(kit) == "spent"


def test_r37_settled_keeps_an_explicit_request_agent_end_abort_drops_it() -> None:
    # Given a pending request
    kit = _started()
    kit.tool("wipe_memory")
    # When the run settles, the request survives
    kit.settled()
    assert kit.configuration("reset_control")["request"] == "explicit"
    # When an aborted agent_end follows, it is cleared
    kit.agent_end(signal_aborted=True)
    assert kit.configuration("reset_control")["request"] == "none"


# -- R38 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error", ["rate limit: try again later", "Too many requests", "Service unavailable: x", "boom"]
)
def test_r38_ordinary_provider_errors_never_reset(error: str) -> None:
    # Given usage past the reserve and an ordinary provider error
    kit = _started(tokens=WINDOW - 100)
    result = kit.turn_end("", stop="error", error=error)
    # Then no reset, no arming, no recovery
    assert result.value is None and _overflow_state(kit) == "idle"
    assert _recovery(kit).value is None


# -- R39 -----------------------------------------------------------------------------------------


def test_r39_automatic_off_never_arms_recovery() -> None:
    source = StaticSettingsSource(global_settings={"compaction": {"enabled": False}})
    kit = _started(settings=source)
    kit.overflow_turn()
    assert _overflow_state(kit) == "idle" and _recovery(kit).value is None


def test_r39_pi_context_off_never_arms_recovery() -> None:
    kit = _started()
    kit.toggle("off")
    kit.overflow_turn()
    assert _overflow_state(kit) == "idle" and _recovery(kit).value is None
