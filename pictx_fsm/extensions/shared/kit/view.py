"""What the family's shared kit invariants read of a world: the model session, the runtimes'
decision logs, the runs that never settled."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.testing import invariants as testing_invariants

__all__ = ["SessionInvariant", "SessionWorld"]


class SessionWorld(Protocol):
    @property
    def session(self) -> ModelSession: ...

    @property
    def audits(self) -> Sequence[AuditLog]: ...


class SessionInvariant(testing_invariants.Invariant[SessionWorld]):
    """An incremental check of a world on the model session."""
