"""A third extension costs one folder: an extension built outside the package on its public
API (``tests/fixtures/extensions/turn_bell``: one machine, one invariant, one planted fault)
runs through the generic ``verify``, ``replay``, ``machines``, ``diagram`` and ``log verify``
with no change to pictx_fsm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HOME = Path(__file__).resolve().parent / "fixtures" / "extensions" / "turn_bell"
MODELS = HOME / "models"
KIT = "turn_bell:KIT"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(HOME)}
    return subprocess.run(
        [sys.executable, "-m", "pictx_fsm.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )


def _verify(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _cli(
        "verify",
        "--extension",
        KIT,
        "--time-budget",
        "5",
        "--no-contracts",
        "--quiet",
        "--out",
        str(out),
        *extra,
    )


def test_the_generic_verify_explores_a_third_extension_and_covers_its_machine(
    tmp_path: Path,
) -> None:
    # Given the turn-bell extension, unknown to the package / When verify explores it
    result = _verify(tmp_path)
    # Then every invariant held and every declared transition fired
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pictx-fsm verify · turn-bell" in result.stdout
    assert "3/3 declared transitions fired" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def counterexample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("turn-bell")
    result = _verify(out, "--fault", "early-bell")
    assert result.returncode == 1, result.stdout + result.stderr
    return out / "counterexample-turn-bell-early-bell.json"


def test_verify_finds_the_third_extensions_planted_fault_with_a_short_counterexample(
    counterexample: Path,
) -> None:
    # Given the fault that rings the bell at the first turn / When verify explores
    trace = json.loads(counterexample.read_text())
    # Then its one invariant caught it, in a few actions, and the trace names the kit
    assert trace["failure"]["invariant"] == "rings_after_three_turns"
    assert len(trace["actions"]) <= 4
    assert trace["extension"] == "turn-bell" and trace["kit"] == KIT


def test_replay_reproduces_the_third_extensions_counterexample_and_writes_its_audit_log(
    counterexample: Path, tmp_path: Path
) -> None:
    # When the counterexample is replayed with its audit logs written
    result = _cli("replay", str(counterexample), "--audit-dir", str(tmp_path / "audit"))
    # Then the same decisions are taken and the same failure reproduces
    assert result.returncode == 1, result.stdout + result.stderr
    assert "reproduces the recorded failure" in result.stdout
    assert "match the recorded ones" in result.stdout
    # And its decision log is a verified hash chain, drawn over the machine
    log = tmp_path / "audit" / "runtime-0.audit.jsonl"
    verified = _cli("log", "verify", str(log))
    assert verified.returncode == 0 and "intact" in verified.stdout
    drawn = _cli("diagram", "--models", str(MODELS), "--trace", str(log))
    assert drawn.returncode == 0, drawn.stderr
    assert "turn_end [third_turn] / count, ring (fired 1)" in drawn.stdout


def test_machines_lists_the_third_extensions_machine() -> None:
    result = _cli("machines", "--models", str(MODELS), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert [m["name"] for m in document["machines"]] == ["turn_bell"]
    assert len(document["machines"][0]["transitions"]) == 3
