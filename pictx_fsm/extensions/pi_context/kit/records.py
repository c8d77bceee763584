"""Readings of pi-context's audit records that several invariants share: what a hook
returned (its own drafts beyond the incoming ones, the markers it wrote, whether it asked to
continue) and what the host told it (an aborted turn, R21; the active model).

Each reads the record as written — the event, ``ctx`` and result — never the machines'
steps or facts, so an invariant built on them judges the lifecycle from outside.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.extensions.pi_context.texts import MARKER_TYPE
from pictx_fsm.host.events import ModelInfo
from pictx_fsm.js import is_plain_object

__all__ = [
    "aborted_turn",
    "continues",
    "markers_written",
    "model_of",
    "own_drafts",
    "result_of",
]


def result_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    result = record.get("result") or {}
    return result if is_plain_object(result) else {}


def own_drafts(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    value = result_of(record).get("value") or {}
    entries = list(value.get("entries", ())) if is_plain_object(value) else []
    incoming = len(record.get("event", {}).get("entries", ()) or ())
    return entries[incoming:]


def markers_written(record: Mapping[str, Any]) -> list[str]:
    drafts = [d for d in own_drafts(record) if d.get("customType") == MARKER_TYPE]
    appended = [
        e
        for e in result_of(record).get("effects", ())
        if e.get("effect") == "append_entry" and e.get("customType") == MARKER_TYPE
    ]
    return [str((d.get("data") or {}).get("windowId")) for d in (*drafts, *appended)]


def continues(record: Mapping[str, Any]) -> bool:
    value = result_of(record).get("value") or {}
    return is_plain_object(value) and value.get("continue") is True


def aborted_turn(record: Mapping[str, Any]) -> bool:
    """R21, computed independently of the machines."""
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
