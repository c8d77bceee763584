"""Test configuration: Hypothesis is deterministic by default, so CI replays the same
examples every run; set ``PICTX_HYPOTHESIS=explore`` to draw fresh random examples."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings
from js_node import JsNode
from node_batch import NodeBatch

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(
    "explore" if os.environ.get("PICTX_HYPOTHESIS") == "explore" else "deterministic"
)


# -- the real Pi, on every supported version ---------------------------------------------------

from pi_versions import PiInstall, chosen, runs_real_pi, selecting  # noqa: E402


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that runs the real Pi runs once per supported Pi version (``pi_versions``)."""
    marked = metafunc.definition.get_closest_marker("real_pi") is not None
    if "pi_install" in metafunc.fixturenames and runs_real_pi(metafunc.function, marked):
        installs = chosen()
        metafunc.parametrize("pi_install", installs, indirect=True, ids=[i.id for i in installs])


@pytest.fixture(autouse=True)
def pi_install(request: pytest.FixtureRequest) -> object:
    """The Pi install this test runs on; it skips, saying so, when that Pi is not installed."""
    install: PiInstall | None = getattr(request, "param", None)
    if install is None:
        yield None
        return
    if not install.available():
        pytest.skip(install.skip_reason())
    with selecting(install):
        yield install


@pytest.fixture(scope="module")
def node() -> Iterator[NodeBatch]:
    """One Node process per test module running the extension's pure JS modules."""
    batch = NodeBatch()
    yield batch
    batch.close()


@pytest.fixture(scope="session")
def node_js() -> Iterator[JsNode]:
    """Node answering what JavaScript does (``tests/js_node.py``), for the whole session."""
    node = JsNode()
    yield node
    node.close()
