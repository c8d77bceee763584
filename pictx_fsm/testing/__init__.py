"""Model-based testing of the lifecycle: what ``pictx-fsm verify`` runs, as a public kit.

- :class:`World` / :class:`WorldConfig` — the lifecycle runtime plugged into the model
  session, reproducible from its configuration;
- :mod:`~pictx_fsm.testing.actions` — host actions as data (prompts, scripted replies, host
  steps, queues, aborts, commands, tree, fork, reload, ``/compact``);
- :func:`host_actions` / :func:`world_configs` — Hypothesis strategies for them;
- :class:`LifecycleStateMachine` — the stateful test for your own suite;
- :class:`InvariantSuite` — the invariants checked after every step;
- :mod:`~pictx_fsm.testing.trace` — replayable traces; :mod:`~pictx_fsm.testing.faults` —
  planted faults; :mod:`~pictx_fsm.testing.contracts` — the CrossHair check;
- :mod:`~pictx_fsm.testing.engines` — a machine on both engines with chosen guard values.

The names that need Hypothesis are imported on first use, so the kit's other parts (traces,
replay) work without it.
"""

from __future__ import annotations

from typing import Any

from pictx_fsm.testing.invariants import INVARIANT_TYPES, InvariantSuite, Violation
from pictx_fsm.testing.trace import Trace, load_trace, run_actions
from pictx_fsm.testing.world import World, WorldConfig

_NEEDS_HYPOTHESIS = {
    "LifecycleStateMachine": "pictx_fsm.testing.stateful",
    "host_actions": "pictx_fsm.testing.strategies",
    "world_configs": "pictx_fsm.testing.strategies",
}

__all__ = [
    "INVARIANT_TYPES",
    "InvariantSuite",
    "LifecycleStateMachine",
    "Trace",
    "Violation",
    "World",
    "WorldConfig",
    "host_actions",
    "load_trace",
    "run_actions",
    "world_configs",
]


def __getattr__(name: str) -> Any:
    module = _NEEDS_HYPOTHESIS.get(name)
    if module is None:
        raise AttributeError(f"module 'pictx_fsm.testing' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
