"""pi-context's part of the differential: the bridge on the real Pi, the world on the model
session, how its own actions are realised, and the runs the generator draws
(:mod:`.differential_runs`).

Its commands run as Pi runs them (``/wipe-memory`` while idle, ``/pi-context`` while idle or,
through the driver, inside a hook); a settings change rewrites Pi's ``settings.json``, which
the bridge reads afresh at every decision as the world's live settings are read; another
extension's doing (a voided boundary, a hidden boot, a follow-up queued at settle) is the
driver's, loaded after the bridge (the early half before it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

import attrs

from pictx_fsm.extensions.pi_context.kit.actions import (
    BOUNDARY_TYPES,
    HideBoot,
    QueueAtSettle,
    SetAutomatic,
    Toggle,
    VoidNextBoundary,
    WipeCommand,
    filler,
)
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    MARKER_TYPE,
    PI_CONTEXT_COMMAND,
    PI_CONTEXT_SETTINGS_KEY,
    ROOT_WINDOW_SUFFIX,
    WINDOW_ID_PREFIX,
    WIPE_MEMORY_COMMAND,
)
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.hosts.pi.server import AUDIT_DIR_ENV, EXTENSION, PROFILE_ENV
from pictx_fsm.testing.differential.kit import (
    Category,
    DifferentialKit,
    Realised,
    prompt,
    settings_command,
)

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["DIFFERENTIAL", "PiContextDifferential"]

JSON: TypeAlias = Any
RETRY_DELAY_MS = 1
"""Pi's retry back-off in the runs (``retry.baseDelayMs``): the model session's retry wait is
a host step, not a clock."""
_ARMS = {VoidNextBoundary: "void", HideBoot: "hide_boot", QueueAtSettle: "queue"}


def settings_of(config: WorldConfig, automatic: bool) -> dict[str, JSON]:
    """Pi's ``settings.json`` for a world: what the world's live settings hold (R41, R42), the
    native compaction the model host runs with, and a retry back-off of a millisecond."""
    return {
        "compaction": {
            "enabled": automatic,
            "reserveTokens": config.reserve_tokens,
            "keepRecentTokens": config.keep_recent_tokens,
        },
        PI_CONTEXT_SETTINGS_KEY: {"reminderMarginTokens": config.reminder_margin},
        "retry": {"baseDelayMs": RETRY_DELAY_MS},
    }


class PiContextDifferential(DifferentialKit):
    name: ClassVar[str] = "pi-context"

    def entries(self) -> Sequence[Path]:
        return (EXTENSION,)

    def environment(self, config: WorldConfig, work: Path) -> Mapping[str, str]:
        return {PROFILE_ENV: config.profile, AUDIT_DIR_ENV: str(self.audit_dir(work))}

    def settings(self, config: WorldConfig) -> Mapping[str, JSON]:
        return settings_of(config, config.automatic)

    def boundary(self) -> Mapping[str, JSON]:
        return {
            "marker": MARKER_TYPE,
            "types": sorted(BOUNDARY_TYPES),
            "windowKey": "windowId",
            "boot": BOOT_TYPE,
            "rootWindow": f"{WINDOW_ID_PREFIX}{{session}}{ROOT_WINDOW_SUFFIX}",
        }

    def category(self, action: Any) -> Category | None:
        if isinstance(action, WipeCommand):
            return Category.IDLE
        if isinstance(action, Toggle | SetAutomatic | VoidNextBoundary | HideBoot | QueueAtSettle):
            return Category.EITHER
        return super().category(action)

    def realise(self, action: Any, serial: int, config: WorldConfig) -> Realised:
        if isinstance(action, WipeCommand):
            return Realised(idle=prompt(f"/{WIPE_MEMORY_COMMAND}"))
        if isinstance(action, Toggle):
            text = f"/{PI_CONTEXT_COMMAND} {action.arg}".rstrip()
            return Realised(idle=prompt(text), act={"do": "command", "text": text})
        if isinstance(action, SetAutomatic):
            return settings_command(settings_of(config, action.enabled))
        arm = _ARMS.get(type(action))
        if arm is not None:
            text = self._queued(action, serial)
            words = f"/drive-arm {arm}{' ' + text if text else ''}"
            act = {"do": "arm", "what": arm, **({"text": text} if text else {})}
            return Realised(idle=prompt(words), act=act)
        return super().realise(action, serial, config)

    @staticmethod
    def _queued(action: Any, serial: int) -> str:
        return (
            filler(f"settle-follow-up-{serial}", action.chars)
            if isinstance(action, QueueAtSettle)
            else ""
        )

    def texts(self, action: Any, serial: int) -> Sequence[str]:
        queued = self._queued(action, serial)
        return (queued,) if queued else super().texts(action, serial)

    def world(self, config: WorldConfig, system_message: Mapping[str, JSON] | None) -> World:
        return World(config, system_message=system_message)

    def session_of(self, world: World) -> ModelSession:
        return world.session

    def config_for(self, config: WorldConfig, host_profile: str) -> WorldConfig:
        return attrs.evolve(
            config, host=host_profile, usage="faux", settings_cached=True, session_ids="clock"
        )

    def runs(
        self, host_profile: str, max_actions: int
    ) -> SearchStrategy[tuple[Any, tuple[Any, ...]]]:
        from pictx_fsm.extensions.pi_context.kit.differential_runs import differential_runs

        return differential_runs(host_profile, max_actions)


DIFFERENTIAL = PiContextDifferential()
