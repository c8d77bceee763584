"""Validation of a trace file's fields before anything runs.

A trace is user input (``pictx-fsm replay FILE``): every field is checked for type and range
here, so a bad one is refused with the field's name (exit 2) instead of a ``KeyError`` deep in
the world, a silent default (a profile ``"9.9"``, a seed ``"x"``, an ``advance_to`` step no
host ever takes) or a model host that can never finish a turn (a context window of 0, a
reserve larger than the window).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from pictx_fsm.extensions.pi_context.kit.actions import (
    ACTION_TYPES,
    KNOWN_TOOLS,
    AdvanceTo,
    Script,
)
from pictx_fsm.extensions.pi_context.kit.faults import FAULTS
from pictx_fsm.extensions.pi_context.kit.world import USAGE_ACCOUNTINGS, WorldConfig
from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.hosts.model.profiles import HOST_PROFILES
from pictx_fsm.session.entries import ENTRY_TYPES
from pictx_fsm.testing.kit import TraceFormatError

__all__ = [
    "DECISION_FIELDS",
    "HOST_PAUSES",
    "MAX_COUNT",
    "MAX_TEXT_CHARS",
    "PI_EVENTS",
    "STEP_NAMES",
    "check_action",
    "check_choice",
    "check_config",
    "check_int",
]

MAX_TEXT_CHARS: Final = 1_000_000
"""The longest prompt, steering, follow-up or reply a trace may ask for (a million characters,
some 250k tokens: beyond any model window the world is configured with)."""
MAX_COUNT: Final = 1_000_000
"""The largest step count, repeat count or token figure a field may hold."""
PI_EVENTS: Final = frozenset(
    {
        "after_provider_response",
        "agent_before_settle",
        "agent_end",
        "agent_settled",
        "agent_start",
        "before_agent_start",
        "before_provider_headers",
        "before_provider_request",
        "cache_warming_decision",
        "context",
        "context_with_system",
        "input",
        "message_end",
        "message_start",
        "message_update",
        "model_select",
        "project_trust",
        "resources_discover",
        "session_before_compact",
        "session_before_fork",
        "session_before_switch",
        "session_before_tree",
        "session_compact",
        "session_compact_failed",
        "session_info_changed",
        "session_shutdown",
        "session_start",
        "session_tree",
        "thinking_level_select",
        "tool_call",
        "tool_execution_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_result",
        "turn_end",
        "turn_start",
        "ui_prompt_start",
        "user_bash",
    }
)
"""Pi 0.87.1's extension events (pi-host §3): the hook steps a host can take."""
HOST_PAUSES: Final = frozenset({"streaming", "tools_running", "retry_wait"})
"""The waits of the model host where a test may act (``Step(kind="pause")``)."""
STEP_NAMES: Final = PI_EVENTS | HOST_PAUSES | frozenset(ENTRY_TYPES)
"""What an ``advance_to`` may wait for: a hook, a wait, or a persisted entry type."""


# --------------------------------------------------------------------------------------------
# Values


def check_int(value: Any, field: str, low: int = 0, high: int = MAX_COUNT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TraceFormatError(f"field {field!r} must be an integer, got {_show(value)}")
    if not low <= value <= high:
        raise TraceFormatError(f"field {field!r} must be in {low}..{high}, got {value}")
    return value


def check_choice(value: Any, field: str, choices: frozenset[Any] | tuple[Any, ...]) -> Any:
    if isinstance(value, bool) or not isinstance(value, str | int) or value not in choices:
        known = ", ".join(sorted(map(str, choices)))
        raise TraceFormatError(f"field {field!r} must be one of {known}; got {_show(value)}")
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


# --------------------------------------------------------------------------------------------
# The world configuration


def check_config(obj: Any) -> WorldConfig:
    """The world a trace runs in; every field typed and in range (module docstring)."""
    if not isinstance(obj, Mapping):
        raise TraceFormatError(f"field 'config' must be an object, got {_show(obj)}")
    known = {f.name for f in attrs.fields(WorldConfig)}
    unknown = sorted(set(obj) - known, key=str)
    if unknown:
        raise TraceFormatError(f"field 'config' has unknown field(s): {_show(unknown)}")
    defaults = WorldConfig()

    def get(name: str) -> Any:
        return obj.get(name, getattr(defaults, name))

    window = check_int(get("context_window"), "config.context_window", 1, 10**9)
    reserve = check_int(get("reserve_tokens"), "config.reserve_tokens", 0, 10**9)
    if reserve >= window:
        raise TraceFormatError(
            f"field 'config.reserve_tokens' ({reserve}) must be below "
            f"'config.context_window' ({window}): no turn could ever fit"
        )
    fault = get("fault")
    return WorldConfig(
        profile=check_choice(get("profile"), "config.profile", tuple(p.value for p in Profile)),
        seed=check_int(get("seed"), "config.seed", -(2**63), 2**63 - 1),
        context_window=window,
        max_tokens=check_int(get("max_tokens"), "config.max_tokens", 1, window),
        reserve_tokens=reserve,
        reminder_margin=check_int(get("reminder_margin"), "config.reminder_margin", 0, 10**9),
        automatic=_check_bool(get("automatic"), "config.automatic"),
        keep_recent_tokens=check_int(get("keep_recent_tokens"), "config.keep_recent_tokens"),
        fault=None if fault is None else check_choice(fault, "config.fault", frozenset(FAULTS)),
        usage=check_choice(get("usage"), "config.usage", USAGE_ACCOUNTINGS),
        host=check_choice(get("host"), "config.host", tuple(HOST_PROFILES)),
        settings_cached=_check_bool(get("settings_cached"), "config.settings_cached"),
        session_ids=check_choice(get("session_ids"), "config.session_ids", ("random", "clock")),
    )


def _check_bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise TraceFormatError(f"field {field!r} must be true or false, got {_show(value)}")
    return value


# --------------------------------------------------------------------------------------------
# Actions


def check_action(obj: Any, field: str) -> Any:
    """One action: a known kind, known fields, each of its declared type and in range."""
    if not isinstance(obj, Mapping):
        raise TraceFormatError(f"field {field!r} must be an object, got {_show(obj)}")
    kind = obj.get("action")
    cls = ACTION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        known = ", ".join(sorted(ACTION_TYPES))
        raise TraceFormatError(f"field '{field}.action' must be one of {known}; got {_show(kind)}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in attrs.fields(cls)}
    unknown = sorted(set(obj) - names - {"action"}, key=str)
    if unknown:
        raise TraceFormatError(f"field {field!r}: unknown field(s) {_show(unknown)} for {kind}")
    values = {
        name: _check_value(obj[name], hints[name], f"{field}.{name}")
        for name in names
        if name in obj
    }
    if cls is AdvanceTo and "step" in values:
        check_choice(values["step"], f"{field}.step", STEP_NAMES)
    unknown_tools = [name for name in values.get("tools", ()) if name not in KNOWN_TOOLS]
    if cls is Script and unknown_tools:
        raise TraceFormatError(
            f"field {field!r}: unknown tool(s) {', '.join(map(repr, unknown_tools))}"
        )
    try:
        return cls(**values)
    except (TypeError, ValueError) as error:  # a required field is missing, a bad value
        raise TraceFormatError(f"field {field!r}: {error}") from None


def _check_value(value: Any, hint: Any, field: str) -> Any:
    origin = typing.get_origin(hint)
    if hint is bool:
        return _check_bool(value, field)
    if hint is int:
        high = MAX_TEXT_CHARS if field.endswith(".chars") else MAX_COUNT
        low = -MAX_COUNT if field.endswith(".index") else 0
        return check_int(value, field, low, high)
    if hint is str:
        if not isinstance(value, str):
            raise TraceFormatError(f"field {field!r} must be a string, got {_show(value)}")
        return value
    if origin is Literal:
        return check_choice(value, field, frozenset(typing.get_args(hint)))
    if origin is tuple:
        if not isinstance(value, list):
            raise TraceFormatError(f"field {field!r} must be a list, got {_show(value)}")
        item = typing.get_args(hint)[0]
        return tuple(_check_value(v, item, f"{field}[{i}]") for i, v in enumerate(value))
    raise TraceFormatError(f"field {field!r} has a type the trace reader does not know")


# --------------------------------------------------------------------------------------------
# Decisions and failure


DECISION_FIELDS: Final = (("runtime", int), ("seq", int), ("hook", str), ("fired", list))
"""Each recorded decision: the runtime, its audit record's ``seq``, the hook, what fired."""
