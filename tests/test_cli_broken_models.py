"""A broken model document fails at load time with a message naming the document, the
transition and the reference — and never as a traceback from the command line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

MODELS = Path(__file__).resolve().parents[1] / "models"


def _run(models: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PICTX_FSM_MODELS": str(models)}
    return subprocess.run(
        [sys.executable, "-m", "pictx_fsm.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def _broken_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "models"
    shutil.copytree(MODELS, copy)
    toggle = copy / "pi_context" / "toggle.yaml"
    text = toggle.read_text(encoding="utf-8")
    toggle.write_text(
        text.replace("[ensure_boot, report_status]", "[ensure_boots, report_status]", 1)
    )
    return copy


def test_a_misspelt_action_fails_the_load_naming_document_transition_and_reference(
    tmp_path: Path,
) -> None:
    # Given a models directory whose toggle names an action nobody binds
    models = _broken_copy(tmp_path)
    # When the machines are listed
    result = _run(models, "machines")
    # Then the command exits 2 with one line naming document, transition and reference
    assert result.returncode == 2
    assert "toggle.yaml" in result.stderr
    assert "toggle:toggle:on:switch_on:1" in result.stderr
    assert "'ensure_boots' is not bound" in result.stderr
    assert "Traceback" not in result.stderr


def test_commands_that_need_no_model_still_work_beside_a_broken_one(tmp_path: Path) -> None:
    # Given the same broken models directory / When a session file is inspected
    models = _broken_copy(tmp_path)
    fixture = Path(__file__).parent / "fixtures" / "sessions" / "reset-window.jsonl"
    result = _run(models, "inspect", str(fixture))
    # Then inspect works as usual
    assert result.returncode == 0, result.stderr
    assert "windows on the active branch" in result.stdout
