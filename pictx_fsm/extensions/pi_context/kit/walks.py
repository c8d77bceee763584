"""The family's walks (:mod:`pictx_fsm.extensions.shared.kit.walks`) bound to a pi-context
world: the bases pi-context's per-entry and per-record invariants derive from.
"""

from __future__ import annotations

from pictx_fsm.extensions.pi_context.kit.view import WorldView
from pictx_fsm.extensions.shared.kit import walks

__all__ = ["PerRecord", "PerTree"]


class PerTree(walks.PerTree[WorldView]):
    """A per-entry invariant of a pi-context world."""


class PerRecord(walks.PerRecord[WorldView]):
    """A per-record invariant of a pi-context world."""
