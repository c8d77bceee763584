"""``pictx-fsm differential``: a batch of generated runs on a real Pi and on the model session.

A divergence planted in the model session (``--plant``) must make the batch fail with a run
shrunk to a few actions, written as a trace that replays; a Pi that cannot be started exits 2
saying why. The fixed-seed batches of 100 runs per Pi version are ``.ci/run``'s (a test would
take minutes); the long run's figures are in ``docs/model-session.md``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi_versions import INSTALLS

from pictx_fsm.cli import main
from pictx_fsm.extensions.pi_context.kit.differential import DIFFERENTIAL
from pictx_fsm.testing.differential.batch import generated_runs
from pictx_fsm.testing.differential.divergences import DIVERGENCES, Divergence
from pictx_fsm.testing.differential.model import run_model
from pictx_fsm.testing.differential.runs import plan_of

MAX_ACTIONS = 8
"""Short runs, so that shrinking a difference takes a few dozen runs on the real Pi."""
RUNS = 12
A_FEW_ACTIONS = 6


def _batch_exercising(divergence: Divergence, host_profile: str) -> tuple[int, int]:
    """The first seed whose batch holds a run the planted divergence changes on the model
    session alone, and how many runs reach it: a batch the real Pi must then fail on."""
    for seed in range(64):
        runs = generated_runs(DIFFERENTIAL, host_profile, RUNS, seed, MAX_ACTIONS)
        for number, (config, actions) in enumerate(runs, start=1):
            known = plan_of(DIFFERENTIAL, config, actions).known
            faithful = run_model(DIFFERENTIAL, config, actions, known, None).observed
            try:
                planted = run_model(
                    DIFFERENTIAL, config, actions, known, None, divergence.plant
                ).observed
            except Exception:  # a planted model may raise; that differs too
                return seed, number
            if planted != faithful:
                return seed, number
    raise AssertionError(f"no batch exercises {divergence.name}")


@pytest.mark.parametrize("name", sorted(DIVERGENCES))
def test_a_planted_divergence_fails_the_batch_with_a_shrunk_run_of_a_few_actions(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the oldest supported Pi, and a divergence planted in the model session (a
    # follow-up delivered late, a steer dropped during a tool batch, a boot at the wrong
    # parent), with a seed whose batch exercises it
    install = INSTALLS[0]
    if not install.available():
        pytest.skip(install.skip_reason())
    divergence = DIVERGENCES[name]
    seed, runs = _batch_exercising(divergence, install.host_profile)
    out = tmp_path / "out"
    pi = ["--pi", str(install.home)]
    # When the batch runs with the divergence planted
    code = main(
        [
            "differential",
            *pi,
            f"--runs={runs}",
            f"--seed={seed}",
            f"--max-actions={MAX_ACTIONS}",
            f"--plant={name}",
            f"--out={out}",
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    # Then it fails, with the difference shrunk to a few actions and written as a trace
    assert code == 1, summary
    assert summary["differences"] == 1
    assert summary["found"]["shrunk_actions"] <= A_FEW_ACTIONS, summary
    trace = Path(summary["trace"])
    assert trace.is_file() and trace.parent == out
    assert len(json.loads(trace.read_text())["actions"]) == summary["found"]["shrunk_actions"]
    # And the trace replays: still differing with the divergence, agreeing without it
    assert main(["differential", *pi, f"--replay={trace}", f"--plant={name}"]) == 1
    assert main(["differential", *pi, f"--replay={trace}"]) == 0
    assert "differences  none" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("pi", "reason"),
    [
        ("{tmp}/absent", "absent: no such file"),
        ("{tmp}", "no Pi with its Node binary under this directory"),
        ("{tmp}/broken-pi", "--version failed: no Node here"),
    ],
    ids=["missing", "no-pi-in-directory", "pi-that-fails"],
)
def test_a_pi_that_cannot_be_started_exits_2_saying_why(
    pi: str, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a --pi that is missing, holds no Pi, or is a `pi` that fails to start
    broken = tmp_path / "broken-pi"
    broken.write_text("#!/bin/sh\necho 'no Node here' >&2\nexit 3\n", encoding="utf-8")
    broken.chmod(0o755)
    # When the batch is asked to run on it
    code = main(["differential", "--pi", pi.format(tmp=tmp_path), "--runs=1"])
    # Then it exits 2, and the message says why
    assert code == 2
    assert reason in capsys.readouterr().err


def test_a_pi_missing_from_path_exits_2_saying_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given no `pi` on PATH and no --pi
    monkeypatch.setenv("PATH", str(tmp_path))
    # When the batch runs
    code = main(["differential", "--runs=1"])
    # Then it exits 2, saying where it looked
    assert code == 2
    assert "no `pi` on PATH" in capsys.readouterr().err
