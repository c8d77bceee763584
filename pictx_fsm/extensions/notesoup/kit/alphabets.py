"""The finite alphabets ``pictx-fsm check`` explores for notesoup (each every sequence of its
actions up to the depth bound; ``docs/check.md`` lists them).

- ``clear``: ``/clear-memory`` as the model's tool (twice in one batch, or after a tool batch
  that ran) and as the command, and a prompt filling the window to its hard reserve;
- ``reminders``: prompts that carry a window across its reminder and warning lines, and settling;
- ``legacy``: resuming a pi-context 0.25 session (one committed window, one exchange, its
  complete tail): a prompt, ``/fork`` back into the 0.25 history, ``/clear-memory``;
- ``memory``: a turn's life around notesoup's reset — prompts, an overflowing reply, single
  host steps, aborting and settling — with ``/clear-memory`` alone and with a prompt, at any
  point of a run, and ``/notesoup off``.

The narrow regions come first in the check's order (at the depth a violation is met, the
searches after it do not expand that layer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.extensions.notesoup.kit.actions import ClearMemory
from pictx_fsm.extensions.notesoup.kit.legacy import LegacyHistory
from pictx_fsm.extensions.shared.kit.actions import Toggle
from pictx_fsm.testing.actions import Abort, Advance, Fork, Prompt, Script, Settle
from pictx_fsm.testing.kit import Regions

__all__ = ["ALPHABETS", "ALPHABET_CONFIGS", "REGIONS"]

_PROMPT = Prompt(chars=60)

ALPHABETS: Mapping[str, tuple[Any, ...]] = {
    "clear": (
        Script(reply="tools", tools=("clear_memory", "clear_memory")),
        Script(reply="tools", tools=("echo",)),
        _PROMPT,
        Prompt(chars=152_000),
        ClearMemory(),
    ),
    "reminders": (Prompt(chars=76_000), Prompt(chars=24_000), _PROMPT, Settle()),
    "legacy": (_PROMPT, Fork(index=-7), Settle(), ClearMemory()),
    "memory": (
        _PROMPT,
        Script(reply="overflow"),
        Advance(steps=1),
        Settle(),
        Abort(),
        ClearMemory(),
        ClearMemory(prompt="go on"),
        Toggle(arg="off"),
    ),
}

ALPHABET_CONFIGS: Mapping[str, Mapping[str, Any]] = {
    "legacy": {"legacy": LegacyHistory(windows=1, turns=1, tail="complete", chars=200)},
}
"""The configuration fields an alphabet is explored with (``Kit.alphabet_configs``)."""

REGIONS = Regions(alphabets=ALPHABETS, configs=ALPHABET_CONFIGS)
