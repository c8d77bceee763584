"""notesoup's budget policy (S49–S51, S117–S119): the family's policy bound to notesoup's
rules — the ``notesoup`` settings key (the old ``pi-context`` key is ignored), the
16384-token warning runway and notesoup's two warning texts."""

from __future__ import annotations

from typing import Final

from pictx_fsm.extensions.notesoup.texts import (
    NOTICE_INVALID_MARGIN,
    NOTICE_SETTINGS_UNREADABLE,
    SETTINGS_KEY,
    WARNING_RUNWAY_TOKENS,
)
from pictx_fsm.extensions.shared import policy as shared
from pictx_fsm.extensions.shared.policy import Policy, PolicyRules
from pictx_fsm.host.settings import ModelIdentity, SettingsSource

__all__ = ["DEFAULT_THRESHOLDS", "RULES", "hard_reserve_due", "resolve_policy"]

RULES: Final = PolicyRules(
    settings_key=SETTINGS_KEY,
    warning_runway=WARNING_RUNWAY_TOKENS,
    invalid_margin=NOTICE_INVALID_MARGIN,
    settings_unreadable=NOTICE_SETTINGS_UNREADABLE,
)
DEFAULT_THRESHOLDS: Final = shared.default_thresholds(RULES)
"""At reserve 16384: reminder 40960, warning 32768 (S49)."""


def resolve_policy(source: SettingsSource, model: ModelIdentity | None = None) -> Policy:
    """S49–S51: read the source once and derive notesoup's policy for ``model``."""
    return shared.resolve_policy(source, model, RULES)


def hard_reserve_due(usage: shared.Usage, policy: Policy) -> bool:
    """S60: automatic, usage known and ``contextWindow − tokens ≤ reserve`` (unclamped)."""
    return shared.reset_due(usage, policy.thresholds.reserve, policy.automatic)
