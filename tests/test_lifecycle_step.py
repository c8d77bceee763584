"""The lifecycle as one pure step (issue 9, item 1): ``step(state, event, ctx, services)``
changes nothing it is given, equal states are interchangeable, follow-up events are data run
after the hook's own, and the result carries the machine steps the audit records."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import WINDOW, Kit, audits_verify  # noqa: F401

from pictx_fsm import AgentSettled, LifecycleState, ToolCall, TurnStart, step
from pictx_fsm.extensions.pi_context.lifecycle import Services, in_state
from pictx_fsm.host.events import Command, HookEvent
from pictx_fsm.machines import Configuration


def _services(kit: Kit, seed: int = 0) -> Services:
    """The kit's services with a fresh random source (window ids drawn alike)."""
    return attrs.evolve(kit.runtime.services, rng=random.Random(seed))


def _rebuilt(state: LifecycleState) -> LifecycleState:
    """An equal state built from scratch (no object shared with ``state``)."""
    configurations = tuple(
        (name, Configuration(states=tuple(tuple(pair) for pair in config.states)))
        for name, config in state.configurations
    )
    return attrs.evolve(state, configurations=configurations)


OPERATIONS: dict[str, Callable[[Kit], Any]] = {
    "user": lambda k: k.build.user("hello"),
    "turn": lambda k: k.turn_end("answer"),
    "overflow": lambda k: k.overflow_turn(),
    "wipe_tool": lambda k: k.tool_turn("wipe_memory"),
    "turn_start": lambda k: k.turn_start(),
    "settle": lambda k: k.settled(),
    "before_settle": lambda k: k.before_settle(),
    "guidance_band": lambda k: (k.set_tokens(WINDOW - 30_000), k.context()),
    "warning_band": lambda k: (k.set_tokens(WINDOW - 10_000), k.context()),
    "low": lambda k: k.set_tokens(1_000),
    "off": lambda k: k.toggle("off"),
    "on": lambda k: k.toggle("on"),
    "project": lambda k: k.project(),
    "start": lambda k: k.start(),
}
NEXT_EVENTS: tuple[HookEvent, ...] = (
    TurnStart(),
    AgentSettled(),
    ToolCall(name="wipe_memory"),
    ToolCall(name="get_context_remaining"),
    Command(name="pi-context", args="off"),
    Command(name="wipe-memory"),
)


@settings(max_examples=40, deadline=None)
@given(
    story=st.lists(st.sampled_from(sorted(OPERATIONS)), max_size=12),
    event=st.sampled_from(NEXT_EVENTS),
)
def test_step_changes_nothing_it_is_given_and_equal_states_are_interchangeable(
    story: list[str], event: HookEvent
) -> None:
    # Given any state a host story reaches
    kit = Kit.create()
    kit.start()
    for name in story:
        OPERATIONS[name](kit)
    state = kit.runtime.state
    copy = _rebuilt(state)
    assert copy == state and hash(copy) == hash(state) and copy is not state
    entries = len(kit.tree.entries)
    # When the next event is stepped from the state and from its equal copy
    first = step(state, event, kit.ctx, _services(kit))
    second = step(copy, event, kit.ctx, _services(kit))
    # Then both give the same next state and result, and neither input changed
    assert first == second
    assert state == copy and kit.runtime.state is state
    assert len(kit.tree.entries) == entries


def test_follow_up_events_run_after_the_hooks_own_events_in_order() -> None:
    # Given a running lifecycle
    kit = Kit.create()
    kit.start()
    # When /pi-context off raises its follow-up events (clear reminders, clear the lifecycle)
    _, result = step(
        kit.runtime.state, Command(name="pi-context", args="off"), kit.ctx, _services(kit)
    )
    # Then they ran after the toggle's own event, first in first out
    assert [(s.machine, s.event) for s in result.steps] == [
        ("toggle", "switch_off"),
        ("budget", "clear"),
        ("reset_control", "clear"),
    ]


def test_the_result_carries_every_machine_step_with_the_facts_it_read() -> None:
    kit = Kit.create()
    kit.start()
    result = kit.turn_end("answer")
    record = kit.audit.records[-1]
    # Then the audit record is the result's own steps, machine by machine
    assert [s["machine"] for s in record["steps"]] == [s.machine for s in result.steps]
    budget, reset_control, boot_repair = result.steps
    assert boot_repair.machine == "boot_repair" and boot_repair.facts == ()  # nothing owed
    assert budget.before == budget.after == kit.runtime.configuration("budget")
    assert budget.facts == () and record["steps"][0]["facts"] == {}  # unguarded: nothing read
    assert dict(reset_control.facts)["active"] is True
    assert list(record["steps"][1]["facts"]) == sorted(dict(reset_control.facts))


def test_rolling_back_a_hook_is_keeping_the_old_state() -> None:
    # Given a runtime and the state it holds
    kit = Kit.create()
    kit.start()
    before = kit.runtime.state
    # When a step is computed but not kept
    state, _ = step(before, Command(name="pi-context", args="off"), kit.ctx, _services(kit))
    # Then the runtime is untouched, and the computed state is a different value
    assert kit.runtime.state is before and in_state(before, "enabled")
    assert not in_state(state, "enabled")
