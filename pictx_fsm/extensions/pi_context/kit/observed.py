"""A lifecycle runtime that notes where the session stood when it decided each hook.

An oracle judging a decision must see what the runtime saw — the branch at that hook —
without asking the runtime how it read it. Pi's tree only grows, so the leaf at the hook is
enough to read that branch again later. :class:`ObservedRuntime` keeps it per audit record
(by the record's sequence number); it changes nothing the runtime decides.
"""

from __future__ import annotations

from typing import Any

from pictx_fsm.extensions.pi_context.lifecycle import LifecycleState
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.host.effects import HookResult
from pictx_fsm.host.events import HookEvent, HostContext

__all__ = ["ObservedRuntime"]


class ObservedRuntime(LifecycleRuntime):
    """:class:`LifecycleRuntime` keeping the leaf of each decision (:attr:`leaves`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.leaves: dict[int, str | None] = {}
        """Audit record sequence number → the leaf when its hook was decided."""
        self._decided_at: str | None = None

    def decide(
        self, event: HookEvent, ctx: HostContext, state: LifecycleState | None = None
    ) -> tuple[LifecycleState, HookResult]:
        self._decided_at = self.tree.leaf_id
        return super().decide(event, ctx, state)

    def keep(
        self, event: HookEvent, ctx: HostContext, decision: tuple[LifecycleState, HookResult]
    ) -> HookResult:
        if self.audit is not None:
            self.leaves[len(self.audit) + 1] = self._decided_at
        return super().keep(event, ctx, decision)
