"""pi-context as a companion in another extension's world: loaded first on the same model
session, as a user who installed both would, with every one of its invariants still checked
(their names prefixed ``pi-context:``)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from attrs import define, field

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context.adapter import LifecycleExtension
from pictx_fsm.extensions.pi_context.kit.invariants import InvariantSuite
from pictx_fsm.extensions.pi_context.kit.observed import ObservedRuntime
from pictx_fsm.extensions.pi_context.kit.view import BudgetInputs
from pictx_fsm.extensions.pi_context.lifecycle import load_lifecycle
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.session.estimate import CharsCounter, TokenCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing.coverage import summed_counts
from pictx_fsm.testing.invariants import Violation

__all__ = ["PiContextCompanion"]


@define
class _View:
    """What pi-context's invariants read, over the world it joined (``WorldView``)."""

    session: ModelSession
    audits: list[AuditLog]
    observed: list[ObservedRuntime]
    counter: TokenCounter
    endless_runs: list[int] = field(factory=list)
    profile: Profile = Profile.V0_25_1
    lifecycle_down: bool = False
    """pi-context runs in process here: nothing kills it."""
    budget: BudgetInputs = field(factory=BudgetInputs)
    """pi-context's defaults: the companion is given no settings."""


def _named(found: list[Violation]) -> list[Violation]:
    """Violations named as the companion's (``pi-context:<invariant>``)."""
    return [
        Violation(invariant=f"pi-context:{v.invariant}", rule=v.rule, message=v.message)
        for v in found
    ]


class PiContextCompanion:
    """One world's pi-context: its runtimes (Pi re-creates the extension on every
    replacement), their decision logs and its invariants."""

    def __init__(self) -> None:
        self.audits: list[AuditLog] = []
        self.runtimes: list[ObservedRuntime] = []
        self.counter = CharsCounter()
        self._suite = InvariantSuite()
        self._world: Any = None

    def extensions(self, world: Any) -> list[Any]:
        self._world = world
        return [LifecycleExtension(self._runtime)]

    def _runtime(self, tree: SessionTree) -> LifecycleRuntime:
        audit = AuditLog()
        runtime = ObservedRuntime(
            tree,
            rng=random.Random(f"pictx-runtime:{self._world.config.seed}:{len(self.runtimes)}"),
            clock=self._world.clock,
            lifecycle=load_lifecycle(),
            audit=audit,
            counter=self.counter,
        )
        self.audits.append(audit)
        self.runtimes.append(runtime)
        return runtime

    def check(self, world: Any) -> list[Violation]:
        return _named(self._suite.check(self._view(world)))

    def finish(self, world: Any) -> list[Violation]:
        return _named(self._suite.finish(self._view(world)))

    def _view(self, world: Any) -> _View:
        return _View(
            session=world.session,
            audits=self.audits,
            observed=self.runtimes,
            counter=self.counter,
        )

    def transition_counts(self) -> Mapping[str, int]:
        return summed_counts(log.transition_counts() for log in self.audits)
