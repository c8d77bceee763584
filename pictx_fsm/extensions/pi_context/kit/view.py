"""What pi-context's invariants read of a world, and their base class.

Its own module so that invariants defined beside the notes sandbox and the host-neutral
checks share the base without importing :mod:`.invariants` (which lists them all).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from attrs import frozen

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context.texts import DEFAULT_REMINDER_MARGIN_TOKENS, Profile
from pictx_fsm.host.settings import DEFAULT_RESERVE_TOKENS
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.session.estimate import TokenCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing import invariants as testing_invariants

__all__ = ["BudgetInputs", "Invariant", "Observed", "WorldView"]


@frozen(kw_only=True)
class BudgetInputs:
    """The settings the user gave pi-context (R41–R43), as the world holds them — what an
    oracle derives the budget lines from, never the runtime's resolved policy."""

    reserve: int = DEFAULT_RESERVE_TOKENS
    """``compaction.reserveTokens``."""
    margin: int = DEFAULT_REMINDER_MARGIN_TOKENS
    """``pi-context.reminderMarginTokens`` (a valid one)."""
    automatic: bool = True
    """``compaction.enabled``, read live (R40)."""


class Observed(Protocol):
    """One runtime as an oracle sees it: its session tree and, per audit record, where the
    session stood when the runtime decided that hook
    (:class:`~pictx_fsm.extensions.pi_context.kit.observed.ObservedRuntime`)."""

    @property
    def tree(self) -> SessionTree: ...

    @property
    def leaves(self) -> Mapping[int, str | None]: ...


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

    @property
    def observed(self) -> Sequence[Observed]:
        """One per runtime, in the order of :attr:`audits`."""
        ...

    @property
    def budget(self) -> BudgetInputs:
        """The user's budget settings now (a world action may switch automatic resets)."""
        ...

    @property
    def counter(self) -> TokenCounter:
        """The tokenizer the runtimes count a reset window with (R48): an input, like the
        text it counts."""
        ...


class Invariant(testing_invariants.Invariant[WorldView]):
    """An incremental check of a pi-context world; ``check`` returns the violations found
    since the last call."""
