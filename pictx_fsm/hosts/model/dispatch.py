"""Emitting hooks to extensions and applying what they return (pi-host §3, §5).

Handlers run in extension load order; a handler that raises is recorded as an extension
error and the chain goes on. Side effects apply as Pi's ``ctx``/``pi`` calls would, right
after the handler that asked for them: ``Notify`` is recorded, ``AppendEntry`` appends a
``custom`` entry at once, ``SendMessage`` is appended at once when idle or held while
streaming, ``AbortRun`` aborts the current run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeAlias

from pictx_fsm.host.effects import (
    AbortRun,
    AppendEntry,
    HookResult,
    HostEffect,
    Notify,
    SendMessage,
)
from pictx_fsm.host.events import HookEvent, HostContext
from pictx_fsm.host.extension import Extension, Reply
from pictx_fsm.hosts.model.messages import custom_message, message_text
from pictx_fsm.hosts.model.queues import Queued
from pictx_fsm.hosts.model.records import (
    DeliveryRecord,
    EventRecord,
    ExtensionErrorRecord,
    NoticeRecord,
    Step,
    step_at,
)
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.session.entries import ABSENT

__all__ = [
    "JSON",
    "abort",
    "apply_effects",
    "call",
    "emit",
    "error",
    "record",
    "send_custom",
    "subscribers",
]

JSON: TypeAlias = Any


def record(host: HostState, name: str, **detail: JSON) -> Step:
    """Log one emitted hook (extensions that would subscribe to it are not modelled)."""
    host.log.events.append(
        EventRecord(
            name=name,
            turn_index=host.turn_index,
            detail=detail,
            signal=host.signal_state,
            pending=host.queues.user_pending() > 0,
        )
    )
    return step_at("hook", name)


def subscribers(host: HostState, hook: str) -> list[Extension]:
    return [ext for ext in host.extensions if hook in ext.hooks]


def error(host: HostState, event: str, extension: str, message: str) -> None:
    host.log.errors.append(ExtensionErrorRecord(event=event, extension=extension, error=message))


def call(host: HostState, ext: Extension, event: HookEvent, ctx: HostContext) -> Reply:
    """One handler call: its reply, with its side effects already applied."""
    hook = type(event).HOOK
    try:
        reply = ext.handle(event, ctx)
    except Exception as exc:  # an extension error never stops the host (pi-host §3)
        error(host, hook, ext.name, f"{type(exc).__name__}: {exc}")
        return None
    if isinstance(reply, HookResult):
        apply_effects(host, reply.effects, hook)
    return reply


def emit(host: HostState, event: HookEvent, **detail: JSON) -> list[Reply]:
    """Log a hook and call every subscriber with the same event (non-chaining hooks)."""
    hook = type(event).HOOK
    record(host, hook, **detail)
    replies = []
    for ext in subscribers(host, hook):
        replies.append(call(host, ext, event, host.host_context()))
    return replies


# -- effects -----------------------------------------------------------------------------------


def apply_effects(host: HostState, effects: Iterable[HostEffect], source: str) -> None:
    for effect in effects:
        if isinstance(effect, Notify):
            notice = NoticeRecord(
                source=source,
                message=effect.message,
                level=effect.level,
                leaf_id=host.store.leaf_id,
            )
            host.log.notices.append(notice)
        elif isinstance(effect, AppendEntry):
            host.store.custom(effect.custom_type, effect.data)
        elif isinstance(effect, SendMessage):
            send_custom(
                host,
                effect.custom_type,
                effect.content,
                display=effect.display,
                details=effect.details,
                trigger_turn=effect.trigger_turn,
                deliver_as=effect.deliver_as,
            )
        elif isinstance(effect, AbortRun):
            abort(host)


def abort(host: HostState) -> None:
    """``session.abort()``: the current run (if any) is aborted; where a starting run is
    already busy (1.x), one still starting starts aborted (found by the differential)."""
    if host.run is not None:
        host.run.aborted = True
    elif host.starting and host.settings.profile.starting_run_is_busy:
        host.abort_requested = True


def send_custom(
    host: HostState,
    custom_type: str,
    content: JSON,
    *,
    display: bool = False,
    details: JSON = ABSENT,
    trigger_turn: bool = False,
    deliver_as: str | None = None,
) -> None:
    """``pi.sendMessage`` (pi-host §5)."""
    message = custom_message(custom_type, content, display, details, host.clock())
    if deliver_as == "nextTurn":
        host.queues.next_turn.append(Queued(kind="next_turn", message=message))
    elif host.streaming and not trigger_turn:
        host.queues.held.append(Queued(kind="held", message=message))
    elif trigger_turn and host.run is None:
        host.triggered.append(Queued(kind="prompt", message=message))
    elif trigger_turn and deliver_as == "followUp":
        host.queues.follow_up.append(Queued(kind="follow_up", message=message))
    elif trigger_turn:
        host.queues.steering.append(Queued(kind="steer", message=message))
    else:
        entry = host.store.message(message)
        delivery = DeliveryRecord(kind="sent", text=message_text(message), entry_id=str(entry.id))
        host.log.deliveries.append(delivery)
