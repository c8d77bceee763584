"""The bridge to the real Pi: the JSON-lines server (always), and Pi 0.87.1 itself running
the bridge extension offline with pi-ai's faux provider (when Pi is installed, see
``real_pi``)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pi_versions
import pytest
from real_pi import run_pi, run_print, run_rpc

from pictx_fsm import __version__
from pictx_fsm.audit.log import AuditLog, verify_chain, verify_records
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE, CONTINUATION_TYPE, MARKER_TYPE
from pictx_fsm.hosts.pi import serve
from pictx_fsm.hosts.pi.convert import BridgeProtocolError, event_of
from pictx_fsm.hosts.pi.wire import PROTOCOL
from pictx_fsm.session.tree import SessionTree

ROOT = Path(__file__).resolve().parents[1]
HEADER = {
    "type": "session",
    "version": 3,
    "id": "01a22b3e-0000-7000-8000-000000000001",
    "timestamp": "2026-11-30T00:00:00.000Z",
    "cwd": "/home/demo/project",
}
CTX = {"usage": {"tokens": 1000, "contextWindow": 200000}, "cwd": "/home/demo/project"}


def _entry(entry_id: str, parent: str | None, role: str, **message: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-11-30T00:00:01.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": "x"}], **message},
    }


def _runtime(tree: SessionTree, ctx: Any, audit: Any) -> LifecycleRuntime:
    return LifecycleRuntime(tree)


def _serve(*requests: dict[str, Any]) -> list[dict[str, Any]]:
    lines = [json.dumps(r) for r in requests]
    out = io.StringIO()
    assert serve(lines, out, _runtime) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_server_answers_each_request_with_the_runtime_s_value_and_effects() -> None:
    # Given a session start, a wipe_memory call and the end of that tool turn
    user = _entry("u1", None, "user")
    assistant = _entry("a1", "u1", "assistant", stopReason="toolUse")
    result = _entry("r1", "a1", "toolResult", toolCallId="c", toolName="wipe_memory")
    replies = _serve(
        {
            "id": 1,
            "kind": "hook",
            "name": "session_start",
            "event": {"reason": "startup"},
            "ctx": CTX,
            "session": {"header": HEADER, "entries": [user], "leaf": "u1"},
        },
        {
            "id": 2,
            "kind": "tool",
            "name": "wipe_memory",
            "event": {},
            "ctx": CTX,
            "session": {"entries": [assistant], "leaf": "a1"},
        },
        {
            "id": 3,
            "kind": "hook",
            "name": "turn_end",
            "event": {"message": assistant["message"], "outcome": "completed", "entries": []},
            "ctx": CTX,
            "session": {"entries": [result], "leaf": "r1"},
        },
    )
    # Then startup sends the root boot, the tool reports the request, and turn_end returns
    # marker → boot → continuation with continue
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert replies[0]["effects"][0]["customType"] == BOOT_TYPE
    assert json.loads(replies[1]["value"]["content"][0]["text"]) == {"status": "rollover_requested"}
    value = replies[2]["value"]
    assert [d["customType"] for d in value["entries"]] == [
        MARKER_TYPE,
        BOOT_TYPE,
        CONTINUATION_TYPE,
    ]
    assert value["continue"] is True


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "bad request"),
        ("[1, 2]", "must be a JSON object"),
        (
            json.dumps({"id": 7, "kind": "hook", "name": "turn_start", "ctx": {}, "session": {}}),
            "'session.header' is required",
        ),
    ],
)
def test_a_malformed_request_gets_an_error_line_and_the_server_goes_on(
    line: str, problem: str
) -> None:
    # Given a bad line followed by a good first request
    good = {
        "id": 2,
        "kind": "hook",
        "name": "session_start",
        "event": {},
        "ctx": CTX,
        "session": {"header": HEADER, "entries": [], "leaf": None},
    }
    out = io.StringIO()
    serve([line, json.dumps(good)], out, _runtime)
    first, second = (json.loads(x) for x in out.getvalue().splitlines())
    # Then the bad one is answered with an error naming the problem, the next one normally
    assert problem in first["error"]
    assert "error" not in second and second["id"] == 2


def _start(entries: list[dict[str, Any]], leaf: str | None) -> dict[str, Any]:
    return {
        "id": 1,
        "kind": "hook",
        "name": "session_start",
        "event": {"reason": "startup"},
        "ctx": CTX,
        "session": {"header": HEADER, "entries": entries, "leaf": leaf},
    }


def test_the_handshake_reports_the_package_and_protocol_versions() -> None:
    # Given a hello from the extension
    [reply] = _serve({"id": 0, "kind": "hello", "extension": "0.1.0", "protocol": 2})
    # Then the server names its package version, protocol and interpreter
    assert reply["hello"]["package"] == __version__
    assert reply["hello"]["protocol"] == PROTOCOL
    assert sys.executable in reply["hello"]["python"]


def test_replies_are_ascii_so_a_lone_surrogate_cannot_break_the_pipe() -> None:
    # Given a kept system message holding half an emoji (as JSON.stringify writes it)
    system = {"role": "system", "content": "cut \ud83d emoji", "timestamp": 1}
    user = _entry("u1", None, "user")
    marker = {
        "type": "custom", "id": "m1", "parentId": "u1", "timestamp": "2026-11-30T00:00:02.000Z",
        "customType": MARKER_TYPE, "data": {"windowId": "pcw:01a22b3e:00000001"},
    }  # fmt: skip
    request = {
        "id": 2,
        "kind": "hook",
        "name": "context_with_system",
        "event": {"messages": {"count": 3, "kept": [[0, system]]}},
        "ctx": CTX,
        "session": {"entries": [marker], "leaf": "m1"},
    }
    lines = [json.dumps(_start([user], "u1")), json.dumps(request)]
    out = io.StringIO()
    serve(lines, out, _runtime)
    # When the server answers with the folded system head (no boot: R68)
    text = out.getvalue()
    # Then every reply line is ASCII, the surrogate escaped, and it decodes back
    assert text.isascii()
    reply = json.loads(text.splitlines()[1])
    [head] = reply["value"]["slices"]
    assert head["message"]["content"] == "cut \ud83d emoji"
    assert {"effect": "abort"} in reply["effects"]


def test_r47_the_mirror_counts_a_lone_surrogate_as_javascript_does() -> None:
    # Given an assistant reply holding half an emoji, in a session the server mirrors
    user = _entry("u1", None, "user")
    reply = _entry("a1", "u1", "assistant", stopReason="stop")
    reply["message"]["content"] = [{"type": "text", "text": "cut \ud83d"}]
    turn_end = {
        "id": 2, "kind": "hook", "name": "turn_end",
        "event": {"message": reply["message"], "outcome": "completed", "entries": []},
        "ctx": {"cwd": "/w", "model": {"provider": "p", "id": "m", "contextWindow": 1000}},
        "session": {"entries": [reply], "leaf": "a1"},
    }  # fmt: skip
    # When the host's usage is computed from the mirror (the request carries none)
    start = {**_start([user], "u1"), "ctx": turn_end["ctx"]}
    replies = _serve(start, turn_end)
    # Then the turn is answered: "cut \ud83d" is 5 UTF-16 code units, as Pi counts it
    assert [r.get("error") for r in replies] == [None, None]


def test_a_restarted_server_rebuilds_the_lifecycle_from_the_resent_session() -> None:
    # Given a session whose window was reset (marker, boot, continuation), sent to a fresh
    # server as the extension resends it after a restart
    window = "pcw:01a22b3e:00000001"
    user = _entry("u1", None, "user")
    marker = {
        "type": "custom", "id": "m1", "parentId": "u1", "timestamp": "2026-11-30T00:00:02.000Z",
        "customType": MARKER_TYPE, "data": {"windowId": window},
    }  # fmt: skip
    resync = {**_start([user, marker], "m1"), "kind": "resync", "toggle": "off"}
    status = {
        "id": 2, "kind": "command", "name": "pi-context", "event": {"args": ""}, "ctx": CTX,
        "session": {"entries": [], "leaf": "m1"},
    }  # fmt: skip
    # When it resynchronises, then is asked for /pi-context's status
    first, second = _serve(resync, status)
    # Then the toggle came back off (no boot repair while off, R64) and nothing failed
    assert "error" not in first and first["effects"] == []
    assert second["effects"][0]["message"].startswith("pi-context: off · ")


def test_reported_connection_transitions_are_audited_with_the_lifecycle() -> None:
    # Given an extension reporting its start and handshake with the first request
    audit = AuditLog()
    reports = [
        {"id": "bridge_connection:bridge_connection:stopped:start:1", "source": "stopped",
         "event": "start", "target": "starting", "restarts": 0},
        {"id": "bridge_connection:bridge_connection:starting:handshake:2", "source": "starting",
         "event": "handshake", "target": "ready", "restarts": 0},
    ]  # fmt: skip
    out = io.StringIO()
    request = {**_start([], None), "connection": reports}
    serve([json.dumps(request)], out, _runtime_with(audit), lambda _: audit)
    # Then both transitions precede the session_start record, in one verified chain
    hooks = [r["hook"] for r in audit.records]
    assert hooks == ["bridge_connection", "bridge_connection", "session_start"]
    assert verify_records(audit.records).records == 3


def _runtime_with(audit: AuditLog) -> Any:
    def make(tree: SessionTree, ctx: Any, _: Any) -> LifecycleRuntime:
        return LifecycleRuntime(tree, audit=audit)

    return make


def test_a_tool_call_with_arguments_that_are_not_an_object_is_a_bad_request() -> None:
    with pytest.raises(BridgeProtocolError, match=r"event\.arguments"):
        event_of("tool", "wipe_memory", {"arguments": [1], "toolCallId": "c1"})


def test_real_pi_commits_one_reset_for_two_wipe_calls_through_the_bridge(tmp_path: Path) -> None:
    # Given Pi 0.87.1 offline with a faux model that calls wipe_memory twice, then answers
    script = [{"tools": [{"name": "wipe_memory"}, {"name": "wipe_memory"}]}, {"text": "Fresh."}]
    # When Pi runs one prompt through the bridge
    run = run_print(tmp_path, script, "please wipe your memory")
    kinds, log = run.kinds, run.log
    # Then the root boot came at startup, and one reset (R30) follows both tool results:
    # marker → boot → continuation, then the continuation turn's reply
    assert kinds[0] == BOOT_TYPE
    assert kinds[-6:] == [
        "toolResult", "toolResult", MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE, "assistant",
    ]  # fmt: skip
    # And every decision was audited in a chain that verifies
    assert verify_chain(log).records >= 10


def test_real_pi_recovers_an_overflow_once_through_the_bridge(tmp_path: Path) -> None:
    # Given a faux model whose first reply is a context overflow, the retry an answer
    script = [
        {"error": "prompt is too long: 213462 tokens > 200000 maximum"},
        {"text": "Recovered."},
    ]
    # When Pi runs the prompt
    run = run_print(tmp_path, script, "one")
    kinds, log = run.kinds, run.log
    # Then Pi hides the failed reply, the lifecycle's settle boundary commits the one
    # recovery (R35) and the retry runs in the new window
    assert kinds[-6:] == [
        "assistant", "context_edit", MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE, "assistant",
    ]  # fmt: skip
    assert "reset_control:overflow:pending:before_settle:3" in run.fired()  # the recovery
    assert verify_chain(log).records >= 10


def test_real_pi_reports_its_version_in_pi_context_and_audits_the_connection(
    tmp_path: Path,
) -> None:
    # Given a healthy bridge in print mode (notices echoed to stderr: Pi has no UI there)
    # When the user asks /pi-context
    run = run_pi(tmp_path, [{"text": "Hello."}], "hi", "/pi-context")
    # Then the status names the Pi version the extension read from the installed package
    [status] = [n for n in run.notices() if "pi-context: on · " in n]
    assert status.endswith(f" · Pi {pi_versions.selected().version}")
    # And the connection's start and handshake are in the session's audit log, checked
    # against the declared machine, before the lifecycle's first decision
    [log] = list((tmp_path / "audit").glob("*.audit.jsonl"))
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["event"]["event"] for r in records[:2]] == ["start", "handshake"]
    assert records[2]["hook"] == "session_start"
    assert verify_chain(log).records == len(records)


USAGE_SCENARIOS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "tools-and-a-reset": (
        [
            {"text": "A" * 3000},
            {"tools": [{"name": "get_context_remaining"}], "text": "checking"},
            {"text": "remaining noted"},
            {"tools": [{"name": "wipe_memory"}], "text": "wiping"},
            {"text": "fresh"},
        ],
        [{"type": "prompt", "message": m} for m in ("first", "second", "third")],
    ),
    "overflow-recovery": (
        [
            {"error": "prompt is too long: 213462 tokens > 200000 maximum"},
            {"text": "Recovered."},
            {"text": "after the recovery"},
            {"text": "and once more"},
        ],
        [{"type": "prompt", "message": m} for m in ("first", "second", "third")],
    ),
    # Pi's own compaction (the lifecycle off on an unmarked branch, R61/R62): above Pi's
    # keepRecentTokens, summarized by the faux model in two requests; tokens are null after
    # it until the next reply
    "native-compaction": (
        [{"text": "word " * 24_000}, {"text": "two"}, *[{"text": "## Goal\nsummary"}] * 2,
         {"text": "three"}],
        [
            *({"type": "prompt", "message": m} for m in ("/pi-context off", "hello", "again")),
            {"type": "compact"},
            {"type": "prompt", "message": "after"},
        ],
    ),
}  # fmt: skip


@pytest.mark.parametrize("scenario", list(USAGE_SCENARIOS))
def test_r47_the_mirror_computes_pis_own_context_usage_on_every_hook(
    scenario: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the extension asked to send Pi's ctx.getContextUsage() beside its own facts
    checks = tmp_path / "usage-checks.jsonl"
    monkeypatch.setenv("PICTX_FSM_CHECK_USAGE", str(checks))
    script, commands = USAGE_SCENARIOS[scenario]
    # When Pi runs long replies, tool turns, a reset, an overflow recovery or a compaction
    run_rpc(tmp_path, script, commands)
    # Then on every hook the server's figure from its mirror equals Pi's
    compared = [json.loads(line) for line in checks.read_text().splitlines()]
    assert len(compared) >= 15
    assert [c for c in compared if c["host"] != c["mirror"]] == []
    if scenario == "native-compaction":
        assert None in {c["host"] for c in compared}
