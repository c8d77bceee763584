"""One durable pi-context session for pydantic-ai: the Pi session file, its audit log, the
lifecycle and the mirror of the message history.

The session file is Pi's JSONL (one flushed line per entry, written by the project's
:class:`~pictx_fsm.session.jsonl.SessionWriter`), so ``pictx-fsm inspect`` and ``audit`` read
it as they read Pi's; the hash-chained audit log of every decision sits beside it
(``<name>.audit.jsonl``), ready for ``pictx-fsm diagram --trace``. Opening an existing file
(or importing a stored pydantic-ai history) raises ``session_start{resume}``, which repairs a
reset window whose tail is incomplete (R63–R66, D4).
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from pydantic_ai.messages import ModelMessage, ModelRequest, repair_messages

from pictx_fsm import Applied, AuditLog, Notify, SessionHeader, SessionTree, read_session
from pictx_fsm.audit.log import iter_records
from pictx_fsm.extensions.pi_context.texts import ROOT_WINDOW_SUFFIX
from pictx_fsm.extensions.pi_context.windows import boot_window_id
from pictx_fsm.host.events import SessionStartReason
from pictx_fsm.hosts.pydantic_ai.glue import Lifecycle, LifecycleSettings
from pictx_fsm.hosts.pydantic_ai.history import entries_to_messages, messages_to_entries
from pictx_fsm.hosts.pydantic_ai.mirror import Mirror
from pictx_fsm.session.entries import Entry, entry_from_json
from pictx_fsm.session.jsonl import SessionWriter
from pictx_fsm.session.tree import TreeNode
from pictx_fsm.session.writer import iso

JSON: TypeAlias = Any
Clock: TypeAlias = Callable[[], int]


def wall_clock() -> int:
    return int(time.time() * 1000)


def audit_path_of(path: Path) -> Path:
    """The audit log beside a session file: ``s.jsonl`` → ``s.audit.jsonl``."""
    return path.with_name(f"{path.stem}.audit.jsonl")


class _FileListener:
    """Writes every entry the tree gains, as Pi appends: one line, flushed. (A listener
    first receives the nodes already present: those are in the file already.)"""

    def __init__(self, writer: SessionWriter, written: int) -> None:
        self._writer = writer
        self._written = written

    def on_add(self, node: TreeNode) -> None:
        if node.order >= self._written:
            self._writer.append([node.entry])


class PiSession:
    """A session tree (in memory, or in a Pi session file) with its lifecycle."""

    def __init__(
        self,
        tree: SessionTree,
        *,
        path: Path | None,
        reason: SessionStartReason,
        config: LifecycleSettings | None = None,
        rng: random.Random | None = None,
        clock: Clock = wall_clock,
        on_notice: Callable[[Notify], None] | None = None,
    ) -> None:
        self.tree = tree
        self.path = path
        self.notices: list[Notify] = []
        self._on_notice = on_notice
        self._rng = rng or random.Random()
        self.clock = clock
        audit_file = None if path is None else audit_path_of(path)
        self._audit_base = _records_in(audit_file)
        audit = AuditLog(audit_file)
        if path is not None:
            tree.subscribe(_FileListener(SessionWriter(path), written=len(tree.entries)))
        self.mirror = Mirror(tree, self._rng)
        self.config = config or LifecycleSettings()
        """How the runtime was built (pass it to ``open`` to resume with the same notes home)."""
        self.lifecycle = Lifecycle(
            tree,
            config=self.config,
            rng=self._rng,
            clock=clock,
            audit=audit,
            on_notice=self._notice,
        )
        self.pending: list[Entry] = []
        """Lifecycle entries in the tree that the history does not hold yet."""
        self.absorb(self.lifecycle.start(reason))

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path | None = None, **options: Any) -> PiSession:
        """A new session (in memory when ``path`` is ``None``); its root boot is pending."""
        tree = SessionTree(_new_header(options))
        return cls(tree, path=_created(path, tree), reason="startup", **options)

    @classmethod
    def open(cls, path: str | Path, **options: Any) -> PiSession:
        """Resume a session file (Pi's or this host's); the tail is repaired as R64–R66 say."""
        target = Path(path)
        loaded = read_session(target)
        if loaded.header is None:
            raise ValueError(f"{target}: line 1 is not a session header")
        tree = SessionTree.from_entries(loaded.header, loaded.entries)
        return cls(tree, path=target, reason="resume", **options)

    @classmethod
    def from_messages(
        cls,
        messages: Sequence[ModelMessage],
        path: str | Path | None = None,
        *,
        parent_session: str | None = None,
        **options: Any,
    ) -> PiSession:
        """Resume from a stored pydantic-ai history (its lifecycle entries travel inside it).

        The new session is a clone, as Pi's fork (R66): a new session id, and the header's
        ``parentSession`` names where the copied entries came from (``parent_session``, by
        default the root window id of the copied root boot), so the copied boots are
        explained to ``pictx-fsm audit``."""
        entries = messages_to_entries(messages, parent_id=None, mint=lambda: "")
        parent = parent_session or _copied_root(entries)
        tree = SessionTree(_new_header(options, parent_session=parent))
        Mirror(tree, options["rng"]).append(entries)
        return cls(tree, path=_created(path, tree), reason="resume", **options)

    # -- the history ---------------------------------------------------------------------------

    @property
    def audit(self) -> AuditLog:
        audit = self.lifecycle.audit
        assert audit is not None
        return audit

    @property
    def audit_seq(self) -> int:
        """How many audit records the session has (this process's and earlier ones)."""
        return self._audit_base + len(self.audit)

    def audit_records(self) -> list[dict[str, JSON]]:
        """Every audit record of the session, oldest first."""
        if self.path is None:
            return list(self.audit.records)
        return list(iter_records(audit_path_of(self.path)))

    def history(self) -> list[ModelMessage]:
        """The active branch as a runnable pydantic-ai message history (pending entries
        included). Tool calls whose results were never written (the process died between
        them) get pydantic-ai's synthesized results, as ``repair_messages`` makes them."""
        return repair_messages(entries_to_messages(self.mirror.branch))

    def absorb(self, applied: Applied) -> list[Entry]:
        """Take the entries a hook appended outside a boundary; they wait for the next run."""
        entries = list(applied.appended)
        self.mirror.adopt(entries)
        self.pending += entries
        return entries

    def command(self, name: str, args: str = "") -> None:
        """``/wipe-memory`` or ``/pi-context [on|off]`` between runs (R59, R60, D2): what they
        append (a marker, a boot, a continuation) joins the next run's history."""
        self.absorb(self.lifecycle.command(name, args))

    def take_pending(self) -> ModelRequest | None:
        """The pending lifecycle entries as one request to put into the history."""
        if not self.pending:
            return None
        request = lifecycle_request(self.pending)
        self.pending = []
        return request

    def close(self) -> None:
        self.audit.close()

    def _notice(self, notice: Notify) -> None:
        self.notices.append(notice)
        if self._on_notice is not None:
            self._on_notice(notice)


def _records_in(path: Path | None) -> int:
    if path is None or not path.exists():
        return 0
    return sum(1 for _ in iter_records(path))


def _new_header(options: dict[str, Any], parent_session: str | None = None) -> SessionHeader:
    """A v3 header; the session id is drawn from the injected random source."""
    rng: random.Random = options.setdefault("rng", random.Random())
    clock: Clock = options.setdefault("clock", wall_clock)
    config: LifecycleSettings = options.setdefault("config", LifecycleSettings())
    return SessionHeader(
        id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        timestamp=iso(clock()),
        cwd=config.cwd,
        parent_session=parent_session,
    )


def _copied_root(entries: Iterable[Mapping[str, JSON]]) -> str | None:
    """The root window id of the first root boot among ``entries`` (another session's)."""
    for obj in entries:
        window_id = boot_window_id(entry_from_json(obj)[0])
        if window_id is not None and window_id.endswith(ROOT_WINDOW_SUFFIX):
            return window_id
    return None


def _created(path: str | Path | None, tree: SessionTree) -> Path | None:
    """Write the session file of a new tree (it must not exist yet)."""
    if path is None:
        return None
    target = Path(path)
    SessionWriter(target).create(tree.header, tree.entries)
    return target


def lifecycle_request(entries: Iterable[Entry]) -> ModelRequest:
    """Lifecycle entries (custom and custom_message only) as the request that carries them."""
    [request] = entries_to_messages(list(entries))
    assert isinstance(request, ModelRequest)
    return request
