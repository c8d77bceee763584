"""What every world of the family shares (pi-context's, notesoup's): the model session with
the lifecycle extension between two inert noise extensions (:mod:`.noise`), a sandboxed
notes home, settings read live, every runtime's decision log, and the world actions
(noise, automatic compaction switched mid-run) applied by the world itself. A kit's world
builds its session and its runtimes; the rest is written here once."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, ClassVar, Protocol, TypeVar

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.shared.kit.actions import SetAutomatic
from pictx_fsm.extensions.shared.kit.noise import Arms, EarlyNoise, LateNoise
from pictx_fsm.extensions.shared.kit.notes_sandbox import NotesSandbox
from pictx_fsm.extensions.shared.policy import FrozenScopes
from pictx_fsm.extensions.shared.window_index import SchemeWindowIndex
from pictx_fsm.host.extension import Extension
from pictx_fsm.host.settings import SettingsScopes
from pictx_fsm.hosts.model import ModelSession, TickClock
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing.actions import action_to_json
from pictx_fsm.testing.canon import Canon
from pictx_fsm.testing.coverage import summed_counts
from pictx_fsm.testing.host_world import applied, decisions_of
from pictx_fsm.testing.states import host_state

__all__ = ["FamilyConfig", "FamilyWorld", "LiveSettings", "family_settings", "scenario_world"]

C = TypeVar("C")


class FamilyConfig(Protocol):
    """What the family's world reads of its configuration."""

    @property
    def reserve_tokens(self) -> int: ...

    @property
    def reminder_margin(self) -> int: ...

    @property
    def automatic(self) -> bool: ...


def family_settings(key: str, config: FamilyConfig, *, automatic: bool) -> dict[str, Any]:
    """Pi-style global settings the runtime reads: compaction's reserve and switch, and the
    extension's reminder margin under its settings ``key`` (pi-context R41, R42; notesoup)."""
    return {
        "compaction": {"reserveTokens": config.reserve_tokens, "enabled": automatic},
        key: {"reminderMarginTokens": config.reminder_margin},
    }


def scenario_world(config: Callable[..., C], window: int, margin: int, **fields: Any) -> C:
    """The world a kit's seed scenarios run in (their numbers assume it): a ``window`` of
    tokens with the reminder ``margin``, reserve 2 000, and native compaction keeping only
    1 000 tokens, so ``/compact`` and overflow compaction find something to cut in a short
    story; ``fields`` the rest of the kit's ``config``."""
    return config(
        context_window=window,
        reserve_tokens=2_000,
        reminder_margin=margin,
        keep_recent_tokens=1_000,
        **fields,
    )


class LiveSettings:
    """The settings manager injected into every runtime, read live on every decision
    (pi-context R40, notesoup S50): :class:`~.actions.SetAutomatic` switches
    ``compaction.enabled`` mid-run."""

    def __init__(self, key: str, config: FamilyConfig) -> None:
        self.key = key
        self.config = config
        self.automatic = config.automatic
        self._scopes: dict[tuple[type, bool], FrozenScopes] = {}

    def read(self) -> SettingsScopes:
        """The same scopes while ``automatic`` is unchanged: their policy is resolved once."""
        key = (type(self.automatic), self.automatic)  # True, not 1: the settings spell it
        scopes = self._scopes.get(key)
        if scopes is None:
            settings = family_settings(self.key, self.config, automatic=self.automatic)
            scopes = self._scopes[key] = FrozenScopes.of(settings, {})
        return scopes


class FamilyWorld:
    """The model session with a lifecycle extension of the family, and everything needed to
    check it. A subclass names its settings key and window index, opens :attr:`session`
    (its extensions from :meth:`around_noise`) and applies its own world actions
    (:meth:`apply_own`) and session actions (:meth:`apply_session`)."""

    settings_key: ClassVar[str]
    window_index: ClassVar[type[SchemeWindowIndex]]
    session: ModelSession

    def __init__(self, config: Any) -> None:
        self.config = config
        self.audits: list[AuditLog] = []
        self.runtimes: list[Any] = []
        self.actions: list[Any] = []
        self.applied: list[bool] = []
        self.endless_runs: list[int] = []
        """Serials of actions whose run never settled (an ``EndlessRun``)."""
        self.clock = TickClock()
        self.settings = LiveSettings(self.settings_key, config)
        self.noise = Arms()
        self.notes = NotesSandbox.fresh()
        """The world's notes home, its escape links and the outside it must not touch."""

    def around_noise(self, extension: Extension) -> list[Extension]:
        """The session's extensions: ``extension`` between the early and the late noise."""
        early = EarlyNoise(self.noise, self.session_follow_up)
        return [early, extension, LateNoise(self.noise, self.current_boots)]

    def current_boots(self, tree: SessionTree) -> list[str]:
        """Ids of the current window's boot entries on the active branch (:class:`LateNoise`)."""
        window_id = self.window_index.of(tree).current_window.window_id
        scheme = self.window_index.scheme
        return [e.id for e in tree.branch() if e.id and scheme.boot_window_id(e) == window_id]

    def session_follow_up(self, text: str) -> None:
        self.session.follow_up(text)

    def keep(self, runtime: Any, audit: AuditLog) -> None:
        """A runtime the extension made, and its decision log (Pi re-creates the extension
        on fork and resume, so one world has several runtimes)."""
        self.audits.append(audit)
        self.runtimes.append(runtime)

    def apply(self, action: Any) -> bool:
        """Apply one host action; returns whether the session's state allowed it."""
        serial = len(self.actions)
        done = self._apply_world(action, serial)
        if done is None:
            done = applied(lambda: self.apply_session(action, serial), self.endless_runs, serial)
        self.actions.append(action)
        self.applied.append(done)
        return done

    def _apply_world(self, action: Any, serial: int) -> bool | None:
        """A world action (noise, settings, the kit's own); ``None`` for a session action."""
        if self.noise.arm(action, serial):
            return True
        if isinstance(action, SetAutomatic):
            self.settings.automatic = action.enabled
            self.automatic_switched(action.enabled)
            return True
        return self.apply_own(action, serial)

    def automatic_switched(self, enabled: bool) -> None:
        """What else a switch of ``compaction.enabled`` changes (nothing by default)."""

    def apply_own(self, action: Any, serial: int) -> bool | None:
        """One of the kit's own world actions; ``None`` for any other action."""
        return None

    def apply_session(self, action: Any, serial: int) -> bool:
        raise NotImplementedError

    def transition_counts(self) -> dict[str, int]:
        return summed_counts(log.transition_counts() for log in self.audits)

    def decisions(
        self, detail: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        """Every machine decision so far, compact: what replay compares."""
        return decisions_of(self.audits, detail)

    def describe_actions(self) -> list[dict[str, Any]]:
        return [action_to_json(action) for action in self.actions]

    def now(self) -> int:
        return self.clock.peek()

    def release(self) -> None:
        """Done with this world: its notes sandbox goes to the next one if untouched."""
        self.notes.release()

    def canonical_state(self, canon: Canon) -> Hashable:
        """The model host's observable state, the live runtime's frozen state, what the kit
        adds (:meth:`held_state`), the world around the session (armed noise, the live
        setting) and the notes the tools wrote (:mod:`pictx_fsm.testing.states`). The audit
        logs and the host log are history: never read back."""
        return (
            host_state(self.session, canon),
            canon(self.runtimes[-1].state if self.runtimes else None),
            *self.held_state(canon),
            (self.noise.void, self.noise.hide_boot, canon(self.noise.queue)),
            self.settings.automatic,
            canon(self.notes.contents()),
        )

    def held_state(self, canon: Canon) -> tuple[Hashable, ...]:
        """What else the world holds that decides what happens next (nothing by default)."""
        return ()
