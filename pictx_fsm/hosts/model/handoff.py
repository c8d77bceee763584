"""Session replacement for a handoff (pi-context-management M46–M50) on the model host.

:func:`create_handoff_session` writes the new session file — header with the source as
``parentSession``, the receipt entry, the model and thinking level — refusing an existing
path (exclusive creation) and reading the text back before anything else happens (Pi writes
files lazily, pi-host §11, so the extension writes it itself). :func:`switch_to` opens it as
Pi's ``switchSession`` does; returning to the source is the same.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from pictx_fsm.hosts.model import replace
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.hosts.model.store import SessionStore
from pictx_fsm.session.entries import CustomEntry
from pictx_fsm.session.jsonl import parse_session
from pictx_fsm.session.tree import SessionTree

__all__ = ["JSON", "create_handoff_session", "switch_to"]

JSON: TypeAlias = Any


def create_handoff_session(host: HostState, custom_type: str, receipt: JSON) -> str | None:
    """The new file's path, or ``None`` when it exists already or does not read back."""
    now = host.clock()
    session_id = replace.new_session_id(host, now)
    path = replace.session_path(host.settings, now, session_id)
    if path in host.files:
        return None
    header = replace.new_header(host.settings, session_id, now, parent=host.store.path)
    store = SessionStore(
        SessionTree(header),
        path=path,
        ids=host.ids,
        clock=host.clock,
        counter=host.counter,
        on_append=lambda entry: None,
    )
    store.custom(custom_type, receipt)
    store.model_change(host.model.provider, host.model.id)
    store.thinking_level(host.settings.thinking_level)
    loaded = parse_session(store.jsonl(), source=path)
    first = loaded.entries[0] if loaded.entries else None
    if loaded.header is None or not isinstance(first, CustomEntry) or first.data != receipt:
        return None
    host.files[path] = store
    host.on_disk.add(path)
    return path


def switch_to(host: HostState, path: str) -> None:
    """The switch to the new session, and M49's return to the source: Pi's ``switchSession``
    (``session_before_switch{resume}`` → ``session_shutdown{resume}`` → factories →
    ``session_start{resume}``), as the real Pi's extension does it (the new file exists
    already: it was written exclusively and read back)."""
    replace.resume(host, path)
