"""The README's "run it inside Pi" steps, run as a user types them on a fresh machine.

Step 2's lines are taken from the README itself: a fresh virtual environment under a fresh
``$HOME``, pictx-fsm installed from this clone (no package index serves it), the environment
set, and Pi loading the extension the installation names — pi-context, then
pi-context-management alone and both together, as the pi-context-management part shows. Only
``pi`` stands for the offline Pi of the supported version (the faux model, print mode, one
prompt). The installation is made once per test session (``pip install`` takes a while).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from real_pi import FAUX, SKIPPED_ENTRIES, entry_kind, offline_pi

from pictx_fsm.extensions.context_management.records import NOTES_TYPE
from pictx_fsm.extensions.pi_context.texts import MARKER_TYPE
from pictx_fsm.session.jsonl import read_session

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CLONE = "/path/to/pictx_fsm"
INSTALL_TIMEOUT = 900


def _blocks(heading: str) -> list[list[str]]:
    """The ``sh`` code blocks after ``heading`` in the README, up to the next heading."""
    text = README.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    section = text[start : end if end > 0 else len(text)]
    found = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    return [_joined(block) for block in found]


def _joined(block: str) -> list[str]:
    """A block's command lines, continuation lines joined, comments dropped."""
    lines: list[str] = []
    for raw in block.replace("\\\n", " ").splitlines():
        line = re.sub(r"\s+#.*$", "", raw).strip()
        if line:
            lines.append(line)
    return lines


def step_two() -> list[str]:
    """Step 2 of "Run it inside Pi": the install, the environment, pi-context's ``pi`` line."""
    [block] = [b for b in _blocks("**2. A Python") if any("pip install" in line for line in b)][:1]
    return block


def cm_lines() -> list[str]:
    """pi-context-management's ``pi`` lines (alone, then both)."""
    [block] = _blocks("**Setting.**")[:1]
    return block


def _bash(script: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh ``$HOME`` where step 2's install lines ran as written (in this clone)."""
    home = tmp_path_factory.mktemp("home")
    lines = [line.replace(CLONE, str(ROOT)) for line in step_two()]
    install = [line for line in lines if "pip install" in line or line.startswith("cd ")]
    assert install[0] == f"cd {ROOT}" and "pip install ." in install[1], install
    pip = {name: value for name, value in os.environ.items() if name.startswith("PIP_")}
    env = {"HOME": str(home), "PATH": os.environ["PATH"], **pip}  # the machine's pip setup
    done = _bash("set -e\n" + "\n".join(install), env, INSTALL_TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (home / "pictx" / "bin" / "python").exists()
    return home


def _pi_function(tmp_path: Path, prompt: str) -> str:
    """``pi`` as the supported Pi offline: the faux model answers, print mode, one prompt."""
    pi = offline_pi()
    return (
        f'pi() {{ "{pi.node}" "{pi.cli}" --no-extensions -ns -np -nc -e "{FAUX}" '
        f'--provider faux --model faux-1 --thinking off --session-dir "{tmp_path / "sessions"}" '
        f'"$@" -p "{prompt}"; }}'
    )


def _run(tmp_path: Path, home: Path, lines: list[str], script: list[dict], prompt: str) -> Path:
    """Step 2's environment lines, then ``lines``, in a shell as the user has it."""
    (tmp_path / "ws").mkdir(parents=True, exist_ok=True)
    faux = tmp_path / "faux.json"
    faux.write_text(json.dumps(script))
    environment = [line for line in step_two() if line.startswith("export ")]
    shell = "\n".join(["set -e", _pi_function(tmp_path, prompt), *environment, *lines])
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
        "PI_NOTES_HOME": str(tmp_path / "notes"),
        "PICTX_FAUX_SCRIPT_FILE": str(faux),
    }
    done = subprocess.run(
        ["bash", "-c", shell], cwd=tmp_path / "ws", env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cannot run" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    found = (tmp_path / "sessions").glob("*.jsonl")
    [session] = [p for p in found if not p.name.endswith(".ctxlog.jsonl")]
    return session


def _kinds(path: Path) -> list[str]:
    return [entry_kind(e) for e in read_session(path).entries if e.type not in SKIPPED_ENTRIES]


WIPE = [{"tools": [{"name": "wipe_memory"}]}, {"text": "fresh"}]
NOTE = {
    "tools": [
        {
            "name": "context_notes",
            "args": {
                "action": "update",
                "key": "api",
                "kind": "goal",
                "status": "active",
                "text": "Keep the API stable.",
                "sources": [{"$source": ["user", -1]}],
            },
        }
    ]
}


@pytest.mark.real_pi
def test_step_two_of_the_readme_runs_pi_context_from_a_clone(tmp_path: Path, home: Path) -> None:
    # Given step 2 typed as written: a fresh venv with pictx-fsm from the clone, the
    # environment, and Pi loading the extension the installation names
    pi_line = [line for line in step_two() if line.startswith("pi ")]
    # When the model wipes its memory
    session = _run(tmp_path, home, pi_line, WIPE, "wipe your memory")
    # Then pi-context committed the reset (the marker is in the session, its audit log exists)
    assert MARKER_TYPE in _kinds(session)
    assert list((home / ".pi" / "agent" / "pictx-audit").glob("*.audit.jsonl"))


@pytest.mark.real_pi
def test_the_readmes_pi_context_management_lines_run_from_a_clone(
    tmp_path: Path, home: Path
) -> None:
    # Given the same installation, pi-context-management's lines: alone, then with pi-context
    alone, both = cm_lines()
    # When the model saves a note under each
    first = _run(tmp_path / "alone", home, [alone], [NOTE, {"text": "noted"}], "Keep the API.")
    second = _run(tmp_path / "both", home, [both], [NOTE, {"text": "noted"}], "Keep the API.")
    # Then the note is in the session each time
    assert NOTES_TYPE in _kinds(first) and NOTES_TYPE in _kinds(second)
