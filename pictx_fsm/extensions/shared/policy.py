"""Budget policy: settings, thresholds and the usage arithmetic of the active window, for the
pi-context family (pi-context 0.25 and notesoup 0.38 read Pi's settings the same way, S50).

What differs between the two is data, a :class:`PolicyRules`: the settings key an extension
reads its margin from (``pi-context`` against ``notesoup``), the runway between the reserve
and the warning line (12288 against 16384) and the two warning texts. Each extension binds
its rules in its own ``policy`` module.

Spec: lifecycle.md §9.1 (R40–R46), §9.2 (R49, R50), §9.3 (R51, R52), R17. Everything here
is a pure decision. The arithmetic functions carry PEP 316 contracts (``pre:``/``post:``) for
CrossHair.

Pi's settings themselves (scopes, merge, ``compaction`` values, sources) are the host's
(:mod:`pictx_fsm.host.settings`); this module reads the family's part of them:

* The extension's objects (``pi-context``, ``notesoup``) of the two scopes are merged
  shallowly, project winning; a scope whose object is not a plain object contributes nothing
  (R42, S117).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from attrs import field, frozen

from pictx_fsm import js
from pictx_fsm.host.settings import (
    DEFAULT_RESERVE_TOKENS,
    ModelIdentity,
    SettingsScopes,
    SettingsSource,
    compaction_settings,
    deep_merge,
    model_key,
    read_only,
)
from pictx_fsm.session.entries import ABSENT

__all__ = [
    "DEFAULT_REMINDER_MARGIN_TOKENS",
    "REMINDER_MARGIN_KEY",
    "FrozenScopes",
    "Policy",
    "PolicyRules",
    "ReminderStage",
    "Thresholds",
    "Usage",
    "default_policy",
    "default_thresholds",
    "derive_thresholds",
    "extension_settings",
    "guidance_count",
    "remaining",
    "reminder_stage",
    "reset_due",
    "resolve_policy",
    "tool_remaining",
    "validate_margin",
]

JSON = Any

DEFAULT_REMINDER_MARGIN_TOKENS: Final = 24576
"""The family's reminder margin default (R43, S118)."""
REMINDER_MARGIN_KEY: Final = "reminderMarginTokens"


@frozen(kw_only=True)
class PolicyRules:
    """What one extension of the family reads differently: its settings key, the runway
    between the reserve and the warning line, and its two warning texts (the unreadable
    one a ``str.format`` template with ``{error}``)."""

    settings_key: str
    warning_runway: int
    invalid_margin: str
    settings_unreadable: str


# -- thresholds (R43, R44) -----------------------------------------------------------------


@frozen(kw_only=True)
class Thresholds:
    """The three budget lines, as tokens remaining in the window."""

    reserve: int
    reminder: int
    warning: int


def derive_thresholds(reserve: int, margin: int, runway: int) -> Thresholds:
    """R44/S49: ``reminder = reserve + margin``, ``warning = reserve + runway``.

    pre: reserve >= 0
    pre: margin > 0
    pre: runway > 0
    post: __return__.reserve == reserve
    post: __return__.reserve < __return__.warning
    post: __return__.reserve < __return__.reminder
    post: __return__.warning - __return__.reserve == runway
    """
    return Thresholds(reserve=reserve, reminder=reserve + margin, warning=reserve + runway)


def default_thresholds(rules: PolicyRules) -> Thresholds:
    """The lines at Pi's default reserve and the default margin."""
    return derive_thresholds(
        DEFAULT_RESERVE_TOKENS, DEFAULT_REMINDER_MARGIN_TOKENS, rules.warning_runway
    )


def validate_margin(raw: object, invalid: str) -> tuple[int, str | None]:
    """R43: the reminder margin to use and the warning to show, if any.

    ``ABSENT`` (the key is missing) gives the default silently. Anything present that is not a
    safe positive integer in JS terms gives the default and the warning: ``0``, negatives,
    non-integral numbers, booleans, strings, ``null``, arrays, objects. A JSON ``30000.0`` is
    the JS number 30000 and is valid. ``invalid`` is the extension's warning text.

    post: __return__[0] > 0
    post: (__return__[1] is None) == (raw is ABSENT or __return__[0] == raw)
    """
    if raw is ABSENT:
        return DEFAULT_REMINDER_MARGIN_TOKENS, None
    if js.is_safe_integer(raw) and raw > 0:  # type: ignore[operator]
        return int(raw), None  # type: ignore[call-overload]
    return DEFAULT_REMINDER_MARGIN_TOKENS, invalid


# -- settings sources (R40–R42, R45) -------------------------------------------------------


@frozen(kw_only=True)
class FrozenScopes(SettingsScopes):
    """Settings scopes that never change: every object in them a read-only view (arrays are
    kept as given), built by :meth:`of`. The policy they give a model is resolved once
    (:func:`resolve_policy` keeps it here): a source that hands out the same scopes while its
    settings are unchanged — verify's live settings, read on every hook — resolves once per
    change."""

    resolved: dict[tuple[PolicyRules, str | None], Policy] = field(
        factory=dict, init=False, eq=False, repr=False
    )
    """The policy resolved for each extension's rules and model key (:func:`model_key`)."""

    @classmethod
    def of(
        cls,
        global_settings: Mapping[str, JSON],
        project_settings: Mapping[str, JSON],
        diagnostics: tuple[str, ...] = (),
    ) -> FrozenScopes:
        return cls(
            global_settings=read_only(global_settings),
            project_settings=read_only(project_settings),
            diagnostics=diagnostics,
        )


def extension_settings(scopes: SettingsScopes, key: str) -> dict[str, JSON]:
    """R42/S117: the ``key`` objects of both scopes, merged per key, project winning."""
    merged: dict[str, JSON] = {}
    for settings in (scopes.global_settings, scopes.project_settings):
        section = settings.get(key) if js.is_plain_object(settings) else None
        if js.is_plain_object(section):
            merged.update(section)
    return merged


# -- policy (R40–R46) ----------------------------------------------------------------------


@frozen(kw_only=True)
class Policy:
    """The resolved budget policy. ``warnings`` are notices for the human (level
    ``warning``; the runtime shows each distinct one once per transition, R46);
    ``diagnostics`` are settings load errors Pi keeps for its host and pi-context never
    shows."""

    thresholds: Thresholds
    automatic: bool
    warnings: tuple[str, ...] = ()
    diagnostics: tuple[str, ...] = ()


def default_policy(rules: PolicyRules, warnings: tuple[str, ...] = ()) -> Policy:
    """R45's fallback: default thresholds, automatic reset on."""
    return Policy(thresholds=default_thresholds(rules), automatic=True, warnings=warnings)


def resolve_policy(
    source: SettingsSource, model: ModelIdentity | None, rules: PolicyRules
) -> Policy:
    """R40–R45 (S49–S51): read the source once and derive the policy for ``model``.

    Any exception while reading or resolving becomes the R45 defaults with the extension's
    warning (``<name>: could not read settings; using defaults (<error>).``): the family
    catches every throw of its settings authority, and the warning names the error so
    nothing is hidden.
    """
    try:
        scopes = source.read()
        if type(scopes) is FrozenScopes:
            known = scopes.resolved.get((rules, model_key(model)))
            if known is not None:
                return known
        merged = deep_merge(scopes.global_settings, scopes.project_settings)
        compaction = compaction_settings(merged, model)
        raw_margin = extension_settings(scopes, rules.settings_key).get(REMINDER_MARGIN_KEY, ABSENT)
    except Exception as error:  # R45: the settings authority failed; degrade, never throw
        unreadable = rules.settings_unreadable.format(error=js.error_string(error))
        return default_policy(rules, (unreadable,))
    margin, warning = validate_margin(raw_margin, rules.invalid_margin)
    resolved = Policy(
        thresholds=derive_thresholds(compaction.reserve_tokens, margin, rules.warning_runway),
        automatic=compaction.enabled,
        warnings=() if warning is None else (warning,),
        diagnostics=scopes.diagnostics,
    )
    if type(scopes) is FrozenScopes:
        scopes.resolved[(rules, model_key(model))] = resolved
    return resolved


# -- usage arithmetic (R17, R49–R52) -------------------------------------------------------


@frozen(kw_only=True)
class Usage:
    """Usage of the active window; either field ``None`` means unknown (R47, R48)."""

    tokens: int | None
    context_window: int | None

    @property
    def known(self) -> bool:
        return self.tokens is not None and self.context_window is not None


def remaining(usage: Usage) -> int | None:
    """R49: ``max(0, contextWindow − tokens)``; ``None`` when usage is unknown.

    post: __return__ is None or __return__ >= 0
    post: (__return__ is None) == (not usage.known)
    """
    if usage.tokens is None or usage.context_window is None:
        return None
    return max(0, usage.context_window - usage.tokens)


def reset_due(usage: Usage, reserve: int, automatic: bool) -> bool:
    """R50: automatic AND usage known AND ``contextWindow − tokens ≤ reserve``. Unclamped:
    usage past the window is due as well.

    pre: reserve >= 0
    post: implies(__return__, automatic and usage.known)
    post: implies(__return__, usage.context_window - usage.tokens <= reserve)
    post: implies(automatic and usage.known and remaining(usage) <= reserve, __return__)
    """
    if not automatic or usage.tokens is None or usage.context_window is None:
        return False
    return usage.context_window - usage.tokens <= reserve


def tool_remaining(usage: Usage, thresholds: Thresholds) -> int | None:
    """R17: what ``get_context_remaining`` reports, ``max(0, remaining − warning)``. The
    runway below the warning line is never shown to the model.

    post: __return__ is None or __return__ >= 0
    post: (__return__ is None) == (not usage.known)
    """
    left = remaining(usage)
    return None if left is None else max(0, left - thresholds.warning)


ReminderStage = Literal["none", "guidance", "warning"]


def reminder_stage(remaining: int | None, thresholds: Thresholds) -> ReminderStage:
    """R51/R52, the threshold test before the once-per-window checks: ``warning`` when
    ``remaining ≤ warning``, else ``guidance`` when ``remaining ≤ reminder``, else ``none``.
    Boundaries are inclusive; unknown usage stages nothing.

    post: implies(remaining is None, __return__ == "none")
    post: implies(__return__ == "warning", remaining <= thresholds.warning)
    post: implies(__return__ == "guidance", thresholds.warning < remaining <= thresholds.reminder)
    post: implies(__return__ == "none" and remaining is not None, remaining > thresholds.warning)
    post: implies(__return__ == "none" and remaining is not None, remaining > thresholds.reminder)
    """
    if remaining is None:
        return "none"
    if remaining <= thresholds.warning:
        return "warning"
    if remaining <= thresholds.reminder:
        return "guidance"
    return "none"


def guidance_count(remaining: int, thresholds: Thresholds) -> int:
    """R51.4: the count frozen into the guidance text, ``max(0, remaining − warning)``.

    pre: thresholds.warning >= 0
    post: __return__ >= 0
    post: __return__ <= max(0, remaining)
    """
    return max(0, remaining - thresholds.warning)
