"""``--ray`` gives the serial run's results: ``check`` (the frontier sharded by state hash),
``verify`` (independent seeds and swarm configurations as tasks) and ``audit`` (files on
workers), on a local Ray with two workers and small budgets. Ray is the optional ``ray``
extra: without it these tests skip, saying so."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (the optional ray extra)")

from pictx_fsm.cli import main
from pictx_fsm.testing.check import CheckOptions, check
from pictx_fsm.testing.explore import ExploreOptions
from pictx_fsm.testing.kit import kit_named
from pictx_fsm.testing.ray_support import connect

HOME = Path(__file__).resolve().parent / "fixtures" / "extensions" / "turn_bell"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "audit"


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    import ray

    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(HOME), saved)))
    connect("local", 2)
    try:
        yield
    finally:
        ray.shutdown()
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def _same(serial: object, parallel: object) -> None:
    for left, right in zip(serial.searches, parallel.searches, strict=True):  # type: ignore[attr-defined]
        assert (left.states, left.transitions, left.depth, left.layers, left.fired) == (
            right.states,
            right.transitions,
            right.depth,
            right.layers,
            right.fired,
        )


@pytest.mark.parametrize(
    ("kit_name", "options"),
    [
        ("turn_bell:KIT", CheckOptions(depth=4)),
        ("pi-context", CheckOptions(depth=4, fault="continue-after-abort", alphabets=("turns",))),
    ],
)
def test_check_on_ray_finds_the_serial_states_transitions_and_counterexample(
    ray_local: None, kit_name: str, options: CheckOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pictx_fsm.testing.ray_check import ray_expander

    monkeypatch.syspath_prepend(str(HOME))
    kit = kit_named(kit_name)
    serial = check(kit, options)
    parallel = check(kit, options, expander=ray_expander(2))
    _same(serial, parallel)
    assert parallel.violation == serial.violation
    if serial.counterexample is not None:
        assert parallel.counterexample is not None
        assert parallel.counterexample.actions == serial.counterexample.actions


def test_verify_on_ray_catches_a_planted_fault_like_the_serial_run(ray_local: None) -> None:
    from pictx_fsm.testing.explore import explore
    from pictx_fsm.testing.ray_verify import explore_on_ray

    kit = kit_named("pi-context")
    options = ExploreOptions(fault="skip-dedupe", examples=30, time_budget=20)
    serial = explore(kit, options)
    parallel = explore_on_ray(kit, options, workers=2)
    assert serial.counterexample is not None and parallel.counterexample is not None
    assert (parallel.counterexample.failure or {})["invariant"] == (
        serial.counterexample.failure or {}
    )["invariant"]


def test_a_clean_verify_on_ray_merges_the_tasks_coverage(ray_local: None) -> None:
    from pictx_fsm.testing.explore import explore
    from pictx_fsm.testing.ray_verify import explore_on_ray, task_options

    kit = kit_named("context-management")
    options = ExploreOptions(examples=3, steps=6, time_budget=30)
    tasks = task_options(kit, options, 2)
    # Every swarm configuration (companion alone, after pi-context) is a task, which runs the
    # seed scenarios in it
    assert {t.variants["companion"] for t in tasks} == {("none",), ("pi-context",)}
    assert [t.scenarios for t in tasks] == [True, True]
    assert len({t.seed for t in tasks}) == len(tasks)
    serial = explore(kit, options)
    parallel = explore_on_ray(kit, options, workers=2)
    assert parallel.counterexample is None and serial.counterexample is None
    assert parallel.scenario_runs == serial.scenario_runs
    assert parallel.coverage is not None and serial.coverage is not None
    # The tasks' union covers at least what the serial run's scenarios cover
    assert parallel.coverage.coverage.covered >= serial.coverage.coverage.covered


def test_audit_on_ray_gives_the_serial_findings_on_a_directory_tree(
    ray_local: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a tree of session files, the audit fixtures in several directories
    for index, source in enumerate(sorted(FIXTURES.glob("*.jsonl")) * 3):
        target = tmp_path / f"d{index % 4}" / f"s{index // 4}" / f"{index}-{source.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    # When it is audited serially and on Ray
    serial_code = main(["audit", "--recursive", "--json", str(tmp_path)])
    serial = capsys.readouterr().out
    ray_code = main(["audit", "--recursive", "--json", "--ray", "--workers", "2", str(tmp_path)])
    parallel = capsys.readouterr().out
    # Then the findings are the same, file by file
    assert (ray_code, parallel) == (serial_code, serial)
    document = json.loads(serial)
    assert len(document["files"]) == 3 * len(list(FIXTURES.glob("*.jsonl")))
    assert document["findings"]["error"] > 0
