"""pi-context's actions beside the host actions: its commands (``/wipe-memory``,
``/pi-context``) and actions on the world around the session (other extensions that void a
boundary, hide a boot or queue at settle; settings switched mid-run; the bridge's runtime
killed), and what counts as a boundary entry of pi-context's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import attrs
from attrs import frozen

from pictx_fsm.extensions.pi_context.policy import Thresholds
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GET_CONTEXT_REMAINING_TOOL,
    GUIDANCE_TYPE,
    PI_CONTEXT_COMMAND,
    WARNING_TYPE,
    WIPE_MEMORY_COMMAND,
    WIPE_MEMORY_TOOL,
)
from pictx_fsm.extensions.pi_context.tools import TOOL_NAMES
from pictx_fsm.extensions.pi_context.windows import window_id_of_marker
from pictx_fsm.extensions.shared.kit import actions as family
from pictx_fsm.extensions.shared.kit.actions import (
    HideBoot,
    QueueAtSettle,
    SetAutomatic,
    Toggle,
    VoidNextBoundary,
)
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.hosts.model.tools import ECHO_TOOL, NESTING_TOOL
from pictx_fsm.session.entries import CustomMessageEntry
from pictx_fsm.testing import actions as host
from pictx_fsm.testing.actions import (
    ANCHORS,
    Abort,
    Advance,
    AdvanceTo,
    Compact,
    EndlessRun,
    FollowUp,
    Fork,
    Navigate,
    Prompt,
    Reload,
    ReloadExtensions,
    Script,
    Settle,
    Steer,
    action_to_json,
    filler,
)

__all__ = [
    "ACTION_TYPES",
    "ANCHORS",
    "BOUNDARY_TYPES",
    "KNOWN_TOOLS",
    "LINE_NAMES",
    "WORLD_ACTIONS",
    "Abort",
    "Action",
    "Advance",
    "AdvanceTo",
    "AimAt",
    "Compact",
    "EndlessRun",
    "FollowUp",
    "Fork",
    "HideBoot",
    "KillRuntime",
    "Navigate",
    "Prompt",
    "QueueAtSettle",
    "Reload",
    "ReloadExtensions",
    "Script",
    "SetAutomatic",
    "Settle",
    "Steer",
    "Toggle",
    "VoidNextBoundary",
    "WipeCommand",
    "action_from_json",
    "action_to_json",
    "anchor_of",
    "apply_action",
    "filler",
    "is_boundary_entry",
]

BOUNDARY_TYPES = frozenset({BOOT_TYPE, CONTINUATION_TYPE, GUIDANCE_TYPE, WARNING_TYPE})
"""The custom messages pi-context writes at a boundary (with the marker, a custom entry)."""
KNOWN_TOOLS: frozenset[str] = frozenset(
    {WIPE_MEMORY_TOOL, GET_CONTEXT_REMAINING_TOOL, ECHO_TOOL, NESTING_TOOL, *TOOL_NAMES}
)
"""The tools a pi-context world's scripted model may call: pi-context's eleven and the
model host's ``echo`` and ``call_tools``."""


@frozen(kw_only=True)
class WipeCommand:
    """``/wipe-memory`` (only when idle: Pi's command waits for idle)."""

    KIND: ClassVar[str] = "wipe"


@frozen(kw_only=True)
class KillRuntime:
    """The lifecycle's runtime dies, as the bridge's Python server can (issue 8): the bridge
    twin (:mod:`pictx_fsm.hosts.pi.twin`) fails closed until it restarts one, or, with
    ``permanent``, for good (degraded mode)."""

    KIND: ClassVar[str] = "kill_runtime"
    permanent: bool = False


LINE_NAMES: tuple[str, ...] = tuple(line.name for line in attrs.fields(Thresholds))
"""The budget lines pi-context's guards compare remaining tokens with (R44): the fields of
its policy's :class:`~pictx_fsm.extensions.pi_context.policy.Thresholds`."""


@frozen(kw_only=True)
class AimAt:
    """The next decision that compares usage with a budget line meets it at ``offset``
    (remaining tokens = the line + ``offset``), the line as the world's policy resolves it
    now: ``reply`` — the model's next text reply reports the context tokens that leave the
    turn's end there (R50 is judged at ``turn_end``); ``prompt`` — the user sends a prompt
    sized so that its provider request's remaining is there (R51 at ``context``; only
    while idle, and only where the usage before it is known)."""

    KIND: ClassVar[str] = "aim"
    line: str = attrs.field(validator=attrs.validators.in_(LINE_NAMES))
    offset: Literal[-1, 0, 1]
    at: Literal["reply", "prompt"]


Action: TypeAlias = (
    host.Action
    | WipeCommand
    | Toggle
    | VoidNextBoundary
    | HideBoot
    | QueueAtSettle
    | SetAutomatic
    | KillRuntime
    | AimAt
)
ACTION_TYPES: Mapping[str, type[Any]] = family.action_types(WipeCommand, KillRuntime, AimAt)
WORLD_ACTIONS: tuple[type[Any], ...] = (*family.WORLD_ACTIONS, KillRuntime, AimAt)
"""Actions on the world around the session (other extensions, settings), applied by
:meth:`~pictx_fsm.extensions.pi_context.kit.world.World.apply`, not by :func:`apply_action`."""


def action_from_json(obj: Mapping[str, Any]) -> Action:
    """Read a host action or one of pi-context's; raises ``ValueError`` naming the problem."""
    action: Action = host.action_from_json(obj, ACTION_TYPES)
    return action


def is_boundary_entry(entry: object) -> bool:
    """A marker or one of the custom messages pi-context writes at a boundary."""
    if window_id_of_marker(entry) is not None:
        return True
    return isinstance(entry, CustomMessageEntry) and entry.custom_type in BOUNDARY_TYPES


def anchor_of(entry: Any) -> host.Anchor:
    """The most specific anchor kind an entry belongs to, pi-context's boundaries included."""
    return host.anchor_of(entry, is_boundary_entry)


def apply_action(session: ModelSession, action: Action, serial: int) -> bool:
    """Carry out a host action or one of pi-context's commands; ``False`` when the state does
    not allow it (and for :data:`WORLD_ACTIONS`, which need the world around the session)."""
    if isinstance(action, WipeCommand):
        # Pi's /wipe-memory waits for idle: a busy session does not run it.
        return session.is_idle and family.run_command(session, WIPE_MEMORY_COMMAND)
    if isinstance(action, Toggle):
        return family.run_command(session, PI_CONTEXT_COMMAND, action.arg)
    return host.apply_action(session, action, serial, is_boundary_entry)
