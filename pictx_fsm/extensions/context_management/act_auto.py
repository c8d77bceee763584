"""Actions of ``auto_handoff`` (M52–M61)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from attrs import evolve

from pictx_fsm.extensions.context_management.act_notes import Action, log
from pictx_fsm.extensions.context_management.effects import (
    Emit,
    Intent,
    Raise,
    ScheduleHandoff,
    update,
)
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.records import AUTO_TYPE, AutoSetting
from pictx_fsm.extensions.context_management.state import HandoffRun, Observation, Trigger
from pictx_fsm.extensions.context_management.texts import NOTICE_AUTO, NOTICE_AUTO_FORCED_OFF
from pictx_fsm.host.effects import AppendEntry, Notify

__all__ = [
    "ATTEMPT_INCOMPLETE",
    "AUTO_ACTIONS",
    "abort_auto_preparation",
    "clear_baseline",
    "observe_baseline",
    "persist_auto_off",
    "persist_auto_on",
    "persist_pause",
    "record_attempt_incomplete",
    "record_preparation_failure",
    "report_auto_forced_off",
    "schedule_handoff",
    "start_auto_preparation",
]

ATTEMPT_INCOMPLETE: Final = "attempt_incomplete"


def _persist(auto: AutoSetting) -> tuple[Intent, ...]:
    return (update(auto=auto), Emit(effect=AppendEntry(custom_type=AUTO_TYPE, data=auto.to_json())))


def report_auto_forced_off(f: CmFacts) -> tuple[Intent, ...]:
    return (Emit(effect=Notify(message=NOTICE_AUTO_FORCED_OFF, level="warning")),)


def persist_auto_off(f: CmFacts) -> tuple[Intent, ...]:
    auto = evolve(f.state.auto, enabled=False)
    notice = Notify(message=NOTICE_AUTO.format(state="off"), level="info")
    return (*_persist(auto), update(baseline=None, trigger=None), Emit(effect=notice))


def persist_auto_on(f: CmFacts) -> tuple[Intent, ...]:
    """M52, invariant 16: resume a pause, keep the counters and the cooldown."""
    auto = evolve(f.state.auto, enabled=True, paused=False)
    notice = Notify(message=NOTICE_AUTO.format(state="on"), level="info")
    return (*_persist(auto), update(baseline=None), Emit(effect=notice))


def clear_baseline(f: CmFacts) -> tuple[Intent, ...]:
    return (update(baseline=None, trigger=None),)


def observe_baseline(f: CmFacts) -> tuple[Intent, ...]:
    """M55: this valid observation is the next forecast's baseline."""
    tokens = f.ctx.tokens
    assert tokens is not None
    base = Observation(
        session_id=f.state.session_id,
        model=f.ctx.model,
        compactions=f.state.compactions,
        tokens=tokens,
    )
    return (update(baseline=base),)


def schedule_handoff(f: CmFacts) -> tuple[Intent, ...]:
    """M54, M57, M65: remember the trigger, dispatch the command, wait for idle."""
    tokens, window = f.ctx.tokens or 0, f.ctx.context_window or 0
    growth = f.growth()
    reason = "threshold" if tokens >= 0.8 * window else "forecast"
    trigger = Trigger(
        reason=reason,
        tokens=tokens,
        context_window=window,
        growth=growth,
        projected=None if growth is None else tokens + growth,
        session_id=f.state.session_id,
        model=f.ctx.model,
        compactions=f.state.compactions,
        leaf=f.services.tree.leaf_id,
        turns=f.state.turns,
    )
    record = log(
        "auto_trigger",
        time=f.now,
        mode="automatic",
        reason=reason,
        tokens=tokens,
        contextWindow=window,
        growthTokens=growth,
        projectedTokens=trigger.projected,
    )
    return (update(trigger=trigger, baseline=None), Emit(effect=ScheduleHandoff()), record)


def persist_pause(f: CmFacts) -> tuple[Intent, ...]:
    """M58, invariant 14: ``paused=true`` (and this attempt) persisted before any request."""
    auto = f.state.auto
    return _persist(evolve(auto, paused=True, attempts=(*auto.attempts, f.now)))


def start_auto_preparation(f: CmFacts) -> tuple[Intent, ...]:
    trigger = f.state.trigger
    run = HandoffRun(
        mode="automatic",
        started_at=f.now,
        model=f.ctx.model,
        leaf=trigger.leaf if trigger else f.services.tree.leaf_id,
        compactions=f.state.compactions,
        turns=f.state.turns,
    )
    return (update(handoff=run), Raise(machine="handoff", event="begin"))


def abort_auto_preparation(f: CmFacts) -> tuple[Intent, ...]:
    return (Raise(machine="handoff", event="cancel"),)


def _failed(f: CmFacts, code: str) -> tuple[Intent, ...]:
    """M61: paused stays (or becomes) true; ``lastFailure`` set; no pop-up."""
    auto = evolve(f.state.auto, paused=True, last_failure=(code, f.now))
    return (*_persist(auto), update(trigger=None, baseline=None))


def record_attempt_incomplete(f: CmFacts) -> tuple[Intent, ...]:
    return _failed(f, ATTEMPT_INCOMPLETE)


def record_preparation_failure(f: CmFacts) -> tuple[Intent, ...]:
    run = f.state.handoff
    return _failed(f, (run.failure if run else None) or ATTEMPT_INCOMPLETE)


AUTO_ACTIONS: Final[Mapping[str, Action]] = {
    "report_auto_forced_off": report_auto_forced_off,
    "persist_auto_off": persist_auto_off,
    "persist_auto_on": persist_auto_on,
    "clear_baseline": clear_baseline,
    "observe_baseline": observe_baseline,
    "schedule_handoff": schedule_handoff,
    "persist_pause": persist_pause,
    "start_auto_preparation": start_auto_preparation,
    "abort_auto_preparation": abort_auto_preparation,
    "record_attempt_incomplete": record_attempt_incomplete,
    "record_preparation_failure": record_preparation_failure,
}
