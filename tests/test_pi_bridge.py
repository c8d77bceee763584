"""The bridge to the real Pi: the JSON-lines server (always), and Pi 0.87.1 itself running
the bridge extension offline with pi-ai's faux provider (when Pi is installed, see
``real_pi``)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from real_pi import run_print

from pictx_fsm.audit import verify_chain
from pictx_fsm.hosts.pi import serve
from pictx_fsm.protocol import BOOT_TYPE, CONTINUATION_TYPE, MARKER_TYPE
from pictx_fsm.runtime import LifecycleRuntime
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
