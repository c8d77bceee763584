"""Message persistence as the agent loop does it: ``message_start`` → ``message_end`` →
append (Pi persists after the ``message_end`` handlers, pi-host §3.3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from pictx_fsm.hosts.model.dispatch import record
from pictx_fsm.hosts.model.messages import role_of
from pictx_fsm.hosts.model.records import step_at
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.hosts.model.steps import Steps
from pictx_fsm.session.entries import Entry

__all__ = ["JSON", "message_detail", "persist"]

JSON: TypeAlias = Any


def message_detail(message: Mapping[str, JSON]) -> dict[str, JSON]:
    detail: dict[str, JSON] = {"role": role_of(message)}
    for key in ("customType", "stopReason"):
        if key in message:
            detail[key] = message[key]
    return detail


def persist(host: HostState, message: Mapping[str, JSON]) -> Steps[Entry]:
    detail = message_detail(message)
    yield record(host, "message_start", **detail)
    yield record(host, "message_end", **detail)
    entry = host.store.message(message)
    yield step_at("persist", entry.type)
    return entry
