"""notesoup 0.38 behind the bridge: the runtime the server's session (:class:`~.server.
BridgeSession`, the mirror and the wire as for pi-context) runs on the real Pi session.

The runtime gets what a Pi user's notesoup reads: Pi's settings files (its ``notesoup`` key,
S61), the notes home on disk (``$PI_NOTES_HOME``, else ``~/.agents/notes``; its notes and
history tools write there, confined to it) and the wall clock. notesoup has no notes home
migration at activation (that is pi-context 0.25's N16) and no leases: every hook waits for
its decision (:func:`~.server.open_session`). With ``$PICTX_FSM_AUDIT_DIR`` every decision
goes to ``<session id>.audit.jsonl`` there, as for pi-context.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.notesoup.runtime import NotesoupRuntime
from pictx_fsm.extensions.pi_context.runtime import pi_file_settings
from pictx_fsm.extensions.shared.tools.homes import default_notes_home
from pictx_fsm.host.effects import Notify
from pictx_fsm.host.settings import default_agent_dir
from pictx_fsm.session.tree import SessionTree

__all__ = ["no_activation", "notesoup_runtime_from_environment"]


def notesoup_runtime_from_environment(
    tree: SessionTree, ctx: Mapping[str, Any], audit: AuditLog | None
) -> NotesoupRuntime:
    """The runtime a real Pi session gets (``ctx`` is read per hook, not here)."""
    del ctx
    env, home = os.environ, Path.home()
    return NotesoupRuntime(
        tree,
        settings=pi_file_settings(default_agent_dir(env, home)),
        notes_home=default_notes_home(env, home),
        rng=random.SystemRandom(),
        clock=lambda: int(time.time() * 1000),
        audit=audit,
    )


def no_activation() -> list[Notify]:
    """notesoup's first activation says nothing (no notes home migration)."""
    return []
