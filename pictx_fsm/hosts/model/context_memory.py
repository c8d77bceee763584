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

from attrs import define, field

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management.effects import CheckpointCompaction, CmResult
from pictx_fsm.extensions.context_management.generation import GenerationReply
from pictx_fsm.extensions.context_management.machines import CmMachines, load_machines
from pictx_fsm.extensions.context_management.policy import PARENT_READ_CAP
from pictx_fsm.extensions.context_management.records import RECEIPT_TYPE
from pictx_fsm.extensions.context_management.runtime import (
    ContextMemoryRuntime,
    Generator,
    StorageError,
)
from pictx_fsm.extensions.context_management.state import Flags
from pictx_fsm.extensions.context_management.texts import CHILD_ENV, COMMAND, TOOLS
from pictx_fsm.host.effects import CancelResult, HookResult, ToolResult
from pictx_fsm.host.events import (
    AgentSettled,
    HookEvent,
    HostContext,
    ModelSelect,
    SessionBeforeCompact,
    SessionShutdown,
    SessionStart,
    SessionTreeEvent,
    TurnEnd,
    TurnStart,
)
from pictx_fsm.host.extension import Reply, SuppliedCompaction, ToolInvocation, ToolOutput
from pictx_fsm.hosts.model import handoff as replacement
from pictx_fsm.hosts.model.clock import ManualClock
from pictx_fsm.hosts.model.compaction import plan_compaction
from pictx_fsm.hosts.model.memfiles import MemoryFiles
from pictx_fsm.hosts.model.records import NoticeRecord
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.jsonl import parse_session
from pictx_fsm.session.tree import SessionTree

if TYPE_CHECKING:
    from pictx_fsm.hosts.model.session import ModelSession

JSON: TypeAlias = Any
CM_HOOKS: frozenset[str] = frozenset(
    {
        "session_start",
        "agent_settled",
        "turn_start",
        "turn_end",
        "session_tree",
        "model_select",
        "session_before_compact",
        "session_shutdown",
    }
)


def flags_from(env: Mapping[str, str], argv: Sequence[str] = ()) -> Flags:
    """M1, M3: only ``PI_SUBAGENT_CHILD=1`` marks a child; the two flags by name."""
    return Flags(
        child=env.get(CHILD_ENV) == "1",
        no_background="--context-memory-no-background" in argv,
        no_auto_handoff="--context-memory-no-auto-handoff" in argv,
    )


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
        mapped = self._event(event, ctx)
        if mapped is None:
            return None
        return _reply(self.runtime.handle(mapped), event)

    def _event(self, event: HookEvent, ctx: HostContext) -> ev.CmEvent | None:
        if isinstance(event, SessionStart):
            return ev.SessionStarted(reason=event.reason)
        if isinstance(event, AgentSettled):
            return ev.ReplyEnded()
        if isinstance(event, TurnStart):
            return ev.TurnStarted()
        if isinstance(event, TurnEnd):
            return _turn_ended(event, ctx)
        if isinstance(event, SessionTreeEvent):
            return ev.BranchMoved()
        if isinstance(event, ModelSelect):
            return ev.ModelSelected(model=_model_name(event.model))
        if isinstance(event, SessionShutdown):
            return ev.SessionEnding(reason=event.reason)
        if isinstance(event, SessionBeforeCompact):
            return self._compaction(event)
        return None

    def _compaction(self, event: SessionBeforeCompact) -> ev.CmEvent:
        host = self._session()._host
        plan = plan_compaction(
            host.store.branch(), host.settings.compaction.keep_recent_tokens, host.counter
        )
        kept = plan.first_kept_entry_id if plan is not None else None
        return ev.CompactionStarting(
            reason=event.reason, first_kept=kept, signal_aborted=event.signal_aborted
        )

    def _tool(self, call: ToolInvocation, ctx: HostContext) -> ToolOutput:
        result = self.runtime.handle(ev.ToolCalled(name=call.name, arguments=call.arguments))
        value = result.value
        text = value.text if isinstance(value, ToolResult) else ""
        return ToolOutput(text=text)

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

    def deliver(self) -> bool:
        """Resolve what the host owes the extension, one thing: ``waitForIdle`` when idle,
        else the earliest reply (or its deadline), advancing the clock to it."""
        if self.idle_waits and self._session().is_idle:
            self.idle_waits -= 1
            self.runtime.handle(ev.IdleReached())
            self._flush_takeover()
            return True
        if not self.pending:
            return False
        item = min(self.pending, key=lambda p: (min(p.due, p.deadline), p.job))
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
        if host.files[path].tree.header.parent_session == parent:
            replacement.switch_to_new(host, path)
        elif self.veto_returns:
            return False
        else:
            replacement.return_to(host, path)
        self._flush_takeover()
        return True


def _key_source(seed: int, index: int) -> Any:
    """A deterministic per-instance key (the real runtime draws a random one)."""
    rng = random.Random(f"cm-key:{seed}:{index}")
    return lambda: f"{rng.getrandbits(128):032x}"


def _turn_ended(event: TurnEnd, ctx: HostContext) -> ev.TurnEnded:
    usage = event.message.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    cost = usage.get("cost")
    total = cost.get("total", 0) if isinstance(cost, Mapping) else 0
    tokens = usage.get("input"), usage.get("output")
    known = all(isinstance(t, int) for t in tokens)
    return ev.TurnEnded(
        input_tokens=tokens[0] if known else None,
        output_tokens=tokens[1] if known else None,
        cost=float(total or 0),
        stop_reason=str(event.message.get("stopReason", "stop")),
        aborted=event.outcome == "aborted" or ctx.signal_aborted,
    )


def _model_name(model: Any) -> str | None:
    return None if model is None else f"{model.provider}/{model.id}"


def _reply(result: CmResult, event: HookEvent) -> Reply:
    value = result.value
    if isinstance(value, CheckpointCompaction):
        return SuppliedCompaction(
            summary=value.summary,
            first_kept_entry_id=value.first_kept_entry_id,
            details=dict(value.details),
        )
    if isinstance(value, CancelResult):
        return HookResult(hook=type(event).HOOK, value=value)
    return None


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
            model=_model_name(ctx.model),
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

    def schedule_reply(self, job: int, reply: GenerationReply, deadline: int) -> None:
        due = self.ext.clock.peek() + reply.duration_ms
        self.ext.pending.append(Pending(job=job, reply=reply, due=due, deadline=deadline))

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
        """M24: the direct parent's file, read fresh from its text (≤ 32 MiB)."""
        session = self.ext.session
        if session is None or self.ext.hide_parents or path not in session._host.files:
            return None
        text = session._host.files[path].jsonl()
        if len(text.encode()) > PARENT_READ_CAP:
            return None
        loaded = parse_session(text, source=path)
        if loaded.header is None:
            return None
        tree = SessionTree.from_entries(loaded.header, loaded.entries)
        return tree.branch(leaf) if leaf in tree else None


__all__ = ["CM_HOOKS", "ContextMemoryExtension", "flags_from"]
