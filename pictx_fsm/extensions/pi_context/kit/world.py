"""A world: the lifecycle runtime plugged into the model session, ready to be driven.

:class:`WorldConfig` is everything that makes a run reproducible (profile, seed, the model's
context window, the settings that place the reminder, warning and reserve lines, how much
native compaction keeps, an optional planted fault). :class:`World` builds the model session
with the lifecycle extension between two inert noise extensions (:mod:`.noise`), keeps every
runtime's audit log (Pi re-creates the extension on fork and resume, so one world has several
runtimes) and applies host actions — the world actions (noise, settings) itself.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import attrs
from attrs import evolve, frozen

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context.adapter import LifecycleExtension
from pictx_fsm.extensions.pi_context.kit.actions import Action, AimAt, KillRuntime, apply_action
from pictx_fsm.extensions.pi_context.kit.boundary import aim, lines_now
from pictx_fsm.extensions.pi_context.kit.faults import fault_named, faulty_lifecycle
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import resolve_arguments
from pictx_fsm.extensions.pi_context.kit.observed import ObservedRuntime
from pictx_fsm.extensions.pi_context.kit.tool_coverage import tool_outcomes
from pictx_fsm.extensions.pi_context.kit.view import BudgetInputs
from pictx_fsm.extensions.pi_context.lifecycle import Lifecycle, load_lifecycle
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import PI_CONTEXT_SETTINGS_KEY, Profile
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.extensions.shared.kit.world import FamilyWorld, family_settings, scenario_world
from pictx_fsm.hosts.model import ModelSession, ScriptedProvider
from pictx_fsm.hosts.model.profiles import DEFAULT_HOST_PROFILE, HOST_PROFILES, host_profile
from pictx_fsm.hosts.pi.twin import BridgeTwin
from pictx_fsm.session.estimate import CharsCounter, TiktokenCounter, TokenCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing.canon import Canon
from pictx_fsm.testing.host_world import ModelConfig, faux_usage, host_settings

__all__ = [
    "USAGE_ACCOUNTINGS",
    "World",
    "WorldConfig",
    "scenario_config",
    "shared_counter",
    "world_lifecycle",
]

USAGE_ACCOUNTINGS = ("estimated", "faux")


@functools.cache
def shared_counter() -> TiktokenCounter:
    """The runtimes' token counter, one per process: its counts are a pure function of the
    text, and verify's worlds count the same boots, prompts and replies again and again
    (a counter per runtime encoded each of them again in every world, fork and resume)."""
    return TiktokenCounter()


@frozen(kw_only=True)
class WorldConfig(ModelConfig):
    """The reproducible parameters of one generated run."""

    profile: str = Profile.V0_25_1.value
    reminder_margin: int = 4_000
    automatic: bool = True
    usage: str = attrs.field(default="estimated", validator=attrs.validators.in_(USAGE_ACCOUNTINGS))
    """The scripted provider's usage figures: ``estimated`` (a real provider's total) or ``faux``
    (pi-ai's
    faux provider, cache arithmetic included: what real-Pi runs on the faux model report)."""
    host: str = attrs.field(
        default=DEFAULT_HOST_PROFILE.name, validator=attrs.validators.in_(tuple(HOST_PROFILES))
    )
    """The Pi version the model session behaves as (``pi-0.87``, ``pi-1.6``)."""
    settings_cached: bool = False
    """pi-context reads its settings as Pi's file-backed manager, cached until a transition
    (R40, R55), as the bridge in the real Pi does — not live on every decision, as from an
    injected settings manager (the default)."""
    session_ids: str = attrs.field(
        default="random", validator=attrs.validators.in_(("random", "clock"))
    )
    """How the model session mints session ids: at random (sessions made minutes apart, the
    default), or from its clock, as a short real run's UUIDv7 ids (see ``HostSettings``)."""

    @property
    def settings(self) -> dict[str, Any]:
        """Pi-style global settings the runtime reads (R41, R42)."""
        return family_settings(PI_CONTEXT_SETTINGS_KEY, self, automatic=self.automatic)


def world_lifecycle(fault: str | None) -> Lifecycle:
    """The lifecycle a world runs: the declared one, or the one with ``fault`` planted."""
    return faulty_lifecycle(fault) if fault else load_lifecycle()


class World(FamilyWorld):
    """The model session with the lifecycle extension, and everything needed to check it."""

    settings_key = PI_CONTEXT_SETTINGS_KEY
    window_index = WindowIndex
    runtimes: list[ObservedRuntime]

    def __init__(
        self,
        config: WorldConfig,
        lifecycle: Lifecycle | None = None,
        system_message: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(config)
        fault = fault_named(config.fault) if config.fault else None
        self.lifecycle = lifecycle if lifecycle is not None else world_lifecycle(config.fault)
        # The lifecycle as the Pi bridge runs it: a KillRuntime action can take it down.
        self.extension = BridgeTwin(LifecycleExtension(self._runtime))
        profile = host_profile(config.host)
        host = host_settings(
            config,
            profile,
            automatic=config.automatic,
            system_message=system_message,
            session_ids=config.session_ids,
        )
        provider = ScriptedProvider(
            counter=CharsCounter(),
            usage=faux_usage(profile, config.usage),
            arguments=lambda arguments: resolve_arguments(arguments, self.session.tree),
        )
        self.session = ModelSession(
            self.around_noise(self.extension),
            provider=provider,
            settings=host,
            rng=random.Random(config.seed),
            clock=self.clock,
            counter=CharsCounter(),
        )
        self.extension.attach(self.session)
        if fault is not None and fault.host is not None:
            fault.host(self.session)

    def _runtime(self, tree: SessionTree) -> LifecycleRuntime:
        index = len(self.runtimes)
        audit = AuditLog()
        runtime = ObservedRuntime(
            tree,
            profile=self.config.profile,
            settings=self.settings,
            rng=random.Random(f"pictx-runtime:{self.config.seed}:{index}"),
            clock=self.clock,
            lifecycle=self.lifecycle,
            audit=audit,
            notes_home=self.notes.root,
            counter=shared_counter(),
            cache_policy=self.config.settings_cached,
        )
        self.keep(runtime, audit)
        return runtime

    @property
    def profile(self) -> Profile:
        return Profile.parse(self.config.profile)

    @property
    def lifecycle_down(self) -> bool:
        return self.extension.broken

    @property
    def observed(self) -> list[ObservedRuntime]:
        return self.runtimes

    @property
    def budget(self) -> BudgetInputs:
        config = self.config
        return BudgetInputs(
            reserve=config.reserve_tokens,
            margin=config.reminder_margin,
            automatic=self.settings.automatic,
        )

    @property
    def counter(self) -> TiktokenCounter:
        return shared_counter()

    def apply_session(self, action: Action, serial: int) -> bool:
        return apply_action(self.session, action, serial=serial)

    def automatic_switched(self, enabled: bool) -> None:
        """Pi's own compaction reads the same setting."""
        host = self.session.settings
        compaction = evolve(host.compaction, enabled=enabled)
        self.session.rewrite_settings(evolve(host, compaction=compaction))

    def apply_own(self, action: Any, serial: int) -> bool | None:
        if isinstance(action, KillRuntime):
            self.extension.kill(permanent=action.permanent)
            return True
        if isinstance(action, AimAt):
            return self._aim(action, serial)
        return None

    def _aim(self, action: AimAt, serial: int) -> bool:
        """:func:`~.boundary.aim` on the lines the policy resolves now, the usage read as
        the lifecycle reads it: the host's in the root window, the window's estimate after
        a marker (R47, R48)."""
        lines = lines_now(self.settings, self.session.model)
        return aim(self.session, action, lines, self._usage_reading(), serial)

    def _usage_reading(self) -> tuple[Callable[[], int | None], TokenCounter]:
        tree = self.session.tree
        live = [r for r in self.runtimes if r.tree is tree]
        if WindowIndex.of(tree).current_window.is_root or not live:
            return self.session.store.context_tokens, CharsCounter()
        return live[-1].services.usage.window_tokens, shared_counter()

    def tool_outcomes(self) -> Counter[str]:
        """``<tool>:<status>`` of every notes and history tool call so far."""
        return sum((tool_outcomes(log.records) for log in self.audits), Counter())

    def decisions(
        self, detail: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        """Every machine decision (and notes/history tool outcome) so far, compact: what
        replay compares."""
        return super().decisions(detail or _tool_outcome)

    def held_state(self, canon: Canon) -> tuple[Hashable, ...]:
        """What the bridge twin holds (its transition histories are history: never read
        back)."""
        twin = self.extension
        held = twin.held
        lease = (
            None if held is None else (held.lease, held.bound, held.leaf, held.policy, held.model)
        )
        return (
            (
                twin.alive,
                twin.broken,
                twin.reset_pending,
                canon(twin.toggle),
                canon(tuple(twin.queued)),
                canon(twin.source),
                canon(frozenset(twin.told)),
                canon(lease),
                twin.leasing.state,
                twin.connection.state,
                twin.connection.restarts,
            ),
        )


def _tool_outcome(record: Mapping[str, Any]) -> dict[str, Any]:
    outcome = tool_outcomes([record])
    return {"tool": next(iter(outcome))} if outcome else {}


def scenario_config(
    profile: str, seed: int = 0, fault: str | None = None, host: str = DEFAULT_HOST_PROFILE.name
) -> WorldConfig:
    """The world every seed scenario runs in (:func:`~pictx_fsm.extensions.shared.kit.world.
    scenario_world`, a window of 36k tokens): a short story reaches
    ``session_before_compact``."""
    fields = {"profile": profile, "seed": seed, "fault": fault, "host": host}
    return scenario_world(WorldConfig, 36_000, 16_000, **fields)
