"""The thin shell around the pure step: keeps the state, carries out effects.

:class:`ContextMemoryRuntime` is one extension instance (Pi runs the factory per runtime).
``handle(event)`` takes the host's ``ctx`` from :class:`CmHost`, calls
:func:`~pictx_fsm.extensions.context_management.step` and carries out its effects in order:
entries are appended through the host (a failed append drops the step's state and feeds
``StorageFailed``, M15/M44); a compaction's model requests go to the injected
:class:`Generator`, answered at once (Pi awaits ``session_before_compact``), a background
job's or a handoff preparation's to the host, which answers later; diagnostics go to
the rotating log; handoff operations to the host. Every answer the host gives comes back as
an event through ``handle``.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Protocol

from attrs import define, field

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management._step import initial_state, step
from pictx_fsm.extensions.context_management.diaglog import DiagnosticsLog, LogFiles, RecordError
from pictx_fsm.extensions.context_management.effects import (
    AbortGeneration,
    CmResult,
    CompactNow,
    CreateSession,
    ExportReport,
    HostEffect,
    LogRecord,
    PanelRefresh,
    RequestGeneration,
    ScheduleHandoff,
    SendTakeover,
    SetStatus,
    SwitchSession,
    Value,
)
from pictx_fsm.extensions.context_management.export import panel_diagnostics, write_report
from pictx_fsm.extensions.context_management.generation import GenerationReply, GenerationRequest
from pictx_fsm.extensions.context_management.machines import CmMachines, load_machines
from pictx_fsm.extensions.context_management.state import CmState, Flags
from pictx_fsm.extensions.context_management.status import render_panel
from pictx_fsm.extensions.context_management.texts import (
    NOTICE_EXPORTED,
    STATUS_LOG_FAILED,
    STATUS_READY,
)
from pictx_fsm.host.effects import AppendEntry, Notify
from pictx_fsm.session.tree import SessionTree

__all__ = ["CmHost", "ContextMemoryRuntime", "Generator", "StorageError"]


class StorageError(Exception):
    """The host could not write the session file (disk full, permission)."""


class Generator(Protocol):
    """The model behind a compaction's checkpoint (M25): the runtime waits for its reply.

    A reply reports how long it took (``duration_ms``); the shell turns that into time on
    the host's clock, so deadlines are judged on injected time (a host whose clock already
    moved while the model answered reports 0)."""

    def generate(self, request: GenerationRequest) -> GenerationReply: ...


class CmHost(Protocol):
    """What the runtime needs from its host besides the session tree."""

    def context(self) -> ev.CmContext: ...

    def append_entry(self, custom_type: str, data: object) -> None:
        """``pi.appendEntry``; raises :class:`StorageError` when the file cannot be written."""

    def notify(self, message: str, level: str) -> None: ...

    def set_status(self, text: str) -> None: ...

    def show_panel(self, text: str) -> None:
        """M62: the widget (``ctx.ui.setWidget``), never another extension's footer."""

    def advance(self, ms: int) -> None:
        """Let ``ms`` of host time pass (a synchronous model request)."""

    def request_generation(self, request: GenerationRequest, deadline: int) -> None:
        """Send ``request`` to the model without waiting (a background job, a handoff
        preparation): deliver its reply — or ``DeadlineReached`` at ``deadline`` if that comes
        first — through :meth:`ContextMemoryRuntime.handle`, later."""

    def cancel_reply(self, job: int) -> None: ...

    def wait_for_idle(self) -> None:
        """M57: deliver ``IdleReached`` once the session is idle."""

    def create_session(self, receipt: object) -> str | None:
        """M46 step 4: the new file's path, or ``None`` when it could not be created."""

    def switch_session(self, path: str) -> bool:
        """Replace the session; ``False`` when another extension cancelled the switch."""

    def send_takeover(self, text: str) -> None:
        """M46 step 7: prompt the new session once it is running; answer through
        ``HandoffReplied(takeover_sent | takeover_failed)``."""

    def compact(self) -> None: ...

    def log_files(self) -> LogFiles | None:
        """Where the diagnostics log lives (``None``: no log)."""


@define
class ContextMemoryRuntime:
    """pi-context-management for one host session."""

    tree: SessionTree
    host: CmHost
    generator: Generator
    parents: ev.ParentFiles = field(factory=ev.NoParents)
    flags: Flags = field(factory=Flags)
    machines: CmMachines = field(factory=load_machines)
    tool_key: Callable[[], str] = field(default=lambda: secrets.token_hex(16))
    """M66: a random key per instance for tool-call fingerprints, never stored."""
    state: CmState = field(init=False)
    results: list[tuple[ev.CmEvent, CmResult]] = field(factory=list, init=False)
    """Every step's event and result, oldest first (coverage, traces, invariants)."""
    on_step: Callable[[ev.CmEvent, CmState, CmResult], None] | None = None
    on_rollback: Callable[[], None] | None = None
    """Called when a step's appends failed and its state was dropped (M15)."""

    def __attrs_post_init__(self) -> None:
        now = self.host.context().now
        self.state = initial_state(self.flags, now, self.machines, self.tool_key())

    def services(self) -> ev.CmServices:
        return ev.CmServices(tree=self.tree, parents=self.parents)

    def handle(self, event: ev.CmEvent) -> CmResult:
        """One event and everything it sets in motion; the hook's final value."""
        before = self.state
        self.state, result = step(
            before, event, self.host.context(), self.services(), self.machines
        )
        self.results.append((event, result))
        if self.on_step is not None:
            self.on_step(event, self.state, result)
        value, answered = result.value, result.answered
        for effect in result.effects:
            try:
                follow = self._carry_out(effect)
            except StorageError:
                if isinstance(event, ev.StorageFailed):
                    continue  # Q11: the failure is in the state; its own writes fail too
                self.state = before
                if self.on_rollback is not None:
                    self.on_rollback()
                return self.handle(ev.StorageFailed(during=_during(event)))
            if follow is not None and follow.answered:
                value, answered = follow.value, True
        return CmResult(value=value, answered=answered, effects=result.effects, fired=result.fired)

    def _carry_out(self, effect: HostEffect) -> CmResult | None:
        host = self.host
        if isinstance(effect, AppendEntry):
            host.append_entry(effect.custom_type, effect.data)
        elif isinstance(effect, Notify):
            host.notify(effect.message, effect.level)
        elif isinstance(effect, SetStatus):
            host.set_status(effect.text)
        elif isinstance(effect, PanelRefresh):
            host.show_panel(self._panel(effect))
        elif isinstance(effect, LogRecord):
            self._log(effect)
        elif isinstance(effect, RequestGeneration):
            return self._generate(effect.request)
        elif isinstance(effect, AbortGeneration):
            host.cancel_reply(effect.job)
        elif isinstance(effect, ScheduleHandoff):
            host.wait_for_idle()
        else:
            return self._handoff_effect(effect)
        return None

    def _handoff_effect(self, effect: HostEffect) -> CmResult | None:
        host = self.host
        if isinstance(effect, CreateSession):
            path = host.create_session(effect.receipt)
            outcome = "created" if path is not None else "create_failed"
            return self.handle(ev.HandoffReplied(outcome=outcome, target=path))
        if isinstance(effect, SwitchSession):
            if host.switch_session(effect.path):
                return None
            outcome = "return_cancelled" if effect.returning else "switch_cancelled"
            return self.handle(ev.HandoffReplied(outcome=outcome, target=effect.path))
        if isinstance(effect, SendTakeover):
            host.send_takeover(effect.text)
        elif isinstance(effect, CompactNow):
            host.compact()
        elif isinstance(effect, ExportReport):
            self._export(effect)
        return None

    def _generate(self, request: GenerationRequest) -> CmResult | None:
        """A compaction waits for its reply (Pi awaits the hook); other runs continue while
        the foreground does (M40, M58): the host answers them later."""
        run = self.state.generation
        deadline = run.deadline if run is not None else self.host.context().now
        if request.kind != "compaction":
            self.host.request_generation(request, deadline)
            return None
        reply = self.generator.generate(request)
        now = self.host.context().now
        if now + reply.duration_ms >= deadline:
            self.host.advance(max(0, deadline - now))
            return self.handle(ev.DeadlineReached(job=request.job))
        self.host.advance(reply.duration_ms)
        return self.handle(ev.GenerationReplied(job=request.job, reply=reply))

    def _log(self, record: LogRecord) -> None:
        """M64, M67: only saved sessions; a failure never blocks, the status bar says so."""
        files = self.host.log_files()
        session = self.host.context().session_file
        if files is None or session is None:
            return
        try:
            DiagnosticsLog(files, session).write(record.to_json())
        except (OSError, RecordError):
            if self.state.status == STATUS_READY:  # never over a storage failure or a phase
                self.host.set_status(STATUS_LOG_FAILED)

    def _export(self, effect: ExportReport) -> None:
        files = self.host.log_files()
        if files is None:
            return
        path = write_report(files, effect.logs)
        self.host.notify(NOTICE_EXPORTED.format(path=path), "info")

    def _panel(self, effect: PanelRefresh) -> str:
        """M62: the snapshot with the call statistics of the logs (read at each refresh)."""
        if effect.snapshot is None:
            return ""
        files = self.host.log_files()
        if files is None or effect.logs is None:
            return render_panel(effect.snapshot, None)
        return render_panel(effect.snapshot, panel_diagnostics(files, effect.logs))

    @property
    def value_of_last(self) -> Value:
        return self.results[-1][1].value if self.results else None


def _during(event: ev.CmEvent) -> str:
    if isinstance(event, ev.ToolCalled):
        return "tool"
    if isinstance(event, ev.GenerationReplied | ev.DeadlineReached):
        return "generation"
    return "session"
