"""A notesoup world: the lifecycle runtime on the model session in the Pi 1.x host profile,
between two inert noise extensions, with a sandboxed notes home, live settings and a decision
log per runtime — and, for a mixed history, a pi-context 0.25 session (and notes) it resumes.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping
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
from pictx_fsm.extensions.notesoup.windows import NotesoupWindows
from pictx_fsm.extensions.shared.kit.world import FamilyWorld, family_settings, scenario_world
from pictx_fsm.hosts.model import ModelSession, ScriptedProvider
from pictx_fsm.hosts.model.profiles import PI_1_6
from pictx_fsm.session.estimate import CharsCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing.host_world import ModelConfig, host_settings

__all__ = [
    "HOST",
    "LEGACY_NOTES",
    "NotesoupConfig",
    "NotesoupWorld",
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
class NotesoupConfig(ModelConfig):
    """The reproducible parameters of one notesoup world."""

    context_window: int = 72_000
    reserve_tokens: int = 4_000
    reminder_margin: int = 24_000
    automatic: bool = True
    legacy: LegacyHistory | None = None
    """A pi-context 0.25 session (with its notes) to resume instead of a new session."""

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self, recurse=False)
        out["legacy"] = None if self.legacy is None else self.legacy.to_json()
        return out

    @property
    def settings(self) -> dict[str, Any]:
        return family_settings(SETTINGS_KEY, self, automatic=self.automatic)


class NotesoupWorld(FamilyWorld):
    """The model session with notesoup, and everything needed to check it."""

    settings_key = SETTINGS_KEY
    window_index = NotesoupWindows
    runtimes: list[NotesoupRuntime]

    def __init__(self, config: NotesoupConfig) -> None:
        super().__init__(config)
        self.fault = fault_named(config.fault) if config.fault else None
        self.legacy_session: str | None = None
        self.extension = NotesoupExtension(self._runtime)
        tree = self._legacy_tree(config) if config.legacy is not None else None
        self.session = ModelSession(
            self.around_noise(self.extension),
            provider=ScriptedProvider(counter=CharsCounter()),
            settings=host_settings(config, PI_1_6, automatic=config.automatic, cwd=CWD),
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
        self.keep(runtime, audit)
        return runtime

    def apply_session(self, action: Action, serial: int) -> bool:
        return apply_action(self.session, action, serial)


def scenario_config(
    seed: int = 0, fault: str | None = None, legacy: LegacyHistory | None = None
) -> NotesoupConfig:
    """The world every seed scenario runs in (:func:`~pictx_fsm.extensions.shared.kit.world.
    scenario_world`): a window of 40k tokens, so the reminder line sits at 22k tokens left,
    the warning line at 18 384 and the hard reserve at 2k."""
    return scenario_world(NotesoupConfig, 40_000, 20_000, seed=seed, fault=fault, legacy=legacy)


def legacy_from_json(obj: Mapping[str, Any] | None) -> LegacyHistory | None:
    return None if obj is None else LegacyHistory(**dict(obj))
