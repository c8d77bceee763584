"""The pure step: ``step(state, event, ctx, services) -> (state', result)``.

One host event becomes machine events (the routing table below); each machine event is
decided by the compiled engine over :class:`CmFacts` built from the state *before* it; the
actions' intents are applied in order — state updates at once, raised events ahead of
anything queued earlier (an action's follow-ups finish before its caller's siblings), host
effects and the hook's value collected. Before routing, entries the host appended since the
last event are observed (a checkpoint Pi wrote, a native compaction, new source bytes).

Host events reach the three schedulers (``notes_store``, ``background_notes``,
``auto_handoff``) strictly — every state declares them; the two flows (``checkpoint``,
``handoff``) and every raised follow-up receive an event only in states that declare it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import deque
from collections.abc import Sequence

from attrs import evolve

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management.act_notes import log, tool_error
from pictx_fsm.extensions.context_management.commands import command_intents
from pictx_fsm.extensions.context_management.effects import (
    Answer,
    CmResult,
    Emit,
    HostEffect,
    Intent,
    LogRecord,
    PanelRefresh,
    Raise,
    SetStatus,
    Update,
    Value,
    update,
)
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.machines import CmMachines, load_machines
from pictx_fsm.extensions.context_management.records import (
    AUTO_TYPE,
    CHECKPOINT_KEY,
    NOTES_TYPE,
    AutoSetting,
    read_session,
)
from pictx_fsm.extensions.context_management.sources import source_of
from pictx_fsm.extensions.context_management.state import CmState, Flags
from pictx_fsm.extensions.context_management.status import log_scope, panel_snapshot, status_bar
from pictx_fsm.extensions.context_management.texts import NOTES_TOOL, TOOLS
from pictx_fsm.extensions.context_management.writes import write_problem
from pictx_fsm.host.effects import AppendEntry, ToolResult
from pictx_fsm.session.entries import CompactionEntry, CustomEntry, Entry


def initial_state(
    flags: Flags, now: int, machines: CmMachines | None = None, tool_key: str = ""
) -> CmState:
    """A fresh instance (Pi runs the extension factory per runtime); ``tool_key`` is its
    random fingerprint key (M66)."""
    machines = machines or load_machines()
    return CmState(configs=machines.initial(), flags=flags, loaded_at=now, tool_key=tool_key)


def step(
    state: CmState,
    event: ev.CmEvent,
    ctx: ev.CmContext,
    services: ev.CmServices,
    machines: CmMachines | None = None,
) -> tuple[CmState, CmResult]:
    """Handle one host event; pure (services are only read)."""
    run = _Run(machines or load_machines(), state, event, ctx, services)
    run.observe()
    run.route()
    run.drain()
    return run.finish()


class _Run:
    """The working state of one step (discarded after it)."""

    def __init__(
        self,
        machines: CmMachines,
        state: CmState,
        event: ev.CmEvent,
        ctx: ev.CmContext,
        services: ev.CmServices,
    ) -> None:
        self.machines = machines
        self.state = state
        self.event = event
        self.ctx = ctx
        self.services = services
        self.queue: deque[Raise] = deque()
        self.effects: list[HostEffect] = []
        self.value: Value = None
        self.answered = False
        self.fired: list[str] = []
        self.status_before = state.status

    # -- facts and intents ---------------------------------------------------------------------

    def facts(self) -> CmFacts:
        return CmFacts(state=self.state, event=self.event, ctx=self.ctx, services=self.services)

    def apply(self, intents: Sequence[Intent]) -> None:
        raised: list[Raise] = []
        for intent in intents:
            if isinstance(intent, Update):
                self.state = evolve(self.state, **dict(intent.changes))
            elif isinstance(intent, Raise):
                raised.append(intent)
            elif isinstance(intent, Emit):
                self.effects.append(intent.effect)
            elif isinstance(intent, Answer):
                self.value = intent.value
                self.answered = True
        self.queue.extendleft(reversed(raised))

    def raise_(self, machine: str, event: str, *, strict: bool) -> None:
        current = self.state.state_of(machine)
        if not strict and not self.machines.declares(machine, current, event):
            return
        engine = self.machines.machines[machine]
        decided = engine.step(self.state.config(machine), event, self.facts())
        self.state = self.state.with_config(machine, decided.after)
        self.fired.extend(f.transition for f in decided.fired)
        self.apply(decided.effects)

    def drain(self) -> None:
        while self.queue:
            item = self.queue.popleft()
            self.raise_(item.machine, item.event, strict=item.strict)

    def send(self, *pairs: tuple[str, str]) -> None:
        """Host-event routing: strict for the schedulers, declared-only for the flows."""
        for machine, event in pairs:
            strict = machine not in ("checkpoint", "handoff")
            self.queue.append(Raise(machine=machine, event=event, strict=strict))
        self.drain()

    # -- observing the host's appends ----------------------------------------------------------

    def observe(self) -> None:
        """Entries appended since the last event: checkpoints Pi wrote (M32), native
        compactions (M36, M38) and the bytes of new source (M38), incrementally."""
        entries = self.services.tree.entries
        seen = self.state.seen_entries
        if isinstance(self.event, ev.SessionStarted) or seen > len(entries):
            self.state = evolve(self.state, seen_entries=len(entries))
            return
        fresh = entries[seen:]
        self.state = evolve(self.state, seen_entries=len(entries))
        for entry in fresh:
            self._observe(entry)

    def _observe(self, entry: Entry) -> None:
        if isinstance(entry, CompactionEntry):
            self.state = evolve(self.state, compactions=self.state.compactions + 1)
            details = entry.details if isinstance(entry.details, dict) else {}
            plugin = entry.from_hook is True and CHECKPOINT_KEY in details
            self.send(("notes_store", "checkpoint_committed" if plugin else "rebuild"))
            return
        if isinstance(entry, CustomEntry) and entry.custom_type == NOTES_TYPE:
            memory = evolve(self.state.branch, last_save_time=entry.timestamp)
            self.state = evolve(self.state, branch=memory)
            return
        source = source_of(entry)
        if source is not None:
            self.state = evolve(self.state, pending_bytes=self.state.pending_bytes + source.size)

    # -- routing ----------------------------------------------------------------------------------

    def route(self) -> None:
        handler = getattr(self, f"_on_{type(self.event).__name__}")
        handler(self.event)

    def _on_SessionStarted(self, event: ev.SessionStarted) -> None:
        session = read_session(self.services.tree.entries)
        auto = session.auto
        if auto is None and session.receipt is not None:
            auto = session.receipt.auto
        self.state = evolve(
            self.state,
            session_id=self.services.tree.session_id,
            model=self.ctx.model,
            loaded_at=self.ctx.now,
            auto=auto or AutoSetting(),
            takeover_sent=session.takeover_sent,
        )
        # The handoff flow first: a verified target adopts the carried auto setting
        # (pause cleared, M60) before the scheduler reads it.
        self.send(
            ("notes_store", "rebuild"),
            ("handoff", "session_start"),
            ("background_notes", "session_start"),
            ("auto_handoff", "session_start"),
        )

    def _on_ReplyEnded(self, event: ev.ReplyEnded) -> None:
        """M5/M6: the only point where the schedulers are evaluated — the end of a complete
        reply and its tool loop, so not the settle of an aborted run (M41)."""
        if self.state.run_aborted:
            self.state = evolve(self.state, run_aborted=False)
            return
        self.send(("auto_handoff", "reply_end"), ("background_notes", "reply_end"))

    def _on_TurnStarted(self, event: ev.TurnStarted) -> None:
        """M23: a new assistant turn's quota; M57/M59: input revokes a scheduled handoff."""
        self.state = evolve(
            self.state, turns=self.state.turns + 1, recall_used=0, turn_started_at=self.ctx.now
        )
        if self.state.state_of("auto_handoff") in ("pending", "preparing"):
            self.send(("auto_handoff", "revoke"))

    def _on_TurnEnded(self, event: ev.TurnEnded) -> None:
        """M64: a foreground reply, timed from its turn's start; tools excluded. M41: the
        foreground run's abort cancels a background job."""
        started = self.state.turn_started_at
        job = f"{self.state.session_id[:8]}:r{self.state.turns}"
        usage = None
        if event.input_tokens is not None and event.output_tokens is not None:
            usage = {"input": event.input_tokens, "output": event.output_tokens}
        begin = self.ctx.now if started is None else started
        self.apply(
            (
                log("operation_start", id=job, type="reply", model=self.ctx.model, time=begin),
                log(
                    "operation_end",
                    id=job,
                    type="reply",
                    model=self.ctx.model,
                    time=self.ctx.now,
                    durationMs=self.ctx.now - begin,
                    result="ok" if event.stop_reason in ("stop", "toolUse") else event.stop_reason,
                    usage=usage,
                    cost=event.cost,
                ),
            )
        )
        if event.aborted:
            self.state = evolve(self.state, run_aborted=True)
            self.send(("background_notes", "cancel"))

    def _on_BranchMoved(self, event: ev.BranchMoved) -> None:
        """M15, M35, M41, M59: rebuild; cancel the job, the preparation, the generation."""
        self.send(
            ("background_notes", "cancel"),
            ("auto_handoff", "revoke"),
            ("handoff", "cancel"),
            ("checkpoint", "abort"),
            ("notes_store", "rebuild"),
        )

    def _on_ModelSelected(self, event: ev.ModelSelected) -> None:
        self.state = evolve(self.state, model=event.model)
        self.send(("auto_handoff", "revoke"))

    def _on_CompactionStarting(self, event: ev.CompactionStarting) -> None:
        """M25, M41, M59: every compaction is answered; it cancels the background job and a
        preparation first."""
        self.send(("background_notes", "cancel"), ("auto_handoff", "revoke"), ("handoff", "cancel"))
        if self.state.state_of("checkpoint") != "idle":
            self.apply((Answer(value=None),))
            return
        self.state = evolve(self.state, gen_owner="compaction")
        self.send(("checkpoint", "start"))

    def _on_SessionEnding(self, event: ev.SessionEnding) -> None:
        self.send(
            ("background_notes", "shutdown"),
            ("auto_handoff", "shutdown"),
            ("handoff", "shutdown"),
            ("checkpoint", "abort"),
        )

    def _on_ToolCalled(self, event: ev.ToolCalled) -> None:
        if event.name not in TOOLS:
            return
        intents = self.machines.answers(self.facts(), event.name)
        if intents is not None:
            self.apply(intents)
        elif event.name == NOTES_TOOL:
            self._write()
        self._fingerprint(event)

    def _fingerprint(self, event: ev.ToolCalled) -> None:
        """M66, M70: an HMAC of a successful call under the instance's key, never the
        arguments themselves."""
        value = self.value
        ok = isinstance(value, ToolResult) and "error" not in value.payload
        if not ok or not self.state.tool_key:
            return
        body = json.dumps([event.name, dict(event.arguments)], sort_keys=True).encode()
        mark = hmac.new(self.state.tool_key.encode(), body, hashlib.sha256).hexdigest()[:16]
        self.apply((log("tool_call", time=self.ctx.now, fingerprint=mark, result="ok"),))

    def _write(self) -> None:
        problem = write_problem(self.facts().tool_arguments)
        if problem is not None:
            self.apply((tool_error("invalid_arguments", problem),))
            return
        self.send(("notes_store", "write"))

    def _on_CommandIssued(self, event: ev.CommandIssued) -> None:
        self.apply(command_intents(self.facts(), event.args))
        self.drain()

    def _on_GenerationReplied(self, event: ev.GenerationReplied) -> None:
        run = self.state.generation
        if run is not None and run.job == event.job:
            self.send(("checkpoint", "response"))

    def _on_DeadlineReached(self, event: ev.DeadlineReached) -> None:
        run = self.state.generation
        if run is not None and run.job == event.job:
            self.send(("checkpoint", "deadline"))

    def _on_IdleReached(self, event: ev.IdleReached) -> None:
        if self.state.state_of("auto_handoff") == "pending":
            self.send(("auto_handoff", "idle_reached"))

    def _on_StorageFailed(self, event: ev.StorageFailed) -> None:
        """M44: whatever this step wrote did not reach the disk."""
        self.send(("notes_store", "storage_failed"), ("checkpoint", "storage_failed"))

    def _on_HandoffReplied(self, event: ev.HandoffReplied) -> None:
        names = {
            "created": "created",
            "create_failed": "create_failed",
            "switch_cancelled": "switch_cancelled",
            "takeover_sent": "takeover_sent",
            "takeover_failed": "takeover_refused",
            "return_cancelled": "return_cancelled",
        }
        self.send(("handoff", names[event.outcome]))

    # -- result -----------------------------------------------------------------------------------

    def _refresh_due(self) -> bool:
        """M63: an operation ended, notes were committed, the auto setting changed, a
        compaction, branch or model change happened (``/ctx-memory session`` shows it itself)."""
        if isinstance(self.event, ev.BranchMoved | ev.ModelSelected | ev.CompactionStarting):
            return True
        kinds = {"operation_end", "native_compaction"}
        for effect in self.effects:
            if isinstance(effect, LogRecord) and effect.kind in kinds:
                return True
            if isinstance(effect, AppendEntry) and effect.custom_type in (NOTES_TYPE, AUTO_TYPE):
                return True
        return False

    def finish(self) -> tuple[CmState, CmResult]:
        if self.state.panel_open and self._refresh_due():
            facts = self.facts()
            refresh = PanelRefresh(snapshot=panel_snapshot(facts), logs=log_scope(facts))
            self.effects.append(refresh)
        text = status_bar(self.state)
        if text != self.status_before:
            # M4: first, so the bar shows this step's phase before the host carries out the
            # rest — whose answers (a reply, a created or refused session) are later steps
            # that set the bar again, and must not be overwritten by this older text.
            self.state = evolve(self.state, status=text)
            self.effects.insert(0, SetStatus(text=text))
        value = self.value
        if isinstance(self.event, ev.ToolCalled) and not self.answered and self.event.name in TOOLS:
            value = ToolResult(payload={"ok": False, "error": "internal", "message": "no answer"})
        result = CmResult(
            value=value,
            answered=self.answered,
            effects=tuple(self.effects),
            fired=tuple(self.fired),
        )
        return self.state, result


__all__ = ["initial_state", "step", "update"]
