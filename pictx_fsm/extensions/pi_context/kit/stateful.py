"""``LifecycleStateMachine``: the stateful test, for your own pytest suite.

A Hypothesis rule-based state machine that builds a world (the lifecycle runtime inside the
model session) and applies generated host actions, checking every invariant after every
step, and at its end settles the session and judges the promised outcomes still owed.
``pictx-fsm verify`` runs the same worlds, actions and invariants with budgets,
coverage and counterexample traces; this class is the plain-Hypothesis form::

    from pictx_fsm.testing import LifecycleStateMachine

    TestLifecycle = LifecycleStateMachine.TestCase
"""

from __future__ import annotations

from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from pictx_fsm.extensions.pi_context.kit.actions import Action, Settle
from pictx_fsm.extensions.pi_context.kit.invariants import InvariantSuite
from pictx_fsm.extensions.pi_context.kit.strategies import host_actions, world_configs
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig

__all__ = ["LifecycleStateMachine"]


class LifecycleStateMachine(RuleBasedStateMachine):
    """Generated host sessions on the model session; the invariants hold after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.world: World | None = None
        self.suite = InvariantSuite()

    @initialize(config=world_configs())
    def start(self, config: WorldConfig) -> None:
        self.world = World(config)

    @rule(action=host_actions())
    def act(self, action: Action) -> None:
        assert self.world is not None
        self.world.apply(action)

    @invariant()
    def invariants_hold(self) -> None:
        if self.world is None:
            return
        violations = self.suite.check(self.world)
        assert not violations, "\n".join(str(v) for v in violations)

    def teardown(self) -> None:
        """The run's end: Pi runs it to rest, then nothing promised may still be owed."""
        if self.world is None:
            return
        self.world.apply(Settle())
        owed = [*self.suite.check(self.world), *self.suite.finish(self.world)]
        self.world.release()
        assert not owed, "\n".join(str(v) for v in owed)
