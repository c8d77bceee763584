"""Reading the direct parent session for ``scope: "handoff"`` and the target's verification
(M24, M49): one file, read fresh, at most 32 MiB, never another path or a grandparent.

:func:`parent_branch_in` reads a session file's text; :class:`FileParents` is the reader a
real host gives the runtime (the file on disk); the model host reads its own files' text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pictx_fsm.extensions.context_management.policy import PARENT_READ_CAP
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.jsonl import parse_session
from pictx_fsm.session.tree import SessionTree


def parent_branch_in(text: str, leaf: str, source: str) -> Sequence[Entry] | None:
    """The branch ending at ``leaf`` in a session file's ``text``; ``None`` when the text
    is over the cap, has no header, or has no such entry."""
    if len(text.encode("utf-8", "surrogatepass")) > PARENT_READ_CAP:
        return None
    loaded = parse_session(text, source=source)
    if loaded.header is None:
        return None
    tree = SessionTree.from_entries(loaded.header, loaded.entries)
    return tree.branch(leaf) if leaf in tree else None


class FileParents:
    """The parent session file on disk (a missing, unreadable or oversized file is ``None``)."""

    def parent_branch(self, path: str, leaf: str) -> Sequence[Entry] | None:
        file = Path(path)
        try:
            if not file.is_file() or file.stat().st_size > PARENT_READ_CAP:
                return None
            text = file.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None
        return parent_branch_in(text, leaf, path)


__all__ = ["FileParents", "parent_branch_in"]
