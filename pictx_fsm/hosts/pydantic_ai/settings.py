"""How a session's lifecycle is set up, every value checked when it is given.

A bad value is refused where it is written (a :class:`~.errors.SettingsError` naming the
field), never deep inside pydantic-ai's graph at the first request. The window and the
reserve are checked together with the project's one rule for them
(:func:`pictx_fsm.host.settings.window_problem`, the rule the model host applies too), and further:
the room above the reserve must hold a fresh window (its boot, continuation and the tools'
schemas), or every window would reset again at its first reply.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import define, field

from pictx_fsm.extensions.pi_context.boot_writer import BootWriter
from pictx_fsm.extensions.pi_context.runtime import SettingsFactory
from pictx_fsm.extensions.pi_context.texts import DEFAULT_PROFILE, Profile
from pictx_fsm.extensions.pi_context.tools import ToolSpec, default_notes_home
from pictx_fsm.host.settings import (
    DEFAULT_RESERVE_TOKENS,
    CompactionSettings,
    SettingsSource,
    StaticSettingsSource,
    window_problem,
)
from pictx_fsm.hosts.pydantic_ai.errors import SettingsError
from pictx_fsm.hosts.pydantic_ai.texts import (
    SETTING_BOTH,
    SETTING_CHOICE,
    SETTING_NOT_BOOL,
    SETTING_NOT_TOKENS,
    SETTING_PATH,
)
from pictx_fsm.session.estimate import MessageText, TiktokenCounter, TokenCounter

__all__ = [
    "LifecycleSettings",
    "fresh_window_problem",
    "fresh_window_tokens",
    "tokens_setting",
]


def tokens_setting(value: Any, name: str) -> int | None:
    """``value`` as a number of tokens (``None`` allowed), or a :class:`SettingsError`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(SETTING_NOT_TOKENS.format(field=name, value=value))
    return int(value)


def _profile(value: Any) -> Profile:
    try:
        return Profile.parse(value)
    except ValueError:
        choices = ", ".join(repr(p.value) for p in Profile)
        raise SettingsError(
            SETTING_CHOICE.format(field="LifecycleSettings.profile", choices=choices, value=value)
        ) from None


def _reserve(value: Any) -> int | None:
    return tokens_setting(value, "LifecycleSettings.reserve_tokens")


def _automatic(value: Any) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(
            SETTING_NOT_BOOL.format(field="LifecycleSettings.automatic_reset", value=value)
        )
    return value


def _path(value: Any) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str | os.PathLike):
        raise SettingsError(SETTING_PATH.format(field="LifecycleSettings.notes_home", value=value))
    return Path(value)


@define(kw_only=True)
class LifecycleSettings:
    """How the lifecycle of a session is set up (all optional, all injected)."""

    profile: Profile = field(default=Profile.parse(DEFAULT_PROFILE), converter=_profile)
    """The pi-context release to reproduce: ``"0.25.1"`` (default) or ``"0.25.0"``."""
    reserve_tokens: int | None = field(default=None, converter=_reserve)
    """The reserve: the automatic reset happens once no more than this many tokens of the
    window are left (R50; Pi's ``compaction.reserveTokens``). ``None``: 16384, Pi's default."""
    automatic_reset: bool = field(default=True, converter=_automatic)
    """Reset automatically at the reserve and recover from an overflow once (R39; Pi's
    ``compaction.enabled``). ``False`` keeps ``wipe_memory`` and ``/wipe-memory``."""
    settings: SettingsSource | SettingsFactory | None = None
    """Pi's settings instead of ``reserve_tokens``/``automatic_reset``
    (:func:`pictx_fsm.pi_file_settings` reads Pi's ``settings.json`` files)."""
    boot_writer: BootWriter | None = None
    """Boots from another notes source (then the notes tools write where it reads, if it is
    a :class:`~pictx_fsm.FileNotesSource`; give it or ``notes_home``, not both)."""
    notes_home: Path | None = field(default=None, converter=_path)
    """The notes root the boots index and the notes tools write (N6); ``None``:
    ``$PI_NOTES_HOME``, else ``~/.agents/notes`` — the same notes a Pi agent reads."""
    counter: TokenCounter = field(factory=TiktokenCounter)
    cwd: str = ""
    """The project directory (its git root names the ``@project`` home); ``""``: the
    process's working directory."""

    def __attrs_post_init__(self) -> None:
        if self.settings is not None and (
            self.reserve_tokens is not None or not self.automatic_reset
        ):
            raise SettingsError(
                SETTING_BOTH.format(
                    first="LifecycleSettings.settings",
                    second="reserve_tokens / automatic_reset",
                )
            )
        if self.boot_writer is not None and self.notes_home is not None:
            raise SettingsError(
                SETTING_BOTH.format(
                    first="LifecycleSettings.notes_home", second="LifecycleSettings.boot_writer"
                )
            )
        problem = window_problem(
            None, self.reserve, window_name="", reserve_name="LifecycleSettings.reserve_tokens"
        )
        if problem is not None:
            raise SettingsError(problem)

    @property
    def reserve_name(self) -> str:
        """Where the reserve is set, as the user wrote it."""
        if self.settings is not None:
            return "compaction.reserveTokens of LifecycleSettings.settings"
        return "LifecycleSettings.reserve_tokens"

    @property
    def reserve(self) -> int:
        """The reserve these settings give when they are not Pi's own settings."""
        return DEFAULT_RESERVE_TOKENS if self.reserve_tokens is None else self.reserve_tokens

    def settings_source(self) -> SettingsSource | SettingsFactory:
        """Where the runtime reads ``compaction.*`` (and ``pi-context.*``) from."""
        if self.settings is not None:
            return self.settings
        compaction = CompactionSettings(enabled=self.automatic_reset, reserve_tokens=self.reserve)
        return StaticSettingsSource(global_settings={"compaction": compaction.to_json()})

    def resolved_notes_home(self) -> Path | None:
        if self.boot_writer is not None:
            return self.notes_home
        return self.notes_home or default_notes_home(os.environ, Path.home())


def fresh_window_problem(
    window: int, reserve: int, fresh: int, *, window_name: str, reserve_name: str
) -> str | None:
    """Why ``window`` cannot hold a fresh window of ``fresh`` tokens above ``reserve``, or
    ``None``: the project's window rule first, then the room a new window needs (a fresh
    window at the reserve resets at its first reply, and so does the next one)."""
    problem = window_problem(window, reserve, window_name=window_name, reserve_name=reserve_name)
    if problem is not None:
        return problem
    if window - reserve <= fresh:
        return (
            f"{window_name} ({window}) leaves {window - reserve} tokens above {reserve_name} "
            f"({reserve}), and a fresh window takes at least {fresh} (its boot, continuation "
            "and the tools' schemas): every window would reset again at its first reply"
        )
    return None


def fresh_window_tokens(
    counter: TokenCounter, texts: Sequence[str], tools: Sequence[ToolSpec]
) -> int:
    """What a window holds before anything happens in it: ``texts`` (the boot, the
    continuation) and the tools' names, descriptions and schemas, as the session counts."""
    schemas = [
        json.dumps({"name": t.name, "description": t.description, "parameters": dict(t.parameters)})
        for t in tools
    ]
    return counter.count(MessageText(parts=(*texts, *schemas)))
