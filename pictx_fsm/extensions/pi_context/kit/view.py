"""What pi-context's invariants read of a world, and their base class.

Its own module so that invariants defined beside the notes sandbox and the host-neutral
checks share the base without importing :mod:`.invariants` (which lists them all).
"""

from __future__ import annotations

from typing import Protocol

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.testing import invariants as testing_invariants

__all__ = ["Invariant", "WorldView"]


class WorldView(Protocol):
    """What the invariants read of a world."""

    session: ModelSession
    audits: list[AuditLog]
    """One audit log per runtime, oldest first (Pi re-creates the extension on replacement)."""
    endless_runs: list[int]
    """Serials of the actions whose run never settled."""

    @property
    def profile(self) -> Profile: ...

    @property
    def lifecycle_down(self) -> bool:
        """No runtime can answer for the lifecycle any more (the bridge is degraded for good):
        what it would append cannot be demanded, only what the fail-closed bridge guarantees."""
        ...


class Invariant(testing_invariants.Invariant[WorldView]):
    """An incremental check of a pi-context world; ``check`` returns the violations found
    since the last call."""
