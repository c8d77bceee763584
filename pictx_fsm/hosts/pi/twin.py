"""The bridge extension's twin for the model session: the lifecycle while its runtime is up,
the fail-closed projection while it is not.

``pictx-bridge.mjs`` survives a dead, broken or missing Python side by following the
``bridge_connection`` machine and answering provider requests with its own projection. The
model session cannot run JavaScript, so this module does the same in Python — the same
machine (:mod:`.connection`), the same projection (:mod:`.failclosed`, proven equal to the JS
one), the same notices and the same message to the model when a reset request is lost — and
lets a generated run kill its runtime (:meth:`BridgeTwin.kill`). ``pictx-fsm verify``'s
invariants, "no erased history after a marker" first, then hold for the degraded mode too.

Like the bridge, the twin carries out its own effects (notices, the lost-reset message, what
the resynchronised runtime answered) at once through the host's API (:meth:`attach`), before
the hook it is handling goes on: an idle ``pi.sendMessage`` is in the session before the hook
reaches the new runtime, so a boot repaired by the resync is not repaired again.

It holds the leases on quiet hooks the same way (:mod:`.lease`): granted after a hook the
runtime answered, it answers ``context``, ``context_with_system``, ``turn_end`` and
``agent_before_settle`` itself while the bound of the window's estimate stays under the limit,
and the runtime still decides each; every disagreement is recorded (:attr:`disagreements`,
an invariant of ``pictx-fsm verify``), told, and ends the leases, as on the real bridge.

One simplification: the real bridge waits a back-off after a fault before restarting; the
twin restarts at the next hook (the model session has no wall clock to wait on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Protocol

import attrs

from pictx_fsm.extensions.pi_context.adapter import LIFECYCLE_HOOKS, LifecycleExtension
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import (
    MARKER_TYPE,
    NOTICE_MISSING_BOOT,
    PI_CONTEXT_COMMAND,
    WIPE_STATUS_REQUESTED,
)
from pictx_fsm.host.effects import (
    AbortRun,
    BoundaryResult,
    CancelResult,
    HookResult,
    HostEffect,
    MessagesResult,
    Notify,
    SendMessage,
    ToolResult,
    TreeSummaryResult,
)
from pictx_fsm.host.events import (
    AgentBeforeSettle,
    Command,
    ContextWithSystem,
    HookEvent,
    HostContext,
    SessionBeforeCompact,
    SessionBeforeTree,
    SessionStart,
    TurnEnd,
)
from pictx_fsm.host.extension import (
    CommandHandler,
    Reply,
    ToolHandler,
    ToolInvocation,
    ToolOutput,
)
from pictx_fsm.hosts.pi import lease, texts
from pictx_fsm.hosts.pi.connection import Connection
from pictx_fsm.hosts.pi.failclosed import ScannedWindow, fail_closed, marker_on_path, scan_window
from pictx_fsm.hosts.pi.lease_machine import LeaseFollower
from pictx_fsm.hosts.pi.wire import PIPELINED_HOOKS
from pictx_fsm.session.tree import SessionTree

__all__ = ["KILLED", "BridgeTwin", "HostApi"]

KILLED: Final = texts.FAULT_EXITED.format(code="killed")


class HostApi(Protocol):
    """Pi's API as an extension calls it in the middle of a handler (``pi.sendMessage``,
    ``ctx.ui.notify``, ``ctx.abort``, ``ctx.isIdle()``): a
    :class:`~pictx_fsm.hosts.model.ModelSession` is one."""

    def apply_effects(self, effects: Sequence[HostEffect], source: str) -> None: ...

    @property
    def is_idle(self) -> bool: ...


class BridgeTwin:
    """pi-context as the bridge runs it, around a :class:`LifecycleExtension`."""

    name = "pi-context"
    hooks = LIFECYCLE_HOOKS

    def __init__(self, inner: LifecycleExtension) -> None:
        self.inner = inner
        self.connection = Connection()
        self.connections: list[Connection] = []
        """Every connection (one per bind, as Pi re-runs the factory), oldest first."""
        self.tree: SessionTree | None = None
        self.alive = False
        self.broken = False
        self.reset_pending = False
        self.toggle: str | None = None
        self.queued: list[HostEffect] = []
        """Effects produced before :meth:`attach`, returned with the next reply."""
        self.host: HostApi | None = None
        self.source = "bind"
        """The hook, tool or command being handled (where an effect applied at once comes from)."""
        self.told: set[str] = set()
        self.held: lease.HeldLease | None = None
        self.leasing = LeaseFollower()
        """The ``bridge_lease`` machine, as the extension follows it."""
        self.disagreements: list[str] = []
        """Leased answers the runtime decided otherwise (none, if the lease is sound)."""
        self.leased: list[str] = []
        """Every hook answered under a lease, in order."""

    # -- what the world does ---------------------------------------------------------------------

    def attach(self, host: HostApi) -> None:
        """Give the twin the host's API, so that its own effects apply at once, as the
        bridge's do (:class:`~pictx_fsm.extensions.pi_context.kit.world.World` attaches its
        session)."""
        self.host = host
        queued = tuple(self.queued)
        self.queued.clear()
        self._carry_out(queued)

    def kill(self, *, permanent: bool = False) -> None:
        """The runtime dies; with ``permanent``, no runtime can be started again."""
        self.alive = False
        self.broken = self.broken or permanent

    # -- Extension -------------------------------------------------------------------------------

    @property
    def runtimes(self) -> list[object]:
        return list(self.inner.runtimes)

    @property
    def tools(self) -> Mapping[str, ToolHandler]:
        return {name: self._tool(name, handler) for name, handler in self.inner.tools.items()}

    @property
    def commands(self) -> Mapping[str, CommandHandler]:
        return {name: self._command(name, h) for name, h in self.inner.commands.items()}

    @property
    def sequential_tools(self) -> frozenset[str]:
        return self.inner.sequential_tools

    @property
    def idle_commands(self) -> frozenset[str]:
        return self.inner.idle_commands

    def bind(self, tree: SessionTree) -> None:
        """A new factory run: a new connection, started on first use as the bridge does."""
        self.tree = tree
        self.connection = Connection()
        self.connections.append(self.connection)
        self.alive = False
        self.reset_pending = False
        self.told = {key for key in self.told if not key.startswith("boot:")}
        self.queued.clear()
        self._void()
        self.leasing.fire("connect")

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        hook = type(event).HOOK
        self.source = hook
        if hook in ("session_start", "session_tree"):
            self.told = {key for key in self.told if not key.startswith("boot:")}
        if self._connect(ctx):
            leased = self._leased(event, ctx)
            reply = self.inner.handle(event, ctx)
            self._track(hook, reply)
            if leased is not None:
                reply = self._checked(hook, leased, reply)
            elif hook not in lease.NEUTRAL_HOOKS:
                self._hold(hook, ctx, reply)
        else:
            self._void()
            reply = self._fallback(event)
        if hook == "session_shutdown":
            self._fire("shutdown")
        return self._flush(hook, reply)

    # -- the connection ----------------------------------------------------------------------------

    def _connect(self, ctx: HostContext) -> bool:
        """Follow the machine up to this request: a dead runtime is a fault, a restart is
        due at the next request (no back-off here); ``True`` when the runtime answers."""
        state = self.connection.state
        if state == "ready" and not self.alive:
            self._fire("fault")
        elif state == "stopped":
            self._fire("start", ctx=ctx)
        elif state == "restarting":
            self._fire("retry", ctx=ctx)
        return self.connection.state == "ready"

    def _fire(self, event: str, *, ctx: HostContext | None = None) -> None:
        transition = self.connection.fire(event)
        for action in transition.actions:
            if action == "spawn":
                self._spawn(ctx or HostContext())
            elif action == "announce_fault":
                self._tell(texts.NOTICE_FAULT.format(fault=KILLED, lost=self._lose()))
            elif action == "report_loss":
                lost = self._lose()
                if lost:
                    self._tell(texts.NOTICE_LOSS.format(fault=KILLED, lost=lost))
            elif action == "give_up":
                self._tell(texts.NOTICE_GIVE_UP.format(fault=KILLED, lost=self._lose()), "error")
            elif action == "resync":
                self._resync(ctx or HostContext())
            elif action in ("stop_server", "close"):
                self.alive = False

    def _spawn(self, ctx: HostContext) -> None:
        if self.broken:
            self._fire("fault")
            return
        assert self.tree is not None
        self.inner.bind(self.tree)
        self._void()
        self.leasing.fire("connect")  # a new server: unleased, whatever the last one said
        self.alive = True
        self._fire("handshake", ctx=ctx)

    def _resync(self, ctx: HostContext) -> None:
        """The restarted runtime rebuilds the lifecycle as a reload would (R63–R66), told
        whether a run is under way: the bridge sends ``ctx.isIdle()`` with every request
        (``requests.mjs``), the resync included, and a repair asked for mid-run is held."""
        if self.host is not None:
            ctx = attrs.evolve(ctx, idle=self.host.is_idle)
        if self.toggle == "off":
            self.inner.handle(Command(name=PI_CONTEXT_COMMAND, args="off"), ctx)
        reply = self.inner.handle(SessionStart(reason="reload"), ctx)
        if isinstance(reply, HookResult):
            self._carry_out(reply.effects)

    def _lose(self) -> str:
        """A ``rollover_requested`` that never reached a boundary: the model is told through
        its next context (a hidden message, held to the turn's end while a run streams)."""
        if not self.reset_pending:
            return ""
        self.reset_pending = False
        notice = SendMessage(
            custom_type=texts.BRIDGE_NOTICE_TYPE,
            content=texts.MODEL_LOST_RESET,
            display=False,
        )
        self._carry_out((notice,))
        return texts.LOST_RESET

    def _unavailable(self) -> str:
        state = self.connection.state
        return f"degraded: {KILLED}" if state == "degraded" else state

    # -- the lease on quiet hooks ---------------------------------------------------------------

    def _hold(self, hook: str, ctx: HostContext, reply: Reply) -> None:
        """After a hook the runtime answered as an awaited request: the lease it grants (a
        pipelined one, ``model_select``, grants none and voids it)."""
        self._void()
        runtime = self.inner.runtime
        if self.leasing.state == "broken" or hook in PIPELINED_HOOKS:
            return
        if not isinstance(runtime, LifecycleRuntime):
            return
        if isinstance(reply, HookResult) and reply.effects:
            return
        granted = lease.grant(runtime, ctx, None, live=True)
        if granted is not None and self.tree is not None:
            self.leasing.fire("grant")
            self.held = lease.HeldLease(granted, self.tree.leaf_id, runtime.policy(ctx), ctx.model)

    def _leased(self, event: HookEvent, ctx: HostContext) -> HookResult | None:
        """The answer under the held lease, or ``None`` (the hook is requested; a hook the
        lease does not cover voids it, the observational ones leave it be)."""
        held, hook = self.held, type(event).HOOK
        if held is None or hook in lease.NEUTRAL_HOOKS:
            return None
        answer = None
        if hook in lease.LEASED_HOOKS and self._holds(held, ctx):
            answer = self._answer(event, held, ctx)
        if answer is None:
            self._void()
        else:
            self.leasing.fire("answer")
        return answer

    def _void(self) -> None:
        if self.held is not None:
            self.leasing.fire("void")
        self.held = None

    def _holds(self, held: lease.HeldLease, ctx: HostContext) -> bool:
        runtime = self.inner.runtime
        if ctx.model != held.model or not isinstance(runtime, LifecycleRuntime):
            return False
        if runtime.policy(ctx) != held.policy or self.tree is None:
            return False
        entries = []
        for node in self.tree.leaf.ancestors() if self.tree.leaf is not None else ():
            if node.id == held.leaf:
                break
            entries.append(node.entry.to_json())
        else:
            if held.leaf is not None:
                return False
        return held.observe(entries[::-1], self.tree.leaf_id)

    def _answer(
        self, event: HookEvent, held: lease.HeldLease, ctx: HostContext
    ) -> HookResult | None:
        """What the extension answers itself (lease.mjs's ``answer``)."""
        hook = type(event).HOOK
        if isinstance(event, ContextWithSystem):
            window = ScannedWindow(window_id=held.lease.window_id, marker_id=held.lease.marker_id)
            projected = fail_closed(event.messages, window)
            if projected.missing_boot:
                return None
            return HookResult(hook=hook, value=MessagesResult(messages=projected.messages))
        if isinstance(event, TurnEnd):
            plain = lease.plain_turn(event.message, event.outcome, len(event.entries), ctx)
            return HookResult(hook=hook) if plain else None
        if isinstance(event, AgentBeforeSettle) and ctx.signal_aborted:
            return None
        return HookResult(hook=hook)

    def _checked(self, hook: str, answer: HookResult, reply: Reply) -> HookResult:
        """The runtime decided a leased hook: the extension's answer stands (Pi has it), the
        runtime's notices are shown, and a disagreement ends the leases, told once."""
        runtime = self.inner.runtime
        decided = reply if isinstance(reply, HookResult) else HookResult(hook=hook)
        self.leased.append(hook)
        detail = None
        if isinstance(runtime, LifecycleRuntime):
            detail = lease.decided_otherwise(answer, decided, runtime.state)
        notices = [e for e in decided.effects if isinstance(e, Notify)]
        if detail is not None:
            self.disagreements.append(f"{hook}: {detail}")
            self.leasing.fire("break")
            self.held = None
            message = texts.NOTICE_LEASE_BROKEN.format(detail=detail)
            notices.append(Notify(message=message, level="error"))
        return HookResult(hook=hook, value=answer.value, effects=tuple(notices))

    # -- answers ---------------------------------------------------------------------------------

    def _track(self, hook: str, reply: Reply) -> None:
        if not isinstance(reply, HookResult):
            return
        value = reply.value
        if isinstance(value, ToolResult) and hook == "tool":
            status = value.payload.get("status") if isinstance(value.payload, dict) else None
            self.reset_pending = self.reset_pending or status == WIPE_STATUS_REQUESTED
        elif isinstance(value, BoundaryResult) and any(
            getattr(d, "custom_type", None) == MARKER_TYPE for d in value.entries
        ):
            self.reset_pending = False
        if hook == "agent_settled":
            self.reset_pending = False

    def _fallback(self, event: HookEvent) -> Reply:
        """What the bridge answers alone: nothing, except where history could reach the
        provider: the request (R67–R69), a native compaction or a branch summary (R62, R75)."""
        assert self.tree is not None
        tree = self.tree
        if isinstance(event, SessionBeforeCompact):
            marked = marker_on_path(tree, tree.leaf_id)
            return HookResult(hook=event.HOOK, value=CancelResult()) if marked else None
        if isinstance(event, SessionBeforeTree):
            crosses = marker_on_path(tree, tree.leaf_id) or marker_on_path(tree, event.target_id)
            if event.user_wants_summary and crosses:
                return HookResult(hook=event.HOOK, value=TreeSummaryResult(summary=""))
            return None
        if not isinstance(event, ContextWithSystem):
            return None
        window = scan_window(self.tree)
        projected = fail_closed(event.messages, window)
        effects: list[HostEffect] = []
        if projected.missing_boot:
            key = f"boot:{window.window_id}"
            if key not in self.told:
                self.told.add(key)
                message = NOTICE_MISSING_BOOT.format(window_id=window.window_id)
                effects.append(Notify(message=message, level="error"))
            effects.append(AbortRun())
        return HookResult(
            hook=event.HOOK, value=MessagesResult(messages=projected.messages), effects=effects
        )

    def _flush(self, hook: str, reply: Reply) -> Reply:
        if not self.queued:
            return reply
        queued = tuple(self.queued)
        self.queued.clear()
        if isinstance(reply, HookResult):
            return HookResult(hook=reply.hook, value=reply.value, effects=(*queued, *reply.effects))
        if reply is None:
            return HookResult(hook=hook, value=None, effects=queued)
        self.queued.extend(queued)  # a supplied compaction carries no effects: next time
        return reply

    def _tell(self, message: str, level: str = "warning") -> None:
        self._carry_out((Notify(message=message, level=level),))  # type: ignore[arg-type]

    def _carry_out(self, effects: Sequence[HostEffect]) -> None:
        """What the bridge does through Pi's API at once; held for the next reply only
        while no host is attached."""
        if self.host is None:
            self.queued.extend(effects)
        elif effects:
            self.host.apply_effects(effects, self.source)

    def _tool(self, name: str, handler: ToolHandler) -> ToolHandler:
        def run(call: ToolInvocation, ctx: HostContext) -> HookResult | ToolOutput:
            self.source = f"tool:{name}"
            self._void()
            if not self._connect(ctx):
                text = texts.TOOL_UNAVAILABLE.format(state=self._unavailable(), tool=name)
                return ToolOutput(text=text, is_error=True)
            reply = handler(call, ctx)
            if not isinstance(reply, HookResult):
                return reply
            self._track("tool", reply)
            flushed = self._flush("tool", reply)
            assert isinstance(flushed, HookResult)
            return flushed

        return run

    def _command(self, name: str, handler: CommandHandler) -> CommandHandler:
        def run(args: str, ctx: HostContext) -> HookResult | None:
            self.source = f"command:{name}"
            self._void()
            if self._connect(ctx):
                reply = handler(args, ctx)
                if args.strip().lower() in ("on", "off"):
                    self.toggle = args.strip().lower()
                return self._flush("command", reply)  # type: ignore[return-value]
            if name == PI_CONTEXT_COMMAND:
                text = texts.NOTICE_DEGRADED_STATUS.format(
                    state=self.connection.state, reason=KILLED, pi_version=ctx.pi_version
                )
                self._tell(text, "info")
            else:
                unavailable = self._unavailable()
                self._tell(texts.TOOL_UNAVAILABLE.format(state=unavailable, tool=f"/{name}"))
            return self._flush("command", None)  # type: ignore[return-value]

        return run
