"""notesoup's runtime: the thin shell that keeps one session's (services, state, audit).

One :class:`NotesoupRuntime` per host session (Pi re-runs an extension's factory on fork,
resume and reload). :meth:`handle` calls the pure :func:`~pictx_fsm.extensions.notesoup.
lifecycle.step`, writes one audit record and keeps the next state; a hook that raises keeps
the old state and writes nothing. A notes or history tool call reads and writes files, so it
is a service call (:func:`~pictx_fsm.extensions.notesoup.tools.execute.execute_tool`), recorded
like any hook. Randomness (window ids) and time are injected, so a trace replays exactly.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.notesoup.lifecycle import (
    Clock,
    NotesHome,
    NotesoupState,
    Services,
    SettingsFactory,
    in_state,
    load_machines,
    step,
)
from pictx_fsm.extensions.notesoup.texts import NOTESOUP_VERSION
from pictx_fsm.extensions.notesoup.tools.execute import RUN_HERE, execute_tool
from pictx_fsm.extensions.notesoup.windows import NotesoupWindows
from pictx_fsm.extensions.shared.machinery import MachineFamily
from pictx_fsm.extensions.shared.tools.homes import NOTES_AGENT_ENV
from pictx_fsm.extensions.shared.window_index import SchemeWindowIndex
from pictx_fsm.host.effects import HookResult
from pictx_fsm.host.events import HookEvent, HostContext, ToolCall
from pictx_fsm.host.settings import SettingsSource, StaticSettingsSource
from pictx_fsm.machines import Configuration
from pictx_fsm.session.tree import SessionTree

__all__ = ["PROFILE", "NotesoupRuntime"]

PROFILE = "notesoup-0.38"
"""What the audit records as the profile of notesoup's decisions."""


class NotesoupRuntime:
    """notesoup 0.38's lifecycle for one host session, driven by hook events."""

    def __init__(
        self,
        tree: SessionTree,
        *,
        settings: SettingsSource | SettingsFactory | None = None,
        cache_policy: bool | None = None,
        notes_home: Path | None = None,
        notes_agent: str | None = None,
        rng: random.Random | None = None,
        clock: Clock | None = None,
        family: MachineFamily | None = None,
        audit: AuditLog | None = None,
        build_label: str = NOTESOUP_VERSION,
        windows: type[SchemeWindowIndex] = NotesoupWindows,
    ) -> None:
        """``notes_home``: the notes root (``$PI_NOTES_HOME``) the boots index and the tools
        write, with this session's identity (its id, the project of its ``cwd``); without
        it, boots index no notes and a notes tool answers with an error. ``notes_agent``
        stands for ``$PI_NOTES_AGENT`` (default: read from the environment). ``windows``:
        the window scheme the lifecycle sees (default: this port's, which migrates 0.25
        windows)."""
        notes = None
        if notes_home is not None:
            agent = os.environ.get(NOTES_AGENT_ENV) if notes_agent is None else notes_agent
            notes = NotesHome.for_session(notes_home, tree, agent)
        settings = settings or StaticSettingsSource(global_settings={})
        family = family or load_machines()
        self.services = Services(
            family=family,
            tree=tree,
            settings=settings,
            notes=notes,
            clock=clock or (lambda: 0),
            rng=rng or random.Random(0),
            build_label=build_label,
            cache_policy=not hasattr(settings, "read") if cache_policy is None else cache_policy,
            windows_kind=windows,
        )
        self.state = NotesoupState.initial(family.initial())
        self.audit = audit

    def handle(self, event: HookEvent, ctx: HostContext | None = None) -> HookResult:
        """Handle one hook event; all or nothing (a raising hook keeps the old state)."""
        ctx = ctx or HostContext()
        return self.keep(event, ctx, self.decide(event, ctx))

    def decide(
        self, event: HookEvent, ctx: HostContext, state: NotesoupState | None = None
    ) -> tuple[NotesoupState, HookResult]:
        """:meth:`handle`'s decision, not kept."""
        state = self.state if state is None else state
        if isinstance(event, ToolCall) and event.name in RUN_HERE:
            context = self.services.tool_context(ctx)
            outcome = execute_tool(event.name, dict(event.arguments), context)
            return state, HookResult(hook=ToolCall.HOOK, value=outcome)
        return step(state, event, ctx, self.services)

    def keep(
        self, event: HookEvent, ctx: HostContext, decision: tuple[NotesoupState, HookResult]
    ) -> HookResult:
        state, result = decision
        if self.audit is not None:
            self.audit.record(
                event=event,
                ctx=ctx,
                result=result,
                profile=PROFILE,
                fingerprint=self.family.fingerprint,
            )
        self.state = state
        return result

    @property
    def tree(self) -> SessionTree:
        return self.services.tree

    @property
    def family(self) -> MachineFamily:
        return self.services.family

    @property
    def enabled(self) -> bool:
        return in_state(self.state, "enabled")

    def configuration(self, machine: str) -> Configuration:
        return self.state.configuration(machine)
