"""A seed generates the same runs wherever pictx_fsm is installed: Hypothesis's pool of
constants harvested from local modules (an editable install, a test run's helpers) does not
reach verify's generation."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pictx_fsm.extensions.pi_context.lifecycle import load_lifecycle
from pictx_fsm.testing import constant_pool
from pictx_fsm.testing.constant_pool import global_constants_only
from pictx_fsm.testing.explore import ExploreOptions, ExploreReport, explore

OPTIONS = ExploreOptions(
    examples=12, steps=25, seed=7, scenarios=False, profiles=("0.25.1",), time_budget=600
)


@contextlib.contextmanager
def local_module_with_constants(directory: Path) -> Iterator[None]:
    """A module outside site-packages full of integers and strings, as an editable install
    of a project (or its helpers) brings into ``sys.modules``."""
    source = directory / "probe_pool" / "constants_probe.py"
    source.parent.mkdir()
    numbers = ", ".join(str(n) for n in range(3, 4000, 7))
    words = ", ".join(f'"w{n}"' for n in range(300))
    source.write_text(f"NUMBERS = ({numbers})\nWORDS = ({words})\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("constants_probe", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["constants_probe"] = module
    try:
        yield
    finally:
        del sys.modules["constants_probe"]


def _fingerprint(report: ExploreReport) -> tuple[int, int, list[tuple[str, int]]]:
    return report.examples, report.actions, sorted(report.counts.items())


def test_a_seed_generates_the_same_runs_whatever_local_modules_are_loaded(
    tmp_path: Path,
) -> None:
    # Given a seeded exploration
    before = explore(OPTIONS, load_lifecycle())
    # When the same seed runs again with a local module full of constants loaded
    with local_module_with_constants(tmp_path):
        after = explore(OPTIONS, load_lifecycle())
    # Then it generated the same runs
    assert _fingerprint(after) == _fingerprint(before)


def test_the_pool_is_hypothesis_own_again_after_the_exploration() -> None:
    # Given Hypothesis's harvest of local constants
    from hypothesis.internal.conjecture import providers

    harvest = getattr(providers, "_get_local_constants", None)
    # When an exploration pinned the pool and ended / Then the harvest is back in place
    with global_constants_only():
        pass
    assert getattr(providers, "_get_local_constants", None) is harvest


def test_a_hypothesis_without_the_pool_cache_explores_unpinned_without_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a Hypothesis whose constants pool is not kept where this module looks for it
    from hypothesis.internal.conjecture import providers

    harvest = getattr(providers, "_get_local_constants", None)
    monkeypatch.delattr(providers, "CONSTANTS_CACHE", raising=False)
    # When an exploration pins the pool / Then nothing is pinned, and nothing raises
    with global_constants_only():
        assert getattr(providers, "_get_local_constants", None) is harvest


def test_a_hypothesis_without_the_private_module_explores_without_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a Hypothesis whose private provider module could not be imported
    monkeypatch.setattr(constant_pool, "providers", None)
    # When an exploration pins the pool / Then it runs unpinned
    with global_constants_only():
        pass
