"""Test configuration: Hypothesis is deterministic by default, so CI replays the same
examples every run; set ``PICTX_HYPOTHESIS=explore`` to draw fresh random examples."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(
    "explore" if os.environ.get("PICTX_HYPOTHESIS") == "explore" else "deterministic"
)
