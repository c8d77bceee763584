"""The working state of one hook event while the runtime carries out its machine events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import define, field

from pictx_fsm.audit import MachineStepRecord
from pictx_fsm.effects import Draft, HookValue, HostEffect
from pictx_fsm.hooks import HookEvent, HostContext


@define
class HookTurn:
    """What one hook event accumulates while its machine events are carried out."""

    hook: str
    event: HookEvent
    ctx: HostContext
    reminders: list[Draft] = field(factory=list)
    reset: list[Draft] = field(factory=list)
    continue_: bool = False
    value: HookValue | None = None
    effects: list[HostEffect] = field(factory=list)
    queue: list[tuple[str, str, Mapping[str, Any]]] = field(factory=list)
    planned_commits: set[str] = field(factory=set)
    steps: list[MachineStepRecord] = field(factory=list)
    build_failed: bool = False
    report_status: bool = False
    active_before: bool = True
