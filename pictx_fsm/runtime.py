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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pictx_fsm import policy
from pictx_fsm.audit import AuditLog, MachineStepRecord
from pictx_fsm.carry_out import carry_out
from pictx_fsm.effects import (
    BoundaryResult,
    HookResult,
    HookValue,
    Notify,
    compose_entries,
)
from pictx_fsm.facts import FactEnv, Facts
from pictx_fsm.hook_events import (
    POLICY_TRANSITIONS,
    machine_events,
)
from pictx_fsm.hook_turn import HookTurn
from pictx_fsm.hooks import (
    AgentBeforeSettle,
    HookEvent,
    HostContext,
    TurnEnd,
)
from pictx_fsm.lifecycle import Lifecycle, load_lifecycle
from pictx_fsm.memory import Memory
from pictx_fsm.protocol import (
    DEFAULT_PROFILE,
    GUIDANCE_TYPE,
    NOTICE_TOGGLE_STATUS,
    UNBUNDLED_BUILD_LABEL,
    WARNING_TYPE,
    Profile,
    Texts,
)
from pictx_fsm.resets import BootWriter
from pictx_fsm.session.estimate import TiktokenCounter, TokenCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import UsageIndex

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
        turn = HookTurn(hook=type(event).HOOK, event=event, ctx=ctx)
        turn.active_before = self.memory.state_of("reset_control", "activity") == "active"
        if turn.hook in POLICY_TRANSITIONS:
            self.memory.policy_cache = None
            self.memory.notified_warnings.clear()
        for machine, machine_event in machine_events(event):
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

    def _raise(self, turn: HookTurn, machine: str, event: str, extras: Mapping[str, Any]) -> None:
        facts = Facts(self._env(turn, extras))
        compiled = self.lifecycle.machines[machine]
        before = self.memory.configs[machine]
        step = compiled.step(before, event, facts)
        self.memory.configs[machine] = step.after
        turn.steps.append(MachineStepRecord.of(machine, event, step, facts.used()))
        for outcome in step.effects:
            carry_out(self, turn, outcome, facts)
        self._sync(machine)

    def _drain(self, turn: HookTurn) -> None:
        while turn.queue:
            machine, event, extras = turn.queue.pop(0)
            self._raise(turn, machine, event, extras)

    def _env(self, turn: HookTurn, extras: Mapping[str, Any]) -> FactEnv:
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

    def _policy(self, turn: HookTurn) -> policy.Policy:
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

    # -- result ------------------------------------------------------------------------------

    def _finish(self, turn: HookTurn) -> HookResult:
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

    def _boundary_value(
        self, turn: HookTurn, event: TurnEnd | AgentBeforeSettle
    ) -> HookValue | None:
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
