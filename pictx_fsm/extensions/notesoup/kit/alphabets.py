"""The finite alphabet ``pictx-fsm check`` explores for notesoup: small enough that every
sequence of eight of its actions is explored in minutes (``docs/check.md`` lists it with its
figures).

- ``memory``: a turn's life around notesoup's reset — prompts, an overflowing reply, single
  host steps, aborting and settling — with ``/clear-memory`` alone and with a prompt, at any
  point of a run, and ``/notesoup off``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.extensions.notesoup.kit.actions import ClearMemory
from pictx_fsm.extensions.shared.kit.actions import Toggle
from pictx_fsm.testing.actions import Abort, Advance, Prompt, Script, Settle

__all__ = ["ALPHABETS"]

ALPHABETS: Mapping[str, tuple[Any, ...]] = {
    "memory": (
        Prompt(chars=60),
        Script(reply="overflow"),
        Advance(steps=1),
        Settle(),
        Abort(),
        ClearMemory(),
        ClearMemory(prompt="go on"),
        Toggle(arg="off"),
    ),
}
