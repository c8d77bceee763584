"""Model-based testing of any extension: what ``pictx-fsm verify`` and ``replay`` run, written
once against the extension protocol (:class:`~pictx_fsm.testing.kit.Kit`).

- :mod:`~pictx_fsm.testing.kit` — the protocol an extension's kit implements, and the
  registry (:func:`kit_named`);
- :mod:`~pictx_fsm.testing.explore` — seed scenarios, then Hypothesis, under a time budget;
- :mod:`~pictx_fsm.testing.trace` — replayable traces, delta shrinking, replay;
- :mod:`~pictx_fsm.testing.invariants` — the invariant framework;
- :mod:`~pictx_fsm.testing.coverage` — transition coverage with documented exemptions;
- :mod:`~pictx_fsm.testing.actions` — host actions as data (prompts, scripted replies, host
  steps, queues, aborts, tree, fork, reload, ``/compact``);
- :mod:`~pictx_fsm.testing.contracts` — the CrossHair check;
- :mod:`~pictx_fsm.testing.engines` — a machine on both engines with chosen guard values.

Each extension's own kit (world, invariants, strategies, scenarios, faults) is in its package
(``pictx_fsm.extensions.<name>.kit``). The exploration needs Hypothesis and is imported on
first use, so traces and replay work without it.
"""

from __future__ import annotations

from typing import Any

from pictx_fsm.testing.invariants import Invariant, InvariantSuite, Violation
from pictx_fsm.testing.kit import Kit, Scenario, kit_named, kit_names
from pictx_fsm.testing.trace import Trace, load_trace, record_trace, run_actions

_NEEDS_HYPOTHESIS = {
    "ExploreOptions": "pictx_fsm.testing.explore",
    "ExploreReport": "pictx_fsm.testing.explore",
    "explore": "pictx_fsm.testing.explore",
}

__all__ = [
    "ExploreOptions",
    "ExploreReport",
    "Invariant",
    "InvariantSuite",
    "Kit",
    "Scenario",
    "Trace",
    "Violation",
    "explore",
    "kit_named",
    "kit_names",
    "load_trace",
    "record_trace",
    "run_actions",
]


def __getattr__(name: str) -> Any:
    module = _NEEDS_HYPOTHESIS.get(name)
    if module is None:
        from pictx_fsm._moved import moved_attribute

        return moved_attribute(__name__, name)
    import importlib

    return getattr(importlib.import_module(module), name)
