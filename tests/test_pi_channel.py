"""Host calls on the bridge's pipe (``pictx_fsm.hosts.pi.channel``): a server that asks Pi for
something while it answers a request, and answers Pi's nested requests meanwhile."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from pictx_fsm.hosts.pi.channel import Channel, HostCallError, HostCallFailed


def _lines(*messages: dict[str, Any]) -> list[str]:
    return [json.dumps(m) + "\n" for m in messages]


def _channel(*messages: dict[str, Any]) -> tuple[Channel, io.StringIO]:
    out = io.StringIO()
    return Channel(iter(_lines(*messages)), out, lambda: False), out


def _written(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_host_call_names_its_request_and_returns_the_extensions_value() -> None:
    # Given the extension's return for call 1
    channel, out = _channel({"kind": "return", "seq": 1, "value": {"path": "/s.jsonl"}})
    # When the server, answering request 7, calls create_session
    with channel.answering(7):
        value = channel.call("create_session", data={"a": 1})
    # Then the call line names request 7 and the value comes back
    assert _written(out) == [
        {"id": 7, "call": {"seq": 1, "op": "create_session", "oneWay": False, "data": {"a": 1}}}
    ]
    assert value == {"path": "/s.jsonl"}


def test_a_refused_host_call_raises_the_extensions_error() -> None:
    channel, _ = _channel({"kind": "return", "seq": 1, "error": "ENOSPC"})
    with pytest.raises(HostCallFailed, match="ENOSPC"):
        channel.call("append_entry")


def test_a_nested_request_is_answered_while_a_call_waits_and_events_wait_their_turn() -> None:
    # Given, while call 1 waits: Pi's nested hook request, an event, then the return
    nested = {"id": 8, "kind": "hook", "name": "session_shutdown"}
    event = {"id": 9, "kind": "event", "name": "idle_reached"}
    channel, out = _channel(nested, event, {"kind": "return", "seq": 1, "value": True})
    answered: list[int] = []

    def answer(line: str) -> dict[str, Any]:
        answered.append(json.loads(line)["id"])
        return {"id": json.loads(line)["id"], "value": None}

    channel.answer = answer
    # When the server makes the call
    assert channel.call("switch_session", path="/t.jsonl") is True
    # Then the nested hook was answered at once; the event is the next request in turn
    assert answered == [8] and _written(out)[-1] == {"id": 8, "value": None}
    assert [json.loads(line)["id"] for line in channel.requests()] == [9]


def test_returns_may_come_back_out_of_order() -> None:
    # Given call 1 waiting, a nested request whose own call (2) is made, and the returns of
    # 1 then 2 (Pi carried them out concurrently)
    nested = {"id": 8, "kind": "hook", "name": "turn_start"}
    returns = (
        {"kind": "return", "seq": 1, "value": "outer"},
        {"kind": "return", "seq": 2, "value": "inner"},
    )
    channel, _ = _channel(nested, *returns)
    inner: list[Any] = []
    channel.answer = lambda line: inner.append(channel.call("append_entry")) or {"id": 8}
    # When the outer call waits / Then each call gets its own return
    assert channel.call("append_entry") == "outer"
    assert inner == ["inner"]


def test_a_return_for_no_call_or_a_closed_pipe_is_a_protocol_error() -> None:
    channel, _ = _channel({"kind": "return", "seq": 5, "value": 1})
    with pytest.raises(HostCallError, match="no open call"):
        channel.call("compact")
    channel, _ = _channel()
    with pytest.raises(HostCallError, match="closed the pipe"):
        channel.call("compact")
