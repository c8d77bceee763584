"""The public stateful test runs as a plain Hypothesis state machine in a user's suite."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from pictx_fsm.extensions.pi_context.kit.stateful import LifecycleStateMachine

TestLifecycle = LifecycleStateMachine.TestCase
TestLifecycle.settings = settings(
    max_examples=10,
    stateful_step_count=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
