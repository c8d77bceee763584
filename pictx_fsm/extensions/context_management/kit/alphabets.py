"""The finite alphabets ``pictx-fsm check`` explores for pi-context-management (each every
sequence of its actions up to the depth bound; ``docs/check.md`` lists their figures).

- ``notes``: the notes tool writing with a cited and with a missing source, whole turns and
  a minute passing — the notes store and the background job's schedule and cooldowns;
- ``handoff``: long turns that fill the window, a manual ``/ctx-memory handoff``,
  delivering what the host owes — the handoff machines (the cooldown passing is
  ``hourly``'s: with five minutes passing here too, the region grew 3.6-fold a layer
  instead of 2.7 and fired no other transition to depth 6, ``docs/check.md``);
- ``due``: the automatic handoff's lines met exactly — usage at 80 % of the window, time at
  the end of a handoff's cooldown — and the two turns of one automatic handoff (a turn its
  background notes cover, then one crossing 80 %: what the preparation has left to cover
  fits its four requests);
- ``hourly``: one turn crossing 80 % and the cooldown passing, with the provider's usage
  as pi-ai's faux model reports it on Pi 0.87 (each prompt token counted as input and as a
  cache write, as the real-Pi tests run): a turn half the window's size crosses the line
  and the preparation covers it, so a fourth automatic handoff is due within the hour in
  seven actions;
- ``recall``: the recall tools answering within one assistant message, a message long
  enough to read by pages, a background job whose repair runs past its deadline.

``due`` and ``recall`` are explored to their horizons (:data:`ALPHABET_HORIZONS`) unless
named: their faults are met within five and three actions, and nearly every one of their
transitions is a new state (each action adds tokens and time).

They are first-come in the check's order (the cheap regions first: at the depth a violation
is met, the searches after it do not expand that layer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.extensions.context_management.kit.actions import (
    AimAt,
    CmTool,
    CtxMemory,
    Drain,
    Generate,
    Turn,
    Wait,
)
from pictx_fsm.testing.actions import Prompt
from pictx_fsm.testing.kit import Regions

__all__ = ["ALPHABETS", "ALPHABET_CONFIGS", "ALPHABET_HORIZONS", "REGIONS"]

_COVERED = Turn(chars=60_000)
"""A turn the background notes cover (a quarter of the default window)."""
_CROSSING = Turn(chars=145_000)
"""After :data:`_COVERED`, a turn that crosses 80 % of the default window and is small
enough for the preparation's four requests."""

ALPHABETS: Mapping[str, tuple[Any, ...]] = {
    "due": (
        AimAt(line="AUTO_THRESHOLD", offset=0),
        AimAt(line="AUTO_COOLDOWN_MS", offset=0, back=3),
        Turn(chars=200),
        _COVERED,
        _CROSSING,
    ),
    "hourly": (Turn(chars=110_000), Wait(ms=330_000)),
    "recall": (
        CmTool(tool="search", then="status"),
        CmTool(tool="read", source="user", then="status"),
        Generate(reply="over_capacity", repair="slow"),
        Turn(chars=9_000),
        Prompt(chars=9_000),
    ),
    "notes": (
        CmTool(tool="notes_update", key=1, source="user"),
        CmTool(tool="notes_update", key=7, source="missing"),
        Turn(chars=20_000),
        Wait(ms=66_000),
    ),
    "handoff": (
        Turn(chars=60_000),
        Turn(chars=100_000),
        CtxMemory(args="handoff"),
        Drain(),
    ),
}

ALPHABET_CONFIGS: Mapping[str, Mapping[str, Any]] = {"hourly": {"usage": "faux"}}
"""The configuration fields an alphabet is explored with (``Kit.alphabet_configs``)."""

ALPHABET_HORIZONS: Mapping[str, int] = {"due": 5, "recall": 6}
"""The narrow regions' horizons (``Regions.horizons``; ``docs/check.md`` has each one's
growth a layer and the depth its faults need)."""

REGIONS = Regions(alphabets=ALPHABETS, configs=ALPHABET_CONFIGS, horizons=ALPHABET_HORIZONS)
