"""What one notesoup step reads besides its state, the event and ``ctx``: the session tree and
its window index, settings, the notes home, the clock and the random source — injected, so a
step is deterministic and a trace replays exactly. The session tree is read, never written.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from attrs import frozen

from pictx_fsm.extensions.notesoup import policy
from pictx_fsm.extensions.notesoup.boot import Boot, BootIdentity, load_snapshot, render_boot
from pictx_fsm.extensions.notesoup.notes.home import NotesHome
from pictx_fsm.extensions.notesoup.texts import DEFAULT_AGENT_NAME
from pictx_fsm.extensions.notesoup.tools.execute import ToolContext, tool_context
from pictx_fsm.extensions.notesoup.usage import window_usage
from pictx_fsm.extensions.notesoup.windows import NotesoupWindows
from pictx_fsm.extensions.shared.machinery import MachineFamily
from pictx_fsm.extensions.shared.policy import Policy, Usage
from pictx_fsm.extensions.shared.tools.homes import (
    model_slug,
)
from pictx_fsm.extensions.shared.window_index import SchemeWindowIndex
from pictx_fsm.extensions.shared.windows import WindowScheme
from pictx_fsm.host.events import HostContext
from pictx_fsm.host.settings import SettingsSource
from pictx_fsm.session.tree import SessionTree

__all__ = ["Clock", "Services", "SettingsFactory"]

Clock = Callable[[], int]
SettingsFactory = Callable[[HostContext], SettingsSource]
"""A settings source built per read from the hook's ``ctx`` (Pi's file-backed manager)."""


@frozen(kw_only=True, eq=False)
class Services:
    """What one session's notesoup lifecycle reads besides its state, the event and ``ctx``."""

    family: MachineFamily
    tree: SessionTree
    settings: SettingsSource | SettingsFactory
    notes: NotesHome | None
    clock: Clock
    rng: random.Random
    build_label: str
    cache_policy: bool
    """S50: an injected settings manager is read live; the file-backed one is cached."""
    windows_kind: type[SchemeWindowIndex] = NotesoupWindows
    """Which windows the lifecycle sees: this port's migrating scheme, or notesoup 0.38's
    own (:class:`~pictx_fsm.extensions.notesoup.windows.ReferenceWindows`, which ignores
    0.25 markers)."""

    @property
    def scheme(self) -> WindowScheme:
        return self.windows_kind.scheme

    @property
    def windows(self) -> SchemeWindowIndex:
        return self.windows_kind.of(self.tree)

    def settings_source(self, ctx: HostContext) -> SettingsSource:
        settings = self.settings
        if hasattr(settings, "read"):
            return settings  # type: ignore[return-value]
        return settings(ctx)  # type: ignore[operator, no-any-return]

    def resolve_policy(self, ctx: HostContext) -> Policy:
        return policy.resolve_policy(self.settings_source(ctx), ctx.model)

    def window_usage(self, ctx: HostContext) -> Usage | None:
        return window_usage(self.tree, ctx, self.windows)

    def boot(self, ctx: HostContext, window_id: str, previous: str | None) -> Boot:
        """S84: a boot for ``window_id``, from one closed notes snapshot."""
        model_id = ctx.model.id if ctx.model else None
        store = None if self.notes is None else self.notes.store(model_id, self._now)
        snapshot = load_snapshot(store, self._now)
        agent = self.notes.agent() if self.notes is not None else DEFAULT_AGENT_NAME
        identity = BootIdentity(
            agent=agent,
            model=model_slug(model_id, DEFAULT_AGENT_NAME),
            root_window_id=self.windows.root_window.window_id,
            window_id=window_id,
            previous_window_id=previous,
        )
        return render_boot(identity, snapshot)

    def _now(self) -> float:
        return float(self.clock())

    def tool_context(self, ctx: HostContext) -> ToolContext:
        """What a notes or history tool call reads: this session's notes home (so the next
        boot indexes what the tools wrote), ``@model`` from ``ctx.model``, the tree, the
        clock."""
        return tool_context(self.notes, self.tree, ctx.model.id if ctx.model else None, self._now)
