"""``ContextMemoryExtension``: pi-context-management loaded into the model session.

The adapter owns no behaviour: it maps Pi 0.87 hooks to the runtime's events (RE =
``agent_settled``, Q3), answers tools and ``/ctx-memory``, and implements the runtime's
:class:`~pictx_fsm.extensions.context_management.runtime.CmHost` over the model host: the injected
:class:`~pictx_fsm.hosts.model.clock.ManualClock`, a scripted generator, in-memory log
files, replies that arrive later (:meth:`deliver`), ``waitForIdle``, and session
replacement for a handoff (:mod:`pictx_fsm.hosts.model.handoff`).

Pi binds extensions while the session is built; the adapter handles that first
``session_start`` once :meth:`attach` gave it the session (its host is needed for usage,
model and files).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from attrs import define, evolve, field

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management.adapter import (
    CM_HOOKS,
    Preparation,
    event_of,
    flags_from,
    model_name,
    reply_of,
    tool_text,
)
from pictx_fsm.extensions.context_management.generation import (
    GenerationReply,
    GenerationRequest,
)
from pictx_fsm.extensions.context_management.machines import CmMachines, load_machines
from pictx_fsm.extensions.context_management.parents import parent_branch_in
from pictx_fsm.extensions.context_management.records import RECEIPT_TYPE
from pictx_fsm.extensions.context_management.runtime import (
    ContextMemoryRuntime,
    Generator,
    StorageError,
)
from pictx_fsm.extensions.context_management.state import Flags
from pictx_fsm.extensions.context_management.texts import COMMAND, TOOLS
from pictx_fsm.host.effects import HookResult
from pictx_fsm.host.events import HookEvent, HostContext, SessionBeforeCompact, SessionStart
from pictx_fsm.host.extension import Reply, ToolInvocation, ToolOutput
from pictx_fsm.hosts.model import handoff as replacement
from pictx_fsm.hosts.model.clock import ManualClock
from pictx_fsm.hosts.model.compaction import plan_compaction
from pictx_fsm.hosts.model.memfiles import MemoryFiles
from pictx_fsm.hosts.model.records import NoticeRecord
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.tree import SessionTree

if TYPE_CHECKING:
    from pictx_fsm.hosts.model.session import ModelSession

JSON: TypeAlias = Any


@define
class Pending:
    """A reply on its way, or a deadline that comes first."""

    job: int
    reply: GenerationReply
    due: int
    deadline: int


@define
class ContextMemoryExtension:
    """pi-context-management 0.6.0-beta.2 for the model session."""

    clock: ManualClock
    generator: Generator
    flags: Flags = field(factory=Flags)
    machines: CmMachines = field(factory=load_machines)
    files: MemoryFiles = field(factory=MemoryFiles)
    name: str = "pi-context-management"
    runtimes: list[ContextMemoryRuntime] = field(factory=list)
    pending: list[Pending] = field(factory=list)
    idle_waits: int = 0
    fail_appends: bool = False
    """A disk that refuses writes (M44)."""
    veto_switches: bool = False
    """Another extension cancels ``session_before_switch`` (M49)."""
    veto_returns: bool = False
    """Another extension cancels only switches back to a source session (M49)."""
    hide_parents: bool = False
    """Parent session files cannot be read (moved or deleted, M24, M49)."""
    fail_takeover: bool = False
    """The takeover prompt fails to start (M50)."""
    saved: bool = True
    """``False``: an ephemeral session (``--no-session``): no file, no log, no handoff (M45)."""
    fail_create: bool = False
    """New session files cannot be created (the exclusive create fails, M46 step 4)."""
    abort_compactions: bool = False
    """Another extension's ``session_before_compact`` handler, run before this one's, aborts
    every compaction (the user's Escape while it waited): the signal this one gets has fired
    (M35)."""
    status: str = ""
    status_log: list[str] = field(factory=list)
    """Every status-bar text shown, oldest first (the bar itself shows the last)."""
    panel: str | None = None
    """What the panel widget shows (``/ctx-memory session``)."""
    seed: int = 0
    """Seeds the per-instance fingerprint keys (the model host is deterministic)."""
    session: ModelSession | None = None
    _startup: bool = False
    _takeover: str | None = None

    # -- the Extension protocol -----------------------------------------------------------------

    def adapter_state(self) -> tuple[object, ...]:
        """What the adapter holds between hooks besides the runtime's state: the deliveries
        it owes, the failures switched on, the status shown and the takeover in waiting
        (for a checker's canonical state; ``status_log`` is history)."""
        return (
            tuple(self.pending),
            self.idle_waits,
            self.fail_appends,
            self.veto_switches,
            self.veto_returns,
            self.hide_parents,
            self.fail_takeover,
            self.saved,
            self.fail_create,
            self.status,
            self.panel,
            self._startup,
            self._takeover,
        )

    @property
    def hooks(self) -> frozenset[str]:
        return frozenset() if self.flags.child else CM_HOOKS

    @property
    def tools(self) -> Mapping[str, Any]:
        return {} if self.flags.child else {name: self._tool for name in TOOLS}

    @property
    def commands(self) -> Mapping[str, Any]:
        return {} if self.flags.child else {COMMAND: self._command}

    @property
    def sequential_tools(self) -> frozenset[str]:
        """None: the spec gives no execution mode for these tools, and Pi's default is
        parallel (``docs/decisions.md``)."""
        return frozenset()

    def bind(self, tree: SessionTree) -> None:
        if self.flags.child:
            return  # M1: the factory returns at once
        host = _Host(self, tree)
        runtime = ContextMemoryRuntime(
            tree=tree,
            host=host,
            generator=self.generator,
            parents=host,
            flags=self.flags,
            machines=self.machines,
            tool_key=_key_source(self.seed, len(self.runtimes)),
        )
        self.runtimes.append(runtime)
        self.pending.clear()
        self.idle_waits = 0

    @property
    def runtime(self) -> ContextMemoryRuntime:
        if not self.runtimes:
            raise RuntimeError("ContextMemoryExtension is not bound to a session yet")
        return self.runtimes[-1]

    def attach(self, session: ModelSession) -> None:
        """Give the adapter its session; handles the startup ``session_start`` it held."""
        self.session = session
        if self._startup:
            self._startup = False
            self.runtime.handle(ev.SessionStarted(reason="startup"))

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        if isinstance(event, SessionStart) and self.session is None:
            self._startup = True
            return None
        preparation = None
        if isinstance(event, SessionBeforeCompact):
            preparation = self._preparation()
            if self.abort_compactions:
                event = evolve(event, signal_aborted=True)
        mapped = event_of(event, ctx, preparation)
        if mapped is None:
            return None
        return reply_of(self.runtime.handle(mapped), event)

    def _preparation(self) -> Preparation:
        """Pi's kept boundary for this compaction (the model host tracks no files)."""
        host = self._session()._host
        plan = plan_compaction(
            host.store.branch(), host.settings.compaction.keep_recent_tokens, host.counter
        )
        return Preparation(first_kept=plan.first_kept_entry_id if plan is not None else None)

    def _tool(self, call: ToolInvocation, ctx: HostContext) -> ToolOutput:
        result = self.runtime.handle(ev.ToolCalled(name=call.name, arguments=call.arguments))
        return ToolOutput(text=tool_text(result))

    def _command(self, args: str, ctx: HostContext) -> HookResult | None:
        self.runtime.handle(ev.CommandIssued(args=args))
        return None

    # -- the host's side: replies, idle, handoff ------------------------------------------------

    def _session(self) -> ModelSession:
        if self.session is None:
            raise RuntimeError("ContextMemoryExtension.attach(session) was not called")
        return self.session

    def deliverable(self) -> bool:
        return bool(self.pending) or (self.idle_waits > 0 and self._session().is_idle)

    def deliver(self, held: frozenset[int] = frozenset()) -> bool:
        """Resolve what the host owes the extension, one thing: ``waitForIdle`` when idle,
        else the earliest reply (or its deadline), advancing the clock to it — not the
        replies of the ``held`` jobs (a model that has not answered yet)."""
        if self.idle_waits and self._session().is_idle:
            self.idle_waits -= 1
            self.runtime.handle(ev.IdleReached())
            self._flush_takeover()
            return True
        waiting = [p for p in self.pending if p.job not in held]
        if not waiting:
            return False
        item = min(waiting, key=lambda p: (min(p.due, p.deadline), p.job))
        self.pending.remove(item)
        if item.deadline <= item.due:
            self.clock.advance_to(item.deadline)
            self.runtime.handle(ev.DeadlineReached(job=item.job))
        else:
            self.clock.advance_to(item.due)
            self.runtime.handle(ev.GenerationReplied(job=item.job, reply=item.reply))
        self._flush_takeover()
        return True

    def pass_time(self, ms: int) -> None:
        """Let ``ms`` pass: every reply or deadline due meanwhile arrives at its time, and
        an idle wait resolves (time does not pass for the extension in one jump)."""
        target = self.clock.peek() + ms
        while self.idle_waits and self._session().is_idle:
            self.deliver()
        while self.pending and min(min(p.due, p.deadline) for p in self.pending) <= target:
            self.deliver()
        self.clock.advance_to(target)

    def _flush_takeover(self) -> None:
        """M46 step 7: the takeover prompt, once the switch is complete."""
        text, self._takeover = self._takeover, None
        if text is None:
            return
        session = self._session()
        if self.fail_takeover or not session.is_idle:
            self.runtime.handle(ev.HandoffReplied(outcome="takeover_failed"))
            return
        session.prompt(text)
        self.runtime.handle(ev.HandoffReplied(outcome="takeover_sent"))

    def switch(self, path: str) -> bool:
        session = self._session()
        if self.veto_switches or not session.is_idle:
            return False
        host = session._host
        if path == host.store.path:
            return False
        parent = host.store.path
        if host.files[path].tree.header.parent_session != parent and self.veto_returns:
            return False
        replacement.switch_to(host, path)
        self._flush_takeover()
        return True


def _key_source(seed: int, index: int) -> Any:
    """A deterministic per-instance key (the real runtime draws a random one)."""
    rng = random.Random(f"cm-key:{seed}:{index}")
    return lambda: f"{rng.getrandbits(128):032x}"


class _Host:
    """The runtime's :class:`CmHost` over the model session, for one bound tree."""

    def __init__(self, ext: ContextMemoryExtension, tree: SessionTree) -> None:
        self.ext = ext
        self.tree = tree

    def context(self) -> ev.CmContext:
        ext = self.ext
        session = ext.session
        if session is None:
            return ev.CmContext(now=ext.clock.peek())
        host = session._host
        ctx = host.host_context()
        usage = ctx.usage
        return ev.CmContext(
            now=ext.clock.peek(),
            tokens=usage.tokens if usage is not None else None,
            context_window=usage.context_window if usage is not None else None,
            model=model_name(ctx.model),
            pending_input=ctx.has_pending_messages,
            idle=session.is_idle,
            session_file=host.store.path if self._live() and ext.saved else None,
            cwd=ctx.cwd,
        )

    def _live(self) -> bool:
        session = self.ext.session
        return session is not None and session._host.store.tree is self.tree

    def append_entry(self, custom_type: str, data: object) -> None:
        if self.ext.fail_appends:
            raise StorageError("no space left on device")
        if not self._live():
            raise StorageError("the session was replaced")
        self.ext._session()._host.store.custom(custom_type, data)

    def notify(self, message: str, level: str) -> None:
        session = self.ext._session()
        host = session._host
        record = NoticeRecord(
            source=self.ext.name, message=message, level=level, leaf_id=host.store.leaf_id
        )  # type: ignore[arg-type]
        host.log.notices.append(record)

    def set_status(self, text: str) -> None:
        self.ext.status = text
        self.ext.status_log.append(text)

    def show_panel(self, text: str) -> None:
        self.ext.panel = text or None

    def advance(self, ms: int) -> None:
        self.ext.clock.advance(ms)

    def request_generation(self, request: GenerationRequest, deadline: int) -> None:
        reply = self.ext.generator.generate(request)
        due = self.ext.clock.peek() + reply.duration_ms
        self.ext.pending.append(Pending(job=request.job, reply=reply, due=due, deadline=deadline))

    def cancel_reply(self, job: int) -> None:
        self.ext.pending[:] = [p for p in self.ext.pending if p.job != job]

    def wait_for_idle(self) -> None:
        self.ext.idle_waits += 1

    def create_session(self, receipt: object) -> str | None:
        if self.ext.fail_create:
            return None
        return replacement.create_handoff_session(self.ext._session()._host, RECEIPT_TYPE, receipt)

    def switch_session(self, path: str) -> bool:
        return self.ext.switch(path)

    def send_takeover(self, text: str) -> None:
        self.ext._takeover = text

    def compact(self) -> None:
        session = self.ext._session()
        if session.is_idle:
            session.compact()

    def log_files(self) -> MemoryFiles:
        return self.ext.files

    def parent_branch(self, path: str, leaf: str) -> Sequence[Entry] | None:
        """M24: the direct parent's file, read fresh from its text (≤ 32 MiB) — as Pi has it
        on disk: a parent Pi has not written yet (no message that makes Pi write it) is
        missing (differential finding ``handoff-from-an-unwritten-session``)."""
        session = self.ext.session
        if session is None or self.ext.hide_parents:
            return None
        written = session.saved_files()
        if path not in written:
            return None
        return parent_branch_in(written[path].jsonl(), leaf, path)


__all__ = ["CM_HOOKS", "ContextMemoryExtension", "flags_from"]
