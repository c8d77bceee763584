"""Planted faults for pi-context-management: deliberate bugs ``verify`` must catch.

Each changes one guard or action binding of the declared machines — the way a real
regression would — and names the §12 invariant expected to report it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from pictx_fsm.extensions.context_management import act_notes, guards
from pictx_fsm.extensions.context_management.effects import Emit, Intent
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.machines import Bindings, CmMachines, with_bindings
from pictx_fsm.extensions.context_management.records import NOTES_TYPE, notes_data
from pictx_fsm.host.effects import AppendEntry


@frozen(kw_only=True)
class Fault:
    name: str
    description: str
    caught_by: str
    bindings: Callable[[Bindings], Bindings]


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


FAULTS: Mapping[str, Fault] = {
    fault.name: fault
    for fault in (
        Fault(
            name="fourth-handoff",
            description="the cooling guard forgets the hourly limit: a 4th handoff within an hour",
            caught_by="hourly_limit",
            bindings=_fourth_handoff,
        ),
        Fault(
            name="switch-with-pending-input",
            description="the switch check ignores user input since the handoff began",
            caught_by="no_switch_after_input",
            bindings=_switch_with_input,
        ),
        Fault(
            name="background-in-cooldown",
            description="the background start guard ignores the 60 s cooldowns",
            caught_by="background_start_guard",
            bindings=_background_in_cooldown,
        ),
        Fault(
            name="refused-write-changes-store",
            description="a write refused for its sources still appends a notes entry",
            caught_by="refused_write_unchanged",
            bindings=_refused_write,
        ),
    )
}


def fault_named(name: str) -> Fault:
    try:
        return FAULTS[name]
    except KeyError:
        known = ", ".join(sorted(FAULTS))
        raise ValueError(f"unknown fault {name!r}; known faults: {known}") from None


@functools.cache
def plant(name: str) -> CmMachines:
    """The machines with the named fault planted (built once per process)."""
    return with_bindings(fault_named(name).bindings)


__all__ = ["FAULTS", "Fault", "fault_named", "plant"]
