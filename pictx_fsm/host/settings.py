"""Pi's settings as its ``SettingsManager`` reads them (pi-coding-agent 0.87.1 ``config.js``,
``settings-manager.js``): the two scopes, where their files are, how they merge, and the
``compaction`` values every host and extension reads alike (R40–R41, R45).

How settings resolve:

* Global ``<agentDir>/settings.json`` and, only for a trusted project,
  ``<cwd>/.pi/settings.json`` are deep-merged, project winning (plain objects merge key by
  key, anything else is replaced). A missing or empty file is ``{}``.
* ``reserve`` = ``compaction.modelOverrides["<provider>/<id>"].reserveTokens`` when that is
  set for the active model, else ``compaction.reserveTokens``, else 16384. The override map
  lives *inside* the merged ``compaction`` object, so a project can add or replace one model's
  entry. Only the token fields are overridable per model; ``automatic`` =
  ``compaction.enabled ?? true``, with JS truthiness.
* Pi validates every token field it resolves (``reserveTokens`` and ``keepRecentTokens``,
  ordinary and per-model): a value that is not a non-negative safe integer throws.
* A settings file that cannot be read or parsed does **not** throw in Pi: that scope counts as
  ``{}`` and the error is queued as a diagnostic. :class:`FileSettingsSource` reproduces this
  by default; with ``strict=True`` it raises instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Protocol

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.session.entries import ABSENT

__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "PI_AGENT_DIR_ENV",
    "PI_CONFIG_DIR_NAME",
    "PI_SETTINGS_FILE",
    "CompactionSettings",
    "FileSettingsSource",
    "ModelIdentity",
    "ModelRef",
    "SettingsReadError",
    "SettingsScopes",
    "SettingsSource",
    "SettingsValueError",
    "StaticSettingsSource",
    "compaction_settings",
    "deep_merge",
    "default_agent_dir",
    "model_key",
    "read_only",
    "read_settings_file",
    "window_problem",
]

JSON = Any

# Pi host facts (pi-coding-agent 0.87.1 config.js / settings-manager.js).
PI_AGENT_DIR_ENV: Final = "PI_CODING_AGENT_DIR"
PI_CONFIG_DIR_NAME: Final = ".pi"
PI_SETTINGS_FILE: Final = "settings.json"
DEFAULT_KEEP_RECENT_TOKENS: Final = 20000
DEFAULT_RESERVE_TOKENS: Final = 16384
"""``compaction.reserveTokens`` when no setting gives it (R41)."""


@frozen(kw_only=True)
class ModelRef:
    """The active model as settings see it: ``modelOverrides`` keys are ``provider/id``."""

    provider: str
    id: str


class ModelIdentity(Protocol):
    """Anything naming a model (``ModelRef``, ``hooks.ModelInfo``)."""

    @property
    def provider(self) -> str: ...

    @property
    def id(self) -> str: ...


@frozen(kw_only=True)
class SettingsScopes:
    """The two parsed settings scopes. ``project_settings`` is ``{}`` for an untrusted
    project; ``diagnostics`` are load errors Pi would queue without throwing."""

    global_settings: Mapping[str, JSON]
    project_settings: Mapping[str, JSON]
    diagnostics: tuple[str, ...] = ()


def read_only(settings: Mapping[str, JSON]) -> Mapping[str, JSON]:
    """Every object of ``settings`` a read-only view (arrays kept as given)."""
    return MappingProxyType(
        {
            key: read_only(value) if isinstance(value, Mapping) else value
            for key, value in settings.items()
        }
    )


class SettingsSource(Protocol):
    """Where settings come from. ``read`` may raise (pi-context turns that into R45)."""

    def read(self) -> SettingsScopes: ...


class SettingsReadError(Exception):
    """A settings file that cannot be read or parsed (raised only by a strict source)."""

    js_name = "Error"


class SettingsValueError(ValueError):
    """A compaction value Pi's ``SettingsManager`` rejects (its message is Pi's)."""

    js_name = "Error"


@frozen(kw_only=True)
class StaticSettingsSource:
    """Settings given as values, for embedding and tests."""

    global_settings: Mapping[str, JSON]
    project_settings: Mapping[str, JSON] | None = None
    project_trusted: bool = True

    def read(self) -> SettingsScopes:
        project: Mapping[str, JSON] = {}
        if self.project_trusted and self.project_settings is not None:
            project = self.project_settings
        return SettingsScopes(global_settings=self.global_settings, project_settings=project)


@frozen(kw_only=True)
class FileSettingsSource:
    """Pi's file-backed settings, read afresh on every :meth:`read` (R40)."""

    agent_dir: Path
    cwd: Path
    project_trusted: bool
    strict: bool = False

    @property
    def global_path(self) -> Path:
        return Path(self.agent_dir) / PI_SETTINGS_FILE

    @property
    def project_path(self) -> Path:
        return Path(self.cwd) / PI_CONFIG_DIR_NAME / PI_SETTINGS_FILE

    def read(self) -> SettingsScopes:
        diagnostics: list[str] = []
        global_settings = self._load("global", self.global_path, diagnostics)
        project_settings: Mapping[str, JSON] = {}
        if self.project_trusted:
            project_settings = self._load("project", self.project_path, diagnostics)
        return SettingsScopes(
            global_settings=global_settings,
            project_settings=project_settings,
            diagnostics=tuple(diagnostics),
        )

    def _load(self, scope: str, path: Path, diagnostics: list[str]) -> Mapping[str, JSON]:
        try:
            return read_settings_file(path)
        except SettingsReadError as error:
            if self.strict:
                raise
            diagnostics.append(f"{scope} settings: {error}")
            return {}


def read_settings_file(path: Path) -> Mapping[str, JSON]:
    """One settings scope as Pi loads it: missing or empty → ``{}``; BOM stripped; bytes that
    are not UTF-8 replaced; a top-level array counts as ``{}``; anything unreadable raises
    :class:`SettingsReadError` naming the file."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise SettingsReadError(f"{path}: {error.strerror or error}") from error
    text = text.removeprefix("\ufeff")
    if not text:
        return {}
    try:
        value = js.parse_json(text)
    except ValueError as error:
        raise SettingsReadError(f"{path}: invalid JSON ({error})") from error
    if isinstance(value, list):
        return {}
    if not isinstance(value, dict):
        raise SettingsReadError(f"{path}: settings must be a JSON object")
    return value


def default_agent_dir(env: Mapping[str, str], home: Path) -> Path:
    """Pi's agent dir: ``$PI_CODING_AGENT_DIR`` (``~`` expanded) or ``~/.pi/agent``."""
    configured = env.get(PI_AGENT_DIR_ENV)
    if configured:
        if configured == "~" or configured.startswith("~" + os.sep):
            return home / configured[2:]
        return Path(configured)
    return home / PI_CONFIG_DIR_NAME / "agent"


# -- merging and compaction settings (Pi 0.87.1 semantics) ---------------------------------


def deep_merge(base: Mapping[str, JSON], overrides: Mapping[str, JSON]) -> dict[str, JSON]:
    """Pi's ``deepMergeSettings``: plain objects merge recursively, other values replace."""
    result = dict(base)
    for key, value in overrides.items():
        current = result.get(key)
        if js.is_plain_object(current) and js.is_plain_object(value):
            result[key] = deep_merge(current, value)
        else:
            result[key] = value
    return result


@frozen(kw_only=True)
class CompactionSettings:
    """``compaction.*`` as ``getCompactionSettings(model)`` returns it: what pi-context reads
    (R41) and what a host's native compaction runs on — one value for both. Defaults are
    Pi 0.87.1's."""

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS

    def to_json(self) -> dict[str, JSON]:
        """The ``compaction`` object of a ``settings.json`` holding these values."""
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


def compaction_settings(
    merged: Mapping[str, JSON], model: ModelIdentity | None
) -> CompactionSettings:
    """R41. Raises :class:`SettingsValueError` with Pi's message where Pi throws."""
    compaction = merged.get("compaction")
    section = compaction if js.is_plain_object(compaction) else {}
    enabled = section.get("enabled")
    key = model_key(model)
    reserve = _token_setting(section, "reserveTokens", key, DEFAULT_RESERVE_TOKENS)
    keep = _token_setting(section, "keepRecentTokens", key, DEFAULT_KEEP_RECENT_TOKENS)
    return CompactionSettings(
        enabled=True if enabled is None else js.truthy(enabled),
        reserve_tokens=reserve,
        keep_recent_tokens=keep,
    )


def model_key(model: ModelIdentity | None) -> str | None:
    """``provider/id``: the ``compaction.modelOverrides`` key, all of the model that the
    settings read."""
    return f"{model.provider}/{model.id}" if model is not None else None


def _token_setting(section: Mapping[str, JSON], name: str, key: str | None, default: int) -> int:
    ordinary = section.get(name, ABSENT)
    _check_token(ordinary, f"compaction.{name}")
    entry: JSON = ABSENT
    overrides = section.get("modelOverrides")
    if key is not None and js.is_plain_object(overrides):
        entry = overrides.get(key, ABSENT)
    if entry is ABSENT:
        override: JSON = ABSENT
    elif js.is_plain_object(entry):
        override = entry.get(name, ABSENT)
        _check_token(override, f'compaction.modelOverrides["{key}"].{name}')
    else:
        raise SettingsValueError(
            f'Invalid compaction.modelOverrides["{key}"] setting: {js.js_string(entry)}. '
            "Expected an object."
        )
    for value in (override, ordinary):
        if value is not ABSENT:
            return int(value)
    return default


def _check_token(value: JSON, where: str) -> None:
    if value is ABSENT or (js.is_safe_integer(value) and value >= 0):
        return
    raise SettingsValueError(
        f"Invalid {where} setting: {js.js_string(value)}. Expected a non-negative safe integer."
    )


def window_problem(
    window: int | None, reserve: int, *, window_name: str, reserve_name: str
) -> str | None:
    """Why a context window and a reserve leave no turn room, or ``None``: a host resets (or
    compacts) once ``window − tokens ≤ reserve`` (R50), so with a window of no tokens, a
    negative reserve or a reserve that fills the window every turn would reset again. The
    names are the settings as the host's user spells them."""
    if window is not None and window <= 0:
        return f"{window_name} must be positive, got {window}"
    if reserve < 0:
        return f"{reserve_name} must not be negative, got {reserve}"
    if window is not None and reserve >= window:
        return f"{reserve_name} ({reserve}) must be below {window_name} ({window})"
    return None
