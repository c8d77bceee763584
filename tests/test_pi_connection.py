"""The bridge's connection machine: declared in models/bridge/, followed alike by the JS
extension, the model-session twin and the server that audits it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from node_batch import NodeBatch

from pictx_fsm.cli import main
from pictx_fsm.errors import IllegalEventError
from pictx_fsm.hosts.pi.connection import (
    BACKOFF_MS,
    MACHINE,
    MAX_RESTARTS,
    Connection,
    backoff_ms,
    connection_spec,
)
from pictx_fsm.hosts.pi.connection_audit import checked_step
from pictx_fsm.hosts.pi.convert import BridgeProtocolError
from pictx_fsm.machines import models_dir
from pictx_fsm.machines.families import load_families

EVENTS = ("start", "handshake", "unusable", "fault", "retry", "shutdown")


def python_walk(events: list[str], max_restarts: int) -> list[dict[str, object] | None]:
    """What the Python follower does with an event sequence (None: refused)."""
    follower = Connection(max_restarts=max_restarts)
    out: list[dict[str, object] | None] = []
    for event in events:
        try:
            t = follower.fire(event)
        except IllegalEventError:
            if event == "retry":
                follower.restarts -= 1
            out.append(None)
            continue
        out.append(
            {
                "id": t.transition_id, "source": t.source, "event": event, "target": t.target,
                "actions": list(t.actions), "restarts": t.restarts,
            }
        )  # fmt: skip
    return out


def test_the_connection_machine_is_a_family_of_its_own_listed_and_drawn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the package's models
    families = {f.name: f for f in load_families(models_dir())}
    # Then models/bridge/ is the bridge family (the connection and the lease on quiet
    # hooks), its connection machine listed by the CLI
    assert sorted(families["bridge"].machines) == [MACHINE, "bridge_lease"]
    assert main(["machines", "--machine", MACHINE]) == 0
    listing = capsys.readouterr().out
    assert "stopped*, starting, ready, restarting, degraded" in listing
    spec = connection_spec()
    assert {t.target for t in spec.transitions} >= {"ready", "restarting", "degraded"}


@settings(max_examples=200, deadline=None)
@given(
    events=st.lists(st.sampled_from(EVENTS), max_size=30),
    max_restarts=st.integers(min_value=0, max_value=4),
)
def test_the_js_follower_takes_exactly_the_declared_transitions(
    node: NodeBatch, events: list[str], max_restarts: int
) -> None:
    # Given any event sequence
    request = {"op": "connection", "events": events, "maxRestarts": max_restarts}
    # When the extension's follower and the compiled engine both run it
    js = node.ask(request)["transitions"]
    # Then they take the same transitions, with the same actions and counters (and refuse
    # the same undeclared events)
    assert js == python_walk(events, max_restarts)


def test_a_crash_loop_is_restarted_max_restarts_times_then_degraded() -> None:
    # Given a server that faults every time it starts
    follower = Connection()
    follower.fire("start")
    notices = []
    for _ in range(MAX_RESTARTS + 1):
        notices += [a for a in follower.fire("fault").actions if a != "stop_server"]
        if follower.state == "restarting":
            follower.fire("retry")
    # Then it gave up after MAX_RESTARTS restarts, telling the user twice: when it first
    # failed and when it gave up (the faults between only report a lost reset, if any)
    assert follower.state == "degraded"
    assert follower.restarts == MAX_RESTARTS
    assert notices == ["announce_fault", *["report_loss"] * (MAX_RESTARTS - 1), "give_up"]
    assert [backoff_ms(n) for n in range(4)] == [*BACKOFF_MS, BACKOFF_MS[-1]]


def test_a_startup_diagnosis_degrades_at_once_without_restarts() -> None:
    follower = Connection()
    follower.fire("start")
    transition = follower.fire("unusable")
    assert (follower.state, transition.actions) == ("degraded", ("stop_server", "diagnose"))


def test_the_server_refuses_a_reported_transition_the_machine_does_not_declare() -> None:
    # Given a report claiming ready -> degraded while restarts are left
    report = {
        "id": "bridge_connection:bridge_connection:ready:fault:3",
        "source": "ready",
        "event": "fault",
        "target": "degraded",
        "restarts": 0,
    }
    # Then it is refused, naming the declared transition
    with pytest.raises(BridgeProtocolError, match="ready:fault:2"):
        checked_step(report)
    # And with no restarts left it is the declared one
    step = checked_step({**report, "restarts": MAX_RESTARTS})
    assert step.after.state(MACHINE) == "degraded"
