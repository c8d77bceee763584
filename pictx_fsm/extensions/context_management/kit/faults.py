"""Planted faults for pi-context-management: deliberate bugs ``verify`` must catch.

Each changes one guard or action binding of the declared machines, or how a tool call is
answered — the way a real regression would — and names the invariant expected to report it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from attrs import frozen

from pictx_fsm.extensions.context_management import act_generation, act_handoff, act_notes, guards
from pictx_fsm.extensions.context_management.effects import (
    Answer,
    Emit,
    Intent,
    LogRecord,
    SwitchSession,
)
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.machines import Bindings, CmMachines, with_bindings
from pictx_fsm.extensions.context_management.policy import AUTO_THRESHOLD, Budgets
from pictx_fsm.extensions.context_management.records import NOTES_TYPE, notes_data
from pictx_fsm.extensions.context_management.texts import READ_TOOL, STATUS_TOOL
from pictx_fsm.extensions.context_management.tools import ToolAnswers, answer_tool
from pictx_fsm.host.effects import AppendEntry, ToolResult
from pictx_fsm.testing.kit import faults_by_name, named_fault


def _unchanged(bindings: Bindings) -> Bindings:
    return bindings


@frozen(kw_only=True)
class Fault:
    name: str
    description: str
    caught_by: str
    bindings: Callable[[Bindings], Bindings] = _unchanged
    answers: Callable[[ToolAnswers], ToolAnswers] | None = None
    """A change of how the read-only tool calls are answered."""


def _with(
    bindings: Bindings,
    machine: str,
    *,
    guards: Mapping[str, Any] | None = None,
    actions: Mapping[str, Any] | None = None,
) -> Bindings:
    out = dict(bindings)
    old_guards, old_actions = out[machine]
    out[machine] = ({**old_guards, **(guards or {})}, {**old_actions, **(actions or {})})
    return out


def _cooling_ignores_hour(f: CmFacts) -> bool:
    auto = f.state.auto
    return auto.next_eligible_at is not None and f.now < auto.next_eligible_at


def _fourth_handoff(bindings: Bindings) -> Bindings:
    def recheck(f: CmFacts) -> bool:
        return guards.rechecked(f, cooling=_cooling_ignores_hour(f))

    return _with(
        bindings, "auto_handoff", guards={"cooling": _cooling_ignores_hour, "recheck_ok": recheck}
    )


def _switch_ignores_input(f: CmFacts) -> bool:
    run = f.state.handoff
    return run is not None and f.ctx.idle and run.model == f.ctx.model


def _switch_with_input(bindings: Bindings) -> Bindings:
    return _with(bindings, "handoff", guards={"switch_safe": _switch_ignores_input})


def _due_ignoring_cooldown(f: CmFacts) -> bool:
    state = f.state
    if state.generation is not None or state.handoff is not None or state.trigger is not None:
        return False
    if f.ctx.model is None or state.pending_bytes < f.budgets.background_threshold:
        return False
    return state.branch.unreconciled_native is None and bool(f.background_prefix)


def _background_in_cooldown(bindings: Bindings) -> Bindings:
    return _with(bindings, "background_notes", guards={"background_due": _due_ignoring_cooldown})


def _refuse_but_write(f: CmFacts) -> tuple[Intent, ...]:
    branch = f.state.branch
    data = notes_data(
        branch.notes,
        origin="tool",
        through=branch.notes_through,
        state=branch.state_version + 1,
        retired=(),
    )
    return (
        *act_notes.refuse_sources(f),
        Emit(effect=AppendEntry(custom_type=NOTES_TYPE, data=data)),
    )


def _refused_write(bindings: Bindings) -> Bindings:
    return _with(bindings, "notes_store", actions={"refuse_sources": _refuse_but_write})


def _without(intents: tuple[Intent, ...], drop: Callable[[object], bool]) -> tuple[Intent, ...]:
    return tuple(i for i in intents if not (isinstance(i, Emit) and drop(i.effect)))


def _switch_forgotten(f: CmFacts) -> tuple[Intent, ...]:
    """M46 step 5 left out: the handoff says it switches, and never asks the host to."""
    return _without(act_handoff.switch_to_target(f), lambda e: isinstance(e, SwitchSession))


def _switch_never_requested(bindings: Bindings) -> Bindings:
    return _with(bindings, "handoff", actions={"switch_to_target": _switch_forgotten})


def _timeout_unlogged(f: CmFacts) -> tuple[Intent, ...]:
    """M28, M64: the run that reached its deadline fails, and its end is never logged."""
    return _without(
        act_generation.fail_timeout(f),
        lambda e: isinstance(e, LogRecord) and e.kind == "operation_end",
    )


def _timeout_never_ended(bindings: Bindings) -> Bindings:
    return _with(bindings, "checkpoint", actions={"fail_timeout": _timeout_unlogged})


def _threshold_strict(f: CmFacts) -> bool:
    """M54 with ``>`` for ``≥``: exactly 80 % of the window does not trigger."""
    tokens, window = f.ctx.tokens, f.ctx.context_window
    return tokens is not None and bool(window) and tokens > AUTO_THRESHOLD * (window or 0)


def _strict_threshold(bindings: Bindings) -> Bindings:
    return _with(bindings, "auto_handoff", guards={"threshold_reached": _threshold_strict})


def _cooling_through_eligible(f: CmFacts) -> bool:
    """M56 with ``≤`` for ``<``: still cooling at the very millisecond it becomes eligible."""
    auto = f.state.auto
    if auto.next_eligible_at is not None and f.now <= auto.next_eligible_at:
        return True
    return f.attempts_in_hour() >= 3


def _late_cooldown(bindings: Bindings) -> Bindings:
    def recheck(f: CmFacts) -> bool:
        return guards.rechecked(f, cooling=_cooling_through_eligible(f))

    return _with(
        bindings,
        "auto_handoff",
        guards={"cooling": _cooling_through_eligible, "recheck_ok": recheck},
    )


def _payload_changed(
    intents: tuple[Intent, ...], change: Callable[[Mapping[str, Any]], Mapping[str, Any]]
) -> tuple[Intent, ...]:
    out: list[Intent] = []
    for intent in intents:
        value = intent.value if isinstance(intent, Answer) else None
        if isinstance(value, ToolResult) and isinstance(value.payload, Mapping):
            intent = Answer(value=attrs.evolve(value, payload=dict(change(value.payload))))
        out.append(intent)
    return tuple(out)


def _quota_ignoring_use(answer: ToolAnswers) -> ToolAnswers:
    """M23: context_status reports the whole turn's recall bytes, not what is left."""

    def answered(f: CmFacts, name: str) -> tuple[Intent, ...] | None:
        intents = answer(f, name)
        if name != STATUS_TOOL or intents is None:
            return intents
        ctx = f.ctx
        budgets = Budgets(context_window=ctx.context_window or 0)
        whole = budgets.recall_turn_bytes(ctx.tokens if ctx.context_window else None)
        return _payload_changed(intents, lambda p: {**p, "recallQuotaRemaining": whole})

    return answered


def _read_skipping_a_byte(answer: ToolAnswers) -> ToolAnswers:
    """M22: ``nextOffset`` one byte past what the page delivered."""

    def answered(f: CmFacts, name: str) -> tuple[Intent, ...] | None:
        intents = answer(f, name)
        if name != READ_TOOL or intents is None:
            return intents

        def skip(payload: Mapping[str, Any]) -> Mapping[str, Any]:
            following = payload.get("nextOffset")
            return payload if following is None else {**payload, "nextOffset": following + 1}

        return _payload_changed(intents, skip)

    return answered


def _in_bindings(
    name: str, caught_by: str, change: Callable[[Bindings], Bindings], description: str
) -> Fault:
    """A fault planted in the machines' guard and action bindings."""
    return Fault(name=name, description=description, caught_by=caught_by, bindings=change)


def _in_answers(
    name: str, caught_by: str, change: Callable[[ToolAnswers], ToolAnswers], description: str
) -> Fault:
    """A fault planted in how the read-only tool calls are answered."""
    return Fault(name=name, description=description, caught_by=caught_by, answers=change)


FAULTS: Mapping[str, Fault] = faults_by_name(
    _in_bindings(
        "fourth-handoff",
        "hourly_limit",
        _fourth_handoff,
        "the cooling guard forgets the hourly limit: a 4th handoff within an hour",
    ),
    _in_bindings(
        "switch-with-pending-input",
        "no_switch_after_input",
        _switch_with_input,
        "the switch check ignores user input since the handoff began",
    ),
    _in_bindings(
        "background-in-cooldown",
        "background_start_guard",
        _background_in_cooldown,
        "the background start guard ignores the 60 s cooldowns",
    ),
    _in_bindings(
        "refused-write-changes-store",
        "refused_write_unchanged",
        _refused_write,
        "a write refused for its sources still appends a notes entry",
    ),
    _in_bindings(
        "switch-never-requested",
        "operations_end",
        _switch_never_requested,
        "the handoff enters its switch and never asks the host to switch: "
        "the flow never ends, its phase stays on the status bar",
    ),
    _in_bindings(
        "timeout-never-ends-the-operation",
        "operations_end",
        _timeout_never_ended,
        "a generation that reaches its deadline fails without logging its operation_end",
    ),
    _in_bindings(
        "threshold-strict",
        "auto_handoff_when_due",
        _strict_threshold,
        "the 80 % trigger is > for ≥ (M54): exactly at the line no automatic handoff",
    ),
    _in_bindings(
        "cooldown-ends-late",
        "auto_handoff_when_due",
        _late_cooldown,
        "cooling is ≤ for < nextEligibleAt (M56): a handoff due at the very "
        "end of the cooldown is refused",
    ),
    _in_answers(
        "status-quota-ignores-use",
        "exact_recall_answers",
        _quota_ignoring_use,
        "context_status reports the turn's whole recall quota, not what is left of it (M23)",
    ),
    _in_answers(
        "read-skips-a-byte",
        "exact_recall_answers",
        _read_skipping_a_byte,
        "context_history_read's nextOffset lies one byte past the page (M22)",
    ),
)


def fault_named(name: str) -> Fault:
    return named_fault(FAULTS, name)


@functools.cache
def plant(name: str) -> CmMachines:
    """The machines with the named fault planted (built once per process)."""
    fault = fault_named(name)
    answers = answer_tool if fault.answers is None else fault.answers(answer_tool)
    return with_bindings(fault.bindings, answers)


__all__ = ["FAULTS", "Fault", "fault_named", "plant"]
