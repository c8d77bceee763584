"""The server's mirror of the Pi session: the first request carries the header and every entry
of the branch, later ones the entries appended since and the current leaf (a restarted server
is sent everything again)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.hosts.pi.convert import BridgeProtocolError
from pictx_fsm.session.entries import entry_from_json, header_from_json
from pictx_fsm.session.tree import SessionTree


class Mirror:
    """One session tree kept current from the requests' ``session`` fields."""

    def __init__(self) -> None:
        self.tree: SessionTree | None = None

    def apply(self, session: Mapping[str, Any]) -> bool:
        """Take one request's ``session``; ``True`` when it began a new tree (a header)."""
        started = False
        header_json = session.get("header")
        if header_json is not None:
            header, problems = header_from_json(header_json)
            if header is None:
                raise BridgeProtocolError(f"field 'session.header': {problems[0].message}")
            self.tree = SessionTree(header)
            started = True
        tree = self.require()
        for raw in session.get("entries") or ():
            entry, _ = entry_from_json(raw)
            if entry.id is None or entry.id not in tree:
                tree.add(entry)
        leaf = session.get("leaf")
        if leaf != tree.leaf_id and (leaf is None or leaf in tree):
            tree.navigate(leaf)
        return started

    def require(self) -> SessionTree:
        if self.tree is None:
            raise BridgeProtocolError("field 'session.header' is required on the first request")
        return self.tree


__all__ = ["Mirror"]
