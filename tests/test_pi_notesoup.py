"""notesoup 0.38 in the real Pi 1.x through the bridge (``pictx-fsm pi --extension-path
notesoup``): the same scripted model and inputs on the model session (the notesoup kit's world,
Pi 1.6 host profile) and on the newest real Pi write the same entries and take the same
decisions; a reset leaves nothing erased in the next provider request; a pi-context 0.25
session resumed under notesoup sends nothing from behind its markers — also while notesoup's
server cannot run (the bridge's fail-closed projection knows 0.25's windows too).

notesoup needs Pi 1.x (its checkpoints and tool outcomes): these tests run on the newest
supported Pi (``pi_versions.INSTALLS[-1]``) and skip, saying so, where it is not installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pi_versions
import pytest
import real_pi
from attrs import frozen
from real_pi import SKIPPED_ENTRIES, decisions, entry_kind

from pictx_fsm.audit.log import hook_records
from pictx_fsm.extensions.notesoup.kit.world import NotesoupConfig, NotesoupWorld
from pictx_fsm.extensions.notesoup.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    LEGACY_MARKER_TYPE,
    MARKER_TYPE,
    NOTESOUP_VERSION,
    NOTICE_CLEAR_NEEDS_ON,
    NOTICE_TOGGLE_STATUS,
)
from pictx_fsm.extensions.notesoup.tools.specs import TOOL_SPECS
from pictx_fsm.hosts.model import Call, Overflow, Response, Text, Tools
from pictx_fsm.hosts.pi import entry_path
from pictx_fsm.hosts.pi.texts import NOTESOUP_ONLY
from pictx_fsm.session.jsonl import read_session

NEWEST = pi_versions.INSTALLS[-1]
NOTESOUP_ENTRY = entry_path("notesoup")
SECRET = "SECRET-ALPHA-7731"
"""A word only the erased part of a session holds."""


@contextmanager
def newest_pi() -> Iterator[pi_versions.PiInstall]:
    """The newest supported Pi (notesoup needs 1.x); skips, saying so, when not installed."""
    if not NEWEST.available():
        pytest.skip(NEWEST.skip_reason())
    with pi_versions.selecting(NEWEST):
        yield NEWEST


def _notesoup_pi(
    tmp_path: Path,
    script: Sequence[dict[str, Any]],
    *inputs: str,
    resume: bool = False,
    env: dict[str, str] | None = None,
) -> real_pi.PiExit:
    """Pi's print mode with notesoup (the notes home in ``tmp_path``)."""
    notes = {"PI_NOTES_HOME": str(tmp_path / "notes")}
    with newest_pi():
        return real_pi.run_pi(
            tmp_path,
            script,
            *inputs,
            env={**notes, **(env or {})},
            resume=resume,
            bridge=[NOTESOUP_ENTRY],
        )


def _notesoup_rpc(
    tmp_path: Path, script: Sequence[dict[str, Any]], inputs: Sequence[str]
) -> real_pi.PiExit:
    """Pi's RPC mode with notesoup: each input a prompt, awaited until its run settles."""
    notes = {"PI_NOTES_HOME": str(tmp_path / "notes")}
    with newest_pi():
        pi = real_pi.RpcPi(tmp_path, script, notes, bridge=[NOTESOUP_ENTRY])
        for number, text in enumerate(inputs):
            pi.send({"id": f"c{number}", "type": "prompt", "message": text})
            pi.until("agent_settled")
        code = pi.close()
    log = tmp_path / "requests.jsonl"
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    return real_pi.PiExit(
        returncode=code,
        stdout="",
        stderr=pi.stderr(),
        sessions=tmp_path / "sessions",
        requests=requests,
    )


def _kinds(path: Path) -> list[str]:
    return [entry_kind(e) for e in read_session(path).entries if e.type not in SKIPPED_ENTRIES]


def _real_decisions(tmp_path: Path) -> list[tuple[str, list[str]]]:
    [log] = list((tmp_path / "audit").glob("*.audit.jsonl"))
    return decisions(hook_records(log))


def _carries(request: dict[str, Any], text: str) -> bool:
    return text in json.dumps(request["messages"])


# -- the differential --------------------------------------------------------------------------


@frozen(kw_only=True)
class Scenario:
    """The model's replies on both hosts, the print-mode inputs, and transitions it must fire."""

    responses: tuple[Response, ...]
    script: tuple[dict[str, Any], ...]
    inputs: tuple[str, ...]
    exercises: frozenset[str]
    rpc: bool = False
    """Inputs sent in RPC mode, each run (also one a command starts) awaited to its end."""


def _words(tokens: int) -> str:
    """A reply of about ``tokens`` estimated tokens (chars / 4)."""
    return "word " * (tokens * 4 // 5)


def _texts(*texts: str) -> dict[str, Any]:
    return {
        "responses": tuple(Text(text=t) for t in texts),
        "script": tuple({"text": t} for t in texts),
    }


EDIT_PLAN: dict[str, Any] = {"oldText": "plan", "newText": "route"}


def _calls(*calls: tuple[str, dict[str, Any]], exercises: frozenset[str]) -> Scenario:
    """One tool call per reply (after the user's secret), then a last text."""
    return Scenario(
        responses=(
            *(Tools(calls=(Call(name=n, arguments=a),)) for n, a in calls),
            Text(text="done"),
        ),
        script=(*({"tools": [{"name": n, "args": a}]} for n, a in calls), {"text": "done"}),
        inputs=(f"remember {SECRET} please",),
        exercises=exercises,
    )


SCENARIOS: dict[str, Scenario] = {
    # The model asks for a reset (S12): committed at the tool turn's end (S29), continued.
    "clear-memory-tool": Scenario(
        responses=(
            Tools(calls=(Call(name="clear_memory"),), text=f"Noted {SECRET}."),
            Text(text="fresh one"),
        ),
        script=(
            {"text": f"Noted {SECRET}.", "tools": [{"name": "clear_memory"}]},
            {"text": "fresh one"},
        ),
        inputs=(f"remember {SECRET} please",),
        exercises=frozenset(
            {
                "notesoup_reset_control:request:none:tool_request:2",
                "notesoup_reset_control:request:tool_requested:turn_end:3",
            }
        ),
    ),
    # /clear-memory after a prompt (RPC: the close-out run it starts is awaited): the model
    # closes out, the reset commits at settle.
    "clear-memory-command": Scenario(
        rpc=True,
        **_texts(f"Noted {SECRET}.", "closing out", "fresh one"),
        inputs=(f"remember {SECRET} please", "/clear-memory"),
        exercises=frozenset(
            {
                "notesoup_reset_control:request:none:manual_close_out:4",
                "notesoup_reset_control:request:close_out_manual:before_settle:11",
            }
        ),
    ),
    # /notesoup off, a /cm refused while off, /notesoup on.
    "toggle": Scenario(
        **_texts("one", "two"),
        inputs=("/notesoup off", "hello", "/cm", "/notesoup", "/notesoup on", "again"),
        exercises=frozenset(
            {
                "notesoup_toggle:notesoup_toggle:on:switch_off:1",
                "notesoup_reset_control:request:none:manual_close_out:1",
                "notesoup_toggle:notesoup_toggle:off:status:1",
                "notesoup_toggle:notesoup_toggle:off:switch_on:1",
            }
        ),
    ),
    # A provider overflow (S65–S69): the chain arms at turn_end, the recovery reset commits at
    # settle, and the run continues in a fresh window.
    "overflow": Scenario(
        responses=(Overflow(), Text(text="Recovered.")),
        script=(
            {"error": "prompt is too long: 213462 tokens > 200000 maximum"},
            {"text": "Recovered."},
        ),
        inputs=(f"remember {SECRET} please",),
        exercises=frozenset(
            {
                "notesoup_reset_control:overflow:idle:turn_end:5",
                "notesoup_reset_control:overflow:pending:before_settle:6",
            }
        ),
    ),
    # A reply past the hard reserve (S25): the boundary commits at that turn's end.
    "reserve": Scenario(
        responses=(
            Tools(calls=(Call(name="get_context_remaining"),), text=_words(190_000)),
            Text(text="fresh"),
        ),
        script=(
            {"text": _words(190_000), "tools": [{"name": "get_context_remaining"}]},
            {"text": "fresh"},
        ),
        inputs=(f"remember {SECRET} please",),
        exercises=frozenset({"notesoup_reset_control:request:none:turn_end:3"}),
    ),
    # Every other tool, in one run: notes, the budget query, a reset, then the history tools
    # reading the erased window back from the session.
    "every-tool": _calls(
        ("notes_write", {"address": "plan.md", "content": "the plan"}),
        (
            "notes_update",
            {"address": "plan.md", "edits": [{"oldText": "plan", "newText": "route"}]},
        ),
        ("notes_read", {"address": "plan.md"}),
        ("notes_search", {"query": "route"}),
        ("notes_list", {}),
        ("get_context_remaining", {}),
        ("clear_memory", {}),
        ("history_windows", {}),
        ("history_search", {"query": SECRET}),
        ("history_list", {"limit": 3}),
        ("history_read", {"seq": 1}),
        exercises=frozenset(
            {
                "notesoup_budget:meter:reading:query_remaining:1",
                "notesoup_reset_control:request:none:tool_request:2",
            }
        ),
    ),
}


def _model_run(scenario: Scenario) -> NotesoupWorld:
    """The scenario on the model session with Pi's default thresholds and the faux model's
    window (what the real Pi runs with)."""
    config = NotesoupConfig(
        context_window=200_000, max_tokens=16_384, reserve_tokens=16_384, reminder_margin=24_576
    )
    world = NotesoupWorld(config)
    world.session.provider.push(*scenario.responses)
    for text in scenario.inputs:
        real_pi.model_input(world.session, text)
    world.session.dispose()
    return world


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_notesoup_in_the_real_pi_decides_exactly_as_on_the_model_session(
    name: str, tmp_path: Path
) -> None:
    # Given the same scripted model and inputs on the model session and the newest real Pi
    scenario = SCENARIOS[name]
    world = _model_run(scenario)
    # When notesoup runs on both
    if scenario.rpc:
        real = _notesoup_rpc(tmp_path, scenario.script, scenario.inputs)
    else:
        real = _notesoup_pi(tmp_path, scenario.script, *scenario.inputs)
    assert real.returncode == 0, real.stderr
    # Then both write the same entries and take the same decisions, in the same order
    kinds = [entry_kind(e) for e in world.session.entries if e.type not in SKIPPED_ENTRIES]
    assert kinds == _kinds(real.session_file())
    model = decisions([r for audit in world.audits for r in audit.records])
    assert model == _real_decisions(tmp_path)
    # And the scenario fired its rule
    fired = {t for _, ts in model for t in ts}
    assert scenario.exercises <= fired


def _tool_results(path: Path) -> dict[str, tuple[bool, str]]:
    """Each tool's (isError, text) as the session holds them, by tool name."""
    found = {}
    for entry in read_session(path).entries:
        message = entry.to_json().get("message") if entry.type == "message" else None
        if isinstance(message, dict) and message.get("role") == "toolResult":
            text = "".join(block.get("text", "") for block in message["content"])
            found[message["toolName"]] = (bool(message.get("isError")), text)
    return found


def test_every_notesoup_tool_answers_in_the_real_pi(tmp_path: Path) -> None:
    # Given a model that calls each of notesoup's eleven tools once, clear_memory among them
    scenario = SCENARIOS["every-tool"]
    # When the run ends
    run = _notesoup_pi(tmp_path, scenario.script, *scenario.inputs)
    results = _tool_results(run.session_file())
    # Then every tool answered, none with an error
    assert sorted(results) == sorted(spec.name for spec in TOOL_SPECS)
    assert not [name for name, (error, _) in results.items() if error]
    # And the notes tools found the updated note; the budget query and the reset answered
    # as JSON; the history tools read the erased window back from the session
    assert "the route" in results["notes_search"][1]
    assert json.loads(results["clear_memory"][1]) == {"status": "rollover_requested"}
    assert "remaining_tokens" in json.loads(results["get_context_remaining"][1])
    assert results["history_windows"][1].count("\nwindow pcw:") == 2
    assert SECRET in results["history_search"][1]


def test_notesoups_notes_tools_in_the_real_pi_write_the_notes_home(tmp_path: Path) -> None:
    # Given notesoup in the real Pi and a model that writes a note, edits it and reads it
    scenario = SCENARIOS["every-tool"]
    # When the run ends
    run = _notesoup_pi(tmp_path, scenario.script, *scenario.inputs)
    # Then the note is in the notes home, in notesoup's metadata format, and the model read
    # back its edit
    [note] = [p.read_text() for p in (tmp_path / "notes").rglob("plan.md")]
    assert note.startswith("---\norigin: self\n") and note.endswith("---\n\nthe route")
    assert "the route" in _tool_results(run.session_file())["notes_read"][1]


def test_notesoups_commands_tell_the_user_in_the_real_pi(tmp_path: Path) -> None:
    # Given notesoup in the real Pi
    scenario = SCENARIOS["toggle"]
    # When the user switches it off, asks /cm, asks for the status and switches it on again
    run = _notesoup_pi(tmp_path, scenario.script, *scenario.inputs)

    # Then each command answered with its notice, in order: the state with the window and
    # the tokens left, and /cm refused while off
    def status(state: str) -> str:
        return "notice[info] " + NOTICE_TOGGLE_STATUS.format(
            state=state, version=NOTESOUP_VERSION, pi_version=NEWEST.version, window_id="pcw:"
        )

    expected = [
        status("off"),
        f"notice[error] {NOTICE_CLEAR_NEEDS_ON}",
        status("off"),
        status("on"),
    ]
    notices = run.notices()
    assert len(notices) == len(expected)
    assert all(n.startswith(e) for n, e in zip(notices, expected, strict=True)), notices
    assert all(n.endswith("tokens before close-out") for n in notices if "pcw:" in n)


# -- acceptance: a reset in the real Pi --------------------------------------------------------


def test_a_model_clear_memory_commits_checkpoint_marker_boot_continuation_and_erases(
    tmp_path: Path,
) -> None:
    # Given notesoup in the real Pi 1.6 and a model that calls clear_memory after a secret
    scenario = SCENARIOS["clear-memory-tool"]
    # When the run goes on
    run = _notesoup_pi(tmp_path, scenario.script, *scenario.inputs)
    # Then the tail is checkpoint → marker → boot → continuation, then the next reply
    kinds = _kinds(run.session_file())
    assert kinds[-5:] == ["compaction", MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE, "assistant"]
    [checkpoint] = [e for e in read_session(run.session_file()).entries if e.type == "compaction"]
    assert checkpoint.summary == ""
    # And the user was told, and the request after the reset carries no erased text
    assert any("memory cleared" in line for line in run.notices())
    first, after = run.requests
    assert _carries(first, SECRET)
    assert not _carries(after, SECRET)


# -- acceptance: a pi-context 0.25 session resumed under notesoup ------------------------------


def _legacy_session(tmp_path: Path) -> Path:
    """A pi-context 0.25 session written by the real Pi (the pi-context bridge): the secret,
    then wipe_memory, then a fresh window."""
    script = [
        {"text": f"Noted {SECRET}.", "tools": [{"name": "wipe_memory"}]},
        {"text": "fresh"},
    ]
    with newest_pi():
        legacy = real_pi.run_pi(tmp_path, script, f"remember {SECRET} please")
    assert legacy.returncode == 0, legacy.stderr
    path = legacy.session_file()
    assert LEGACY_MARKER_TYPE in _kinds(path)
    assert "compaction" not in _kinds(path)  # 0.25 writes no checkpoint: only markers cut
    (tmp_path / "requests.jsonl").unlink()
    return path


def test_a_0_25_session_resumed_under_notesoup_sends_nothing_from_behind_its_markers(
    tmp_path: Path,
) -> None:
    # Given a pi-context 0.25 session with a reset marker, written by the real Pi
    _legacy_session(tmp_path)
    # When notesoup resumes it and the user goes on
    run = _notesoup_pi(tmp_path, [{"text": "still fresh"}], "what do you remember?", resume=True)
    # Then the provider request holds the 0.25 window's boot and nothing from behind the marker
    assert run.returncode == 0, run.stderr
    [request] = run.requests
    assert not _carries(request, SECRET)
    assert _carries(request, "what do you remember?")


def test_a_0_25_session_resumed_while_notesoups_server_cannot_run_fails_closed(
    tmp_path: Path,
) -> None:
    # Given a pi-context 0.25 session with a reset marker, and no Python for notesoup's server
    _legacy_session(tmp_path)
    missing = {"PICTX_FSM_PYTHON": str(tmp_path / "no-such-python")}
    # When notesoup resumes it
    run = _notesoup_pi(
        tmp_path, [{"text": "still"}], "what do you remember?", resume=True, env=missing
    )
    # Then the user is told, and the bridge's own projection cuts at the 0.25 marker
    assert any("notesoup: cannot run the lifecycle server" in n for n in run.notices())
    assert run.requests, run.stderr
    assert not any(_carries(request, SECRET) for request in run.requests)


def test_pictx_fsm_pi_prints_notesoups_entry(tmp_path: Path) -> None:
    # When the CLI is asked for notesoup's Pi extension (from elsewhere than the checkout, so
    # the package it runs is the installed one this test imported)
    found = subprocess.run(
        [sys.executable, "-m", "pictx_fsm.cli", "pi", "--extension-path", "notesoup"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    # Then it names the entry that runs the bridge for notesoup's manifest section
    path = Path(found.stdout.strip())
    assert path == NOTESOUP_ENTRY and path.exists()
    assert 'bridgeExtension("notesoup")' in path.read_text()


def test_a_notesoup_server_dying_after_clear_memory_tells_the_human_and_the_model(
    tmp_path: Path,
) -> None:
    # Given a batch of two clear_memory calls and a server that dies after answering the first
    script = [
        {"tools": [{"name": "clear_memory"}, {"name": "clear_memory"}], "text": f"{SECRET}"},
        {"text": "still here"},
        {"text": "answer two"},
    ]
    fault = {"fault": "kill_after", "hook": "clear_memory", "nth": 1}
    env = {
        "PICTX_FSM_PYTHON": str(real_pi.faulty_python(tmp_path)),
        "PICTX_FAULT": json.dumps(fault),
        "PICTX_FAULT_STATE": str(tmp_path / "fault-state"),
    }
    # When Pi runs the prompt
    run = _notesoup_pi(tmp_path, script, "clear twice", env=env)
    # Then no reset happened, one notice says the request was lost (in notesoup's words), and
    # the model's next request carries the hidden message saying so
    assert run.returncode == 0, run.stderr
    lost = [n for n in run.notices() if NOTESOUP_ONLY["LOST_RESET"] in n]
    assert len(lost) == 1 and lost[0].startswith("notice[warning] notesoup: the lifecycle server")
    assert MARKER_TYPE not in _kinds(run.session_file())
    assert _carries(run.requests[1], NOTESOUP_ONLY["MODEL_LOST_RESET"])
