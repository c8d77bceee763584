"""A world: pi-context-management on the model session — alone, or after pi-context as a
user might load both — with a clock tests advance and a scripted generator.

:class:`WorldConfig` is everything that makes a run reproducible. :class:`World` keeps
every runtime instance's steps (Pi re-creates extensions on every replacement), a journal
of host-level observations the invariants judge independently of the runtime's own guards
(switches with their pending input and the turns since the handoff began, takeover prompts,
usage at every reply end), and applies host actions.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping
from typing import Any

import attrs
from attrs import define, field, frozen

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management.effects import CmResult
from pictx_fsm.extensions.context_management.kit import actions as cm
from pictx_fsm.extensions.context_management.kit.boundary import LINES, line_value
from pictx_fsm.extensions.context_management.machines import load_machines
from pictx_fsm.extensions.context_management.runtime import ContextMemoryRuntime
from pictx_fsm.extensions.context_management.state import CmState, Flags
from pictx_fsm.host.events import AgentSettled, HookEvent, HostContext, ModelInfo
from pictx_fsm.host.extension import Reply
from pictx_fsm.hosts.model import (
    ModelSession,
    ScriptedProvider,
    Text,
)
from pictx_fsm.hosts.model.clock import ManualClock
from pictx_fsm.hosts.model.context_memory import ContextMemoryExtension
from pictx_fsm.hosts.model.errors import ModelHostError
from pictx_fsm.hosts.model.generator import ScriptedGenerator
from pictx_fsm.hosts.model.profiles import DEFAULT_HOST_PROFILE, host_profile
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.session.estimate import CharsCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing import actions as shared
from pictx_fsm.testing.canon import Canon, Unmergeable
from pictx_fsm.testing.coverage import summed_counts
from pictx_fsm.testing.host_world import ModelConfig, faux_model, faux_usage, host_settings
from pictx_fsm.testing.kit import Companion, companion_named, config_of
from pictx_fsm.testing.states import host_state

__all__ = [
    "AIM_RUNWAY_MS",
    "MODELS",
    "Journal",
    "StepRecord",
    "SwitchRecord",
    "World",
    "WorldConfig",
]

MODELS = ("faux-1", "faux-2")
AIM_RUNWAY_MS = 50
"""Time a round takes before its reply end (each clock reading moves time on by a tick): an
aim on a time line waits until this much before its moment, and the reply end itself is
observed at the moment (:meth:`_Extension.handle`)."""


@frozen(kw_only=True)
class WorldConfig(ModelConfig):
    """The reproducible parameters of one run."""

    context_window: int = 64_000
    max_tokens: int = 2_048
    reserve_tokens: int = 4_000
    keep_recent_tokens: int = 4_000
    automatic_compaction: bool = True
    no_background: bool = False
    no_auto_handoff: bool = False
    child: bool = False
    companions: tuple[str, ...] = ()
    """Extensions loaded first, as a user who installed them too would (by kit name:
    ``pi-context``); each keeps its own invariants on the shared host."""
    saved: bool = True
    """``False``: an ephemeral session without a file (M45, M64)."""
    host: str = DEFAULT_HOST_PROFILE.name
    """The model session's host profile: the Pi version it stands for (``pi-0.87``, ``pi-1.6``)."""
    usage: str = "estimate"
    """``faux``: the provider reports usage as pi-ai's faux model does (the real-Pi tests)."""

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> WorldConfig:
        obj = dict(obj)
        if "pi_context" in obj:  # a trace of 0.1: pi-context loaded or not
            obj["companions"] = ("pi-context",) if obj.pop("pi_context") else ()
        if isinstance(obj.get("companions"), list):
            obj["companions"] = tuple(obj["companions"])
        return config_of(cls, obj)

    @property
    def flags(self) -> Flags:
        return Flags(
            child=self.child, no_background=self.no_background, no_auto_handoff=self.no_auto_handoff
        )


@frozen(kw_only=True)
class StepRecord:
    """One runtime step as the invariants see it."""

    runtime: int
    event: ev.CmEvent
    before: CmState
    after: CmState
    result: CmResult
    ctx: ev.CmContext
    at: int
    """The world's action index."""
    tree: SessionTree
    leaf: str | None
    """The leaf when the step ran (the tree only grows, so its branch can be read later)."""
    size: int
    """How many entries the file had when the step ran."""
    rolled_back: bool = False


@frozen(kw_only=True)
class SwitchRecord:
    """A handoff switch the host carried out (or the return to a source)."""

    source: str
    target: str
    time: int
    pending_input: bool
    turns_since_begin: int
    mode: str
    returning: bool
    action: int
    source_entries: tuple[Any, ...] = ()
    """The source file's entries when the switch began (a source Pi never wrote reopens
    empty on a switch back to it)."""


@define
class Journal:
    steps: list[StepRecord] = field(factory=list)
    switches: list[SwitchRecord] = field(factory=list)
    takeovers: list[tuple[str, int]] = field(factory=list)
    """(session file, action) of every takeover prompt the host sent."""
    turn_starts: list[int] = field(factory=list)
    """Clock time of every ``turn_start`` the host emitted."""


class World:
    """The model session with pi-context-management (and pi-context when configured)."""

    def __init__(
        self,
        config: WorldConfig,
        system_message: Mapping[str, Any] | None = None,
    ) -> None:
        """``system_message``: the first request's system message as a real Pi sent it (the
        differential), instead of the model session's own."""
        from pictx_fsm.extensions.context_management.kit.faults import plant

        self.config = config
        self.clock = ManualClock()
        self.generator = ScriptedGenerator()
        self.machines = plant(config.fault) if config.fault else load_machines()
        self.journal = Journal()
        self.reply_end_at: int | None = None
        """When the next reply end is observed (an :class:`~.actions.AimAt` on a time line)."""
        self.actions: list[Any] = []
        self.applied: list[bool] = []
        self.audits: list[AuditLog] = []
        """Pi-context-management keeps no decision log per runtime: its steps are journalled
        (:attr:`journal`); the companions keep theirs."""
        self.companions: list[Companion] = [companion_named(n) for n in config.companions]
        self.extension = _Extension(
            world=self,
            clock=self.clock,
            generator=self.generator,
            flags=config.flags,
            machines=self.machines,
            saved=config.saved,
            seed=config.seed,
        )
        profile = host_profile(config.host)
        host = host_settings(
            config,
            profile,
            automatic=config.automatic_compaction,
            model=self.model_info(0),
            system_message=system_message,
        )
        extensions: list[Any] = [e for c in self.companions for e in c.extensions(self)]
        extensions.append(self.extension)
        self.session = ModelSession(
            extensions,
            provider=ScriptedProvider(
                counter=CharsCounter(),
                usage=faux_usage(profile, config.usage),
                arguments=lambda arguments: cm.resolve_sources(arguments, self.session.tree),
            ),
            settings=host,
            rng=random.Random(config.seed),
            clock=self.clock,
            counter=CharsCounter(),
        )
        self.extension.attach(self.session)

    def model_info(self, index: int) -> ModelInfo:
        return faux_model(self.config, MODELS[index % len(MODELS)])

    @property
    def runtimes(self) -> list[ContextMemoryRuntime]:
        return self.extension.runtimes

    # -- actions ------------------------------------------------------------------------------

    def apply(self, action: Any) -> bool:
        serial = len(self.actions)
        self.actions.append(action)
        try:
            applied = self._apply(action, serial)
        except ModelHostError:
            applied = False
        self.applied.append(applied)
        return applied

    def _apply(self, action: Any, serial: int) -> bool:
        session, ext = self.session, self.extension
        if isinstance(action, cm.CmTool):
            session.provider.push(
                cm.tool_reply(action, self.message_ids(), serial), cm.closing_text(serial)
            )
        elif isinstance(action, cm.Generate):
            self.generator.push(action.reply, repair=action.repair)
        elif isinstance(action, cm.Deliver):
            return ext.deliver()
        elif isinstance(action, cm.Turn):
            if not session.is_idle:
                return False
            session.prompt(shared.filler(f"turn-{serial}", action.chars))
            session.run_until_idle()
            for _ in range(40):
                if not ext.deliverable():
                    break
                ext.deliver()
                session.run_until_idle()
        elif isinstance(action, cm.Drain):
            delivered = [ext.deliver() for _ in range(action.limit) if ext.deliverable()]
            return any(delivered)
        elif isinstance(action, cm.Wait):
            ext.pass_time(action.ms)
        elif isinstance(action, cm.CtxMemory):
            session.command("ctx-memory", action.args)
        elif isinstance(action, cm.FailDisk):
            ext.fail_appends = action.on
            ext.files.fail_writes = action.on
        elif isinstance(action, cm.VetoSwitch):
            ext.veto_switches = action.on
        elif isinstance(action, cm.HideParent):
            ext.hide_parents = action.on
        elif isinstance(action, cm.FailTakeover):
            ext.fail_takeover = action.on
        elif isinstance(action, cm.FailCreate):
            ext.fail_create = action.on
        elif isinstance(action, cm.VetoReturn):
            ext.veto_returns = action.on
        elif isinstance(action, cm.NavigateTo):
            return self._navigate_to(action)
        elif isinstance(action, cm.ForeignMessage):
            if not session.is_idle:
                return False
            text = shared.filler(f"foreign-{serial}", action.chars)
            session.send_message("other-extension", text, display=True)
        elif isinstance(action, cm.SwitchModel):
            if not session.is_idle:
                return False
            session.set_model(self.model_info(action.index))
        elif isinstance(action, cm.Rest):
            self._rest(action.rounds)
        elif isinstance(action, cm.AimAt):
            return self._aim(action, serial)
        else:
            return shared.apply_action(session, action, serial)
        return True

    def _rest(self, rounds: int) -> None:
        """Settle, then deliver whatever the host owes, until nothing is left."""
        session, ext = self.session, self.extension
        for _ in range(rounds):
            session.run_until_idle()
            if not ext.deliverable():
                return
            while ext.deliverable():
                ext.deliver()

    def _aim(self, action: cm.AimAt, serial: int) -> bool:
        """:class:`~.actions.AimAt`: a token line by the next reply's reported usage, a time
        line by letting time pass (``False`` for a line the policy does not compare, or a
        moment already past)."""
        line = next((line for line in LINES if line.name == action.line), None)
        if line is None or line.unit == "bytes":
            return False
        target = line_value(line, self.config.context_window) + action.offset
        if line.unit == "tokens":
            reply = Text(text=shared.filler(f"aim-{serial}", 40), context=max(0, int(target)))
            self.session.provider.push(reply)
            return True
        moments = sorted({step.ctx.now for step in self.journal.steps}, reverse=True)
        if not moments:
            return False
        moment = moments[action.back % len(moments)] + int(target)
        if moment <= self.clock.peek() + AIM_RUNWAY_MS:
            return False
        self.extension.pass_time(moment - self.clock.peek() - AIM_RUNWAY_MS)
        self.reply_end_at = moment
        return True

    def _navigate_to(self, action: cm.NavigateTo) -> bool:
        from pictx_fsm.extensions.context_management.records import NOTES_TYPE
        from pictx_fsm.session.entries import CompactionEntry, CustomEntry

        session = self.session
        if not session.is_idle:
            return False
        entries = list(session.tree.entries)
        found: list[Any]
        if action.mark == "first_user":
            found = [
                e for e in entries if isinstance(e, MessageEntry) and e.message.role == "user"
            ][:1]
        elif action.mark in ("notes", "first_notes"):
            notes = [
                e for e in entries if isinstance(e, CustomEntry) and e.custom_type == NOTES_TYPE
            ]
            found = notes[:1] if action.mark == "first_notes" else notes[-1:]
        else:
            found = [e for e in entries if isinstance(e, CompactionEntry)][-1:]
        if not found or found[0].id == session.leaf_id:
            return False
        session.navigate(found[0].id, summarize=action.summarize)
        return True

    def message_ids(self) -> dict[str, list[str]]:
        ids: dict[str, list[str]] = {"user": [], "assistant": []}
        for entry in self.session.tree.branch():
            if isinstance(entry, MessageEntry) and entry.message.role in ids:
                ids[entry.message.role].append(entry.id)
        return ids

    # -- what replay compares and coverage counts -----------------------------------------------

    def transition_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for record in self.journal.steps:
            for transition in record.result.fired:
                counts[transition] = counts.get(transition, 0) + 1
        return counts

    def companion_counts(self) -> dict[str, int]:
        """The transitions the companions' machines fired."""
        return summed_counts(companion.transition_counts() for companion in self.companions)

    def release(self) -> None:
        """Nothing outlives a world."""

    def now(self) -> int:
        return self.clock.peek()

    def canonical_state(self, canon: Canon) -> Hashable:
        """The model host's observable state, the runtime's frozen state, what the adapter
        holds (deliveries owed, switched failures, the takeover in waiting, its files), the
        generator's script (:mod:`pictx_fsm.testing.states`). The journal is history: what
        the invariants learnt from it is their residual."""
        if self.companions:
            raise Unmergeable("a companion's state is not described")
        ext = self.extension
        files = ext.files
        return (
            host_state(self.session, canon),
            canon(ext.runtimes[-1].state if ext.runtimes else None),
            canon(ext.adapter_state()),
            canon(sorted((path, bytes(data)) for path, data in files.data.items())),
            files.fail_writes,
            canon(tuple(self.generator.script)),
        )

    def decisions(self) -> list[dict[str, Any]]:
        return [
            {"runtime": r.runtime, "event": type(r.event).__name__, "fired": list(r.result.fired)}
            for r in self.journal.steps
        ]


@define
class _Extension(ContextMemoryExtension):
    """The adapter, journalling every step and every host-level handoff operation."""

    world: World | None = None

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        """A reply end an aim waits for is observed at its moment (the round's own ticks
        before it are part of the wait)."""
        world = self.world
        if isinstance(event, AgentSettled) and world is not None and world.reply_end_at:
            self.clock.advance_to(world.reply_end_at)
            world.reply_end_at = None
        return super().handle(event, ctx)

    def bind(self, tree: SessionTree) -> None:
        super().bind(tree)
        if self.runtimes and self.world is not None:
            index = len(self.runtimes) - 1
            runtime = self.runtimes[-1]
            previous = {"state": runtime.state}

            def on_step(event: ev.CmEvent, state: CmState, result: CmResult) -> None:
                world = self.world
                assert world is not None
                ctx = runtime.host.context()
                world.journal.steps.append(
                    StepRecord(
                        runtime=index,
                        event=event,
                        before=previous["state"],
                        after=state,
                        result=result,
                        ctx=ctx,
                        at=len(world.actions) - 1,
                        tree=runtime.tree,
                        leaf=runtime.tree.leaf_id,
                        size=len(runtime.tree.entries),
                    )
                )
                previous["state"] = state
                if isinstance(event, ev.TurnStarted):
                    world.journal.turn_starts.append(ctx.now)

            def on_rollback() -> None:
                world = self.world
                assert world is not None
                for position in range(len(world.journal.steps) - 1, -1, -1):
                    record = world.journal.steps[position]
                    if record.runtime == index:
                        world.journal.steps[position] = attrs.evolve(record, rolled_back=True)
                        previous["state"] = record.before
                        break

            runtime.on_step = on_step
            runtime.on_rollback = on_rollback

    def switch(self, path: str) -> bool:
        world = self.world
        session = self._session()
        source = session.session_file
        state = self.runtime.state
        run = state.handoff
        pending = session.pending_messages > 0
        position = len(world.journal.switches) if world is not None else 0
        entries = tuple(session.tree.entries)
        switched = super().switch(path)
        if switched and world is not None:
            receipt_side = run is None
            mode = "return" if run is None else run.mode
            world.journal.switches.insert(
                position,
                SwitchRecord(
                    source=source,
                    target=path,
                    time=self.clock.peek(),
                    pending_input=pending,
                    turns_since_begin=0 if run is None else state.turns - run.turns,
                    mode=mode,
                    returning=receipt_side,
                    action=len(world.actions) - 1,
                    source_entries=entries,
                ),
            )
        return switched

    def _flush_takeover(self) -> None:
        if self._takeover is not None and self.world is not None and self.session is not None:
            self.world.journal.takeovers.append(
                (self.session.session_file, len(self.world.actions) - 1)
            )
        super()._flush_takeover()
