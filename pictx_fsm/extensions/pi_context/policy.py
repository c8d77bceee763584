"""Budget policy: settings, thresholds and the usage arithmetic of the active window.

Spec: lifecycle.md §9.1 (R40–R46), §9.2 (R49, R50), §9.3 (R51, R52), R17. Everything here
is a pure decision except the two :class:`SettingsSource` implementations, which read what
Pi would read. The arithmetic functions carry PEP 316 contracts (``pre:``/``post:``) for
CrossHair.

How settings resolve (Pi 0.87.1 ``SettingsManager``, read from its published source):

* Global ``<agentDir>/settings.json`` and, only for a trusted project,
  ``<cwd>/.pi/settings.json`` are deep-merged, project winning (plain objects merge key by
  key, anything else is replaced). A missing or empty file is ``{}``.
* ``reserve`` = ``compaction.modelOverrides["<provider>/<id>"].reserveTokens`` when that is
  set for the active model, else ``compaction.reserveTokens``, else 16384. The override map
  lives *inside* the merged ``compaction`` object, so a project can add or replace one model's
  entry. Only the token fields are overridable per model; ``automatic`` =
  ``compaction.enabled ?? true``, with JS truthiness.
* Pi validates every token field it resolves (``reserveTokens`` and ``keepRecentTokens``,
  ordinary and per-model): a value that is not a non-negative safe integer throws, and
  pi-context turns any throw into the R45 defaults and warning.
* A settings file that cannot be read or parsed does **not** throw in Pi: that scope counts as
  ``{}`` and the error is queued as a diagnostic that pi-context never drains (T-TH@d108).
  :class:`FileSettingsSource` reproduces this by default and reports the error in
  :attr:`Policy.diagnostics`; with ``strict=True`` it raises instead, which yields R45.
* The ``pi-context`` objects of the two scopes are merged shallowly, project winning; a scope
  whose ``pi-context`` is not a plain object contributes nothing (R42).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from attrs import field, frozen

from pictx_fsm import js
from pictx_fsm.extensions.pi_context.texts import (
    DEFAULT_REMINDER_MARGIN_TOKENS,
    NOTICE_INVALID_MARGIN,
    NOTICE_SETTINGS_UNREADABLE,
    PI_CONTEXT_SETTINGS_KEY,
    REMINDER_MARGIN_KEY,
    WARNING_RUNWAY_TOKENS,
)
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
    "DEFAULT_THRESHOLDS",
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

JSON = Any

# -- thresholds (R43, R44) -----------------------------------------------------------------


@frozen(kw_only=True)
class Thresholds:
    """The three budget lines, as tokens remaining in the window."""

    reserve: int
    reminder: int
    warning: int


def derive_thresholds(reserve: int, margin: int) -> Thresholds:
    """R44: ``reminder = reserve + margin``, ``warning = reserve + WARNING_RUNWAY_TOKENS``.

    pre: reserve >= 0
    pre: margin > 0
    post: __return__.reserve == reserve
    post: __return__.reserve < __return__.warning
    post: __return__.reserve < __return__.reminder
    post: __return__.warning - __return__.reserve == 12288
    """
    return Thresholds(
        reserve=reserve,
        reminder=reserve + margin,
        warning=reserve + WARNING_RUNWAY_TOKENS,
    )


DEFAULT_THRESHOLDS: Final = derive_thresholds(
    DEFAULT_RESERVE_TOKENS, DEFAULT_REMINDER_MARGIN_TOKENS
)


def validate_margin(raw: object = ABSENT) -> tuple[int, str | None]:
    """R43: the reminder margin to use and the warning to show, if any.

    ``ABSENT`` (the key is missing) gives the default silently. Anything present that is not a
    safe positive integer in JS terms gives the default and the warning: ``0``, negatives,
    non-integral numbers, booleans, strings, ``null``, arrays, objects. A JSON ``30000.0`` is
    the JS number 30000 and is valid.

    post: __return__[0] > 0
    post: (__return__[1] is None) == (raw is ABSENT or __return__[0] == raw)
    """
    if raw is ABSENT:
        return DEFAULT_REMINDER_MARGIN_TOKENS, None
    if js.is_safe_integer(raw) and raw > 0:  # type: ignore[operator]
        return int(raw), None  # type: ignore[call-overload]
    return DEFAULT_REMINDER_MARGIN_TOKENS, NOTICE_INVALID_MARGIN


# -- settings sources (R40–R42, R45) -------------------------------------------------------


@frozen(kw_only=True)
class FrozenScopes(SettingsScopes):
    """Settings scopes that never change: every object in them a read-only view (arrays are
    kept as given), built by :meth:`of`. The policy they give a model is resolved once
    (:func:`resolve_policy` keeps it here): a source that hands out the same scopes while its
    settings are unchanged — verify's live settings, read on every hook — resolves once per
    change."""

    resolved: dict[str | None, Policy] = field(factory=dict, init=False, eq=False, repr=False)
    """The policy resolved for each model key (:func:`model_key`)."""

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


def pi_context_settings(scopes: SettingsScopes) -> dict[str, JSON]:
    """R42: the ``pi-context`` objects of both scopes, merged per key, project winning."""
    merged: dict[str, JSON] = {}
    for settings in (scopes.global_settings, scopes.project_settings):
        section = settings.get(PI_CONTEXT_SETTINGS_KEY) if js.is_plain_object(settings) else None
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


def default_policy(warnings: tuple[str, ...] = ()) -> Policy:
    """R45's fallback: default thresholds, automatic reset on."""
    return Policy(thresholds=DEFAULT_THRESHOLDS, automatic=True, warnings=warnings)


def resolve_policy(source: SettingsSource, model: ModelIdentity | None = None) -> Policy:
    """R40–R45: read the source once and derive the policy for ``model``.

    Any exception while reading or resolving becomes the R45 defaults with the warning
    ``pi-context: could not read settings; using defaults (<error>).``: pi-context catches
    every throw of its settings authority, and the warning names the error so nothing is
    hidden.
    """
    try:
        scopes = source.read()
        if type(scopes) is FrozenScopes:
            known = scopes.resolved.get(model_key(model))
            if known is not None:
                return known
        merged = deep_merge(scopes.global_settings, scopes.project_settings)
        compaction = compaction_settings(merged, model)
        raw_margin = pi_context_settings(scopes).get(REMINDER_MARGIN_KEY, ABSENT)
    except Exception as error:  # R45: the settings authority failed; degrade, never throw
        return default_policy((NOTICE_SETTINGS_UNREADABLE.format(error=js.error_string(error)),))
    margin, warning = validate_margin(raw_margin)
    resolved = Policy(
        thresholds=derive_thresholds(compaction.reserve_tokens, margin),
        automatic=compaction.enabled,
        warnings=() if warning is None else (warning,),
        diagnostics=scopes.diagnostics,
    )
    if type(scopes) is FrozenScopes:
        scopes.resolved[model_key(model)] = resolved
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


def __getattr__(name: str) -> object:
    """Pi's settings moved to :mod:`pictx_fsm.host.settings` (0.2)."""
    from pictx_fsm._moved import moved_attribute

    return moved_attribute(__name__, name)
