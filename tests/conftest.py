"""Test configuration: Hypothesis is deterministic by default, so CI replays the same
examples every run; set ``PICTX_HYPOTHESIS=explore`` to draw fresh random examples."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings
from node_batch import NodeBatch

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(
    "explore" if os.environ.get("PICTX_HYPOTHESIS") == "explore" else "deterministic"
)


@pytest.fixture(scope="module")
def node() -> Iterator[NodeBatch]:
    """One Node process per test module running the extension's pure JS modules."""
    batch = NodeBatch()
    yield batch
    batch.close()
