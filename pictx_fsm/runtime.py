"""The lifecycle runtime: host hook events in → machine events → effects out.

One :class:`LifecycleRuntime` per host session (Pi re-runs an extension's factory on every
session replacement, so a fork, resume or reload gets a fresh runtime too). For each hook
event the runtime

1. looks up which machine events the hook raises (:data:`HOOK_EVENTS`, in pi-context's
   handler registration order),
2. steps each machine with lazily computed facts (:mod:`pictx_fsm.facts`),
3. carries out the intents the fired actions returned (drafts, notices, sends, dispatches to
   other machines), and
4. writes one audit record (:mod:`pictx_fsm.audit`) and returns a :class:`HookResult`.

It never talks to the host: the session tree is read, never written; effects are data.
Randomness (window ids) and time (message timestamps) are injected, so a trace replays exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import define, field

from pictx_fsm import intents as it
from pictx_fsm import policy
from pictx_fsm.audit import AuditLog, MachineStepRecord
from pictx_fsm.effects import (
    AbortRun,
    AppendEntry,
    BoundaryResult,
    CancelResult,
    CustomDraft,
    CustomMessageDraft,
    Draft,
    HookResult,
    HookValue,
    HostEffect,
    MessagesResult,
    Notify,
    SendMessage,
    ToolResult,
    TreeSummaryResult,
    compose_entries,
)
from pictx_fsm.errors import UsageError
from pictx_fsm.facts import FactEnv, Facts
from pictx_fsm.hooks import (
    AgentBeforeSettle,
    Command,
    Context,
    ContextWithSystem,
    HookEvent,
    HostContext,
    ToolCall,
    TurnEnd,
)
from pictx_fsm.lifecycle import Lifecycle, load_lifecycle
from pictx_fsm.memory import Memory, Staged
from pictx_fsm.protocol import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    DEFAULT_PROFILE,
    GET_CONTEXT_REMAINING_TOOL,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    NOTICE_MEMORY_CLEARED,
    NOTICE_RESET_BUILD_FAILED,
    NOTICE_TOGGLE_STATUS,
    PI_CONTEXT_COMMAND,
    UNBUNDLED_BUILD_LABEL,
    WARNING_TYPE,
    WIPE_MEMORY_COMMAND,
    WIPE_MEMORY_TOOL,
    Profile,
    Texts,
)
from pictx_fsm.resets import BootWriter
from pictx_fsm.session.estimate import TiktokenCounter, TokenCounter
from pictx_fsm.session.reset_projection import project_reset
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import UsageIndex
from pictx_fsm.session.windows import mint_window_id, uuid_draws

Clock = Callable[[], int]
"""Milliseconds since the epoch (message timestamps)."""

SettingsFactory = Callable[[HostContext], policy.SettingsSource]
"""R40's file-backed authority: a settings source built per read from the hook's ``ctx``
(``cwd`` and ``isProjectTrusted()``), e.g. :func:`pi_file_settings`."""


def pi_file_settings(agent_dir: Path, *, strict: bool = False) -> SettingsFactory:
    """R40: Pi's ``settings.json`` files, read per decision from ``ctx.cwd`` and the agent dir,
    the project scope only when ``ctx`` says the project is trusted."""

    def source(ctx: HostContext) -> policy.SettingsSource:
        return policy.FileSettingsSource(
            agent_dir=agent_dir,
            cwd=Path(ctx.cwd),
            project_trusted=ctx.project_trusted,
            strict=strict,
        )

    return source


# hook -> the machine events it raises, in pi-context's handler registration order (§6).
HOOK_EVENTS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "turn_end": (("budget", "turn_end"), ("reset_control", "turn_end")),
    "agent_before_settle": (("reset_control", "before_settle"),),
    "agent_end": (("reset_control", "agent_end"),),
    "agent_settled": (("reset_control", "settled"), ("budget", "settled")),
    "turn_start": (("reset_control", "turn_start"), ("budget", "turn_start")),
    "session_start": (
        ("budget", "clear"),
        ("projection", "start"),
        ("reset_control", "start"),
        ("boot_repair", "repair"),
        ("reset_control", "clear"),
    ),
    "session_tree": (
        ("budget", "clear"),
        ("projection", "tree"),
        ("reset_control", "tree"),
        ("boot_repair", "repair"),
        ("reset_control", "clear"),
    ),
    "session_shutdown": (
        ("budget", "clear"),
        ("reset_control", "clear"),
        ("reset_control", "shutdown"),
    ),
    "model_select": (("budget", "clear"),),
    "session_before_compact": (("toggle", "compact"),),
    "session_before_tree": (("toggle", "tree_summary"),),
    "context": (("budget", "context"),),
    "context_with_system": (("projection", "project"),),
}
TOOL_EVENTS: Mapping[str, tuple[str, str]] = {
    WIPE_MEMORY_TOOL: ("reset_control", "request"),
    GET_CONTEXT_REMAINING_TOOL: ("budget", "query_remaining"),
}
# R55: these hooks are transitions for the settings cache (invalidate, forget warnings).
POLICY_TRANSITIONS = frozenset(
    {"session_start", "session_tree", "model_select", "session_shutdown"}
)


TOGGLE_ARGUMENTS: tuple[str, ...] = ("on", "off")


def toggle_completions(prefix: str) -> tuple[str, ...]:
    """R60: ``/pi-context`` argument completions, ``on`` and ``off`` filtered by prefix."""
    return tuple(arg for arg in TOGGLE_ARGUMENTS if arg.startswith(prefix))


def toggle_event(args: str) -> str:
    """R60: ``/pi-context`` argument (trimmed, lowercased) → toggle machine event."""
    arg = args.strip().lower()
    return {"on": "switch_on", "off": "switch_off", "": "status"}.get(arg, "invalid")


@define
class _Turn:
    """What one hook event accumulates while its machine events are carried out."""

    hook: str
    event: HookEvent
    ctx: HostContext
    reminders: list[Draft] = field(factory=list)
    reset: list[Draft] = field(factory=list)
    continue_: bool = False
    value: HookValue | None = None
    effects: list[HostEffect] = field(factory=list)
    queue: list[tuple[str, str, Mapping[str, Any]]] = field(factory=list)
    planned_commits: set[str] = field(factory=set)
    steps: list[MachineStepRecord] = field(factory=list)
    build_failed: bool = False
    report_status: bool = False
    active_before: bool = True


class LifecycleRuntime:
    """pi-context 0.25's lifecycle for one host session, driven by hook events."""

    def __init__(
        self,
        tree: SessionTree,
        *,
        profile: Profile | str = DEFAULT_PROFILE,
        texts: Texts | None = None,
        settings: policy.SettingsSource | SettingsFactory | None = None,
        cache_policy: bool | None = None,
        boot_writer: BootWriter | None = None,
        usage: UsageIndex | None = None,
        counter: TokenCounter | None = None,
        rng: random.Random | None = None,
        clock: Clock | None = None,
        lifecycle: Lifecycle | None = None,
        audit: AuditLog | None = None,
        build_label: str = UNBUNDLED_BUILD_LABEL,
    ) -> None:
        self.tree = tree
        self.profile = Profile.parse(profile)
        self.texts = texts or Texts.for_profile(self.profile)
        self.settings = settings or policy.StaticSettingsSource(global_settings={})
        # R40: an injected settings manager is read live on every decision; the file-backed
        # default (a factory over ctx) is cached until a transition (R55).
        from_ctx = not hasattr(self.settings, "read")
        self.cache_policy = from_ctx if cache_policy is None else cache_policy
        self.boot_writer = boot_writer or BootWriter(texts=self.texts)
        self.usage = usage if usage is not None else UsageIndex(tree, counter or TiktokenCounter())
        self.rng = rng or random.Random(0)
        self.clock = clock or (lambda: 0)
        self.lifecycle = lifecycle or load_lifecycle()
        self.audit = audit
        self.build_label = build_label
        self.memory = Memory(configs=self.lifecycle.initial_configs())

    # -- public ------------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self.memory.state_of("toggle", "toggle") == "on"

    def configuration(self) -> Mapping[str, Mapping[str, str]]:
        return {name: dict(config) for name, config in self.memory.configs.items()}

    def handle(self, event: HookEvent, ctx: HostContext | None = None) -> HookResult:
        """Handle one hook event and return the handler's value and side effects.

        A hook is all or nothing: when a guard, an action or the carrying out of an intent
        raises (an illegal event, a notes failure outside a running reset), the error
        propagates and every machine keeps the configuration it had before the hook; no
        audit record is written."""
        saved = self.memory.snapshot()
        try:
            return self._handle(event, ctx or HostContext())
        except BaseException:
            self.memory.restore(saved)
            raise

    def _handle(self, event: HookEvent, ctx: HostContext) -> HookResult:
        turn = _Turn(hook=type(event).HOOK, event=event, ctx=ctx)
        turn.active_before = self.memory.state_of("reset_control", "activity") == "active"
        if turn.hook in POLICY_TRANSITIONS:
            self.memory.policy_cache = None
            self.memory.notified_warnings.clear()
        for machine, machine_event in self._machine_events(event):
            self._raise(turn, machine, machine_event, {})
            if turn.hook == "session_start" and machine == "budget":
                self._policy(turn)  # R55: session_start resolves the policy at once
        self._drain(turn)
        result = self._finish(turn)
        if self.audit is not None:
            self.audit.record(
                hook=turn.hook,
                event=event,
                ctx=ctx,
                steps=turn.steps,
                result=result,
                profile=self.profile.value,
                fingerprint=self.lifecycle.fingerprint,
            )
        return result

    # -- machine events --------------------------------------------------------------------

    def _machine_events(self, event: HookEvent) -> Sequence[tuple[str, str]]:
        if isinstance(event, ToolCall):
            if event.name not in TOOL_EVENTS:
                raise UsageError(f"unknown lifecycle tool {event.name!r}")
            return (TOOL_EVENTS[event.name],)
        if isinstance(event, Command):
            if event.name == WIPE_MEMORY_COMMAND:
                return (("reset_control", "wipe"),)
            if event.name == PI_CONTEXT_COMMAND:
                return (("toggle", toggle_event(event.args)),)
            raise UsageError(f"unknown lifecycle command /{event.name}")
        return HOOK_EVENTS[type(event).HOOK]

    def _raise(self, turn: _Turn, machine: str, event: str, extras: Mapping[str, Any]) -> None:
        facts = Facts(self._env(turn, extras))
        compiled = self.lifecycle.machines[machine]
        before = self.memory.configs[machine]
        step = compiled.step(before, event, facts)
        self.memory.configs[machine] = step.after
        turn.steps.append(MachineStepRecord.of(machine, event, step, facts.used()))
        for outcome in step.effects:
            self._carry_out(turn, outcome, facts)
        self._sync(machine)

    def _drain(self, turn: _Turn) -> None:
        while turn.queue:
            machine, event, extras = turn.queue.pop(0)
            self._raise(turn, machine, event, extras)

    def _env(self, turn: _Turn, extras: Mapping[str, Any]) -> FactEnv:
        return FactEnv(
            event=turn.event,
            ctx=turn.ctx,
            tree=self.tree,
            memory=self.memory,
            profile=self.profile,
            resolve_policy=lambda: self._policy(turn),
            window_usage=lambda: self._window_usage(turn.ctx),
            extras=extras,
            planned_commits=frozenset(turn.planned_commits),
        )

    def _sync(self, machine: str) -> None:
        """Data held by a state lives only as long as the state (no stale staging)."""
        config = self.memory.configs[machine]
        if machine == "budget":
            for kind, region in ((GUIDANCE_TYPE, "guidance"), (WARNING_TYPE, "warning")):
                if config[region] != f"{region}_staged":
                    self.memory.staged[kind] = None
                if config[region] != f"{region}_committed":
                    self.memory.notices[kind] = None
        elif machine == "reset_control" and config["notice"] == "quiet":
            self.memory.pending_resets.clear()

    # -- policy and usage -------------------------------------------------------------------

    def _policy(self, turn: _Turn) -> policy.Policy:
        """R40/R45/R46: resolve (or reuse) the policy and notify each warning once."""
        cached = self.memory.policy_cache
        if cached is not None and self.cache_policy:
            return cached
        resolved = policy.resolve_policy(self._settings_source(turn.ctx), _model_ref(turn.ctx))
        for warning in resolved.warnings:
            if warning not in self.memory.notified_warnings:
                self.memory.notified_warnings.add(warning)
                turn.effects.append(Notify(message=warning, level="warning"))
        if self.cache_policy:
            self.memory.policy_cache = resolved
        return resolved

    def _settings_source(self, ctx: HostContext) -> policy.SettingsSource:
        settings = self.settings
        if hasattr(settings, "read"):
            return settings  # type: ignore[return-value]
        return settings(ctx)  # type: ignore[operator, no-any-return]

    def _window_usage(self, ctx: HostContext) -> policy.Usage | None:
        """R47/R48: root windows use the host's usage; marker windows the projected window."""
        window = self.tree.current_window
        if window.is_root:
            if ctx.usage is None:
                return None
            return policy.Usage(tokens=ctx.usage.tokens, context_window=ctx.usage.context_window)
        context_window = ctx.model.context_window if ctx.model else None
        if context_window is None and ctx.usage is not None:
            context_window = ctx.usage.context_window
        if not context_window:
            return None
        tokens = self.usage.active_window_tokens()
        if tokens is None:
            return None
        return policy.Usage(tokens=tokens, context_window=context_window)

    # -- intents ------------------------------------------------------------------------------

    def _carry_out(self, turn: _Turn, outcome: it.Outcome, facts: Facts) -> None:
        if isinstance(outcome, Notify | SendMessage | AppendEntry | AbortRun):
            turn.effects.append(outcome)
            return
        handler = _HANDLERS.get(type(outcome))
        if handler is None:  # pragma: no cover - every intent type has a handler
            raise TypeError(f"no handler for intent {outcome!r}")
        handler(self, turn, outcome, facts)

    def _tool_reply(self, turn: _Turn, intent: it.ToolReply, facts: Facts) -> None:
        turn.value = ToolResult(payload=intent.payload, terminate=intent.terminate)

    def _build_reset(self, turn: _Turn, intent: it.BuildReset, facts: Facts) -> None:
        """R28/R35 (R29 on failure): marker → boot → continuation after the other drafts."""
        try:
            window_id, drafts = self._reset_drafts(turn, facts)
        except Exception as error:
            turn.effects.append(
                Notify(
                    message=NOTICE_RESET_BUILD_FAILED.format(error=_js_string(error)),
                    level="warning",
                )
            )
            turn.build_failed = True
            return
        turn.reset.extend(drafts)
        turn.continue_ = True
        turn.queue.append(("reset_control", "reset_built", {"built_window_id": window_id}))

    def _reset_drafts(self, turn: _Turn, facts: Facts) -> tuple[str, list[Draft]]:
        window = self.tree.current_window
        taken = window.marker_window_ids()
        window_id = mint_window_id(self.tree.session_id, uuid_draws(self.rng), taken)
        boot = self.boot_writer.boot(
            turn=turn.effects,
            notified=self.memory.incomplete_notes_notified,
            root_window_id=self.tree.root_window.window_id,
            window_id=window_id,
            previous_window_id=window.window_id,
            reset_boot=True,
            model=turn.ctx.model,
            now_ms=self.clock(),
        )
        drafts: list[Draft] = [
            CustomDraft(custom_type=MARKER_TYPE, data={"windowId": window_id}),
            CustomMessageDraft(
                custom_type=BOOT_TYPE, content=boot, display=False, details={"windowId": window_id}
            ),
            CustomMessageDraft(
                custom_type=CONTINUATION_TYPE, content=self.texts.continuation, display=False
            ),
        ]
        return window_id, drafts

    def _persist_wipe(self, turn: _Turn, intent: it.PersistWipe, facts: Facts) -> None:
        """R59/D2: the marker, the boot and (0.25.1) the continuation, written at once."""
        window_id, (marker, boot, continuation) = self._reset_drafts(turn, facts)
        assert isinstance(marker, CustomDraft) and isinstance(boot, CustomMessageDraft)
        assert isinstance(continuation, CustomMessageDraft)
        turn.effects.append(AppendEntry(custom_type=marker.custom_type, data=marker.data))
        sends = [boot, continuation] if self.profile.wipe_sends_continuation else [boot]
        for draft in sends:
            turn.effects.append(
                SendMessage(
                    custom_type=draft.custom_type,
                    content=draft.content,
                    display=draft.display,
                    details=draft.details,
                    trigger_turn=False,
                )
            )
        turn.planned_commits.add(window_id)
        turn.queue.append(("reset_control", "reset_built", {"built_window_id": window_id}))
        turn.queue.append(("reset_control", "announce", {}))

    def _remember_reset(self, turn: _Turn, intent: it.RememberResetNotice, facts: Facts) -> None:
        if intent.window_id not in self.memory.pending_resets:
            self.memory.pending_resets.append(intent.window_id)

    def _announce_resets(self, turn: _Turn, intent: it.AnnounceResets, facts: Facts) -> None:
        for window_id in intent.window_ids:
            turn.effects.append(
                Notify(message=NOTICE_MEMORY_CLEARED.format(window_id=window_id), level="info")
            )
            if window_id in self.memory.pending_resets:
                self.memory.pending_resets.remove(window_id)

    def _forget_resets(self, turn: _Turn, intent: it.ForgetResetNotices, facts: Facts) -> None:
        self.memory.pending_resets.clear()

    def _stage(self, turn: _Turn, intent: it.StageReminder, facts: Facts) -> None:
        self.memory.staged[intent.kind] = Staged(window_id=intent.window_id, content=intent.content)

    def _drop(self, turn: _Turn, intent: it.DropReminder, facts: Facts) -> None:
        self.memory.staged[intent.kind] = None

    def _commit(self, turn: _Turn, intent: it.CommitReminder, facts: Facts) -> None:
        """R53: the staged reminder becomes a hidden draft and a pending notice."""
        staged = self.memory.staged[intent.kind]
        if staged is None:  # pragma: no cover - the machine only commits from `staged`
            raise AssertionError(f"{intent.kind} committed without staging")
        turn.reminders.append(
            CustomMessageDraft(custom_type=intent.kind, content=staged.content, display=False)
        )
        self.memory.notices[intent.kind] = staged.window_id
        self.memory.staged[intent.kind] = None

    def _forget_notice(self, turn: _Turn, intent: it.ForgetReminderNotice, facts: Facts) -> None:
        self.memory.notices[intent.kind] = None

    def _send_boot(self, turn: _Turn, intent: it.SendBoot, facts: Facts) -> None:
        """R64 step 5: the repaired or root boot, sent hidden without a model turn."""
        content = self.boot_writer.boot(
            turn=turn.effects,
            notified=self.memory.incomplete_notes_notified,
            root_window_id=self.tree.root_window.window_id,
            window_id=intent.window_id,
            previous_window_id=intent.previous_window_id,
            reset_boot=intent.reset_boot,
            model=turn.ctx.model,
            now_ms=self.clock(),
        )
        turn.effects.append(
            SendMessage(
                custom_type=BOOT_TYPE,
                content=content,
                display=False,
                details={"windowId": intent.window_id},
            )
        )

    def _send_continuation(self, turn: _Turn, intent: it.SendContinuation, facts: Facts) -> None:
        turn.effects.append(
            SendMessage(
                custom_type=CONTINUATION_TYPE, content=self.texts.continuation, display=False
            )
        )

    def _project(self, turn: _Turn, intent: it.ProjectMessages, facts: Facts) -> None:
        assert isinstance(turn.event, ContextWithSystem)
        projected = project_reset(list(turn.event.messages), self.tree.current_window)
        turn.value = MessagesResult(messages=projected.messages)

    def _cancel_request(self, turn: _Turn, intent: it.CancelRequest, facts: Facts) -> None:
        """R68: abort; only the folded system head (or nothing) reaches the provider."""
        assert isinstance(turn.event, ContextWithSystem)
        turn.effects.append(AbortRun())
        safe = project_reset(list(turn.event.messages), self.tree.current_window)
        turn.value = MessagesResult(messages=safe.messages)

    def _remember_missing(self, turn: _Turn, intent: it.RememberMissingBoot, facts: Facts) -> None:
        self.memory.missing_boot = intent.window_id

    def _inject_warning(self, turn: _Turn, intent: it.InjectWarning, facts: Facts) -> None:
        assert isinstance(turn.event, Context)
        warning = {
            "role": "custom",
            "customType": WARNING_TYPE,
            "content": intent.content,
            "display": False,
            "timestamp": self.clock(),
        }
        turn.value = MessagesResult(messages=(*turn.event.messages, warning))

    def _dispatch(self, turn: _Turn, intent: it.Dispatch, facts: Facts) -> None:
        turn.queue.append((intent.machine, intent.event, {}))

    def _report_status(self, turn: _Turn, intent: it.ReportStatus, facts: Facts) -> None:
        # Reported once the whole command ran: the toggle has moved, the boot was ensured.
        turn.report_status = True

    def _cancel_compaction(self, turn: _Turn, intent: it.CancelCompaction, facts: Facts) -> None:
        turn.value = CancelResult()

    def _skip_summary(self, turn: _Turn, intent: it.SkipBranchSummary, facts: Facts) -> None:
        turn.value = TreeSummaryResult(summary="")

    # -- result ------------------------------------------------------------------------------

    def _finish(self, turn: _Turn) -> HookResult:
        if turn.report_status:
            state = "on" if self.enabled else "off"
            status = NOTICE_TOGGLE_STATUS.format(
                state=state, build=self.build_label, pi_version=turn.ctx.pi_version
            )
            turn.effects.append(Notify(message=status, level="info"))
        event = turn.event
        value = turn.value
        if isinstance(event, TurnEnd | AgentBeforeSettle):
            value = self._boundary_value(turn, event)
        return HookResult(hook=turn.hook, value=value, effects=tuple(turn.effects))

    def _boundary_value(self, turn: _Turn, event: TurnEnd | AgentBeforeSettle) -> HookValue | None:
        """R22/R28/R35: incoming drafts first, then reminders, then the reset tail; the
        handler returns ``undefined`` when it adds nothing (and always when inactive, R19)."""
        if not turn.active_before:
            return None
        if isinstance(event, AgentBeforeSettle) and not (turn.continue_ or turn.build_failed):
            return None
        entries = compose_entries(event.entries, turn.reminders, turn.reset)
        if not entries and not turn.continue_:
            return None
        return BoundaryResult(entries=entries, continue_=True if turn.continue_ else None)


def _model_ref(ctx: HostContext) -> policy.ModelRef | None:
    if ctx.model is None:
        return None
    return policy.ModelRef(provider=ctx.model.provider, id=ctx.model.id)


def _js_string(error: BaseException) -> str:
    """``String(error)`` of a JavaScript Error: ``"<Name>: <message>"``."""
    message = str(error)
    name = type(error).__name__
    return f"{name}: {message}" if message else name


_HANDLERS: dict[type[Any], Callable[[LifecycleRuntime, _Turn, Any, Facts], None]] = {
    it.ToolReply: LifecycleRuntime._tool_reply,
    it.BuildReset: LifecycleRuntime._build_reset,
    it.PersistWipe: LifecycleRuntime._persist_wipe,
    it.RememberResetNotice: LifecycleRuntime._remember_reset,
    it.AnnounceResets: LifecycleRuntime._announce_resets,
    it.ForgetResetNotices: LifecycleRuntime._forget_resets,
    it.StageReminder: LifecycleRuntime._stage,
    it.DropReminder: LifecycleRuntime._drop,
    it.CommitReminder: LifecycleRuntime._commit,
    it.ForgetReminderNotice: LifecycleRuntime._forget_notice,
    it.SendBoot: LifecycleRuntime._send_boot,
    it.SendContinuation: LifecycleRuntime._send_continuation,
    it.ProjectMessages: LifecycleRuntime._project,
    it.CancelRequest: LifecycleRuntime._cancel_request,
    it.RememberMissingBoot: LifecycleRuntime._remember_missing,
    it.InjectWarning: LifecycleRuntime._inject_warning,
    it.Dispatch: LifecycleRuntime._dispatch,
    it.ReportStatus: LifecycleRuntime._report_status,
    it.CancelCompaction: LifecycleRuntime._cancel_compaction,
    it.SkipBranchSummary: LifecycleRuntime._skip_summary,
}
