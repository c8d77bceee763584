"""Model-based testing of pi-context-management (issue 13): a world with the extension (and
optionally pi-context) on the model session, host actions, the §12 invariants, planted
faults, seed scenarios and the exploration behind ``pictx-fsm verify --extension``."""

from __future__ import annotations

from pictx_fsm.testing.cm.explore import CmExploreOptions, CmExploreReport, explore_cm
from pictx_fsm.testing.cm.faults import CM_FAULTS
from pictx_fsm.testing.cm.world import CmWorld, CmWorldConfig

__all__ = [
    "CM_FAULTS",
    "CmExploreOptions",
    "CmExploreReport",
    "CmWorld",
    "CmWorldConfig",
    "explore_cm",
]
