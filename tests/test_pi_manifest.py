"""The bridge manifest: the extension registers from Python-generated data, kept current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pictx_fsm import __version__
from pictx_fsm.cli import main
from pictx_fsm.hooks import HOOKS
from pictx_fsm.hosts.pi import texts
from pictx_fsm.hosts.pi.connection import transition_table
from pictx_fsm.hosts.pi.manifest import (
    MANIFEST,
    build_manifest,
    manifest_is_current,
    render_manifest,
    tool_specs,
    write_manifest,
)
from pictx_fsm.lifecycle import TOOL_EVENTS
from pictx_fsm.protocol import WIPE_MEMORY_DESCRIPTION


def test_the_committed_manifest_is_current() -> None:
    # Given the manifest beside pictx-bridge.mjs / Then it is what Python generates now
    # (regenerate with `pictx-fsm pi manifest`)
    assert manifest_is_current(), "stale manifest: run `pictx-fsm pi manifest`"


def test_the_manifest_lists_every_lifecycle_hook_and_tool_with_its_schema() -> None:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    # Then the hooks are the lifecycle's one hook list, the tools every lifecycle tool
    assert manifest["hooks"] == list(HOOKS)
    assert {t["name"] for t in manifest["tools"]} >= set(TOOL_EVENTS)
    wipe = next(t for t in manifest["tools"] if t["name"] == "wipe_memory")
    assert wipe["description"] == WIPE_MEMORY_DESCRIPTION
    assert wipe["parameters"] == {"type": "object", "properties": {}, "additionalProperties": False}
    assert set(wipe) == {"name", "label", "description", "parameters", "executionMode"}
    # And the handshake version, the texts and the machine come from Python too
    assert manifest["package"] == __version__
    assert manifest["texts"]["MODEL_LOST_RESET"] == texts.MODEL_LOST_RESET
    assert manifest["connection"] == json.loads(json.dumps(transition_table()))


def test_a_new_tool_reaches_the_extension_through_the_manifest_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given one more tool in the Python registry
    from pictx_fsm.hosts.pi import manifest as module

    extra = module.ToolSpec(
        name="notes_list",
        label="List notes",
        description="List notes.",
        parameters={"type": "object", "properties": {"home": {"type": "string"}}},
        execution_mode="sequential",
    )
    monkeypatch.setattr(module, "tool_specs", lambda: (*tool_specs(), extra))
    # When the manifest is regenerated
    path = tmp_path / "manifest.json"
    assert write_manifest(path) is True and write_manifest(path) is False
    # Then the tool is there with its schema and execution mode, nothing else to change
    tools = json.loads(path.read_text())["tools"]
    assert tools[-1] == extra.to_json() and tools[-1]["executionMode"] == "sequential"
    assert render_manifest() == path.read_text()
    assert build_manifest()["tools"][-1]["name"] == "notes_list"


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
