"""Lifecycle §5 through the runtime: ``wipe_memory`` (R16), ``get_context_remaining`` (R17) and
the tools that do not depend on ``enabled`` (R18)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import WINDOW, Kit, audits_verify  # noqa: F401

from pictx_fsm.errors import UsageError
from pictx_fsm.extensions.pi_context.history import history_windows
from pictx_fsm.extensions.pi_context.lifecycle import step
from pictx_fsm.extensions.pi_context.texts import (
    GET_CONTEXT_REMAINING_DESCRIPTION,
    MARKER_TYPE,
    WIPE_DISABLED_ERROR,
    WIPE_MEMORY_DESCRIPTION,
)
from pictx_fsm.extensions.pi_context.tools import ToolOutcome
from pictx_fsm.host.effects import BoundaryResult, ToolResult
from pictx_fsm.host.events import ContextUsage, HostContext, ModelInfo, ToolCall

WARNING_LINE = 16_384 + 12_288


def _started(**kw: object) -> Kit:
    kit = Kit.create(**kw)  # type: ignore[arg-type]
    kit.start()
    return kit


# -- R16 -----------------------------------------------------------------------------------------


def test_r16_tool_descriptions_are_the_published_texts() -> None:
    # Then the tool texts are pi-context's
    assert WIPE_MEMORY_DESCRIPTION == (
        "Wipe your in-context memory and start a fresh context window. Your session, notes, "
        "and history survive."
    )
    assert GET_CONTEXT_REMAINING_DESCRIPTION.startswith("Return estimated context tokens left")


def test_r16_first_call_requests_a_rollover_and_terminates() -> None:
    # Given a running session
    kit = _started()
    # When the model calls wipe_memory
    value = kit.tool("wipe_memory").value
    # Then the result is {"status": "rollover_requested"}, pretty-printed, terminating
    assert isinstance(value, ToolResult) and value.terminate is True
    assert value.text == json.dumps({"status": "rollover_requested"}, indent=2)
    assert value.to_json()["content"] == [{"type": "text", "text": value.text}]
    assert kit.configuration("reset_control")["request"] == "explicit"


def test_r16_a_second_call_while_pending_reports_already_pending() -> None:
    # Given a pending request
    kit = _started()
    kit.tool("wipe_memory")
    # When the model calls wipe_memory again before turn_end
    value = kit.tool("wipe_memory").value
    # Then it reports the pending rollover, still terminating
    assert isinstance(value, ToolResult) and value.terminate is True
    assert value.payload == {"status": "rollover_already_pending"}


def test_r16_disabled_tool_returns_the_off_error_without_terminating_or_requesting() -> None:
    # Given pi-context switched off
    kit = _started()
    kit.toggle("off")
    # When the model calls wipe_memory
    value = kit.tool("wipe_memory").value
    # Then the result is the error JSON, not terminating, and nothing is requested
    assert isinstance(value, ToolResult) and value.terminate is False
    assert json.loads(value.text) == {"error": WIPE_DISABLED_ERROR}
    assert kit.configuration("reset_control")["request"] == "none"
    kit.build.user("x")
    assert kit.turn_end("done").value is None


def test_r16_the_single_follow_up_comes_from_turn_end_continue() -> None:
    # Given a mixed batch: wipe_memory plus a non-lifecycle tool result
    kit = _started()
    kit.build.user("do it")
    call = kit.build.assistant("calling", stop="toolUse", calls=[{"name": "wipe_memory"}])
    kit.tool("wipe_memory")
    kit.build.tool_result('{"status": "rollover_requested"}', name="wipe_memory")
    kit.build.tool_result("echo", name="echo")
    # When the turn ends
    from pictx_fsm.host.events import TurnEnd

    value = kit.handle(TurnEnd(message=kit.message(call))).value
    # Then exactly one continuation is asked for, by the boundary result
    assert isinstance(value, BoundaryResult) and value.continue_ is True
    assert len(kit.of_type(MARKER_TYPE)) == 1


# -- R17 -----------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(tokens=st.integers(min_value=0, max_value=2 * WINDOW))
def test_r17_remaining_is_window_minus_tokens_minus_the_warning_line_clamped(tokens: int) -> None:
    # Given root-window usage of `tokens` in a 200k window
    kit = _started(tokens=tokens)
    # When the model asks how much is left
    payload = kit.tool_payload("get_context_remaining")
    # Then remaining = max(0, max(0, window − tokens) − warning line)
    assert payload == {"remaining_tokens": max(0, max(0, WINDOW - tokens) - WARNING_LINE)}


def test_r17_unknown_usage_reports_null() -> None:
    # Given a host that cannot estimate usage (tokens null, or no usage at all)
    kit = _started(tokens=None)
    # Then the tool reports null
    assert kit.tool_payload("get_context_remaining") == {"remaining_tokens": None}
    assert kit.tool_payload("get_context_remaining", usage=None) == {"remaining_tokens": None}


def test_r17_works_while_disabled_and_does_not_terminate() -> None:
    # Given pi-context switched off
    kit = _started(tokens=100_000)
    kit.toggle("off")
    # When the model asks
    value = kit.tool("get_context_remaining").value
    # Then it still answers, without terminating the turn
    assert isinstance(value, ToolResult) and value.terminate is False
    assert value.payload == {"remaining_tokens": WINDOW - 100_000 - WARNING_LINE}


def test_r17_uses_the_active_window_not_the_pre_reset_global_usage() -> None:
    # Given a reset window while the host still reports near-full global usage
    kit = _started()
    kit.wipe()
    model = ModelInfo(provider="faux", id="faux-1", context_window=WINDOW)
    # When the model asks
    payload = kit.tool_payload(
        "get_context_remaining",
        usage=ContextUsage(tokens=199_000, context_window=WINDOW),
        model=model,
    )
    # Then the answer reflects the fresh window (boot and continuation only)
    assert payload["remaining_tokens"] > WINDOW - WARNING_LINE - 2_000


# -- R18 -----------------------------------------------------------------------------------------


def test_r18_history_works_with_pi_context_off_and_the_step_owns_no_other_tool() -> None:
    # Given a session with a reset window, then pi-context switched off
    kit = _started()
    kit.build.user("before")
    kit.wipe()
    kit.toggle("off")
    # When the history projection is read
    windows = history_windows(kit.tree.branch(), kit.tree.session_id)
    # Then both windows are listed: history does not consult `enabled`
    assert windows[0].window_id == "pcw:12345678:root" and len(windows) == 2
    # And the runtime answers the history tools while off: the shell runs them, no machine
    # gates them
    result = kit.tool(
        "history_list",
    )
    assert (
        isinstance(result.value, ToolOutcome) and result.value.status == "ok" and not result.steps
    )
    listed = {item["window_id"] for item in json.loads(result.value.text)["items"]}
    assert listed == {window.window_id for window in windows}
    # But the pure step owns only the two lifecycle tools
    with pytest.raises(UsageError, match="not a lifecycle tool"):
        step(kit.runtime.state, ToolCall(name="history_list"), HostContext(), kit.runtime.services)
