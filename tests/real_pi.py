"""Running the real Pi offline through the bridge, for the tests.

Pi runs from the npm install `.ci/run` makes of the version the test selected (see
``pi_versions``: `.pi-node/` for 0.87.1, `.pi-node-1.6/` for 1.6.0), on
Node 22, with pi-ai's faux model scripted from a file (`fixtures/pi/faux-provider.mjs`) and
the bridge extension; every test using it skips, saying so, where Pi is not installed.
Two drivers: print mode (prompts and `/commands` in order) and RPC mode (JSON commands on
stdin, each awaited before the next).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pi_versions
import pytest
from attrs import frozen

from pictx_fsm.audit.log import hook_records
from pictx_fsm.hosts.pi import EXTENSION
from pictx_fsm.hosts.pi.offline import OfflinePi, offline_environment
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.testing.differential.observe import (
    SKIPPED_ENTRIES,
    Decisions,
    decisions,
    entry_kind,
)

__all__ = ["SKIPPED_ENTRIES", "decisions", "entry_kind"]

ROOT = Path(__file__).resolve().parents[1]
RPC_TIMEOUT = 60.0
FAUX = ROOT / "tests" / "fixtures" / "pi" / "faux-provider.mjs"


@frozen
class RealRun:
    kinds: list[str]
    """The written session's entries as :func:`entry_kind` names them, in file order."""
    log: Path
    """The bridge's audit log."""

    def decisions(self) -> Decisions:
        return decisions(hook_records(self.log))

    def fired(self) -> set[str]:
        return {transition for _, fired in self.decisions() for transition in fired}


def pi_home() -> Path | None:
    """The selected Pi version's ``node_modules`` (see ``pi_versions``), when installed."""
    install = pi_versions.selected()
    return install.home if install.available() else None


def offline_pi() -> OfflinePi:
    """The selected Pi version (see ``pi_versions``); the test skips, saying so, without it."""
    install = pi_versions.selected()
    if not install.available():
        pytest.skip(install.skip_reason())
    return OfflinePi(node_modules=install.home)


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


def _pi(
    tmp_path: Path,
    script: Sequence[dict[str, Any]] | Mapping[str, Any],
    bridge: Sequence[Path] = (),
) -> tuple[list[str], dict[str, str]]:
    """Pi's command line and environment; ``bridge`` names the entries to load (pi-context's
    by default, or ``$PICTX_TEST_EXTENSION``)."""
    pi = offline_pi()
    (tmp_path / "ws").mkdir(exist_ok=True)
    script_file = tmp_path / "faux-script.json"
    script_file.write_text(json.dumps(script if isinstance(script, Mapping) else list(script)))
    env = dict(
        offline_environment(
            tmp_path,
            script_file,
            PICTX_FSM_PYTHON=sys.executable,
            PICTX_FSM_AUDIT_DIR=str(tmp_path / "audit"),
            PICTX_FAUX_LOG=str(tmp_path / "requests.jsonl"),
        )
    )
    # Another bridge under test (how the suite was checked against main's bridge):
    # PICTX_TEST_EXTENSION=<its .mjs> PICTX_TEST_PYTHONPATH=<its source tree>.
    extensions = [str(p) for p in bridge] or [
        os.environ.get("PICTX_TEST_EXTENSION", str(EXTENSION))
    ]
    if os.environ.get("PICTX_TEST_PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PICTX_TEST_PYTHONPATH"]
    return pi.command([FAUX, *extensions], tmp_path / "sessions"), env


def _collect(tmp_path: Path) -> RealRun:
    [path] = list((tmp_path / "sessions").glob("*.jsonl"))
    kinds = [entry_kind(e) for e in read_session(path).entries if e.type not in SKIPPED_ENTRIES]
    [log] = list((tmp_path / "audit").glob("*.audit.jsonl"))
    return RealRun(kinds=kinds, log=log)


# -- fault injection ---------------------------------------------------------------------------

FAULTY_SERVER = ROOT / "tests" / "fixtures" / "pi" / "faulty_server.py"
FAULT_RUN_TIMEOUT = float(os.environ.get("PICTX_TEST_PI_TIMEOUT", "60"))


@frozen
class PiExit:
    """One Pi process as a user saw it: exit code, terminal output, what it wrote and sent."""

    returncode: int
    stdout: str
    stderr: str
    sessions: Path
    requests: list[dict[str, Any]]
    """Every provider request, as the faux provider logged it (``leaf``, ``messages``)."""

    def notices(self) -> list[str]:
        """Notices as the extension echoes them to stderr in print mode."""
        return [line for line in self.stderr.splitlines() if line.startswith("notice[")]

    def session_file(self) -> Path:
        [path] = self.session_files()
        return path

    def session_files(self) -> list[Path]:
        """Every session file, oldest first (not pi-context-management's logs)."""
        found = self.sessions.glob("*.jsonl")
        return sorted(p for p in found if not p.name.endswith(".ctxlog.jsonl"))


def python_wrapper(tmp_path: Path, name: str, body: str) -> Path:
    """An executable to set as ``PICTX_FSM_PYTHON``: ``body`` is the shell line that runs."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def faulty_python(tmp_path: Path) -> Path:
    """A ``PICTX_FSM_PYTHON`` that runs the server with the fault in ``$PICTX_FAULT``."""
    return python_wrapper(
        tmp_path, "faulty-python", f'exec "{sys.executable}" "{FAULTY_SERVER}" "$@"'
    )


def run_pi(
    tmp_path: Path,
    script: Sequence[dict[str, Any]] | Mapping[str, Any],
    *inputs: str,
    env: dict[str, str] | None = None,
    resume: bool = False,
    bridge: Sequence[Path] = (),
    argv: Sequence[str] = (),
) -> PiExit:
    """Pi's print mode with extra environment (a fault, another Python); ``resume`` continues
    the last session (``-c``); ``bridge`` the extensions' entries (pi-context's by default),
    ``argv`` more flags. Pi must exit by itself within :data:`FAULT_RUN_TIMEOUT`."""
    command, base = _pi(tmp_path, script, bridge)
    flags = [*argv, *(["-c"] if resume else [])]
    try:
        result = subprocess.run(
            [*command, *flags, "-p", *inputs],
            cwd=tmp_path / "ws",
            env={**base, **(env or {})},
            capture_output=True,
            text=True,
            timeout=FAULT_RUN_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        message = f"Pi did not exit within {FAULT_RUN_TIMEOUT} s: {expired.stderr!r}"
        raise AssertionError(message) from None
    log = tmp_path / "requests.jsonl"
    requests = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return PiExit(
        returncode=result.returncode,
        stdout=result.stdout,
        stderr=result.stderr,
        sessions=tmp_path / "sessions",
        requests=requests,
    )


class RpcPi:
    """Pi's RPC mode driven step by step: send commands, wait for events, then close stdin
    and require Pi to exit by itself (:meth:`close`)."""

    def __init__(
        self,
        tmp_path: Path,
        script: Sequence[dict[str, Any]] | Mapping[str, Any],
        env: Mapping[str, str],
        *,
        resume: bool = False,
        extensions: Sequence[Path] = (),
        bridge: Sequence[Path] = (),
        argv: Sequence[str] = (),
    ) -> None:
        command, base = _pi(tmp_path, script, bridge)
        for extension in extensions:  # loaded after the bridge (the driver, for one)
            command += ["-e", str(extension)]
        self.tmp_path = tmp_path
        self.proc = subprocess.Popen(
            [*command, *argv, *(["-c"] if resume else []), "--mode", "rpc"],
            cwd=tmp_path / "ws",
            env={**base, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.lines = _reader(self.proc.stdout)
        self.seen: list[dict[str, Any]] = []

    def send(self, command: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def until(self, kind: str, **fields: Any) -> dict[str, Any]:
        """The next event of type ``kind`` (with these fields), every event kept in ``seen``."""
        for event in self.lines:
            self.seen.append(event)
            if event.get("type") == kind and all(event.get(k) == v for k, v in fields.items()):
                return event
        raise AssertionError(f"Pi ended before a {kind} event")

    def close(self) -> int:
        """Close stdin; Pi must exit by itself within :data:`RPC_TIMEOUT`. What it printed
        meanwhile is kept in :attr:`seen` too."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        with contextlib.suppress(AssertionError):  # Pi closed its output: all is read
            self.seen.extend(self.lines)
        return self.proc.wait(timeout=RPC_TIMEOUT)

    def stderr(self) -> str:
        """Pi's stderr, once it exited."""
        assert self.proc.stderr is not None
        return self.proc.stderr.read() if self.proc.poll() is not None else ""

    def notices(self) -> list[str]:
        return [
            str(e.get("message"))
            for e in self.seen
            if e.get("type") == "extension_ui_request" and e.get("method") == "notify"
        ]
