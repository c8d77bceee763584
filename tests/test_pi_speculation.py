"""One round trip per provider request: the ``context_with_system`` the server decides with
``context`` is exactly the one the request would carry, and it counts only when the
extension confirms it (the audit log and the state are those of the two requests)."""

from __future__ import annotations

import io
import json
from typing import Any

from generated_sessions import STEPS, build_session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from node_batch import NodeBatch, json_normal

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE
from pictx_fsm.hosts.pi import serve
from pictx_fsm.hosts.pi.speculation import predict_with_system, systems_of
from pictx_fsm.hosts.pi.wire import SAME, expand_messages
from pictx_fsm.session.projection import context_messages
from pictx_fsm.session.tree import SessionTree

HEADER = {
    "type": "session",
    "version": 3,
    "id": "01a22b3e-0000-7000-8000-000000000002",
    "timestamp": "2026-11-30T00:00:00.000Z",
    "cwd": "/home/demo/project",
}
CTX = {"usage": {"tokens": 1000, "contextWindow": 200000}, "cwd": "/home/demo/project"}
SYSTEM = {"role": "system", "content": "", "sections": {"p": "You are Pi."}, "timestamp": 0}
BOOT = {"role": "custom", "customType": BOOT_TYPE, "content": "boot", "display": False}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, data=st.data())
def test_r67_r69_a_context_with_system_decided_ahead_is_the_one_the_request_would_carry(
    node: NodeBatch, steps: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    # Given two provider requests of a generated session (an earlier point of its branch,
    # then its leaf; system messages and their deltas anywhere), and the same one twice
    branch = build_session(steps).branch()
    cut = data.draw(st.integers(min_value=0, max_value=len(branch)))
    second = json_normal(context_messages(branch))
    for first in (json_normal(context_messages(branch[:cut])), second):
        # When the server predicts the second context_with_system from the first one's
        # system messages and the second context, and the extension checks the real one
        wire = node.ask({"op": "predicted", "first": first, "second": second})
        systems = systems_of(expand_messages(wire["first"]))
        predicted = predict_with_system(systems, expand_messages(wire["context"]))
        real = expand_messages(node.ask({"op": "elide", "messages": second}))
        # Then whenever the extension accepts it, the decision was taken on exactly the
        # event the request would have carried (the same list, the same host indexes)
        if wire["accepted"]:
            assert predicted is not None
            assert json_normal(predicted.messages) == json_normal(real.messages)
            assert predicted.spans == real.spans
    # And the same transcript again is always accepted
    assert wire["accepted"]


def _entry(entry_id: str, parent: str | None, role: str) -> dict[str, Any]:
    message = {"role": role, "content": [{"type": "text", "text": entry_id}]}
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-11-30T00:00:01.000Z",
        "message": message,
    }


def _hook(name: str, event: dict[str, Any], entries: list[Any], leaf: str) -> dict[str, Any]:
    return {
        "kind": "hook",
        "name": name,
        "event": event,
        "ctx": CTX,
        "session": {"entries": entries, "leaf": leaf},
    }


def _requests(second_turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A session start and one provider request (a boot, the system prompt, a prompt), then
    the second provider request's requests as given."""
    start = _hook("session_start", {"reason": "startup"}, [_entry("u1", None, "user")], "u1")
    start["session"]["header"] = HEADER
    first = [
        _hook("context", {"messages": {"count": 2, "kept": [[0, BOOT]]}}, [], "u1"),
        _hook(
            "context_with_system",
            {"messages": {"count": 3, "kept": [[0, BOOT], [1, SYSTEM]]}},
            [],
            "u1",
        ),
    ]
    requests = [start, *first, *second_turn]
    return [{"id": index, **request} for index, request in enumerate(requests, 1)]


def _second_context(speculate: bool) -> dict[str, Any]:
    event: dict[str, Any] = {"messages": {"count": 4, "kept": [[0, {SAME: 0}]]}}
    if speculate:
        event["speculate"] = True
    entries = [_entry("a1", "u1", "assistant"), _entry("u2", "a1", "user")]
    return _hook("context", event, entries, "u2")


REAL_WITH_SYSTEM = _hook(
    "context_with_system",
    {"messages": {"count": 5, "kept": [[0, {SAME: 0}], [1, {SAME: 1}]]}},
    [],
    "u2",
)
CONFIRMED = {"speculated": True}
"""The event of the extension's confirmation of a hook decided ahead."""
CONFIRM = {**_hook("context_with_system", CONFIRMED, [], "u2"), "pipelined": True}


def _served(requests: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Every reply, and the audit records the runtime wrote."""
    audits: list[AuditLog] = []

    def audit(_: str) -> AuditLog:
        audits.append(AuditLog())
        return audits[-1]

    def runtime(tree: SessionTree, ctx: Any, log: AuditLog | None) -> LifecycleRuntime:
        return LifecycleRuntime(tree, audit=log)

    out = io.StringIO()
    assert serve([json.dumps(r) for r in requests], out, runtime, audit) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()], audits[0].records


def test_a_confirmed_context_with_system_is_audited_and_answered_as_the_request_would_be() -> None:
    # Given the second provider request sent as two requests, and as a context asking for
    # its context_with_system ahead followed by the extension's confirmation
    plain, plain_audit = _served(_requests([_second_context(False), REAL_WITH_SYSTEM]))
    ahead, ahead_audit = _served(_requests([_second_context(True), CONFIRM]))
    # Then the context reply carried the decided answer: the same slices the request got
    assert "error" not in ahead[-1] and ahead[-1]["value"] is None
    assert ahead[-2]["withSystem"]["slices"] == plain[-1]["value"]["slices"]
    assert {k: v for k, v in ahead[-2].items() if k != "withSystem"} == plain[-2]
    # And the audit log is the same record for record, hash chain included
    assert ahead_audit == plain_audit
    assert [r["hook"] for r in ahead_audit[-2:]] == ["context", "context_with_system"]


def test_an_unconfirmed_decision_is_dropped_and_the_request_answered_as_ever() -> None:
    # Given a context that asked for its context_with_system ahead, then the real request
    # (the extension found the transcript other than predicted)
    plain, plain_audit = _served(_requests([_second_context(False), REAL_WITH_SYSTEM]))
    ahead, ahead_audit = _served(_requests([_second_context(True), REAL_WITH_SYSTEM]))
    # Then the request is answered and audited once, exactly as without the decision ahead
    assert ahead[-1] == plain[-1]
    assert ahead_audit == plain_audit


def test_a_confirmation_with_nothing_decided_is_a_typed_error_and_keeps_nothing() -> None:
    # Given a confirmation after a context that did not ask for a decision ahead
    replies, audit = _served(_requests([_second_context(False), CONFIRM]))
    # Then it is refused, naming the field, and nothing is audited for it
    assert replies[-1]["error"] == (
        "bad request: field 'event.speculated': no context_with_system was decided ahead"
    )
    assert [r["hook"] for r in audit[-2:]] == ["context_with_system", "context"]


ASSISTANT = _entry("a2", "u2", "assistant")
TURN_END = {
    "message": {**ASSISTANT["message"], "stopReason": "stop"},
    "outcome": "completed",
    "entries": [],
    "pendingMessages": 0,
    "turnIndex": 0,
}


SETTLE = {"outcome": "completed", "entries": [], "pendingMessages": 0}


def _run_end(
    speculate: bool, *settle: tuple[str, dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[Any]]:
    """The second provider request, then its turn's end (asking for the settling hooks
    ahead or not) and the given settling requests (agent_end and confirmations pipelined):
    every reply and the audit records."""
    event = {**TURN_END, "speculate": True} if speculate else TURN_END
    turn_end = _hook("turn_end", event, [ASSISTANT], "a2")
    requests = [_second_context(False), REAL_WITH_SYSTEM, turn_end]
    for name, payload in settle:
        request = _hook(name, payload, [], "a2")
        pipelined = name == "agent_end" or payload == CONFIRMED
        requests.append({**request, "pipelined": True} if pipelined else request)
    return _served(_requests(requests))


def test_the_hooks_settling_a_run_are_decided_with_its_last_turn_end_and_kept_when_confirmed() -> (
    None
):
    # Given the end of a run sent as turn_end, agent_end and agent_before_settle, and as a
    # turn_end asking for the settling hooks ahead followed by the two confirmations
    plain, plain_audit = _run_end(False, ("agent_end", {}), ("agent_before_settle", SETTLE))
    ahead, ahead_audit = _run_end(
        True, ("agent_end", CONFIRMED), ("agent_before_settle", CONFIRMED)
    )
    # Then the turn_end reply carried both decisions, on the payloads the extension sends,
    # with the values the requests got; and the audit log is the same, record for record
    offered = ahead[-3]["ahead"]
    assert [(o["name"], o["event"]) for o in offered] == [
        ("agent_end", {}),
        ("agent_before_settle", SETTLE),
    ]
    assert [o["value"] for o in offered] == [plain[-2]["value"], plain[-1]["value"]]
    assert all("error" not in reply for reply in ahead)
    assert ahead_audit == plain_audit
    assert [r["hook"] for r in ahead_audit[-3:]] == [
        "turn_end",
        "agent_end",
        "agent_before_settle",
    ]


def test_a_settling_hook_sent_for_real_after_a_confirmed_one_is_answered_as_ever() -> None:
    # Given agent_end confirmed, then agent_before_settle sent for real (Pi's payload was
    # not the one decided on: the run was aborted meanwhile)
    aborted = {**SETTLE, "outcome": "aborted"}
    plain, plain_audit = _run_end(False, ("agent_end", {}), ("agent_before_settle", aborted))
    ahead, ahead_audit = _run_end(True, ("agent_end", CONFIRMED), ("agent_before_settle", aborted))
    # Then the real request is answered and audited exactly as without decisions ahead
    assert ahead[-1] == plain[-1]
    assert ahead_audit == plain_audit


def test_a_confirmation_out_of_order_is_refused_and_drops_what_was_decided() -> None:
    # Given agent_before_settle confirmed before agent_end
    replies, audit = _run_end(True, ("agent_before_settle", CONFIRMED), ("agent_end", CONFIRMED))
    # Then both are refused, naming the field, and only the turn_end is audited last
    assert [r["error"] for r in replies[-2:]] == [
        "bad request: field 'event.speculated': no agent_before_settle was decided ahead",
        "bad request: field 'event.speculated': no agent_end was decided ahead",
    ]
    assert audit[-1]["hook"] == "turn_end"


class _FailingWithSystem(LifecycleRuntime):
    """A lifecycle that fails on every context_with_system (a bug, say)."""

    def decide(self, event: Any, ctx: Any, state: Any = None) -> Any:
        if event.HOOK == "context_with_system":
            raise RuntimeError("broken projection")
        return super().decide(event, ctx, state)


def test_a_decision_ahead_that_fails_is_not_offered_and_the_request_meets_the_failure() -> None:
    # Given a lifecycle failing on context_with_system, a context asking for it ahead
    requests = _requests([_second_context(True), REAL_WITH_SYSTEM])
    out = io.StringIO()

    def runtime(tree: SessionTree, ctx: Any, log: AuditLog | None) -> LifecycleRuntime:
        return _FailingWithSystem(tree)

    assert serve([json.dumps(r) for r in requests], out, runtime) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    # Then context is answered as ever, without a decision ahead, and the real request gets
    # the failure, told as the lifecycle's own
    assert "error" not in replies[-2] and "withSystem" not in replies[-2]
    assert replies[-1]["error"] == "RuntimeError: broken projection"
