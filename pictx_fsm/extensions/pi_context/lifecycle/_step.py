"""The lifecycle's one step: ``step(state, event, ctx, services) -> (state', HookResult)``.

For one hook event the step

1. looks up the machine events the hook raises (:data:`HOOK_EVENTS`, in pi-context's
   handler registration order: a reset committed by ``reset_control`` at ``turn_end``
   follows the reminders ``budget`` staged at the same hook),
2. lets each machine choose its transitions with lazily computed facts (:mod:`._facts`),
3. reduces the turn through the actions those transitions name (:mod:`._actions`), running
   the follow-up events they raise (data) after the hook's own, first in first out, and
4. returns the next state and a :class:`~pictx_fsm.host.effects.HookResult`: the handler's value,
   the host effects in order, and every machine step (the audit record's content).

The step mutates nothing it is given: a hook that raises has no next state, and the caller
keeps the one it had ("all or nothing"). Two equal states are interchangeable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pictx_fsm.errors import UsageError
from pictx_fsm.extensions.pi_context.lifecycle._facts import FactEnv, Facts, in_state
from pictx_fsm.extensions.pi_context.lifecycle._services import Services
from pictx_fsm.extensions.pi_context.lifecycle._state import LifecycleState
from pictx_fsm.extensions.pi_context.lifecycle._turn import Raised, Turn
from pictx_fsm.extensions.pi_context.texts import (
    GET_CONTEXT_REMAINING_TOOL,
    NOTICE_TOGGLE_STATUS,
    PI_CONTEXT_COMMAND,
    WIPE_MEMORY_COMMAND,
    WIPE_MEMORY_TOOL,
)
from pictx_fsm.extensions.shared.machinery import PolicyCell, fire, run_machine_events
from pictx_fsm.host.effects import BoundaryResult, HookResult, HookValue, Notify, compose_entries
from pictx_fsm.host.events import (
    HOOKS,
    AgentBeforeSettle,
    Command,
    HookEvent,
    HostContext,
    ToolCall,
    TurnEnd,
)
from pictx_fsm.machines import Step

__all__ = [
    "HOOK_EVENTS",
    "POLICY_TRANSITIONS",
    "TOGGLE_ARGUMENTS",
    "TOOL_EVENTS",
    "machine_events",
    "step",
    "toggle_completions",
    "toggle_event",
]

# hook -> the machine events it raises, in pi-context's handler registration order (§6).
HOOK_EVENTS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "turn_end": (
        ("budget", "turn_end"),
        ("reset_control", "turn_end"),
        ("boot_repair", "turn_end"),
    ),
    "agent_before_settle": (("reset_control", "before_settle"),),
    "agent_end": (("reset_control", "agent_end"),),
    "agent_settled": (("reset_control", "settled"), ("budget", "settled")),
    "turn_start": (("reset_control", "turn_start"), ("budget", "turn_start")),
    "session_start": (
        ("budget", "clear"),
        ("projection", "start"),
        ("reset_control", "start"),
        ("boot_repair", "repair"),
        ("reset_control", "clear"),
    ),
    "session_tree": (
        ("budget", "clear"),
        ("projection", "tree"),
        ("reset_control", "tree"),
        ("boot_repair", "repair"),
        ("reset_control", "clear"),
    ),
    "session_shutdown": (
        ("budget", "clear"),
        ("reset_control", "clear"),
        ("reset_control", "shutdown"),
    ),
    "model_select": (("budget", "clear"),),
    "session_before_compact": (("toggle", "compact"),),
    "session_before_tree": (("toggle", "tree_summary"),),
    "context": (("budget", "context"),),
    "context_with_system": (("projection", "project"),),
}
if set(HOOK_EVENTS) != set(HOOKS):  # pragma: no cover - a definition-time check
    raise AssertionError(f"HOOK_EVENTS covers {sorted(HOOK_EVENTS)}, the hooks are {HOOKS}")

TOOL_EVENTS: Mapping[str, tuple[str, str]] = {
    WIPE_MEMORY_TOOL: ("reset_control", "request"),
    GET_CONTEXT_REMAINING_TOOL: ("budget", "query_remaining"),
}
# R55: these hooks are transitions for the settings cache (invalidate, forget warnings).
POLICY_TRANSITIONS = frozenset(
    {"session_start", "session_tree", "model_select", "session_shutdown"}
)

TOGGLE_ARGUMENTS: tuple[str, ...] = ("on", "off")


def toggle_completions(prefix: str) -> tuple[str, ...]:
    """R60: ``/pi-context`` argument completions, ``on`` and ``off`` filtered by prefix."""
    return tuple(arg for arg in TOGGLE_ARGUMENTS if arg.startswith(prefix))


def toggle_event(args: str) -> str:
    """R60: ``/pi-context`` argument (trimmed, lowercased) → toggle machine event."""
    arg = args.strip().lower()
    return {"on": "switch_on", "off": "switch_off", "": "status"}.get(arg, "invalid")


_HOOK_RAISED: Mapping[str, tuple[Raised, ...]] = {
    hook: tuple(Raised(machine=machine, event=name) for machine, name in pairs)
    for hook, pairs in HOOK_EVENTS.items()
}
"""Each hook's own machine events as the step queues them (values: built once)."""


def machine_events(event: HookEvent) -> Sequence[tuple[str, str]]:
    """The ``(machine, event)`` pairs one hook event raises, in order."""
    if isinstance(event, ToolCall):
        if event.name not in TOOL_EVENTS:
            raise UsageError(
                f"{event.name!r} is not a lifecycle tool: the notes and history tools run in "
                "the runtime shell (LifecycleRuntime.handle, "
                "pictx_fsm.extensions.pi_context.tools.execute_tool)"
            )
        return (TOOL_EVENTS[event.name],)
    if isinstance(event, Command):
        if event.name == WIPE_MEMORY_COMMAND:
            return (("reset_control", "wipe"),)
        if event.name == PI_CONTEXT_COMMAND:
            return (("toggle", toggle_event(event.args)),)
        raise UsageError(f"unknown lifecycle command /{event.name}")
    return HOOK_EVENTS[type(event).HOOK]


def step(
    state: LifecycleState, event: HookEvent, ctx: HostContext, services: Services
) -> tuple[LifecycleState, HookResult]:
    """Handle one hook event in ``state``; return the next state and the hook's result."""
    hook = type(event).HOOK
    if hook in POLICY_TRANSITIONS:  # R55: a transition forgets the settings cache
        state = state.evolve(policy=None, warned=frozenset())
    settings = PolicyCell(state, ctx, services)
    if isinstance(event, ToolCall | Command):
        raised: Sequence[Raised] = [Raised(machine=m, event=e) for m, e in machine_events(event)]
    else:
        raised = _HOOK_RAISED[hook]

    def decide(turn: Turn, raised: Raised) -> tuple[Turn, Step[str]]:
        return _machine_event(turn, raised, event, ctx, services, settings)

    # R55: session_start resolves the policy right after the budget machine's event
    turn, steps = run_machine_events(Turn(state=state), raised, hook, settings, decide, "budget")
    result = _result(turn, event, ctx, services, in_state(state, "active"), steps)
    return settings.kept(turn.state), result


def _machine_event(
    turn: Turn,
    raised: Raised,
    event: HookEvent,
    ctx: HostContext,
    services: Services,
    settings: PolicyCell,
) -> tuple[Turn, Step[str]]:
    """One machine event: choose (guards read facts), then reduce through the actions."""
    lifecycle = services.lifecycle
    env = FactEnv(
        event=event,
        ctx=ctx,
        state=turn.state,
        services=services,
        policy=settings,
        extras=raised.extras_map,
        planned_commits=turn.planned_commits,
    )
    return fire(lifecycle, turn, raised, Facts(env, lifecycle.facts), settings)


def _result(
    turn: Turn,
    event: HookEvent,
    ctx: HostContext,
    services: Services,
    active_before: bool,
    steps: tuple[Step[str], ...],
) -> HookResult:
    effects = turn.effects
    if turn.report_status:
        state = "on" if in_state(turn.state, "enabled") else "off"
        status = NOTICE_TOGGLE_STATUS.format(
            state=state, build=services.build_label, pi_version=ctx.pi_version
        )
        effects = (*effects, Notify(message=status, level="info"))
    value = turn.value
    if isinstance(event, TurnEnd | AgentBeforeSettle):
        value = _boundary_value(turn, event, active_before)
    return HookResult(hook=type(event).HOOK, value=value, effects=effects, steps=steps)


def _boundary_value(
    turn: Turn, event: TurnEnd | AgentBeforeSettle, active_before: bool
) -> HookValue | None:
    """R22/R28/R35: incoming drafts first, then reminders, then the reset tail; the handler
    returns ``undefined`` when it adds nothing (and always when inactive, R19)."""
    if not active_before:
        return None
    if isinstance(event, AgentBeforeSettle) and not (turn.continue_ or turn.build_failed):
        return None
    entries = compose_entries(event.entries, turn.reminders, turn.reset)
    if not entries and not turn.continue_:
        return None
    return BoundaryResult(entries=entries, continue_=True if turn.continue_ else None)
