"""The finite alphabets ``pictx-fsm check`` explores for pi-context: each a region of the
action language, small enough that every sequence of eight of its actions is explored in
minutes (``docs/check.md`` lists them with their figures).

- ``turns``: a turn's life — prompts, the model's replies (a ``wipe_memory`` batch, an
  overflow), stopping after a tool result, settling, steering, following up, aborting;
- ``commit``: the boundary of a reset — stopping at ``turn_end`` and between the entries it
  persists, ``/pi-context on|off`` there;
- ``repair``: boot repair — ``/wipe-memory``, ``/pi-context off|on``, ``/tree`` to a boundary
  entry, prompts and host steps;
- ``tree``: the tree around an uncommitted boundary — another extension voiding it, a batch of
  two ``wipe_memory`` calls stopped before its second request, fork and summarised ``/tree``;
- ``lines``: the budget lines met exactly (a reply ending on the reserve, a prompt on the
  warning line), ``get_context_remaining``, a batch writing a note and wiping;
- ``budget``: prompts that carry a window to its reminder and warning lines;
- ``later``: ``/wipe-memory``, then a prompt of real work before ``/pi-context on``;
- ``continuation``: a wiped window, then ``/tree`` with a summary onto its reset tail;
- ``summary``: a tool turn, ``/tree`` with a summary onto its tool call, ``/wipe-memory``
  appending there.

``lines`` is explored to its horizon (:data:`ALPHABET_HORIZONS`) unless named: its
faults are met within three actions, and its aimed actions land every later decision on a
line, so its states barely merge (61,829 distinct states of 92,052 transitions at depth 8).

The new regions come first in the check's order (cheap ones: at the depth a violation is
met, the searches after it do not expand that layer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.extensions.pi_context.kit.actions import (
    Abort,
    Advance,
    AdvanceTo,
    AimAt,
    FollowUp,
    Fork,
    Navigate,
    Prompt,
    Script,
    Settle,
    Steer,
    Toggle,
    VoidNextBoundary,
    WipeCommand,
)
from pictx_fsm.testing.kit import Regions

__all__ = ["ALPHABETS", "ALPHABET_HORIZONS", "REGIONS"]

_PROMPT = Prompt(chars=60)
_WIPE_BATCH = Script(reply="tools", tools=("wipe_memory",))

_NOTE_AND_WIPE = Script(
    reply="tools",
    tools=("notes_write", "wipe_memory"),
    arguments=('{"address": "@project/design.md", "content": "beta"}', "{}"),
)

ALPHABETS: Mapping[str, tuple[Any, ...]] = {
    "lines": (
        AimAt(line="reserve", offset=0, at="reply"),
        AimAt(line="warning", offset=0, at="prompt"),
        _PROMPT,
        Settle(),
        Script(reply="tools", tools=("get_context_remaining",)),
        _NOTE_AND_WIPE,
    ),
    "budget": (Prompt(chars=20_000), Prompt(chars=16_000), Prompt(chars=40_000), Settle()),
    "later": (WipeCommand(), Prompt(chars=40_000), Toggle(arg="on")),
    "continuation": (
        _PROMPT,
        Settle(),
        _WIPE_BATCH,
        Navigate(index=9, summarize=True),
    ),
    "summary": (
        Script(reply="tools", tools=("echo",)),
        _PROMPT,
        Settle(),
        Navigate(index=-3, summarize=True),
        WipeCommand(),
    ),
    "turns": (
        _PROMPT,
        _WIPE_BATCH,
        Script(reply="overflow"),
        Settle(),
        AdvanceTo(step="tool_result"),
        Abort(),
        Steer(chars=60),
        FollowUp(chars=60),
    ),
    "commit": (
        _WIPE_BATCH,
        _PROMPT,
        AdvanceTo(step="turn_end"),
        Advance(steps=1),
        Toggle(arg="on"),
        Toggle(arg="off"),
        Settle(),
    ),
    "repair": (
        WipeCommand(),
        Toggle(arg="off"),
        Toggle(arg="on"),
        Navigate(index=1, anchor="boundary"),
        _PROMPT,
        Advance(steps=2),
        Settle(),
    ),
    "tree": (
        VoidNextBoundary(),
        _PROMPT,
        Script(reply="tools", tools=("wipe_memory", "wipe_memory")),
        AdvanceTo(step="context", count=2),
        Fork(index=-1),
        Navigate(index=-2, summarize=True),
        Settle(),
    ),
}

ALPHABET_HORIZONS: Mapping[str, int] = {"lines": 6}
"""The narrow regions' horizons (``Regions.horizons``; ``docs/check.md`` has each one's
growth a layer and the depth its faults need)."""

REGIONS = Regions(alphabets=ALPHABETS, horizons=ALPHABET_HORIZONS)
