"""pi-context-management loaded into the real Pi (every supported version) as its README says:
``pi -e "$(pictx-fsm pi --extension-path context-management)"``, alone or after pi-context.

What a user sees: its tools answer (``context_notes`` with its prompt guidelines in the system
prompt), ``/ctx-memory`` and its subcommands, the status bar and the panel through Pi's UI
(stderr lines in print mode), the diagnostics log beside the session file and the export; its
child switch registers nothing; with pi-context loaded first both run, each with its own
server, as verify's "both" world has them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from real_cm import READ_NOTES, note_reply
from real_pi import RpcPi, run_pi

from pictx_fsm.cli import main
from pictx_fsm.extensions.context_management.records import NOTES_TYPE
from pictx_fsm.extensions.context_management.texts import (
    NOTES_GUIDELINES,
    STATUS_KEY,
    STATUS_READY,
)
from pictx_fsm.extensions.pi_context.texts import MARKER_TYPE
from pictx_fsm.hosts.pi import EXTENSION, entry_path
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.session.jsonl import read_session

CM = [entry_path("context-management")]


def _tool_results(path: Path) -> list[dict[str, Any]]:
    return [
        e.message.raw
        for e in read_session(path).entries
        if isinstance(e, MessageEntry) and e.message.role == "toolResult"
    ]


def _text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result.get("content") or [])


def test_acceptance_a_print_mode_run_reads_the_notes_through_the_extension(tmp_path: Path) -> None:
    # Given Pi in print mode with the faux model and only pi-context-management loaded, whose
    # model calls context_notes {"action": "read"}
    script = [READ_NOTES, {"text": "I read the notes."}]
    # When Pi runs the prompt
    run = run_pi(tmp_path, script, "What do we know?", bridge=CM)
    # Then the tool answered with the extension's own answer — not "tool not found", not an
    # error — and Pi exited 0
    assert run.returncode == 0, run.stderr
    [result] = _tool_results(run.session_file())
    assert result.get("isError") is not True
    assert json.loads(_text(result)) == {"ok": True, "notes": []}
    assert "I read the notes." in run.stdout


def test_m17_context_notes_carries_its_wrap_up_rule_into_the_system_prompt(tmp_path: Path) -> None:
    # Given the extension loaded / When a prompt reaches the model
    run = run_pi(tmp_path, [{"text": "ok"}], "Hello.", bridge=CM)
    # Then the provider request's system prompt holds the tool's prompt guidelines (M17) and
    # declares all four tools
    assert run.returncode == 0, run.stderr
    request = json.dumps(run.requests[0])
    for guideline in NOTES_GUIDELINES:
        assert json.dumps(guideline)[1:-1] in request
    for tool in (
        "context_notes",
        "context_history_search",
        "context_history_read",
        "context_status",
    ):
        assert tool in request


def test_m4_print_mode_shows_the_status_bar_and_notices_on_stderr(tmp_path: Path) -> None:
    # Given a note saved, then /ctx-memory status and the panel opened and closed
    script = [note_reply("api"), {"text": "noted"}]
    inputs = (
        "Keep the API.",
        "/ctx-memory status",
        "/ctx-memory session",
        "/ctx-memory session close",
    )
    run = run_pi(tmp_path, script, *inputs, bridge=CM)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    # Then the bar's text is a status line, the status a notice, the panel its lines
    assert f"status[{STATUS_KEY}] {STATUS_READY}" in lines
    status = [n for n in run.notices() if n.startswith("notice[info] {")]
    assert status and '"checkpointState": "notes_only"' in run.stderr
    assert any(line.startswith(f"panel[{STATUS_KEY}] ") for line in lines)
    assert f"panel[{STATUS_KEY}] (closed)" in lines


def test_m62_m64_m68_the_log_beside_the_session_and_the_export(tmp_path: Path) -> None:
    # Given a saved note and an export
    script = [note_reply("api"), {"text": "noted"}]
    run = run_pi(tmp_path, script, "Keep the API.", "/ctx-memory session export", bridge=CM)
    assert run.returncode == 0, run.stderr
    session = run.session_file()
    # Then the diagnostics log is <session file>.ctxlog.jsonl, whitelisted records only, and
    # the report <session file>.ctx-report.json, whose path the user was told
    log = Path(f"{session}.ctxlog.jsonl")
    kinds = [json.loads(line)["kind"] for line in log.read_text().splitlines()]
    assert "note_write" in kinds and "operation_start" in kinds
    report = Path(f"{session}.ctx-report.json")
    assert json.loads(report.read_text())["metrics"]
    assert any(str(report) in n for n in run.notices())


def test_m62_the_status_bar_and_panel_go_through_pis_ui_in_rpc_mode(tmp_path: Path) -> None:
    # Given Pi in RPC mode (a UI) with the extension
    pi = RpcPi(tmp_path, [note_reply("api"), {"text": "noted"}], {}, bridge=CM)
    pi.send({"id": "p", "type": "prompt", "message": "Keep the API."})
    pi.until("agent_settled")
    pi.send({"id": "s", "type": "prompt", "message": "/ctx-memory session"})
    pi.until("response", id="s")
    assert pi.close() == 0
    # Then the bar and the panel were set through ctx.ui (setStatus, setWidget), never echoed
    ui = [e for e in pi.seen if e.get("type") == "extension_ui_request"]
    statuses = [e["statusText"] for e in ui if e["method"] == "setStatus"]
    widgets = [e for e in ui if e["method"] == "setWidget" and e["widgetKey"] == STATUS_KEY]
    assert statuses[0] == STATUS_READY and widgets and widgets[-1]["widgetLines"]


def test_m1_a_child_session_registers_nothing(tmp_path: Path) -> None:
    # Given PI_SUBAGENT_CHILD=1 / When the model calls context_notes
    script = [READ_NOTES, {"text": "no such tool"}]
    run = run_pi(tmp_path, script, "Read.", env={"PI_SUBAGENT_CHILD": "1"}, bridge=CM)
    # Then Pi has no such tool (the factory returned at once) and no status was shown
    assert run.returncode == 0, run.stderr
    [result] = _tool_results(run.session_file())
    assert result.get("isError") is True and "context_notes" in _text(result)
    assert "status[" not in run.stderr


def test_both_extensions_load_together_each_with_its_own_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given pi-context loaded first, then pi-context-management (two -e flags), and a model
    # that saves a note, then wipes its memory
    script = [
        note_reply("api"),
        {"text": "noted"},
        {"tools": [{"name": "wipe_memory"}]},
        {"text": "fresh window"},
        READ_NOTES,
        {"text": "read"},
    ]
    audit = tmp_path / "audit"
    run = run_pi(
        tmp_path,
        script,
        "Keep the API.",
        "Wipe your memory.",
        "What do we know?",
        bridge=[EXTENSION, *CM],
    )
    # Then both ran: the note is saved, the reset committed, and the notes read after the
    # reset still finds the note (pi-context's projection ignores other extensions' entries)
    assert run.returncode == 0, run.stderr
    kinds = [getattr(e, "custom_type", None) for e in read_session(run.session_file()).entries]
    assert NOTES_TYPE in kinds and MARKER_TYPE in kinds
    notes = json.loads(_text(_tool_results(run.session_file())[-1]))
    assert [n["key"] for n in notes["notes"]] == ["api"]
    # And each kept its own decisions; pi-context's session audit finds nothing
    assert list(audit.glob("*.audit.jsonl")) and list(audit.glob("*.context-management.jsonl"))
    capsys.readouterr()
    assert main(["audit", str(run.session_file())]) == 0
    assert "findings: 0 " in capsys.readouterr().out


def test_pictx_fsm_pi_extension_path_names_each_entry(capsys: pytest.CaptureFixture[str]) -> None:
    # Given the CLI / When asked for each extension's entry / Then pi-context by default
    assert main(["pi", "--extension-path"]) == 0
    assert capsys.readouterr().out.strip() == str(EXTENSION)
    assert main(["pi", "--extension-path", "pi-context"]) == 0
    assert capsys.readouterr().out.strip() == str(EXTENSION)
    assert main(["pi", "--extension-path", "context-management"]) == 0
    assert capsys.readouterr().out.strip() == str(entry_path("context-management"))
    assert entry_path("context-management").exists()
