"""pi-context 0.25's budget policy: the family's policy (:mod:`pictx_fsm.extensions.shared.
policy`, Pi's settings, thresholds and usage arithmetic) bound to pi-context's rules — the
``pi-context`` settings key, the 12288-token warning runway (R44) and its two warning texts.

The shared module's names are available here, so ``policy.Usage`` reads as before; the
functions whose answer depends on the rules take pi-context's. Pi's settings (sources,
scopes, ``compaction`` values) are the host's, :mod:`pictx_fsm.host.settings`; their old
names here still resolve, with a warning.
"""

from __future__ import annotations

from typing import Final

from pictx_fsm.extensions.pi_context.texts import (
    NOTICE_INVALID_MARGIN,
    NOTICE_SETTINGS_UNREADABLE,
    PI_CONTEXT_SETTINGS_KEY,
    WARNING_RUNWAY_TOKENS,
)
from pictx_fsm.extensions.shared import policy as shared
from pictx_fsm.extensions.shared.policy import (
    DEFAULT_REMINDER_MARGIN_TOKENS,
    REMINDER_MARGIN_KEY,
    FrozenScopes,
    Policy,
    PolicyRules,
    ReminderStage,
    Thresholds,
    Usage,
    guidance_count,
    remaining,
    reminder_stage,
    reset_due,
    tool_remaining,
)
from pictx_fsm.host.settings import ModelIdentity, SettingsScopes, SettingsSource
from pictx_fsm.session.entries import ABSENT

__all__ = [
    "DEFAULT_REMINDER_MARGIN_TOKENS",
    "DEFAULT_THRESHOLDS",
    "REMINDER_MARGIN_KEY",
    "RULES",
    "FrozenScopes",
    "Policy",
    "ReminderStage",
    "Thresholds",
    "Usage",
    "default_policy",
    "derive_thresholds",
    "guidance_count",
    "pi_context_settings",
    "remaining",
    "reminder_stage",
    "reset_due",
    "resolve_policy",
    "tool_remaining",
    "validate_margin",
]

RULES: Final = PolicyRules(
    settings_key=PI_CONTEXT_SETTINGS_KEY,
    warning_runway=WARNING_RUNWAY_TOKENS,
    invalid_margin=NOTICE_INVALID_MARGIN,
    settings_unreadable=NOTICE_SETTINGS_UNREADABLE,
)
DEFAULT_THRESHOLDS: Final = shared.default_thresholds(RULES)


def derive_thresholds(reserve: int, margin: int) -> Thresholds:
    """R44: ``reminder = reserve + margin``, ``warning = reserve + 12288``.

    pre: reserve >= 0
    pre: margin > 0
    post: __return__.warning - __return__.reserve == 12288
    """
    return shared.derive_thresholds(reserve, margin, WARNING_RUNWAY_TOKENS)


def validate_margin(raw: object = ABSENT) -> tuple[int, str | None]:
    """R43: the reminder margin to use and the warning to show, if any."""
    return shared.validate_margin(raw, NOTICE_INVALID_MARGIN)


def pi_context_settings(scopes: SettingsScopes) -> dict[str, object]:
    """R42: the ``pi-context`` objects of both scopes, merged per key, project winning."""
    return shared.extension_settings(scopes, PI_CONTEXT_SETTINGS_KEY)


def default_policy(warnings: tuple[str, ...] = ()) -> Policy:
    """R45's fallback: default thresholds, automatic reset on."""
    return shared.default_policy(RULES, warnings)


def resolve_policy(source: SettingsSource, model: ModelIdentity | None = None) -> Policy:
    """R40–R45: read the source once and derive pi-context's policy for ``model``."""
    return shared.resolve_policy(source, model, RULES)


def __getattr__(name: str) -> object:
    """Pi's settings moved to :mod:`pictx_fsm.host.settings` (0.2)."""
    from pictx_fsm._moved import moved_attribute

    return moved_attribute(__name__, name)
