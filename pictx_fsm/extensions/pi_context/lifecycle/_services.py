"""The services a step reads: the session, usage, settings, notes, clock and random source.

Everything the lifecycle observes besides its own state, the hook event and ``ctx`` comes
from here, injected by the host, so a step is deterministic given them and replays exactly.
The session tree is read, never written.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from attrs import field, frozen

from pictx_fsm.extensions.pi_context import policy
from pictx_fsm.extensions.pi_context.boot_writer import BootWriter
from pictx_fsm.extensions.pi_context.lifecycle._machines import Lifecycle
from pictx_fsm.extensions.pi_context.notes import FileNotesSource
from pictx_fsm.extensions.pi_context.texts import Profile, Texts
from pictx_fsm.extensions.pi_context.tools.context import ToolContext
from pictx_fsm.extensions.pi_context.usage import UsageIndex
from pictx_fsm.extensions.pi_context.windows import WindowIndex, boot_key
from pictx_fsm.host.events import HostContext
from pictx_fsm.host.settings import FileSettingsSource, SettingsSource
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.writer import Clock

__all__ = ["Clock", "Services", "SettingsFactory", "pi_file_settings"]

SettingsFactory = Callable[[HostContext], SettingsSource]
"""R40's file-backed authority: a settings source built per read from the hook's ``ctx``
(``cwd`` and ``isProjectTrusted()``), e.g. :func:`pi_file_settings`."""


def pi_file_settings(agent_dir: Path, *, strict: bool = False) -> SettingsFactory:
    """R40: Pi's ``settings.json`` files, read per decision from ``ctx.cwd`` and the agent dir,
    the project scope only when ``ctx`` says the project is trusted."""

    def source(ctx: HostContext) -> SettingsSource:
        return FileSettingsSource(
            agent_dir=agent_dir,
            cwd=Path(ctx.cwd),
            project_trusted=ctx.project_trusted,
            strict=strict,
        )

    return source


@frozen(kw_only=True, eq=False)
class Services:
    """What one session's lifecycle reads besides its state, the event and ``ctx``."""

    lifecycle: Lifecycle
    tree: SessionTree
    usage: UsageIndex
    settings: SettingsSource | SettingsFactory
    boot_writer: BootWriter
    clock: Clock
    rng: random.Random
    profile: Profile
    texts: Texts
    build_label: str
    cache_policy: bool
    """R40: an injected settings manager is read live on every decision; the file-backed
    default (a factory over ``ctx``) is cached until a transition (R55)."""

    windows: WindowIndex = field(init=False)
    """pi-context's window identity over the session tree."""

    @windows.default
    def _windows(self) -> WindowIndex:
        # Every hook asks for the leaf's window (R9-R13) and every request for the window's
        # boot (R67): both are kept in step with the session from now on, never rescanned.
        self.tree.transcripts.track(boot_key)
        return WindowIndex.of(self.tree)

    def settings_source(self, ctx: HostContext) -> SettingsSource:
        settings = self.settings
        if hasattr(settings, "read"):
            return settings  # type: ignore[return-value]
        return settings(ctx)  # type: ignore[operator, no-any-return]

    def resolve_policy(self, ctx: HostContext) -> policy.Policy:
        """R40–R45: read the settings once and derive the policy for ``ctx.model`` (a model
        identity as it is: the policy reads its provider and id)."""
        return policy.resolve_policy(self.settings_source(ctx), ctx.model)

    def tool_context(self, ctx: HostContext) -> ToolContext:
        """What a notes or history tool call reads (the runtime shell runs them, not the
        step): the boot's notes home when it is on disk — one owner, so the next boot
        indexes what the tools wrote — with ``@model`` from ``ctx.model``, this session's
        tree and the injected clock."""
        model_id = ctx.model.id if ctx.model else None
        notes = self.boot_writer.notes
        if isinstance(notes, FileNotesSource):
            return notes.tool_context(model_id=model_id, history=self.tree, clock=self.clock)
        return ToolContext(history=self.tree, clock=self.clock)

    def window_usage(self, ctx: HostContext) -> policy.Usage | None:
        """R47/R48: root windows use the host's usage; marker windows the projected window."""
        if self.windows.current_window.is_root:
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
