"""The bridge manifest: the extension registers from Python-generated data, kept current."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pictx_fsm import __version__
from pictx_fsm.cli import main
from pictx_fsm.extensions.context_management.adapter import CM_HOOKS
from pictx_fsm.extensions.context_management.commands import SUBCOMMANDS
from pictx_fsm.extensions.context_management.texts import (
    FLAG_NO_AUTO_HANDOFF,
    FLAG_NO_BACKGROUND,
    NOTES_GUIDELINES,
)
from pictx_fsm.extensions.context_management.texts import TOOLS as CM_TOOLS
from pictx_fsm.extensions.context_management.tools import TOOL_SCHEMAS
from pictx_fsm.extensions.pi_context.texts import WIPE_MEMORY_DESCRIPTION
from pictx_fsm.extensions.pi_context.tools import TOOL_SPECS, ToolSpec
from pictx_fsm.host.events import HOOKS
from pictx_fsm.hosts.pi import texts
from pictx_fsm.hosts.pi.connection import transition_table
from pictx_fsm.hosts.pi.convert import event_of
from pictx_fsm.hosts.pi.manifest import (
    MANIFEST,
    build_manifest,
    manifest_is_current,
    render_manifest,
    write_manifest,
)
from pictx_fsm.hosts.pi.served_cm import HOST_CALLS


def test_the_committed_manifest_is_current() -> None:
    # Given the manifest beside pictx-bridge.mjs / Then it is what Python generates now
    # (regenerate with `pictx-fsm pi manifest`)
    assert manifest_is_current(), "stale manifest: run `pictx-fsm pi manifest`"


def test_r18_the_manifest_lists_every_hook_and_all_eleven_tools_of_the_one_schema() -> None:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    pi_context = manifest["extensions"]["pi-context"]
    # Then the hooks are the lifecycle's one hook list, the tools TOOL_SPECS, in order, each
    # with the registration every host makes (N1, N2: write and edit sequential)
    assert pi_context["hooks"] == list(HOOKS)
    assert pi_context["tools"] == [json.loads(json.dumps(spec.to_json())) for spec in TOOL_SPECS]
    assert len(pi_context["tools"]) == 11
    wipe = next(t for t in pi_context["tools"] if t["name"] == "wipe_memory")
    assert wipe["description"] == WIPE_MEMORY_DESCRIPTION
    assert wipe["parameters"] == {"type": "object", "properties": {}, "additionalProperties": False}
    sequential = {t["name"] for t in pi_context["tools"] if t["executionMode"] == "sequential"}
    assert sequential == {"notes_write", "notes_edit"}
    # And the handshake version, the texts and the machine come from Python too
    assert manifest["package"] == __version__
    assert pi_context["texts"]["MODEL_LOST_RESET"] == texts.MODEL_LOST_RESET
    assert pi_context["texts"]["NOTICE_FAULT"] == texts.NOTICE_FAULT
    assert manifest["connection"] == json.loads(json.dumps(transition_table()))


def test_m2_the_manifest_registers_context_management_with_its_own_surface() -> None:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    cm = manifest["extensions"]["context-management"]
    # Then its hooks are its subscriptions (no context hook, M2), its four tools carry the
    # one schema and, for context_notes, the wrap-up rule as prompt guidelines (M17)
    assert set(cm["hooks"]) == CM_HOOKS and "context" not in cm["hooks"]
    assert [t["name"] for t in cm["tools"]] == list(CM_TOOLS)
    notes = next(t for t in cm["tools"] if t["name"] == "context_notes")
    assert notes["parameters"] == TOOL_SCHEMAS["context_notes"]["parameters"]
    assert notes["promptGuidelines"] == list(NOTES_GUIDELINES)
    # And /ctx-memory completes every subcommand; both flags (M3) and the child switch (M1)
    [command] = cm["commands"]
    assert command["name"] == "ctx-memory" and command["completions"] == list(SUBCOMMANDS)
    assert [f["name"] for f in cm["flags"]] == [FLAG_NO_BACKGROUND, FLAG_NO_AUTO_HANDOFF]
    assert cm["childEnv"] == "PI_SUBAGENT_CHILD"
    # And while its server cannot answer it answers nothing itself (Pi's own compaction)
    assert cm["fallbacks"] == {} and "lease" not in cm
    assert cm["texts"]["NOTICE_FAULT"].startswith("pi-context-management: the memory server ")


def test_a_new_tool_reaches_the_extension_through_the_manifest_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given one more tool in the one tool registry
    from pictx_fsm.hosts.pi import manifest as module

    extra = ToolSpec(
        name="notes_archive",
        label="Archive notes",
        description="Archive notes.",
        parameters={"type": "object", "properties": {"home": {"type": "string"}}},
        execution_mode="sequential",
    )
    monkeypatch.setattr(module, "TOOL_SPECS", (*TOOL_SPECS, extra))
    # When the manifest is regenerated
    path = tmp_path / "manifest.json"
    assert write_manifest(path) is True and write_manifest(path) is False
    # Then the tool is there with its schema and execution mode, nothing else to change
    tools = json.loads(path.read_text())["extensions"]["pi-context"]["tools"]
    assert tools[-1] == extra.to_json() and tools[-1]["executionMode"] == "sequential"
    assert render_manifest() == path.read_text()
    assert build_manifest()["extensions"]["pi-context"]["tools"][-1]["name"] == "notes_archive"


def test_pi_manifest_check_reports_a_stale_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a stale manifest in place of the committed one
    from pictx_fsm.hosts.pi import manifest as module

    stale = tmp_path / "stale.json"
    stale.write_text("{}\n")
    monkeypatch.setattr(module, "MANIFEST", stale)
    # When checked / Then exit 1, naming the fix; when current, 0
    assert main(["pi", "manifest", "--check"]) == 1
    assert "stale (run: pictx-fsm pi manifest)" in capsys.readouterr().out
    assert main(["pi", "manifest"]) == 0
    assert main(["pi", "manifest", "--check"]) == 0


@pytest.mark.parametrize("hook", HOOKS)
def test_the_server_converts_every_hook_of_the_one_hook_list(hook: str) -> None:
    # Given a bare request for each hook the lifecycle handles (pictx_fsm.host.events.HOOKS)
    # When the server converts it / Then it is that hook's event, nothing else
    assert hook == type(event_of("hook", hook, {})).HOOK


def test_every_hook_name_the_extension_tests_is_one_of_the_one_hook_list() -> None:
    # Given the hook names the extension's JavaScript compares against or switches on
    here = MANIFEST.parent
    source = "".join((here / name).read_text() for name in ("pictx-bridge.mjs", "requests.mjs"))
    named = set(re.findall(r'(?:name === |case )"([a-z_]+)"', source))
    # Then each is a hook of pictx_fsm.host.events.HOOKS: a renamed hook cannot go unnoticed there
    assert named and named <= set(HOOKS)


def test_the_extension_carries_out_exactly_the_host_calls_the_server_makes() -> None:
    # Given the host calls the JavaScript carries out (one `case` each) and the ones the
    # server's pi-context-management host makes
    source = (MANIFEST.parent / "hostcalls.mjs").read_text()
    carried = set(re.findall(r'case "([a-z_]+)"', source))
    # Then they are the same: a host call cannot be renamed on one side only
    assert carried == set(HOST_CALLS)
