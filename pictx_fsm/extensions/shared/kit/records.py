"""Readings of a family lifecycle's audit records that several invariants share: what a hook
returned (its own drafts beyond the incoming ones, the markers it wrote, whether it asked to
continue) and what the host told it (an aborted turn; the active model).

Each reads the record as written — the event, ``ctx`` and result — never the machines'
steps or facts, so an invariant built on them judges the lifecycle from outside.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.host.events import ModelInfo
from pictx_fsm.js import is_plain_object

__all__ = [
    "aborted_turn",
    "continue_flag",
    "markers_written",
    "model_of",
    "own_drafts",
    "result_of",
    "value_of",
]


def result_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    result = record.get("result") or {}
    return result if is_plain_object(result) else {}


def value_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The hook's returned value (an object), or an empty one."""
    value = result_of(record).get("value") or {}
    return value if is_plain_object(value) else {}


def own_drafts(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    entries = list(value_of(record).get("entries", ()))
    incoming = len(record.get("event", {}).get("entries", ()) or ())
    return entries[incoming:]


def markers_written(record: Mapping[str, Any], marker_type: str) -> list[str]:
    """The window ids of the ``marker_type`` markers the hook drafted or appended."""
    drafts = [d for d in own_drafts(record) if d.get("customType") == marker_type]
    appended = [
        e
        for e in result_of(record).get("effects", ())
        if e.get("effect") == "append_entry" and e.get("customType") == marker_type
    ]
    return [str((d.get("data") or {}).get("windowId")) for d in (*drafts, *appended)]


def continue_flag(record: Mapping[str, Any]) -> bool | None:
    """The hook's ``continue`` answer, or ``None`` when it gave none."""
    flag = value_of(record).get("continue")
    return flag if isinstance(flag, bool) else None


def aborted_turn(record: Mapping[str, Any]) -> bool:
    """The run was aborted (R21, S29), computed independently of the machines."""
    event = record.get("event", {})
    ctx = record.get("ctx") or {}
    message = event.get("message") or {}
    return (
        event.get("outcome") == "aborted"
        or bool(ctx.get("signal_aborted"))
        or (message.get("role") == "assistant" and message.get("stopReason") == "aborted")
    )


def model_of(model: Any) -> ModelInfo | None:
    """The audit record's ``ctx.model`` (JSON) as the classifier reads it."""
    if not is_plain_object(model):
        return None
    return ModelInfo(
        provider=str(model.get("provider", "")),
        id=str(model.get("id", "")),
        context_window=model.get("context_window"),
        max_tokens=model.get("max_tokens"),
    )
