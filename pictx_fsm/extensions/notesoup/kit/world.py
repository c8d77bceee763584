"""A notesoup world: the lifecycle runtime on the model session in the Pi 1.x host profile,
between two inert noise extensions, with a sandboxed notes home, live settings and a decision
log per runtime — and, for a mixed history, a pi-context 0.25 session (and notes) it resumes.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Hashable, Mapping
from typing import Any, Final

import attrs
from attrs import frozen

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.notesoup.adapter import NotesoupExtension
from pictx_fsm.extensions.notesoup.kit.actions import Action, apply_action
from pictx_fsm.extensions.notesoup.kit.faults import fault_named
from pictx_fsm.extensions.notesoup.kit.legacy import (
    LegacyHistory,
    LegacyNotes,
    legacy_tree,
    plant_legacy_notes,
)
from pictx_fsm.extensions.notesoup.runtime import NotesoupRuntime
from pictx_fsm.extensions.notesoup.texts import SETTINGS_KEY
from pictx_fsm.extensions.notesoup.windows import SCHEME, NotesoupWindows
from pictx_fsm.extensions.shared.kit.actions import SetAutomatic
from pictx_fsm.extensions.shared.kit.noise import Arms, EarlyNoise, LateNoise
from pictx_fsm.extensions.shared.kit.notes_sandbox import NotesSandbox
from pictx_fsm.extensions.shared.policy import FrozenScopes
from pictx_fsm.host.events import ModelInfo
from pictx_fsm.host.extension import Extension
from pictx_fsm.host.settings import SettingsScopes
from pictx_fsm.hosts.model import (
    CompactionSettings,
    HostSettings,
    ModelSession,
    ScriptedProvider,
    TickClock,
)
from pictx_fsm.hosts.model.profiles import PI_1_6
from pictx_fsm.session.estimate import CharsCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing.actions import EndlessRun, action_to_json
from pictx_fsm.testing.canon import Canon
from pictx_fsm.testing.states import host_state

__all__ = [
    "HOST",
    "LEGACY_NOTES",
    "NotesoupConfig",
    "NotesoupWorld",
    "current_boots",
    "scenario_config",
]

HOST: Final = PI_1_6.name
"""notesoup needs Pi 1.x (its checkpoints, steering and tool outcomes; spec §2.2, Q2)."""
LEGACY_NOTES: Final = LegacyNotes(
    fresh=("legacy-plan",), stale=("legacy-closed",), self_notes=("diary",)
)
"""The 0.25 notes a mixed history's notes home holds."""
CWD: Final = "/workspace"


@frozen(kw_only=True)
class NotesoupConfig:
    """The reproducible parameters of one notesoup world."""

    seed: int = 0
    context_window: int = 72_000
    max_tokens: int = 4_096
    reserve_tokens: int = 4_000
    reminder_margin: int = 24_000
    automatic: bool = True
    keep_recent_tokens: int = 20_000
    fault: str | None = None
    legacy: LegacyHistory | None = None
    """A pi-context 0.25 session (with its notes) to resume instead of a new session."""

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self, recurse=False)
        out["legacy"] = None if self.legacy is None else self.legacy.to_json()
        return out

    @property
    def settings(self) -> dict[str, Any]:
        return _settings(self, automatic=self.automatic)


def _settings(config: NotesoupConfig, *, automatic: bool) -> dict[str, Any]:
    return {
        "compaction": {"reserveTokens": config.reserve_tokens, "enabled": automatic},
        SETTINGS_KEY: {"reminderMarginTokens": config.reminder_margin},
    }


class LiveSettings:
    """The settings manager injected into every runtime, read live (S50): a
    :class:`~.actions.SetAutomatic` switches ``compaction.enabled`` mid-run."""

    def __init__(self, config: NotesoupConfig) -> None:
        self.config = config
        self.automatic = config.automatic
        self._scopes: dict[bool, FrozenScopes] = {}

    def read(self) -> SettingsScopes:
        scopes = self._scopes.get(self.automatic)
        if scopes is None:
            settings = _settings(self.config, automatic=self.automatic)
            scopes = self._scopes[self.automatic] = FrozenScopes.of(settings, {})
        return scopes


def current_boots(tree: SessionTree) -> list[str]:
    """Ids of the current window's boot entries on the active branch (for the noise)."""
    window_id = NotesoupWindows.of(tree).current_window.window_id
    return [e.id for e in tree.branch() if e.id and SCHEME.boot_window_id(e) == window_id]


class NotesoupWorld:
    """The model session with notesoup, and everything needed to check it."""

    def __init__(self, config: NotesoupConfig) -> None:
        self.config = config
        self.fault = fault_named(config.fault) if config.fault else None
        self.audits: list[AuditLog] = []
        self.runtimes: list[NotesoupRuntime] = []
        self.actions: list[Action] = []
        self.applied: list[bool] = []
        self.endless_runs: list[int] = []
        self.clock = TickClock()
        self.settings = LiveSettings(config)
        self.noise = Arms()
        self.notes = NotesSandbox.fresh()
        self.legacy_session: str | None = None
        self.extension = NotesoupExtension(self._runtime)
        model = ModelInfo(
            provider="faux",
            id="faux-1",
            context_window=config.context_window,
            max_tokens=config.max_tokens,
        )
        host = HostSettings(
            profile=PI_1_6,
            model=model,
            cwd=CWD,
            compaction=CompactionSettings(
                enabled=config.automatic,
                reserve_tokens=config.reserve_tokens,
                keep_recent_tokens=config.keep_recent_tokens,
            ),
        )
        early = EarlyNoise(self.noise, self._follow_up)
        extensions: list[Extension] = [
            early,
            self.extension,
            LateNoise(self.noise, current_boots),
        ]
        tree = self._legacy_tree(config) if config.legacy is not None else None
        self.session = ModelSession(
            extensions,
            provider=ScriptedProvider(counter=CharsCounter()),
            settings=host,
            rng=random.Random(config.seed),
            clock=self.clock,
            counter=CharsCounter(),
            tree=tree,
        )

    def _legacy_tree(self, config: NotesoupConfig) -> SessionTree:
        assert config.legacy is not None
        session_id = str(uuid.UUID(int=random.Random(f"legacy:{config.seed}").getrandbits(128)))
        self.legacy_session = session_id
        plant_legacy_notes(self.notes.root, session_id, LEGACY_NOTES, 1_700_000_000_000)
        return legacy_tree(
            config.legacy, session_id, CWD, seed=config.seed, start_ms=1_600_000_000_000
        )

    def _runtime(self, tree: SessionTree) -> NotesoupRuntime:
        index = len(self.runtimes)
        audit = AuditLog()
        kwargs: dict[str, Any] = {}
        if self.fault is not None:
            kwargs = self.fault.runtime(kwargs)
        runtime = NotesoupRuntime(
            tree,
            settings=self.settings,
            notes_home=self.notes.root,
            notes_agent=None,
            rng=random.Random(f"notesoup-runtime:{self.config.seed}:{index}"),
            clock=self.clock,
            audit=audit,
            **kwargs,
        )
        self.audits.append(audit)
        self.runtimes.append(runtime)
        return runtime

    def apply(self, action: Action) -> bool:
        serial = len(self.actions)
        applied = self._apply_world(action, serial)
        if applied is None:
            try:
                applied = apply_action(self.session, action, serial)
            except EndlessRun:
                self.endless_runs.append(serial)
                applied = True
        self.actions.append(action)
        self.applied.append(applied)
        return applied

    def _apply_world(self, action: Action, serial: int) -> bool | None:
        if self.noise.arm(action, serial):
            return True
        if isinstance(action, SetAutomatic):
            self.settings.automatic = action.enabled
        else:
            return None
        return True

    def _follow_up(self, text: str) -> None:
        self.session.follow_up(text)

    def transition_counts(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for log in self.audits:
            counts.update(log.transition_counts())
        return dict(counts)

    def decisions(self) -> list[dict[str, Any]]:
        out = []
        for index, log in enumerate(self.audits):
            for record in log.records:
                fired = [t["id"] for step in record["steps"] for t in step["transitions"]]
                out.append(
                    {"runtime": index, "seq": record["seq"], "hook": record["hook"], "fired": fired}
                )
        return out

    def describe_actions(self) -> list[dict[str, Any]]:
        return [action_to_json(action) for action in self.actions]

    def now(self) -> int:
        return self.clock.peek()

    def canonical_state(self, canon: Canon) -> Hashable:
        """The model host's observable state, the live runtime's frozen state, the world
        around the session (armed noise, the live setting) and the notes the tools wrote
        (:mod:`pictx_fsm.testing.states`). The audit logs and the host log are history:
        never read back."""
        return (
            host_state(self.session, canon),
            canon(self.runtimes[-1].state if self.runtimes else None),
            (self.noise.void, self.noise.hide_boot, canon(self.noise.queue)),
            self.settings.automatic,
            canon(self.notes.contents()),
        )

    def release(self) -> None:
        self.notes.release()


def scenario_config(
    seed: int = 0, fault: str | None = None, legacy: LegacyHistory | None = None
) -> NotesoupConfig:
    """The world every seed scenario runs in (its numbers assume it): a window of 40k tokens,
    reserve 2k, so the reminder line sits at 22k tokens left, the warning line at 18 384 and
    the hard reserve at 2k; native compaction keeps little, so ``/compact`` has something to
    cut."""
    return NotesoupConfig(
        seed=seed,
        context_window=40_000,
        reserve_tokens=2_000,
        reminder_margin=20_000,
        keep_recent_tokens=1_000,
        fault=fault,
        legacy=legacy,
    )


def legacy_from_json(obj: Mapping[str, Any] | None) -> LegacyHistory | None:
    return None if obj is None else LegacyHistory(**dict(obj))
