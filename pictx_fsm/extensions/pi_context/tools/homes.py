"""pi-context 0.25's notes homes: the family's layout (:mod:`pictx_fsm.extensions.shared.
tools.homes`), with 0.25's default agent ``root`` and its one-time ``personal/`` →
``human/`` migration (N16), which notesoup dropped (S95)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from pictx_fsm.extensions.shared.tools.homes import (
    NOTE_SUFFIX,
    NotesIdentity,
    NotesPlace,
    OutsideNotesRoot,
    agent_slug,
    atomic_write,
    default_notes_home,
    display_name,
    model_slug,
    namespace_names,
    note_file_name,
    project_key,
    read_note_text,
    slugify,
    walk_markdown,
)

__all__ = [
    "LEGACY_HOME_CONFLICT",
    "NOTE_SUFFIX",
    "NotesIdentity",
    "NotesPlace",
    "OutsideNotesRoot",
    "agent_slug",
    "atomic_write",
    "default_notes_home",
    "display_name",
    "migrate_legacy_homes",
    "model_slug",
    "namespace_names",
    "note_file_name",
    "project_key",
    "read_note_text",
    "slugify",
    "walk_markdown",
]

LEGACY_HOME_CONFLICT: Final = (
    "pi-context: both personal/ and human/ exist under the notes home; migrate by hand, no "
    "automatic merge"
)


def migrate_legacy_homes(root: Path) -> str | None:
    """N16 (once, at activation): rename a legacy ``personal/`` home to ``human/``; with both
    present nothing moves and the warning to show is returned."""
    legacy, modern = root / "personal", root / "human"
    if not os.path.lexists(legacy):
        return None
    if os.path.lexists(modern):
        return LEGACY_HOME_CONFLICT
    os.rename(legacy, modern)
    return None
