"""The finite alphabets ``pictx-fsm check`` explores for pi-context-management (each every
sequence of its actions up to the depth bound; ``docs/check.md`` lists their figures).

- ``notes``: the notes tool writing with a cited and with a missing source, whole turns and
  a minute passing — the notes store and the background job's schedule and cooldowns;
- ``handoff``: long turns that fill the window, five minutes passing (the handoff
  cooldown), a manual ``/ctx-memory handoff``, delivering what the host owes — the handoff
  machines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.extensions.context_management.kit.actions import CmTool, CtxMemory, Drain, Turn, Wait

__all__ = ["ALPHABETS"]

ALPHABETS: Mapping[str, tuple[Any, ...]] = {
    "notes": (
        CmTool(tool="notes_update", key=1, source="user"),
        CmTool(tool="notes_update", key=7, source="missing"),
        Turn(chars=20_000),
        Wait(ms=66_000),
    ),
    "handoff": (
        Turn(chars=60_000),
        Turn(chars=100_000),
        Wait(ms=330_000),
        CtxMemory(args="handoff"),
        Drain(),
    ),
}
