"""Session files and runtime replacement: startup, fork, resume, reload (pi-host §2, §7
"Fork", "Resume", §8.1).

Each replacement ends the old extension runtime (``session_shutdown``), binds every extension
to the new tree (Pi re-runs the extension factories) and starts it (``session_start``). A
resume re-reads the file through the JSONL writer and parser, so the leaf is the last entry in
file order: a navigation that appended nothing is lost, as in Pi.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from pictx_fsm.host.events import SessionShutdown, SessionStart, SessionStartReason
from pictx_fsm.hosts.model.dispatch import emit, error, record
from pictx_fsm.hosts.model.errors import ModelHostError
from pictx_fsm.hosts.model.settings import HostSettings
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.hosts.model.store import SessionStore
from pictx_fsm.session.entries import (
    LabelEntry,
    MessageEntry,
    SessionHeader,
    ThinkingLevelChangeEntry,
)
from pictx_fsm.session.ids import uuid_draws
from pictx_fsm.session.jsonl import parse_session
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.writer import iso

__all__ = [
    "INVALID_FORK",
    "NOT_SAVED",
    "bind",
    "fork",
    "is_written",
    "new_header",
    "new_session_id",
    "open_store",
    "reload",
    "restore_model_entries",
    "resume",
    "session_path",
    "shutdown",
    "written",
]

INVALID_FORK = "Invalid entry ID for forking"
NOT_SAVED = "This session has not been saved yet"


def new_session_id(host: HostState, ms: int) -> str:
    """A new session's id. Pi's are UUIDv7 — the creation time in the first 48 bits, so two
    sessions made within the same 65,536 ms share their first 8 characters, and so
    pi-context's root window id. ``session_ids="clock"`` mints them so from the model's clock
    (a run's sessions all made within a minute, as in a short real run); ``"random"`` (the
    default) draws the time bits too, as for sessions made minutes apart."""
    if host.settings.session_ids != "clock":
        return str(uuid.UUID(next(iter(uuid_draws(host.ids)))))
    value = host.ids.getrandbits(128) & _V7_RANDOM | (ms & _MS_BITS) << 80 | _V7_SET
    return str(uuid.UUID(int=value))


_MS_BITS = (1 << 48) - 1
_V7_RANDOM = ((1 << 80) - 1) & ~((0xF << 76) | (0xC000 << 48))
"""The random part: below the timestamp, without the version and variant bits."""
_V7_SET = (7 << 76) | (0x8000 << 48)


def session_path(settings: HostSettings, ms: int, session_id: str) -> str:
    """``<sessionDir>/<ISO time with ':' and '.' as '-'>_<sessionId>.jsonl``."""
    stamp = iso(ms).replace(":", "-").replace(".", "-")
    return f"{settings.session_dir}/{stamp}_{session_id}.jsonl"


def new_header(
    host_settings: HostSettings, session_id: str, ms: int, parent: str | None
) -> SessionHeader:
    return SessionHeader(
        id=session_id, timestamp=iso(ms), cwd=host_settings.cwd, parent_session=parent
    )


def open_store(host: HostState, tree: SessionTree, path: str) -> SessionStore:
    """Make ``tree`` the session's current file."""
    store = SessionStore(
        tree,
        path=path,
        ids=host.ids,
        clock=host.clock,
        counter=host.counter,
        on_append=host.log.persisted.append,
    )
    host.store = store
    host.files[path] = store
    return store


def restore_model_entries(host: HostState) -> None:
    """What Pi's ``createAgentSession`` appends to the session of every new runtime (a new
    session, resume, fork; a session the model opens from given text stays as given), before
    any extension binds: a branch whose context holds no
    message gets the model and the thinking level (``model_change``,
    ``thinking_level_change``), one with messages but no thinking level gets that. A resume
    of a file not written yet, or a fork at its first entry, opens such a branch (found by
    the differential on 1.6.0: ``model-entries-of-a-new-runtime``)."""
    store = host.store
    if not store.context_messages():
        store.model_change(host.model.provider, host.model.id)
        store.thinking_level(host.settings.thinking_level)
    elif not any(isinstance(entry, ThinkingLevelChangeEntry) for entry in store.branch()):
        store.thinking_level(host.settings.thinking_level)


def bind(host: HostState, reason: SessionStartReason) -> None:
    """Bind every extension to the current tree, then ``session_start``; the runtime bound
    reads the settings file again (found by the differential: a ``compaction.enabled``
    rewritten before a resume decides Pi's compaction after it, and not before)."""
    if host.settings_file is not None:
        host.settings = host.settings_file
    for ext in host.extensions:
        try:
            ext.bind(host.store.tree)
        except Exception as exc:  # a failing factory is an extension error, not a host crash
            error(host, "session_start", ext.name, f"{type(exc).__name__}: {exc}")
    emit(host, SessionStart(reason=reason), reason=reason)


def shutdown(host: HostState, reason: str) -> None:
    emit(host, SessionShutdown(reason=reason), reason=reason)


def fork(host: HostState, entry_id: str, position: str) -> str:
    """``fork(entryId, {position})``: a new file with the path to the fork point. As in Pi,
    ``before`` takes a user message only, and a file not written yet cannot be forked."""
    tree = host.store.tree
    record(host, "session_before_fork", entryId=entry_id, position=position)
    if entry_id not in tree:
        raise ModelHostError(f"{INVALID_FORK}: no entry {entry_id!r} in the session")
    entry = tree.node(entry_id).entry
    if position != "at" and not (isinstance(entry, MessageEntry) and entry.message.role == "user"):
        raise ModelHostError(f"{INVALID_FORK}: {entry_id!r} is not a user message")
    at = entry_id if position == "at" else entry.parent_id
    if at is None:
        raise ModelHostError(f"cannot fork before {entry_id!r}: it is the first entry")
    if not written(host):
        raise ModelHostError(NOT_SAVED)
    shutdown(host, "fork")
    now = host.clock()
    session_id = new_session_id(host, now)
    header = new_header(host.settings, session_id, now, parent=host.store.path)
    forked = tree.fork(at, header, label_entry=_label_factory(host))
    path = session_path(host.settings, now, session_id)
    open_store(host, forked, path)
    restore_model_entries(host)
    bind(host, "fork")
    return path


def _label_factory(host: HostState) -> Callable[[str, str, str | None], LabelEntry]:
    store = host.store

    def make(target: str, label: str, parent: str | None) -> LabelEntry:
        stamp = iso(host.clock())
        return LabelEntry(
            id=store.mint_id(), parent_id=parent, timestamp=stamp, target_id=target, label=label
        )

    return make


def reload(host: HostState) -> None:
    """Pi's ``/reload`` (``ctx.reload()``): the extensions end and bind again on the same
    session; nothing is re-read, so a leaf moved without an entry stays where it is."""
    shutdown(host, "reload")
    bind(host, "reload")


def written(host: HostState) -> bool:
    """Whether Pi has written the current session file yet (the host profile says when)."""
    return is_written(host, host.store)


def is_written(host: HostState, store: SessionStore) -> bool:
    """Whether Pi has written ``store``'s file: once it holds an assistant message, or (1.x)
    a user message — or at once when the file existed before Pi opened it (M50: Pi's
    ``SessionManager`` loads it flushed and appends each entry)."""
    if store.path in host.on_disk:
        return True
    profile = host.settings.profile
    roles = ("user", "assistant") if profile.file_created_at_first_user_message else ("assistant",)
    return any(
        isinstance(entry, MessageEntry) and entry.message.role in roles
        for entry in store.tree.entries
    )


def resume(host: HostState, path: str) -> None:
    """``switchSession(path)``: re-read the file; the leaf is its last entry. A file Pi has
    not written yet (:func:`is_written`) opens as a new, empty session at that path — the
    current one, or another left unwritten (a handoff's switch back to a source Pi never
    wrote: differential finding ``return-to-an-unwritten-source``)."""
    if path not in host.files:
        raise ModelHostError(f"no session file {path!r} in this model session")
    record(host, "session_before_switch", reason="resume", targetSessionFile=path)
    unwritten = not is_written(host, host.files[path])
    shutdown(host, "resume")
    if unwritten:  # a new session: Pi lists it after those started before it
        del host.files[path]
        now = host.clock()
        header = new_header(host.settings, new_session_id(host, now), now, parent=None)
        tree = SessionTree.from_entries(header, [])
    else:
        loaded = parse_session(host.files[path].jsonl(), source=path)
        if loaded.header is None:
            raise ModelHostError(f"{path}: the session file has no header")
        tree = SessionTree.from_entries(loaded.header, loaded.entries)
    open_store(host, tree, path)
    restore_model_entries(host)
    bind(host, "resume")
