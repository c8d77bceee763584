"""Pipelined hooks (issue 8 item 7): the extension does not wait for the observational hooks
(``turn_start``, ``agent_end``, ``agent_settled``, ``model_select``), whose replies can only
hold notices; the server refuses anything else for them, flushes a batch's replies at once,
and the real Pi still shows their notices and still fails closed (``test_pi_faults``)."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_pi import python_wrapper, run_pi
from test_pi_bridge import CTX, HEADER

from pictx_fsm.extensions.pi_context.kit.strategies import GROUPS, host_actions, world_configs
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import NOTICE_MEMORY_CLEARED
from pictx_fsm.host.effects import HookResult, SendMessage
from pictx_fsm.host.events import HOOKS, HookEvent, HostContext
from pictx_fsm.hosts.pi import serve
from pictx_fsm.hosts.pi.server import PipeLines
from pictx_fsm.hosts.pi.wire import MESSAGE_HOOKS, PIPELINED_HOOKS

START = {
    "id": 1,
    "kind": "hook",
    "name": "session_start",
    "event": {"reason": "startup"},
    "ctx": CTX,
    "session": {"header": HEADER, "entries": [], "leaf": None},
}


def _pipelined(request_id: int, hook: str) -> dict[str, Any]:
    session = {"entries": [], "leaf": None}
    return {"id": request_id, "kind": "hook", "name": hook, "event": {}, "ctx": CTX} | {
        "session": session,
        "pipelined": True,
    }


def _replies(*requests: dict[str, Any], runtime: Any = LifecycleRuntime) -> list[dict[str, Any]]:
    out = io.StringIO()
    serve([json.dumps(r) for r in requests], out, lambda tree, ctx, audit: runtime(tree))
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_pipelined_hooks_are_lifecycle_hooks_pi_does_not_wait_on() -> None:
    # The pipelined hooks are hooks of the one hook list; none is a provider request, a
    # boundary, a guard or the shutdown the server must answer before its input closes
    assert set(PIPELINED_HOOKS) <= set(HOOKS)
    waited = {"turn_end", "agent_before_settle", "session_before_compact", "session_before_tree"}
    assert not set(PIPELINED_HOOKS) & (waited | set(MESSAGE_HOOKS) | {"session_shutdown"})


MOVES = st.one_of(GROUPS["turn"][0], GROUPS["failure"][0], host_actions().map(lambda a: (a,)))
"""Whole turns (a scripted reply, a prompt, settling), failures, and any host action."""


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=world_configs(), moves=st.lists(MOVES, min_size=1, max_size=12))
def test_wherever_a_session_goes_a_pipelined_hook_answers_only_notices(
    config: WorldConfig, moves: list[tuple[Any, ...]]
) -> None:
    # Given the model session driven anywhere (wipes, overflows, steering, navigation, ...)
    world = World(config)
    for action in (action for move in moves for action in move):
        world.apply(action)
    # Then every pipelined hook the lifecycle answered returned nothing but notices
    results = [
        record["result"]
        for log in world.audits
        for record in log.records
        if record["hook"] in PIPELINED_HOOKS
    ]
    for result in results:
        assert result["value"] is None, result
        assert {effect["effect"] for effect in result["effects"]} <= {"notify"}, result


def test_a_pipelined_hook_is_answered_with_its_notices_and_no_value() -> None:
    # Given a started session, Pi's agent_settled sent without waiting
    start, settled = _replies(START, _pipelined(2, "agent_settled"))
    # Then it is answered like any hook: no error, no value
    assert "error" not in start
    assert settled == {"id": 2, "value": None, "effects": []}


def test_a_hook_pi_waits_for_cannot_be_pipelined() -> None:
    # Given a turn_end (a boundary: Pi applies its result) marked pipelined
    _, reply = _replies(START, _pipelined(2, "turn_end"))
    # Then it is a bad request naming the field
    assert (
        reply["error"]
        == "bad request: field 'pipelined': hook 'turn_end' is answered, not pipelined"
    )


class _Sending(LifecycleRuntime):
    """A lifecycle that (wrongly) sends a message at turn_start."""

    def handle(self, event: HookEvent, ctx: HostContext) -> HookResult:
        result = super().handle(event, ctx)
        if event.HOOK != "turn_start":
            return result
        sent = SendMessage(custom_type="x", content="late", display=False, trigger_turn=False)
        return HookResult(hook=result.hook, value=None, effects=(sent,))


def test_a_pipelined_reply_holding_more_than_notices_is_refused_and_told() -> None:
    # Given a lifecycle whose turn_start would send a message Pi could no longer place
    _, reply = _replies(START, _pipelined(2, "turn_start"), runtime=_Sending)
    # Then the reply is an error the extension tells the user, not an effect applied late
    assert reply["error"] == (
        "PipelinedEffectError: the lifecycle answered the pipelined hook turn_start with "
        "send_message; Pi did not wait"
    )


def test_the_server_reads_a_batch_from_the_pipe_and_knows_what_is_waiting() -> None:
    # Given three request lines written at once, the last one without its line end yet
    read, write = os.pipe()
    os.write(write, b'{"a": 1}\n{"b": "\xc3\xa9"}\n{"c"')
    lines = PipeLines(read, "utf-8")
    found = iter(lines)
    # Then the first line comes with the second known to be waiting, the second without
    assert next(found) == '{"a": 1}' and lines.pending()
    assert next(found) == '{"b": "é"}' and not lines.pending()
    # And the rest arrives as one line once written; the end of input ends the lines
    os.write(write, b": 3}\n")
    os.close(write)
    assert list(found) == ['{"c": 3}']
    os.close(read)


def test_real_pi_pipelines_the_observational_hooks_and_still_shows_their_notices(
    tmp_path: Path,
) -> None:
    # Given a wipe turn in Pi's print mode, the server's requests and replies recorded
    (tmp_path / "ws").mkdir(exist_ok=True)
    requests, replies = tmp_path / "requests.log", tmp_path / "replies.log"
    server = f'"{sys.executable}" -m pictx_fsm.hosts.pi'
    python = python_wrapper(tmp_path, "python", f"tee {requests} | {server} | tee {replies}")
    script = [{"tools": [{"name": "wipe_memory"}], "text": "wiping"}, {"text": "fresh"}]
    # (with leases off: the hooks decided ahead are what this test watches; test_pi_lease
    # watches the leased ones)
    env = {"PICTX_FSM_PYTHON": str(python), "PICTX_FSM_LEASE": "0"}
    run = run_pi(tmp_path, script, "please wipe", env=env)
    assert run.returncode == 0, run.stderr
    sent = [json.loads(line) for line in requests.read_text().splitlines()]
    answered = {r["id"]: r for r in map(json.loads, replies.read_text().splitlines())}
    # Then exactly the observational hooks and the confirmations of the hooks decided ahead
    # (a provider request's context_with_system, the hooks that settle a run) went
    # pipelined, and every request was answered
    hooks = [r for r in sent if r.get("kind") == "hook"]
    assert {r["name"] for r in hooks if r.get("pipelined")} >= {"turn_start", "agent_settled"}
    confirmed = [r for r in hooks if r["event"] == {"speculated": True}]
    decided = {"context_with_system", "agent_end", "agent_before_settle"}
    assert {r["name"] for r in confirmed} == decided
    assert all(
        bool(r.get("pipelined")) is (r["name"] in PIPELINED_HOOKS or r in confirmed) for r in hooks
    )
    assert all("error" not in answered[r["id"]] for r in sent)
    # And the reset's notice (R63, at the continuation turn's pipelined turn_start) was shown
    cleared = NOTICE_MEMORY_CLEARED.split("{")[0]
    assert len([n for n in run.notices() if cleared in n]) == 1, run.notices()
