"""A world for any extension that speaks the host contract: the extension on the model
session (Pi in a host profile), driven by host actions, its decisions read back from the
audit logs it writes.

An extension whose kit needs nothing more than hooks in and results out — no other
extensions around it, no host faults of its own — uses this world as it is: the kit builds
its extensions from the world (``extensions(world)``), each runtime records its decisions in
a log from :meth:`HostWorld.audit_log`, and the generic exploration, traces, coverage and
replay do the rest (``docs/extending.md``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Self

import attrs
from attrs import frozen

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.host.events import ModelInfo
from pictx_fsm.host.extension import Extension
from pictx_fsm.hosts.model import (
    CompactionSettings,
    HostSettings,
    ModelSession,
    ScriptedProvider,
    TickClock,
)
from pictx_fsm.hosts.model.profiles import (
    DEFAULT_HOST_PROFILE,
    HOST_PROFILES,
    HostProfile,
    host_profile,
)
from pictx_fsm.hosts.model.provider_usage import FauxCacheUsage
from pictx_fsm.session.estimate import CharsCounter
from pictx_fsm.testing.actions import HOST_ACTION_TYPES, EndlessRun, apply_action
from pictx_fsm.testing.canon import Canon
from pictx_fsm.testing.coverage import summed_counts
from pictx_fsm.testing.kit import TraceFormatError, config_of
from pictx_fsm.testing.states import host_state, recorded_inputs

__all__ = [
    "HostConfig",
    "HostWorld",
    "ModelConfig",
    "applied",
    "decisions_of",
    "faux_model",
    "faux_usage",
    "host_settings",
]


@frozen(kw_only=True)
class ModelConfig:
    """What every world on the model session is configured with — the seed, the faux model's
    window, Pi's compaction reserve and what native compaction keeps, the planted fault —
    the defaults a kit's configuration does not change, its own fields after them."""

    seed: int = 0
    context_window: int = 32_000
    max_tokens: int = 4_096
    reserve_tokens: int = 2_000
    keep_recent_tokens: int = 20_000
    """Pi's ``compaction.keepRecentTokens``: below it native compaction finds nothing to cut."""
    fault: str | None = None

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Self:
        """A configuration from a trace's fields; an unknown field is a :class:`ValueError`
        naming it."""
        return config_of(cls, obj)


def faux_model(config: ModelConfig, model_id: str = "faux-1") -> ModelInfo:
    """The faux model a world's session runs, with the configured window."""
    return ModelInfo(
        provider="faux",
        id=model_id,
        context_window=config.context_window,
        max_tokens=config.max_tokens,
    )


def host_settings(
    config: ModelConfig,
    profile: HostProfile,
    *,
    automatic: bool = True,
    model: ModelInfo | None = None,
    **more: Any,
) -> HostSettings:
    """The model session's settings for ``config``: its faux model (or ``model``), Pi's
    compaction settings (``automatic``: ``compaction.enabled``) and ``more``."""
    compaction = CompactionSettings(
        enabled=automatic,
        reserve_tokens=config.reserve_tokens,
        keep_recent_tokens=config.keep_recent_tokens,
    )
    return HostSettings(
        profile=profile, model=model or faux_model(config), compaction=compaction, **more
    )


def faux_usage(profile: HostProfile, usage: str) -> FauxCacheUsage | None:
    """The provider's usage figures: ``faux`` — pi-ai's faux provider's, cache arithmetic as
    the profile's Pi counts it; otherwise the estimate (``None``)."""
    if usage != "faux":
        return None
    return FauxCacheUsage(input_counted_once=profile.faux_input_counted_once)


def applied(apply: Callable[[], bool], endless_runs: list[int], serial: int) -> bool:
    """``apply()``'s answer; a run that never settles (:class:`EndlessRun`) was applied, and
    its action's ``serial`` is recorded in ``endless_runs``."""
    try:
        return apply()
    except EndlessRun:
        endless_runs.append(serial)
        return True


@frozen(kw_only=True)
class HostConfig(ModelConfig):
    """What makes a run on the model session reproducible."""

    host: str = DEFAULT_HOST_PROFILE.name
    """The Pi version the model session behaves as (``pi-0.87``, ``pi-1.6``)."""

    @classmethod
    def from_json(cls, obj: Any, faults: Sequence[str] = ()) -> Self:
        """A configuration from a trace; every field typed, the fault one of ``faults``."""
        if not isinstance(obj, Mapping):
            raise TraceFormatError("field 'config' must be an object")
        known = {f.name: f for f in attrs.fields(cls)}
        unknown = sorted(set(obj) - set(known), key=str)
        if unknown:
            raise TraceFormatError(f"field 'config' has unknown field(s): {unknown}")
        for name, value in obj.items():
            if name in ("fault", "host"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TraceFormatError(f"field 'config.{name}' must be an integer ≥ 0")
        config = cls(**dict(obj))
        if config.reserve_tokens >= config.context_window:
            raise TraceFormatError(
                "field 'config.reserve_tokens' must be below 'config.context_window'"
            )
        if config.fault is not None and config.fault not in faults:
            raise TraceFormatError(f"field 'config.fault': no planted fault {config.fault!r}")
        if config.host not in HOST_PROFILES:
            raise TraceFormatError(f"field 'config.host' must be one of {sorted(HOST_PROFILES)}")
        return config


Extensions = Callable[["HostWorld"], Sequence[Extension]]
"""Builds the world's extensions, in load order (called once, when the session starts)."""


class HostWorld:
    """Extensions on the model session, driven by host actions."""

    def __init__(self, config: HostConfig, extensions: Extensions) -> None:
        self.config = config
        self.audits: list[AuditLog] = []
        self.actions: list[Any] = []
        self.applied: list[bool] = []
        self.endless_runs: list[int] = []
        self.clock = TickClock()
        self.session = ModelSession(
            extensions(self),
            provider=ScriptedProvider(counter=CharsCounter()),
            settings=host_settings(config, host_profile(config.host)),
            rng=random.Random(config.seed),
            clock=self.clock,
            counter=CharsCounter(),
        )

    def audit_log(self) -> AuditLog:
        """A fresh decision log for one runtime instance (Pi re-creates an extension on
        fork, resume and reload, so a world may hold several)."""
        log = AuditLog()
        self.audits.append(log)
        return log

    def apply(self, action: Any) -> bool:
        """A host action; ``False`` when the session's state does not allow it."""
        serial = len(self.actions)
        self.actions.append(action)
        if type(action).KIND not in HOST_ACTION_TYPES:
            raise TypeError(f"{type(action).__name__} is not a host action")
        done = applied(
            lambda: apply_action(self.session, action, serial), self.endless_runs, serial
        )
        self.applied.append(done)
        return done

    def transition_counts(self) -> dict[str, int]:
        return summed_counts(log.transition_counts() for log in self.audits)

    def decisions(self) -> list[dict[str, Any]]:
        return decisions_of(self.audits)

    def canonical_state(self, canon: Canon) -> Hashable:
        """The host's observable state and every decision its extensions recorded (their
        state is a function of what they were given: :mod:`pictx_fsm.testing.states`)."""
        return (host_state(self.session, canon), recorded_inputs(self.audits, canon))

    def now(self) -> int:
        return self.clock.peek()

    def release(self) -> None:
        """Nothing outlives a world."""


def decisions_of(
    audits: Sequence[AuditLog],
    detail: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Every machine decision the logs recorded, compact (what a replay compares): the
    runtime, the record's ``seq``, its hook and the transitions that fired (and what
    ``detail`` adds of the record)."""
    out = []
    for index, log in enumerate(audits):
        for record in log.records:
            fired = [t["id"] for step in record["steps"] for t in step["transitions"]]
            decision = {
                "runtime": index,
                "seq": record["seq"],
                "hook": record["hook"],
                "fired": fired,
            }
            if detail is not None:
                decision.update(detail(record))
            out.append(decision)
    return out
