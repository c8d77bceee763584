"""Host hook events and the ``ctx`` facts that come with them (pi-host §3, §6).

These are the runtime's inputs. An adapter builds one per Pi handler call: the event payload
(only the fields the lifecycle reads, lifecycle §6) and a :class:`HostContext` with what the
handler would read from ``ctx``. Everything is a frozen value so a recorded trace replays
exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, Literal, TypeAlias

from attrs import field, frozen

from pictx_fsm.host.effects import Draft

__all__ = [
    "HOOKS",
    "HOOK_EVENT_TYPES",
    "AgentBeforeSettle",
    "AgentEnd",
    "AgentSettled",
    "Command",
    "CompactReason",
    "Context",
    "ContextUsage",
    "ContextWithSystem",
    "HookEvent",
    "HostContext",
    "ModelInfo",
    "ModelSelect",
    "Outcome",
    "SessionBeforeCompact",
    "SessionBeforeTree",
    "SessionShutdown",
    "SessionStart",
    "SessionStartReason",
    "SessionTreeEvent",
    "ToolCall",
    "TurnEnd",
    "TurnStart",
]

JSON: TypeAlias = Any
Outcome: TypeAlias = Literal["completed", "aborted", "error"]


def _tuple(items: Sequence[Any]) -> tuple[Any, ...]:
    # A tuple is kept as it is: a Transcript (a tuple that knows its digests) stays one.
    return items if isinstance(items, tuple) else tuple(items)


def _frozen_mapping(items: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(items))


@frozen(kw_only=True)
class ModelInfo:
    """``ctx.model``: what the overflow classifier and usage need."""

    provider: str
    id: str
    context_window: int | None = None
    max_tokens: int | None = None


@frozen(kw_only=True)
class ContextUsage:
    """``ctx.getContextUsage()``: ``tokens`` is ``None`` right after a compaction."""

    tokens: int | None
    context_window: int | None


@frozen(kw_only=True)
class HostContext:
    """The ``ctx`` facts a handler reads (lifecycle §1)."""

    usage: ContextUsage | None = None
    model: ModelInfo | None = None
    signal_aborted: bool = False
    has_pending_messages: bool = False
    idle: bool = True
    """``ctx.isIdle()``: no run under way (a command can arrive mid-run, R64's repair)."""
    cwd: str = ""
    project_trusted: bool = False
    pi_version: str = "0.87.1"


@frozen(kw_only=True)
class TurnEnd:
    HOOK: ClassVar[str] = "turn_end"
    message: Mapping[str, JSON]
    """The assistant message of the turn (``role``, ``stopReason``, ``errorMessage``, ``usage``)."""
    outcome: Outcome = "completed"
    entries: tuple[Draft, ...] = field(converter=_tuple, default=())
    pending_messages: int = 0
    turn_index: int = 0


@frozen(kw_only=True)
class AgentBeforeSettle:
    HOOK: ClassVar[str] = "agent_before_settle"
    outcome: Outcome = "completed"
    entries: tuple[Draft, ...] = field(converter=_tuple, default=())
    pending_messages: int = 0


@frozen(kw_only=True)
class AgentEnd:
    HOOK: ClassVar[str] = "agent_end"


@frozen(kw_only=True)
class AgentSettled:
    HOOK: ClassVar[str] = "agent_settled"


@frozen(kw_only=True)
class TurnStart:
    HOOK: ClassVar[str] = "turn_start"
    turn_index: int = 0


SessionStartReason: TypeAlias = Literal["startup", "reload", "new", "resume", "fork"]


@frozen(kw_only=True)
class SessionStart:
    HOOK: ClassVar[str] = "session_start"
    reason: SessionStartReason = "startup"


@frozen(kw_only=True)
class SessionTreeEvent:
    HOOK: ClassVar[str] = "session_tree"
    new_leaf_id: str | None = None
    old_leaf_id: str | None = None


@frozen(kw_only=True)
class SessionBeforeTree:
    HOOK: ClassVar[str] = "session_before_tree"
    user_wants_summary: bool
    target_id: str | None


@frozen(kw_only=True)
class SessionShutdown:
    HOOK: ClassVar[str] = "session_shutdown"
    reason: str = "quit"


CompactReason: TypeAlias = Literal["manual", "threshold", "overflow"]


@frozen(kw_only=True)
class SessionBeforeCompact:
    HOOK: ClassVar[str] = "session_before_compact"
    reason: CompactReason
    signal_aborted: bool = False


@frozen(kw_only=True)
class Context:
    """``context``: the conversation without system messages, before each provider request."""

    HOOK: ClassVar[str] = "context"
    messages: tuple[JSON, ...] = field(converter=_tuple, default=())


@frozen(kw_only=True)
class ContextWithSystem:
    """``context_with_system``: the full provider transcript, system messages included."""

    HOOK: ClassVar[str] = "context_with_system"
    messages: tuple[JSON, ...] = field(converter=_tuple, default=())


@frozen(kw_only=True)
class ModelSelect:
    HOOK: ClassVar[str] = "model_select"
    model: ModelInfo | None = None


@frozen(kw_only=True)
class ToolCall:
    """A call of one of pi-context's eleven tools (``arguments`` as the model sent them;
    ``tool_call_id`` the call's id, when known): ``wipe_memory`` and
    ``get_context_remaining`` are machine events; the nine notes and history tools are run
    by the runtime shell (:mod:`pictx_fsm.extensions.pi_context.tools`)."""

    HOOK: ClassVar[str] = "tool"
    name: str
    arguments: Mapping[str, JSON] = field(converter=_frozen_mapping, factory=dict)
    tool_call_id: str | None = None


@frozen(kw_only=True)
class Command:
    """``/wipe-memory`` or ``/pi-context [on|off]`` (``args`` as typed)."""

    HOOK: ClassVar[str] = "command"
    name: str
    args: str = ""


HookEvent: TypeAlias = (
    TurnEnd
    | AgentBeforeSettle
    | AgentEnd
    | AgentSettled
    | TurnStart
    | SessionStart
    | SessionTreeEvent
    | SessionBeforeTree
    | SessionShutdown
    | SessionBeforeCompact
    | Context
    | ContextWithSystem
    | ModelSelect
    | ToolCall
    | Command
)

HOOK_EVENT_TYPES: tuple[type[Any], ...] = (
    TurnEnd,
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    TurnStart,
    SessionStart,
    SessionTreeEvent,
    SessionBeforeTree,
    SessionShutdown,
    SessionBeforeCompact,
    Context,
    ContextWithSystem,
    ModelSelect,
    ToolCall,
    Command,
)

HOOKS: tuple[str, ...] = tuple(
    t.HOOK for t in HOOK_EVENT_TYPES if t.HOOK not in (ToolCall.HOOK, Command.HOOK)
)
"""Every host hook the lifecycle handles, by Pi's name: the one list a host subscribes to
(the model session, the bridge and its JS extension are checked against it)."""
