"""What one notesoup step reads besides its state, the event and ``ctx``: the session tree and
its window index, settings, the notes home, the clock and the random source — injected, so a
step is deterministic and a trace replays exactly. The session tree is read, never written.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from datetime import tzinfo
from pathlib import Path

from attrs import frozen

from pictx_fsm.extensions.notesoup import policy
from pictx_fsm.extensions.notesoup.boot import Boot, BootIdentity, load_snapshot, render_boot
from pictx_fsm.extensions.notesoup.notes.store import NotesStore
from pictx_fsm.extensions.notesoup.texts import DEFAULT_AGENT_NAME
from pictx_fsm.extensions.notesoup.tools.execute import ToolContext
from pictx_fsm.extensions.notesoup.usage import window_usage
from pictx_fsm.extensions.notesoup.windows import NotesoupWindows
from pictx_fsm.extensions.shared.machinery import MachineFamily
from pictx_fsm.extensions.shared.policy import Policy, Usage
from pictx_fsm.extensions.shared.tools.homes import (
    LEGACY_AGENT_NAME,
    NotesIdentity,
    NotesPlace,
    agent_slug,
    model_slug,
)
from pictx_fsm.extensions.shared.window_index import WindowIndex
from pictx_fsm.extensions.shared.windows import WindowScheme
from pictx_fsm.host.events import HostContext
from pictx_fsm.host.settings import SettingsSource
from pictx_fsm.session.tree import SessionTree

__all__ = ["Clock", "NotesHome", "Services", "SettingsFactory"]

Clock = Callable[[], int]
SettingsFactory = Callable[[HostContext], SettingsSource]
"""A settings source built per read from the hook's ``ctx`` (Pi's file-backed manager)."""


@frozen(kw_only=True)
class NotesHome:
    """The notes root and the session's identity in it (S84, S95, S120)."""

    root: Path
    session_id: str
    project_key: str
    configured_agent: str | None = None
    zone: tzinfo | None = None

    def identity(self, model_id: str | None) -> NotesIdentity:
        """The homes as they are named now: ``@model`` follows ``ctx.model`` (S84)."""
        return NotesIdentity(
            session_id=self.session_id,
            project_key=self.project_key,
            agent=self.agent(),
            model=model_slug(model_id, DEFAULT_AGENT_NAME),
        )

    def agent(self) -> str:
        """S84's agent: ``$PI_NOTES_AGENT`` slugged, default ``anonymous`` — except, for a
        0.25 home migrated (this port, docs/decisions.md), ``root`` when only ``agents/root/``
        exists: the 0.25 ``@self`` notes stay ``@self``."""
        if self.configured_agent is not None:
            return agent_slug(self.configured_agent, DEFAULT_AGENT_NAME)
        agents = self.root / "agents"
        if not os.path.lexists(agents / DEFAULT_AGENT_NAME) and os.path.isdir(
            agents / LEGACY_AGENT_NAME
        ):
            return LEGACY_AGENT_NAME
        return DEFAULT_AGENT_NAME

    def store(self, model_id: str | None, clock: Callable[[], float]) -> NotesStore:
        place = NotesPlace(root=self.root, identity=self.identity(model_id))
        return NotesStore(place, clock, self.zone)


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
    windows_kind: type[WindowIndex] = NotesoupWindows
    """Which windows the lifecycle sees: this port's migrating scheme, or notesoup 0.38's
    own (:class:`~pictx_fsm.extensions.notesoup.windows.ReferenceWindows`, which ignores
    0.25 markers)."""

    @property
    def scheme(self) -> WindowScheme:
        return self.windows_kind.scheme

    @property
    def windows(self) -> WindowIndex:
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
        if self.notes is None:
            return ToolContext(history=self.tree, clock=self._now)
        model_id = ctx.model.id if ctx.model else None
        return ToolContext(
            notes_root=self.notes.root,
            identity=self.notes.identity(model_id),
            history=self.tree,
            clock=self._now,
            zone=self.notes.zone,
        )
