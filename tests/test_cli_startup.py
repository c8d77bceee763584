"""``pictx-fsm --help`` and every command's start-up import only what runs (issue 11 item 4):
the top-level help lists every command without importing any; a command imports itself,
never the lifecycle, the models or Hypothesis unless it runs them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pictx_fsm.cli import COMMANDS

_PROBE = """
import contextlib, io, json, sys
from pictx_fsm.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps({"out": out.getvalue(), "modules": sorted(sys.modules)}))
"""
HEAVY = (
    "statemachine",
    "yaml",
    "hypothesis",
    "pictx_fsm.extensions.pi_context.lifecycle",
    "tiktoken",
    "crosshair",
)


def _modules_after(*argv: str) -> tuple[str, set[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=True
    )
    data = json.loads(result.stdout.strip().splitlines()[-1])
    return data["out"], set(data["modules"])


def test_the_top_level_help_lists_every_command_and_imports_none() -> None:
    out, modules = _modules_after("--help")
    for name in COMMANDS:
        assert name in out
    assert not [m for m in modules if m.startswith("pictx_fsm.cli.")]
    assert not [m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY]
    assert "typing" not in modules and "argparse" not in modules


@pytest.mark.parametrize("command", ["audit", "inspect", "log"])
def test_the_file_readers_start_without_the_lifecycle_or_the_models(command: str) -> None:
    out, modules = _modules_after(command, "--help")
    assert f"pictx_fsm.cli.{command}" in modules
    assert "usage: pictx-fsm " + command in out
    assert not [m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY]
