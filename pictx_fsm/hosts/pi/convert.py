"""Pi's JSON payloads (as the bridge extension sends them) → the runtime's hook values.

The bridge forwards, per handler call, only what the lifecycle reads (lifecycle §6): the
event's fields, the ``ctx`` facts, and the session entries appended since its last call.
Every field is checked here; a malformed request is a :class:`BridgeProtocolError` naming the
field, answered as an error line — never a crash of the server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pictx_fsm.errors import PictxError
from pictx_fsm.host import events as hooks
from pictx_fsm.host.effects import draft_from_json
from pictx_fsm.host.events import ContextUsage, HookEvent, HostContext, ModelInfo

__all__ = ["BridgeProtocolError", "context_of", "event_of", "model_of", "tool_call"]


class BridgeProtocolError(PictxError):
    """A request line the server cannot use; the message names the field."""


def _obj(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BridgeProtocolError(f"field {field!r} must be an object")
    return value


def _int(value: Any, field: str, default: int | None = None) -> int | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BridgeProtocolError(f"field {field!r} must be a number")
    return int(value)


def model_of(value: Any) -> ModelInfo | None:
    if value is None:
        return None
    model = _obj(value, "ctx.model")
    return ModelInfo(
        provider=str(model.get("provider", "")),
        id=str(model.get("id", "")),
        context_window=_int(model.get("contextWindow"), "ctx.model.contextWindow"),
        max_tokens=_int(model.get("maxTokens"), "ctx.model.maxTokens"),
    )


def context_of(value: Any) -> HostContext:
    ctx = _obj(value, "ctx")
    usage = ctx.get("usage")
    return HostContext(
        usage=None
        if usage is None
        else ContextUsage(
            tokens=_int(_obj(usage, "ctx.usage").get("tokens"), "ctx.usage.tokens"),
            context_window=_int(usage.get("contextWindow"), "ctx.usage.contextWindow"),
        ),
        model=model_of(ctx.get("model")),
        signal_aborted=bool(ctx.get("signalAborted", False)),
        has_pending_messages=bool(ctx.get("hasPendingMessages", False)),
        idle=ctx.get("idle", True) is not False,
        cwd=str(ctx.get("cwd", "")),
        project_trusted=bool(ctx.get("projectTrusted", False)),
        pi_version=str(ctx.get("piVersion", "0.87.1")),
    )


def _drafts(event: Mapping[str, Any]) -> tuple[Any, ...]:
    try:
        return tuple(draft_from_json(d) for d in event.get("entries") or ())
    except (KeyError, TypeError, ValueError) as error:
        raise BridgeProtocolError(f"field 'event.entries': {error}") from None


def _outcome(event: Mapping[str, Any]) -> Any:
    outcome = event.get("outcome", "completed")
    if outcome not in ("completed", "aborted", "error"):
        raise BridgeProtocolError(f"field 'event.outcome' is {outcome!r}")
    return outcome


_Builder = Callable[[Mapping[str, Any]], HookEvent]

_HOOKS: Mapping[str, _Builder] = {
    "turn_end": lambda e: hooks.TurnEnd(
        message=_obj(e.get("message", {}), "event.message"),
        outcome=_outcome(e),
        entries=_drafts(e),
        pending_messages=_int(e.get("pendingMessages"), "event.pendingMessages", 0) or 0,
        turn_index=_int(e.get("turnIndex"), "event.turnIndex", 0) or 0,
    ),
    "agent_before_settle": lambda e: hooks.AgentBeforeSettle(
        outcome=_outcome(e),
        entries=_drafts(e),
        pending_messages=_int(e.get("pendingMessages"), "event.pendingMessages", 0) or 0,
    ),
    "agent_end": lambda e: hooks.AgentEnd(),
    "agent_settled": lambda e: hooks.AgentSettled(),
    "turn_start": lambda e: hooks.TurnStart(
        turn_index=_int(e.get("turnIndex"), "turnIndex", 0) or 0
    ),
    "session_start": lambda e: hooks.SessionStart(reason=e.get("reason") or "startup"),
    "session_tree": lambda e: hooks.SessionTreeEvent(
        new_leaf_id=e.get("newLeafId"), old_leaf_id=e.get("oldLeafId")
    ),
    "session_before_tree": lambda e: hooks.SessionBeforeTree(
        user_wants_summary=bool(e.get("userWantsSummary")), target_id=e.get("targetId")
    ),
    "session_shutdown": lambda e: hooks.SessionShutdown(reason=str(e.get("reason") or "quit")),
    "session_before_compact": lambda e: hooks.SessionBeforeCompact(
        reason=e.get("reason") or "manual", signal_aborted=bool(e.get("signalAborted"))
    ),
    "context": lambda e: hooks.Context(messages=tuple(e.get("messages") or ())),
    "context_with_system": lambda e: hooks.ContextWithSystem(
        messages=tuple(e.get("messages") or ())
    ),
    "model_select": lambda e: hooks.ModelSelect(model=model_of(e.get("model"))),
}
if set(_HOOKS) != set(hooks.HOOKS):  # pragma: no cover - a definition-time check (issue 9)
    raise AssertionError(f"convert covers {sorted(_HOOKS)}, the hooks are {hooks.HOOKS}")


def tool_call(name: str, payload: Mapping[str, Any]) -> hooks.ToolCall:
    """``execute(toolCallId, params)`` as the runtime's :class:`~pictx_fsm.host.events.ToolCall`."""
    arguments = payload.get("arguments")
    if arguments is not None and not isinstance(arguments, Mapping):
        raise BridgeProtocolError("field 'event.arguments' must be an object")
    call_id = payload.get("toolCallId")
    return hooks.ToolCall(
        name=name,
        arguments=dict(arguments or {}),
        tool_call_id=None if call_id is None else str(call_id),
    )


def event_of(kind: str, name: str, event: Any) -> HookEvent:
    """The runtime's hook value for one bridge request."""
    payload = _obj(event if event is not None else {}, "event")
    if kind == "tool":
        return tool_call(name, payload)
    if kind == "command":
        return hooks.Command(name=name, args=str(payload.get("args", "")))
    if kind != "hook":
        raise BridgeProtocolError(f"field 'kind' is {kind!r}; expected hook, tool or command")
    builder = _HOOKS.get(name)
    if builder is None:
        raise BridgeProtocolError(f"field 'name': the lifecycle does not handle hook {name!r}")
    return builder(payload)
