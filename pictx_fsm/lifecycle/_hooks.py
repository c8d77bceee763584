"""Which machine events each host hook, lifecycle tool and command raises (§6).

The table is pi-context's handler registration order: for one hook the machines are stepped
in this order, so a reset committed by ``reset_control`` at ``turn_end`` follows the
reminders ``budget`` staged at the same hook. Its keys are exactly :data:`~pictx_fsm.hooks.HOOKS`
(checked on import).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pictx_fsm.errors import UsageError
from pictx_fsm.hooks import HOOKS, Command, HookEvent, ToolCall
from pictx_fsm.protocol import (
    GET_CONTEXT_REMAINING_TOOL,
    PI_CONTEXT_COMMAND,
    WIPE_MEMORY_COMMAND,
    WIPE_MEMORY_TOOL,
)

# hook -> the machine events it raises, in pi-context's handler registration order (§6).
HOOK_EVENTS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "turn_end": (("budget", "turn_end"), ("reset_control", "turn_end")),
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

__all__ = [
    "HOOK_EVENTS",
    "POLICY_TRANSITIONS",
    "TOGGLE_ARGUMENTS",
    "TOOL_EVENTS",
    "machine_events",
    "toggle_completions",
    "toggle_event",
]

TOGGLE_ARGUMENTS: tuple[str, ...] = ("on", "off")


def toggle_completions(prefix: str) -> tuple[str, ...]:
    """R60: ``/pi-context`` argument completions, ``on`` and ``off`` filtered by prefix."""
    return tuple(arg for arg in TOGGLE_ARGUMENTS if arg.startswith(prefix))


def toggle_event(args: str) -> str:
    """R60: ``/pi-context`` argument (trimmed, lowercased) → toggle machine event."""
    arg = args.strip().lower()
    return {"on": "switch_on", "off": "switch_off", "": "status"}.get(arg, "invalid")


def machine_events(event: HookEvent) -> Sequence[tuple[str, str]]:
    """The ``(machine, event)`` pairs one hook event raises, in order."""
    if isinstance(event, ToolCall):
        if event.name not in TOOL_EVENTS:
            raise UsageError(f"unknown lifecycle tool {event.name!r}")
        return (TOOL_EVENTS[event.name],)
    if isinstance(event, Command):
        if event.name == WIPE_MEMORY_COMMAND:
            return (("reset_control", "wipe"),)
        if event.name == PI_CONTEXT_COMMAND:
            return (("toggle", toggle_event(event.args)),)
        raise UsageError(f"unknown lifecycle command /{event.name}")
    return HOOK_EVENTS[type(event).HOOK]
