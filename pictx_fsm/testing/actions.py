"""Host actions: what a user, a model and Pi itself can do to a session, as data.

An action is a small frozen value with a JSON form, so a generated sequence can be written to
a trace file and replayed exactly. Applying an action that the session's state does not
allow (steering while idle, navigating while a run is active) is a no-op that reports
``False``: generated sequences stay valid while Hypothesis shrinks them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import attrs
from attrs import frozen

from pictx_fsm.hosts.model import (
    Call,
    LengthStop,
    ModelSession,
    Overflow,
    ProviderError,
    Response,
    Text,
    Tools,
)
from pictx_fsm.hosts.model.errors import ModelHostError
from pictx_fsm.protocol import (
    GET_CONTEXT_REMAINING_TOOL,
    PI_CONTEXT_COMMAND,
    WIPE_MEMORY_COMMAND,
    WIPE_MEMORY_TOOL,
)
from pictx_fsm.tools import TOOL_NAMES

JSON: TypeAlias = Any
ToolName: TypeAlias = str
"""One of pi-context's eleven tools (``TOOL_NAMES``) or the traces' ``echo``."""
ReplyKind: TypeAlias = Literal["text", "tools", "overflow", "error", "length"]

_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


def filler(label: str, chars: int) -> str:
    """Deterministic text of about ``chars`` characters, starting with a unique label."""
    words = [label]
    size = len(label)
    index = 0
    while size < chars:
        word = _WORDS[index % len(_WORDS)]
        words.append(word)
        size += len(word) + 1
        index += 1
    return " ".join(words)


@frozen(kw_only=True)
class Prompt:
    """The user sends a prompt (only when idle)."""

    KIND: ClassVar[str] = "prompt"
    chars: int


@frozen(kw_only=True)
class Script:
    """The model's next reply: text, a tool batch, an overflow, an ordinary error or a length
    stop (queued in the faux brain; any time)."""

    KIND: ClassVar[str] = "script"
    reply: ReplyKind
    chars: int = 40
    tools: tuple[ToolName, ...] = attrs.field(default=(), validator=lambda _, __, v: _known(v))
    arguments: tuple[str, ...] = attrs.field(default=(), validator=lambda _, __, v: _objects(v))
    """Each call's arguments as JSON text, by position (missing: the default arguments)."""


def _known(tools: tuple[ToolName, ...]) -> None:
    unknown = [name for name in tools if name not in _TOOL_NAMES]
    if unknown:
        raise ValueError(f"unknown tool(s) {', '.join(map(repr, unknown))}")


def _objects(arguments: tuple[str, ...]) -> None:
    """Every call's arguments must be the JSON text of an object."""
    for index, text in enumerate(arguments):
        try:
            value = json.loads(text)
        except (TypeError, json.JSONDecodeError):
            value = None
        if not isinstance(value, dict):
            raise ValueError(f"arguments[{index}] is not the JSON text of an object")


@frozen(kw_only=True)
class Advance:
    """Pi advances ``steps`` host steps (hooks, persistence points, waits)."""

    KIND: ClassVar[str] = "advance"
    steps: int = 1


@frozen(kw_only=True)
class AdvanceTo:
    """Pi advances until it has passed ``count`` more steps named ``step`` (a hook such as
    ``turn_end``, a persisted entry type, or a wait), or until it is idle: how a story stops
    right after a given hook to act there, independently of how many steps lie before it."""

    KIND: ClassVar[str] = "advance_to"
    step: str
    count: int = 1


@frozen(kw_only=True)
class Settle:
    """Pi runs until it settles."""

    KIND: ClassVar[str] = "settle"


@frozen(kw_only=True)
class Steer:
    """The user steers the running agent (only while a run is active)."""

    KIND: ClassVar[str] = "steer"
    chars: int


@frozen(kw_only=True)
class FollowUp:
    """The user queues a follow-up (only while a run is active)."""

    KIND: ClassVar[str] = "follow_up"
    chars: int


@frozen(kw_only=True)
class Abort:
    """The user aborts (streaming, during a tool, during a retry wait)."""

    KIND: ClassVar[str] = "abort"


@frozen(kw_only=True)
class WipeCommand:
    """``/wipe-memory`` (only when idle: Pi's command waits for idle)."""

    KIND: ClassVar[str] = "wipe"


@frozen(kw_only=True)
class Toggle:
    """``/pi-context <arg>``."""

    KIND: ClassVar[str] = "toggle"
    arg: str


@frozen(kw_only=True)
class Navigate:
    """``/tree`` to the entry at ``index`` (modulo the file's entries), optionally summarised."""

    KIND: ClassVar[str] = "navigate"
    index: int
    summarize: bool = False


@frozen(kw_only=True)
class Fork:
    """Fork the session at the entry at ``index`` (modulo the file's entries)."""

    KIND: ClassVar[str] = "fork"
    index: int


@frozen(kw_only=True)
class Reload:
    """Write the session, read it back (leaf = last entry) and resume it."""

    KIND: ClassVar[str] = "reload"


@frozen(kw_only=True)
class Compact:
    """``/compact``."""

    KIND: ClassVar[str] = "compact"


@frozen(kw_only=True)
class VoidNextBoundary:
    """Another extension, loaded after pi-context, answers the next ``turn_end`` or
    ``agent_before_settle`` with an invalid draft, so Pi voids every draft of that boundary
    and its continue flag (pi-host §4.2 rule 2, trace ``c3b``). See :mod:`.noise`."""

    KIND: ClassVar[str] = "void_next_boundary"


@frozen(kw_only=True)
class HideBoot:
    """Another extension, loaded after pi-context, hides the current window's boot from the
    model context at the next ``turn_end`` (a valid ``context_edit`` with replacement
    ``null``): the case R65 refuses to repair and R68 must catch. See :mod:`.noise`."""

    KIND: ClassVar[str] = "hide_boot"


@frozen(kw_only=True)
class QueueAtSettle:
    """Another extension, loaded before pi-context, queues a follow-up
    (``pi.sendUserMessage(text, {deliverAs: "followUp"})``) in its next
    ``agent_before_settle`` handler, so pi-context's handler sees a queued message (R35).
    See :mod:`.noise`."""

    KIND: ClassVar[str] = "queue_at_settle"
    chars: int = 40


@frozen(kw_only=True)
class SetAutomatic:
    """The user switches ``compaction.enabled`` in the settings pi-context reads live on
    every decision (R40, R41): automatic resets on or off, possibly mid-run."""

    KIND: ClassVar[str] = "set_automatic"
    enabled: bool


@frozen(kw_only=True)
class KillRuntime:
    """The lifecycle's runtime dies, as the bridge's Python server can (issue 8): the bridge
    twin (:mod:`pictx_fsm.hosts.pi.twin`) fails closed until it restarts one, or, with
    ``permanent``, for good (degraded mode)."""

    KIND: ClassVar[str] = "kill_runtime"
    permanent: bool = False


Action: TypeAlias = (
    Prompt
    | Script
    | Advance
    | AdvanceTo
    | Settle
    | Steer
    | FollowUp
    | Abort
    | WipeCommand
    | Toggle
    | Navigate
    | Fork
    | Reload
    | Compact
    | VoidNextBoundary
    | HideBoot
    | QueueAtSettle
    | SetAutomatic
    | KillRuntime
)
ACTION_TYPES: Mapping[str, type[Any]] = {
    cls.KIND: cls
    for cls in (
        Prompt,
        Script,
        Advance,
        AdvanceTo,
        Settle,
        Steer,
        FollowUp,
        Abort,
        WipeCommand,
        Toggle,
        Navigate,
        Fork,
        Reload,
        Compact,
        VoidNextBoundary,
        HideBoot,
        QueueAtSettle,
        SetAutomatic,
        KillRuntime,
    )
}
WORLD_ACTIONS: tuple[type[Any], ...] = (
    VoidNextBoundary,
    HideBoot,
    QueueAtSettle,
    SetAutomatic,
    KillRuntime,
)
"""Actions on the world around the session (other extensions, settings), applied by
:meth:`~pictx_fsm.testing.world.World.apply`, not by :func:`apply_action`."""
_TOOL_NAMES: Mapping[str, str] = {
    "wipe_memory": WIPE_MEMORY_TOOL,
    "get_context_remaining": GET_CONTEXT_REMAINING_TOOL,
    "echo": "echo",
    **{name: name for name in TOOL_NAMES},
}


def action_to_json(action: Action) -> dict[str, JSON]:
    out: dict[str, JSON] = {"action": action.KIND}
    for field in attrs.fields(type(action)):
        value = getattr(action, field.name)
        out[field.name] = list(value) if isinstance(value, tuple) else value
    return out


def action_from_json(obj: Mapping[str, JSON]) -> Action:
    """Read an action; raises ``ValueError`` naming the problem."""
    kind = obj.get("action")
    cls = ACTION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown action {kind!r}")
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in obj.items() if k != "action"}
    try:
        action: Action = cls(**kwargs)
    except TypeError as error:
        raise ValueError(f"action {kind!r}: {error}") from None
    return action


def response_of(script: Script, serial: int) -> Response:
    """The brain response a :class:`Script` action stands for."""
    if script.reply == "text":
        return Text(text=filler(f"reply-{serial}", script.chars))
    if script.reply == "tools":
        names = script.tools or ("echo",)
        calls = tuple(
            Call(name=_TOOL_NAMES[name], arguments=_arguments(script, i, name, serial))
            for i, name in enumerate(names)
        )
        return Tools(calls=calls, text=filler(f"calls-{serial}", min(script.chars, 80)))
    if script.reply == "overflow":
        return Overflow()
    if script.reply == "error":
        return ProviderError()
    return LengthStop()


def _arguments(script: Script, index: int, name: str, serial: int) -> Mapping[str, JSON]:
    if index < len(script.arguments):
        arguments: Mapping[str, JSON] = json.loads(script.arguments[index])
        return arguments
    return {"text": f"t{serial}-{index}"} if name == "echo" else {}


def apply_action(session: ModelSession, action: Action, serial: int) -> bool:
    """Carry out one action on the model session; ``False`` when the state does not allow it
    (and for :data:`WORLD_ACTIONS`, which need the world around the session)."""
    if isinstance(action, WORLD_ACTIONS):
        return False
    try:
        return _apply(session, action, serial)
    except ModelHostError:
        return False


def _apply(session: ModelSession, action: Action, serial: int) -> bool:
    if isinstance(action, Prompt):
        if not session.is_idle:
            return False
        session.prompt(filler(f"prompt-{serial}", action.chars))
    elif isinstance(action, Script):
        session.brain.push(response_of(action, serial))
    elif isinstance(action, Advance):
        for _ in range(action.steps):
            if session.step() is None:
                break
    elif isinstance(action, AdvanceTo):
        _advance_to(session, action)
    elif isinstance(action, Settle):
        session.run_until_idle()
    elif isinstance(action, Steer | FollowUp):
        if session.is_idle:
            return False
        text = filler(f"{action.KIND}-{serial}", action.chars)
        (session.steer if isinstance(action, Steer) else session.follow_up)(text)
    elif isinstance(action, Abort):
        if session.is_idle:
            return False
        session.abort()
    elif isinstance(action, WipeCommand):
        if not session.is_idle:
            return False
        session.command(WIPE_MEMORY_COMMAND)
    elif isinstance(action, Toggle):
        session.command(PI_CONTEXT_COMMAND, action.arg)
    else:
        return _apply_session_operation(session, action)
    return True


def _advance_to(session: ModelSession, action: AdvanceTo) -> None:
    passed = 0
    while passed < action.count:
        step = session.step()
        if step is None:
            return
        passed += step.name == action.step


def _apply_session_operation(session: ModelSession, action: Action) -> bool:
    if not session.is_idle:
        return False
    entries = [e for e in session.entries if e.id is not None]
    if isinstance(action, Navigate | Fork) and not entries:
        return False
    if isinstance(action, Navigate):
        target = entries[action.index % len(entries)].id
        assert target is not None
        session.navigate(target, summarize=action.summarize)
    elif isinstance(action, Fork):
        target = entries[action.index % len(entries)].id
        assert target is not None
        session.fork(target)
    elif isinstance(action, Reload):
        session.reload()
    elif isinstance(action, Compact):
        session.compact()
    return True
