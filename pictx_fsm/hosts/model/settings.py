"""Settings of the model host: the model and Pi's ``retry`` and ``compaction`` settings.

Defaults are Pi 0.87.1's (pi-host §7; the host profile ``pi-0.87``):
``retry.{enabled=true, maxRetries=3, baseDelayMs=2000}``,
``compaction.{enabled=true, reserveTokens=16384, keepRecentTokens=20000}``; the default model
is the faux model of the SDK traces (context window 200000, max tokens 16384).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from attrs import field, frozen

from pictx_fsm.host.events import ModelInfo
from pictx_fsm.host.settings import CompactionSettings, StaticSettingsSource, window_problem
from pictx_fsm.hosts.model.errors import HostSettingsError
from pictx_fsm.hosts.model.profiles import DEFAULT_HOST_PROFILE, HostProfile

__all__ = ["FAUX_MODEL", "CompactionSettings", "HostSettings", "RetrySettings", "settings_problem"]

FAUX_MODEL = ModelInfo(provider="faux", id="faux-1", context_window=200_000, max_tokens=16_384)


@frozen(kw_only=True)
class RetrySettings:
    """``retry.*``: host retries of transient provider errors (``e3``)."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000


@frozen(kw_only=True)
class HostSettings:
    """Everything the model host is configured with; frozen, so a run is reproducible."""

    model: ModelInfo = FAUX_MODEL
    thinking_level: str = "off"
    retry: RetrySettings = field(factory=RetrySettings)
    compaction: CompactionSettings = field(factory=CompactionSettings)
    cwd: str = "/workspace"
    session_dir: str = "/workspace/sessions"
    project_trusted: bool = False
    """``ctx.isProjectTrusted()``: whether the project's own settings apply (R40)."""
    extension_settings: Mapping[str, Mapping[str, Any]] = field(factory=dict)
    """Extensions' own objects of ``settings.json`` by key (``{"pi-context":
    {"reminderMarginTokens": 4000}}``): Pi stores them beside its own and never reads them."""
    session_ids: Literal["random", "clock"] = "random"
    """How new session ids are minted (:func:`~pictx_fsm.hosts.model.replace.new_session_id`):
    from the clock, as Pi's UUIDv7 ids made within a short run, or at random."""
    system_message: Mapping[str, Any] | None = None
    """The full system message of a session's first request as a real Pi sent it (sections,
    tools), instead of the model's own short one: with it, every request the model session
    sends is as long as the real Pi's, so usage and overflows agree to the token (the
    differential runs take it from the Pi they compare with)."""

    def settings_source(self) -> StaticSettingsSource:
        """The settings an extension on this host reads: the host's own ``compaction``
        values (so native compaction and the extension agree) and the extensions' objects."""
        settings: dict[str, Any] = {"compaction": self.compaction.to_json()}
        settings.update({key: dict(value) for key, value in self.extension_settings.items()})
        return StaticSettingsSource(global_settings=settings)

    profile: HostProfile = DEFAULT_HOST_PROFILE
    """The Pi version the session behaves as (:mod:`~pictx_fsm.hosts.model.profiles`)."""

    def __attrs_post_init__(self) -> None:
        problem = settings_problem(self)
        if problem is not None:
            raise HostSettingsError(f"host settings refused: {problem}")


def settings_problem(settings: HostSettings) -> str | None:
    """Why no turn could complete with these settings, or ``None``: Pi compacts once the
    context passes ``contextWindow - reserveTokens``, so a window without tokens, a negative
    reserve or one that fills the window would make every turn compact (or overflow) again."""
    output = settings.model.max_tokens
    if output is not None and output <= 0:
        return f"model.max_tokens must be positive, got {output}"
    if settings.compaction.keep_recent_tokens < 0:
        return "compaction.keep_recent_tokens must not be negative"
    return window_problem(
        settings.model.context_window,
        settings.compaction.reserve_tokens,
        window_name="model.context_window",
        reserve_name="compaction.reserve_tokens",
    )
