"""notesoup's one step: ``step(state, event, ctx, services) -> (state', HookResult)``.

For one hook event the step looks up the machine events it raises (:data:`HOOK_EVENTS`, in
notesoup's handler registration order, S8: the runtime's, then the budget's, then the reset
lifecycle's), lets each machine choose with lazily computed facts, reduces the turn through
the actions the chosen transitions name, runs the follow-up events they raise after the
hook's own, and returns the next state and the hook's result. It mutates nothing it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from pictx_fsm.errors import UsageError
from pictx_fsm.extensions.notesoup.lifecycle.facts import RESET_CONTROL, FactEnv, in_state
from pictx_fsm.extensions.notesoup.lifecycle.services import Services
from pictx_fsm.extensions.notesoup.lifecycle.state import NotesoupState
from pictx_fsm.extensions.notesoup.lifecycle.turn import Turn
from pictx_fsm.extensions.notesoup.texts import (
    CLEAR_MEMORY_COMMAND,
    CLEAR_MEMORY_COMMAND_ALIAS,
    CLEAR_MEMORY_TOOL,
    GET_CONTEXT_REMAINING_TOOL,
    NOTESOUP_COMMAND,
    NOTICE_TOGGLE_COUNTDOWN,
    NOTICE_TOGGLE_STATUS,
)
from pictx_fsm.extensions.shared import policy
from pictx_fsm.extensions.shared.machinery import (
    Facts,
    PolicyCell,
    Raised,
    fire,
    run_machine_events,
)
from pictx_fsm.host.effects import BoundaryResult, HookResult, HookValue, Notify
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
    "COMMANDS",
    "HOOK_EVENTS",
    "TOGGLE_ARGUMENTS",
    "TOOL_EVENTS",
    "machine_events",
    "step",
    "toggle_completions",
]

BUDGET: Final = "notesoup_budget"
REPAIR: Final = "notesoup_boot_repair"
PROJECTION: Final = "notesoup_projection"
TOGGLE: Final = "notesoup_toggle"

HOOK_EVENTS: Final[Mapping[str, tuple[tuple[str, str], ...]]] = {
    "turn_start": ((RESET_CONTROL, "turn_start"), (BUDGET, "turn_start")),
    "agent_settled": ((RESET_CONTROL, "settled"), (BUDGET, "settled")),
    "session_start": (
        (BUDGET, "clear"),
        (PROJECTION, "start"),
        (RESET_CONTROL, "start"),
        (REPAIR, "repair"),
        (RESET_CONTROL, "clear"),
    ),
    "session_tree": (
        (BUDGET, "clear"),
        (PROJECTION, "tree"),
        (RESET_CONTROL, "tree"),
        (REPAIR, "repair"),
        (RESET_CONTROL, "clear"),
    ),
    "session_shutdown": ((BUDGET, "clear"), (RESET_CONTROL, "clear"), (RESET_CONTROL, "shutdown")),
    "model_select": ((BUDGET, "clear"),),
    "context": ((BUDGET, "context"),),
    "context_with_system": ((PROJECTION, "project"), (RESET_CONTROL, "provider_request")),
    "turn_end": ((BUDGET, "turn_end"), (RESET_CONTROL, "turn_end")),
    "agent_before_settle": ((RESET_CONTROL, "before_settle"),),
    "agent_end": ((RESET_CONTROL, "agent_end"),),
    "session_before_compact": ((TOGGLE, "compact"),),
    "session_before_tree": ((TOGGLE, "tree_summary"),),
}
if set(HOOK_EVENTS) != set(HOOKS):  # pragma: no cover - a definition-time check
    raise AssertionError(f"HOOK_EVENTS covers {sorted(HOOK_EVENTS)}, the hooks are {HOOKS}")

TOOL_EVENTS: Final[Mapping[str, tuple[str, str]]] = {
    CLEAR_MEMORY_TOOL: (RESET_CONTROL, "tool_request"),
    GET_CONTEXT_REMAINING_TOOL: (BUDGET, "query_remaining"),
}
COMMANDS: Final = (NOTESOUP_COMMAND, CLEAR_MEMORY_COMMAND, CLEAR_MEMORY_COMMAND_ALIAS)
POLICY_TRANSITIONS: Final = frozenset(
    {"session_start", "session_tree", "model_select", "session_shutdown"}
)
"""S61: these hooks forget the settings cache and the warnings shown."""
TOGGLE_ARGUMENTS: Final = ("on", "off")


def toggle_completions(prefix: str) -> tuple[str, ...]:
    """S14: ``/notesoup`` argument completions, filtered by prefix."""
    return tuple(arg for arg in TOGGLE_ARGUMENTS if arg.startswith(prefix))


def _toggle_event(args: str) -> str:
    arg = args.strip().lower()
    return {"on": "switch_on", "off": "switch_off", "": "status"}.get(arg, "invalid")


def machine_events(event: HookEvent) -> Sequence[Raised]:
    """The machine events one hook event raises, in order."""
    if isinstance(event, ToolCall):
        if event.name not in TOOL_EVENTS:
            raise UsageError(f"{event.name!r} is not a notesoup lifecycle tool")
        machine, name = TOOL_EVENTS[event.name]
        return (Raised(machine=machine, event=name),)
    if isinstance(event, Command):
        if event.name == NOTESOUP_COMMAND:
            return (Raised(machine=TOGGLE, event=_toggle_event(event.args)),)
        if event.name in (CLEAR_MEMORY_COMMAND, CLEAR_MEMORY_COMMAND_ALIAS):
            extras = (("prompt", event.args),)
            return (Raised(machine=RESET_CONTROL, event="manual_close_out", extras=extras),)
        raise UsageError(f"unknown notesoup command /{event.name}")
    return tuple(Raised(machine=m, event=e) for m, e in HOOK_EVENTS[type(event).HOOK])


def step(
    state: NotesoupState, event: HookEvent, ctx: HostContext, services: Services
) -> tuple[NotesoupState, HookResult]:
    """Handle one hook event in ``state``; return the next state and the hook's result."""
    hook = type(event).HOOK
    if hook in POLICY_TRANSITIONS:
        state = state.evolve(policy=None, warned=frozenset())
    settings = PolicyCell(state, ctx, services)

    def decide(turn: Turn, raised: Raised) -> tuple[Turn, Step[str]]:
        return _machine_event(turn, raised, event, ctx, services, settings)

    # S61: session_start resolves the policy right after the budget machine's event
    turn, steps = run_machine_events(
        Turn(state=state), machine_events(event), hook, settings, decide, BUDGET
    )
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
    family = services.family
    env = FactEnv(
        event=event,
        ctx=ctx,
        state=turn.state,
        services=services,
        policy=settings,
        extras=raised.extras_map,
    )
    turn, decided = fire(family, turn, raised, Facts(env, family.facts), settings)
    if (
        raised.machine == RESET_CONTROL
        and turn.state.request is not None
        and turn.state.state_of(RESET_CONTROL, "request") == "none"
    ):
        turn = turn.evolve(state=turn.state.evolve(request=None))
    return turn, decided


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
        effects = (*effects, Notify(message=_status(turn, ctx, services), level="info"))
    value = turn.value
    if isinstance(event, TurnEnd | AgentBeforeSettle):
        value = _boundary_value(turn, event, active_before)
    return HookResult(hook=type(event).HOOK, value=value, effects=effects, steps=steps)


def _status(turn: Turn, ctx: HostContext, services: Services) -> str:
    """S14: ``notesoup: <on|off> · v<version> · Pi <VERSION> · window <id>`` plus the
    countdown when it is known."""
    state = "on" if in_state(turn.state, "enabled") else "off"
    text = NOTICE_TOGGLE_STATUS.format(
        state=state,
        version=services.build_label,
        pi_version=ctx.pi_version,
        window_id=services.windows.current_window.window_id,
    )
    usage = services.window_usage(ctx)
    if usage is None:
        return text
    thresholds = (turn.state.policy or services.resolve_policy(ctx)).thresholds
    tokens = policy.tool_remaining(usage, thresholds)
    if tokens is None:
        return text
    return text + NOTICE_TOGGLE_COUNTDOWN.format(tokens=f"{tokens:,}")


def _boundary_value(
    turn: Turn, event: TurnEnd | AgentBeforeSettle, active_before: bool
) -> HookValue | None:
    """S29–S32: incoming drafts, then (turn_end only) the kept budget drafts, then the reset
    drafts; ``continue`` as the commit says; a failed build returns the entries without a
    ``continue`` key; nothing when there is nothing to add."""
    if not active_before:
        return None
    if isinstance(event, AgentBeforeSettle):
        if turn.settle_stop:
            return BoundaryResult(entries=event.entries, continue_=False)
        if turn.reset:
            return BoundaryResult(entries=(*event.entries, *turn.reset), continue_=turn.continue_)
        if turn.build_failed and event.entries:
            return BoundaryResult(entries=event.entries)
        return None
    entries = (*event.entries, *turn.reminders, *turn.reset)
    if turn.reset:
        return BoundaryResult(entries=entries, continue_=turn.continue_)
    if not entries:
        return None
    return BoundaryResult(entries=entries)
