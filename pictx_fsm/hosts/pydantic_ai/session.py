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

import contextlib
import dataclasses
import logging
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeAlias

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, repair_messages

from pictx_fsm import AuditLog, SessionHeader, SessionTree, read_session
from pictx_fsm.audit.log import iter_records
from pictx_fsm.extensions.pi_context.texts import ROOT_WINDOW_SUFFIX
from pictx_fsm.extensions.pi_context.windows import boot_window_id
from pictx_fsm.host.apply import Applied
from pictx_fsm.host.effects import Notify
from pictx_fsm.host.events import SessionStartReason
from pictx_fsm.hosts.pydantic_ai.errors import SessionBusyError
from pictx_fsm.hosts.pydantic_ai.glue import Lifecycle
from pictx_fsm.hosts.pydantic_ai.history import entries_to_messages, messages_to_entries
from pictx_fsm.hosts.pydantic_ai.mirror import Mirror
from pictx_fsm.hosts.pydantic_ai.settings import LifecycleSettings
from pictx_fsm.hosts.pydantic_ai.texts import BUSY, LOGGER_NAME
from pictx_fsm.session.entries import Entry, entry_from_json
from pictx_fsm.session.jsonl import SessionWriter
from pictx_fsm.session.tree import TreeNode
from pictx_fsm.session.writer import iso

__all__ = ["PiSession", "audit_path_of", "lifecycle_request", "wall_clock"]

JSON: TypeAlias = Any
Clock: TypeAlias = Callable[[], int]
logger: Final = logging.getLogger(LOGGER_NAME)
_LEVELS: Final = {"info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


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
        """Every notice of the session, oldest first (each also goes to the ``logging``
        logger ``pictx_fsm.hosts.pydantic_ai`` and to ``on_notice``)."""
        self._on_notice = on_notice
        self._rng = rng or random.Random()
        self.clock = clock
        self._running = threading.Lock()
        self.config = config or LifecycleSettings()
        """How the runtime was built (pass it to ``open`` to resume with the same notes home)."""
        audit_file = None if path is None else audit_path_of(path)
        self._audit_base = _records_in(audit_file)
        audit = AuditLog(audit_file)
        try:
            self.mirror = Mirror(tree, self._rng)
            self.lifecycle = Lifecycle(
                tree,
                config=self.config,
                rng=self._rng,
                clock=clock,
                audit=audit,
                on_notice=self._notice,
            )
        except BaseException:
            audit.close()
            raise
        if path is not None:
            tree.subscribe(_FileListener(SessionWriter(path), written=len(tree.entries)))
        self.pending: list[Entry] = []
        """Lifecycle entries in the tree that the history does not hold yet."""
        self.last_run: tuple[str | None, list[ModelMessage]] | None = None
        """The leaf a run ended on and the history it ended with (what the next run continues
        without converting, while the session has not moved)."""
        self.absorb(self.lifecycle.start(reason))

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path | None = None, **options: Any) -> PiSession:
        """A new session (in memory when ``path`` is ``None``); its root boot is pending. A
        session that cannot be made leaves no file behind and holds no lock."""
        tree = SessionTree(_new_header(options))
        with _created(path, tree) as target:
            return cls(tree, path=target, reason="startup", **options)

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
        with _created(path, tree) as target:
            return cls(tree, path=target, reason="resume", **options)

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
        """The active branch as a pydantic-ai message history: exactly the history the last
        run ended with, then the lifecycle's entries waiting for the next run. A last reply
        whose tool calls have no results (the run was cancelled, or the process died, while
        they ran) gets pydantic-ai's ``interrupted`` results for them, as ``repair_messages``
        makes them, so the history runs."""
        return close_open_calls(entries_to_messages(self.tree.branch()))

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Hold the session for one agent run: a second run meanwhile, from any
        ``PiContext``, task or thread, gets :class:`SessionBusyError`."""
        if not self._running.acquire(blocking=False):
            raise SessionBusyError(BUSY)
        try:
            yield
        finally:
            self._running.release()

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

    def notify(self, notice: Notify) -> None:
        """Tell a notice: ``notices``, the ``logging`` logger, ``on_notice``."""
        self._notice(notice)

    def _notice(self, notice: Notify) -> None:
        self.notices.append(notice)
        logger.log(_LEVELS.get(notice.level, logging.INFO), notice.message)
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


@contextlib.contextmanager
def _created(path: str | Path | None, tree: SessionTree) -> Iterator[Path | None]:
    """Write the session file of a new tree (it must not exist yet); removed again, with
    the audit log beside it, when the session cannot be made after all."""
    if path is None:
        yield None
        return
    target = Path(path)
    audit = audit_path_of(target)
    audit_existed = audit.exists()
    SessionWriter(target).create(tree.header, tree.entries)
    try:
        yield target
    except BaseException:
        target.unlink(missing_ok=True)
        if not audit_existed:
            audit.unlink(missing_ok=True)
        raise


def close_open_calls(messages: list[ModelMessage]) -> list[ModelMessage]:
    """``messages`` with the tool calls of the last reply that have no result closed by
    pydantic-ai's ``repair_messages`` (``outcome='interrupted'``): appended to the request
    after the reply, or as a request of their own. Nothing else is repaired or merged."""
    reply = len(messages) - 1
    if reply >= 0 and isinstance(messages[reply], ModelRequest):
        reply -= 1
    last = messages[reply] if reply >= 0 else None
    if not isinstance(last, ModelResponse) or not last.tool_calls:
        return messages
    tail = messages[reply + 1 :]
    repaired = repair_messages(messages[reply:])
    if len(repaired) != 2 or repaired[0] != last or not isinstance(repaired[1], ModelRequest):
        return messages  # pydantic-ai would repair more than the open calls
    given = list(tail[0].parts) if tail else []
    closed = list(repaired[1].parts)
    if len(closed) == len(given) or closed[: len(given)] != given:
        return messages
    closing: ModelMessage = repaired[1]
    if tail:
        closing = dataclasses.replace(tail[0], parts=closed)  # type: ignore[arg-type]
    return [*messages[: reply + 1], closing]


def lifecycle_request(entries: Iterable[Entry]) -> ModelRequest:
    """Lifecycle entries (custom and custom_message only) as the request that carries them."""
    [request] = entries_to_messages(list(entries))
    assert isinstance(request, ModelRequest)
    return request
