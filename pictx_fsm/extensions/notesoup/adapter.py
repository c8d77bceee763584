"""``NotesoupExtension``: notesoup's hooks, tools and commands on any host that speaks the
host contract (:mod:`pictx_fsm.host.extension`), answered by a :class:`~.runtime.
NotesoupRuntime` made per session (the family's adapter, :mod:`pictx_fsm.extensions.shared.
adapter`): every hook, the eleven tools of S4 (``notes_write`` and ``notes_update``
sequential, S91) and the commands ``/notesoup``, ``/clear-memory`` and ``/cm`` (S4, S15),
none of which waits for idle (S16, S17)."""

from __future__ import annotations

from typing import Final

from pictx_fsm.extensions.notesoup.lifecycle import COMMANDS
from pictx_fsm.extensions.notesoup.tools.specs import TOOL_SPECS
from pictx_fsm.extensions.shared.adapter import (
    ALL_HOOKS,
    RuntimeExtension,
    RuntimeFactory,
    RuntimeLike,
)

__all__ = ["NOTESOUP_HOOKS", "NotesoupExtension", "RuntimeFactory", "RuntimeLike"]

NOTESOUP_HOOKS: Final = ALL_HOOKS


class NotesoupExtension(RuntimeExtension):
    """notesoup's hooks, tools and commands, answered by a runtime per session."""

    name = "notesoup"
    tool_specs = TOOL_SPECS
    command_names = COMMANDS
