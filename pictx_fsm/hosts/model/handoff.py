"""Session replacement for a handoff (pi-context-management M46–M50) on the model host.

:func:`create_handoff_session` writes the new session file — header with the source as
``parentSession``, the receipt entry, the model and thinking level — refusing an existing
path (exclusive creation) and reading the text back before anything else happens (Pi writes
files lazily, pi-host §11, so the extension writes it itself). :func:`switch_to_new` replaces
the runtime as Pi's ``newSession`` does (``session_before_switch`` → ``session_shutdown`` →
factories → ``session_start{new}``); returning to the source is a resume.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from pictx_fsm.hosts.model import replace
from pictx_fsm.hosts.model.dispatch import record
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.hosts.model.store import SessionStore
from pictx_fsm.session.entries import CustomEntry
from pictx_fsm.session.jsonl import parse_session
from pictx_fsm.session.tree import SessionTree

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
    return path


def switch_to_new(host: HostState, path: str) -> None:
    """``newSession`` for an in-memory file: the new runtime sees ``session_start{new}``."""
    record(host, "session_before_switch", reason="new", targetSessionFile=path)
    replace.shutdown(host, "new")
    store = host.files[path]
    replace.open_store(host, store.tree, path)
    replace.bind(host, "new")


def return_to(host: HostState, path: str) -> None:
    """M49: back to the source session (a resume: re-read from its file)."""
    replace.resume(host, path)
