"""The lifecycle runtime: the thin shell that keeps one session's (tree, services, state, audit).

One :class:`LifecycleRuntime` per host session (Pi re-runs an extension's factory on every
session replacement, so a fork, resume or reload gets a fresh runtime too). :meth:`handle`
calls the pure :func:`~pictx_fsm.extensions.pi_context.lifecycle.step`, writes one audit record and
keeps the next
state; a hook that raises keeps the old state and writes nothing.

A call of one of the nine notes and history tools is the shell's too: it reads and writes
files, so it is a service call (:func:`~pictx_fsm.extensions.pi_context.tools.execute_tool` with
:meth:`Services.tool_context <pictx_fsm.extensions.pi_context.lifecycle.Services.tool_context>`),
never a machine
event; the state stays as it was and the audit records the call like any hook.

It never talks to the host: the session tree is read, never written; effects are data.
Randomness (window ids) and time (message timestamps) are injected, so a trace replays exactly.
"""

from __future__ import annotations

import random
from pathlib import Path

import attrs

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.errors import UsageError
from pictx_fsm.extensions.pi_context import policy
from pictx_fsm.extensions.pi_context.boot_writer import BootWriter
from pictx_fsm.extensions.pi_context.lifecycle import (
    Clock,
    Lifecycle,
    LifecycleState,
    Services,
    SettingsFactory,
    in_state,
    load_lifecycle,
    pi_file_settings,
    step,
)
from pictx_fsm.extensions.pi_context.notes import FileNotesSource
from pictx_fsm.extensions.pi_context.texts import (
    DEFAULT_PROFILE,
    UNBUNDLED_BUILD_LABEL,
    Profile,
    Texts,
)
from pictx_fsm.extensions.pi_context.tools import HANDLERS as TOOL_HANDLERS
from pictx_fsm.extensions.pi_context.tools import execute_tool
from pictx_fsm.extensions.pi_context.usage import UsageIndex
from pictx_fsm.host.effects import HookResult
from pictx_fsm.host.events import HookEvent, HostContext, ToolCall
from pictx_fsm.host.settings import SettingsSource, StaticSettingsSource
from pictx_fsm.machines import Configuration
from pictx_fsm.session.estimate import TiktokenCounter, TokenCounter
from pictx_fsm.session.tree import SessionTree

__all__ = ["Clock", "LifecycleRuntime", "SettingsFactory", "pi_file_settings"]


class LifecycleRuntime:
    """pi-context 0.25's lifecycle for one host session, driven by hook events."""

    def __init__(
        self,
        tree: SessionTree,
        *,
        profile: Profile | str = DEFAULT_PROFILE,
        texts: Texts | None = None,
        settings: SettingsSource | SettingsFactory | None = None,
        cache_policy: bool | None = None,
        boot_writer: BootWriter | None = None,
        usage: UsageIndex | None = None,
        counter: TokenCounter | None = None,
        rng: random.Random | None = None,
        clock: Clock | None = None,
        lifecycle: Lifecycle | None = None,
        audit: AuditLog | None = None,
        build_label: str = UNBUNDLED_BUILD_LABEL,
        notes_home: Path | None = None,
    ) -> None:
        """``notes_home``: the notes root (``$PI_NOTES_HOME``) this session's boots index and
        its notes tools write, with the session's identity (its id, the project of its
        ``cwd``); or give a ``boot_writer`` reading a :class:`~pictx_fsm.FileNotesSource`.
        Without either, boots index no notes and a notes tool answers with an error."""
        profile = Profile.parse(profile)
        texts = texts or Texts.for_profile(profile)
        if notes_home is not None:
            if boot_writer is not None:
                raise UsageError("give notes_home or boot_writer, not both: one notes home")
            notes = FileNotesSource.for_session(tree.session_id, tree.header.cwd, home=notes_home)
            boot_writer = BootWriter(texts=texts, notes=notes)
        settings = settings or StaticSettingsSource(global_settings={})
        lifecycle = lifecycle or load_lifecycle()
        self.services = Services(
            lifecycle=lifecycle,
            tree=tree,
            usage=usage if usage is not None else UsageIndex(tree, counter or TiktokenCounter()),
            settings=settings,
            boot_writer=boot_writer or BootWriter(texts=texts),
            clock=clock or (lambda: 0),
            rng=rng or random.Random(0),
            profile=profile,
            texts=texts,
            build_label=build_label,
            # R40: a settings manager is read live; the file-backed factory is cached (R55).
            cache_policy=not hasattr(settings, "read") if cache_policy is None else cache_policy,
        )
        self.state = LifecycleState.initial(lifecycle.initial())
        self.audit = audit

    def handle(self, event: HookEvent, ctx: HostContext | None = None) -> HookResult:
        """Handle one hook event and return the handler's value and side effects.

        A hook is all or nothing: when a guard or an action raises (an illegal event, a notes
        failure outside a running reset), the error propagates, the runtime keeps the state
        it had before the hook, and no audit record is written."""
        ctx = ctx or HostContext()
        return self.keep(event, ctx, self.decide(event, ctx))

    def decide(
        self, event: HookEvent, ctx: HostContext, state: LifecycleState | None = None
    ) -> tuple[LifecycleState, HookResult]:
        """:meth:`handle`'s decision in ``state`` (default: the kept one), not kept: the
        next state and the result. A host that answers hooks ahead of time (the Pi bridge,
        :mod:`pictx_fsm.hosts.pi.speculation`) keeps each only when the host confirms it."""
        state = self.state if state is None else state
        if isinstance(event, ToolCall) and event.name in TOOL_HANDLERS:
            return state, self._run_tool(event, ctx)
        return step(state, event, ctx, self.services)

    def keep(
        self, event: HookEvent, ctx: HostContext, decision: tuple[LifecycleState, HookResult]
    ) -> HookResult:
        """Write the audit record of a :meth:`decide` decision and keep its state."""
        state, result = decision
        if self.audit is not None:
            self.audit.record(
                event=event,
                ctx=ctx,
                result=result,
                profile=self.profile.value,
                fingerprint=self.lifecycle.fingerprint,
            )
        self.state = state
        return result

    def _run_tool(self, call: ToolCall, ctx: HostContext) -> HookResult:
        """A notes or history tool: ok, a JSON refusal, or an error result (N4)."""
        context = self.services.tool_context(ctx)
        outcome = execute_tool(call.name, dict(call.arguments), context)
        return HookResult(hook=ToolCall.HOOK, value=outcome)

    # -- reading -----------------------------------------------------------------------------

    @property
    def tree(self) -> SessionTree:
        return self.services.tree

    @property
    def profile(self) -> Profile:
        return self.services.profile

    @property
    def texts(self) -> Texts:
        return self.services.texts

    @property
    def lifecycle(self) -> Lifecycle:
        return self.services.lifecycle

    @property
    def settings(self) -> SettingsSource | SettingsFactory:
        return self.services.settings

    @settings.setter
    def settings(self, settings: SettingsSource | SettingsFactory) -> None:
        """Swap the settings authority (a settings manager replaced under a live session)."""
        self.services = attrs.evolve(self.services, settings=settings)

    @property
    def enabled(self) -> bool:
        """``/pi-context`` is on (R60)."""
        return in_state(self.state, "enabled")

    def configuration(self, machine: str) -> Configuration:
        return self.state.configuration(machine)

    def policy(self, ctx: HostContext | None = None) -> policy.Policy:
        """The settings policy a decision would use now (thresholds, ``automatic``, warnings
        and the settings diagnostics Pi keeps for its host): the cached one while caching,
        else read from the settings for ``ctx``."""
        if self.state.policy is not None and self.services.cache_policy:
            return self.state.policy
        return self.services.resolve_policy(ctx or HostContext())
