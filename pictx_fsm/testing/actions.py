"""Host actions: what a user, a model and Pi itself can do to a session, as data — the
action language every extension's world understands (a kit adds its own).

An action is a small frozen value with a JSON form, so a generated sequence can be written to
a trace file and replayed exactly. Applying an action that the session's state does not
allow (steering while idle, navigating while a run is active) is a no-op that reports
``False``: generated sequences stay valid while Hypothesis shrinks them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
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
from pictx_fsm.session.entries import Entry, MessageEntry

__all__ = [
    "ANCHORS",
    "HOST_ACTION_TYPES",
    "HOST_ALPHABET",
    "JSON",
    "RUN_STEP_LIMIT",
    "Abort",
    "Action",
    "Advance",
    "AdvanceTo",
    "Anchor",
    "Boundary",
    "Compact",
    "EndlessRun",
    "FollowUp",
    "Fork",
    "ForkPosition",
    "Navigate",
    "Prompt",
    "Reload",
    "ReloadExtensions",
    "ReplyKind",
    "Script",
    "Settle",
    "Steer",
    "ToolName",
    "action_from_json",
    "action_to_json",
    "anchor_of",
    "apply_action",
    "filler",
    "no_boundary",
    "response_of",
]

JSON: TypeAlias = Any
ToolName: TypeAlias = str
"""A tool the scripted model calls by name (``echo`` when none is given: the model host's
own test tool)."""
ReplyKind: TypeAlias = Literal["text", "tools", "overflow", "error", "length"]
Anchor: TypeAlias = Literal["any", "tool_call", "tool_result", "user", "boundary"]
"""Which entries a navigation or fork picks from: all of them, or one kind — the places
where boundary bugs live (a pending tool call, an extension's boundary entries)."""
ANCHORS: tuple[Anchor, ...] = ("any", "tool_call", "tool_result", "user", "boundary")
Boundary: TypeAlias = Callable[[object], bool]
"""Which entries an extension writes at a boundary (the ``boundary`` anchor); each kit has
its own, and a world passes it to :func:`apply_action`."""


def no_boundary(entry: object) -> bool:
    return False


_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
_CYCLE = "".join(f" {word}" for word in _WORDS)


def filler(label: str, chars: int) -> str:
    """Deterministic text of about ``chars`` characters, starting with a unique label: the
    label, then `` alpha bravo …`` word by word until at least ``chars`` (whole cycles of
    the words are repeated at once: prompts of 40 000 characters are common)."""
    cycles = max(0, (chars - len(label)) // len(_CYCLE) - 1)
    text = label + _CYCLE * cycles
    index = 0
    while len(text) < chars:
        text += f" {_WORDS[index % len(_WORDS)]}"
        index += 1
    return text


@frozen(kw_only=True)
class Prompt:
    """The user sends a prompt (only when idle)."""

    KIND: ClassVar[str] = "prompt"
    chars: int


@frozen(kw_only=True)
class Script:
    """The model's next reply: text, a tool batch, an overflow, an ordinary error or a length
    stop (queued in the faux provider; any time)."""

    KIND: ClassVar[str] = "script"
    reply: ReplyKind
    chars: int = 40
    tools: tuple[ToolName, ...] = attrs.field(default=(), validator=lambda _, __, v: _known(v))
    arguments: tuple[str, ...] = attrs.field(default=(), validator=lambda _, __, v: _objects(v))
    """Each call's arguments as JSON text, by position (missing: the default arguments)."""


def _known(tools: tuple[ToolName, ...]) -> None:
    bad = [name for name in tools if not (isinstance(name, str) and name.strip())]
    if bad:
        raise ValueError(f"tool names must be non-empty strings, not {', '.join(map(repr, bad))}")


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
class Navigate:
    """``/tree`` to the entry at ``index`` (modulo the file's entries of kind ``anchor``),
    optionally summarised."""

    KIND: ClassVar[str] = "navigate"
    index: int
    summarize: bool = False
    anchor: Anchor = "any"


ForkPosition: TypeAlias = Literal["before", "at"]


@frozen(kw_only=True)
class Fork:
    """Fork the session at the entry at ``index`` (modulo the file's entries of kind
    ``anchor``): ``before`` it (Pi's ``/fork``: a user message only, its parent becomes the
    leaf) or ``at`` it (the copy ends with it: ``ctx.fork(id, {position: "at"})``)."""

    KIND: ClassVar[str] = "fork"
    index: int
    anchor: Anchor = "any"
    position: ForkPosition = "before"


@frozen(kw_only=True)
class Reload:
    """Write the session, read it back (leaf = last entry) and resume it."""

    KIND: ClassVar[str] = "reload"


@frozen(kw_only=True)
class ReloadExtensions:
    """Pi's ``/reload``: the extensions end and bind again on the same session."""

    KIND: ClassVar[str] = "reload_extensions"


@frozen(kw_only=True)
class Compact:
    """``/compact``."""

    KIND: ClassVar[str] = "compact"


Action: TypeAlias = (
    Prompt
    | Script
    | Advance
    | AdvanceTo
    | Settle
    | Steer
    | FollowUp
    | Abort
    | Navigate
    | Fork
    | Reload
    | ReloadExtensions
    | Compact
)
"""A host action: what any extension's world can be driven with."""
HOST_ACTION_TYPES: Mapping[str, type[Any]] = {
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
        Navigate,
        Fork,
        Reload,
        ReloadExtensions,
        Compact,
    )
}


HOST_ALPHABET: tuple[Action, ...] = (
    Prompt(chars=40),
    Script(reply="text"),
    Script(reply="tools"),
    Settle(),
    Advance(steps=1),
    Steer(chars=40),
    Abort(),
    Reload(),
)
"""The host actions ``pictx-fsm check`` explores for a kit that names no alphabet of its
own: prompts, a text reply and a tool batch (the model host's ``echo``), single host steps
and settling, steering and aborting mid-run, and a reload."""


def action_to_json(action: Any) -> dict[str, JSON]:
    """Any action (a frozen attrs value with a ``KIND``) as its trace JSON."""
    out: dict[str, JSON] = {"action": action.KIND}
    for field in attrs.fields(type(action)):
        value = getattr(action, field.name)
        out[field.name] = list(value) if isinstance(value, tuple) else value
    return out


def action_from_json(
    obj: Mapping[str, JSON], types: Mapping[str, type[Any]] = HOST_ACTION_TYPES
) -> Any:
    """Read an action of one of ``types`` (by ``KIND``); raises ``ValueError`` naming the
    problem."""
    kind = obj.get("action")
    cls = types.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown action {kind!r}")
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in obj.items() if k != "action"}
    try:
        action = cls(**kwargs)
    except TypeError as error:
        raise ValueError(f"action {kind!r}: {error}") from None
    return action


def response_of(script: Script, serial: int) -> Response:
    """The scripted provider response a :class:`Script` action stands for."""
    if script.reply == "text":
        return Text(text=filler(f"reply-{serial}", script.chars))
    if script.reply == "tools":
        names = script.tools or ("echo",)
        calls = tuple(
            Call(name=name, arguments=_arguments(script, i, name, serial))
            for i, name in enumerate(names)
        )
        return Tools(calls=calls, text=filler(f"calls-{serial}", min(script.chars, 80)))
    if script.reply == "overflow":
        return Overflow()
    if script.reply == "error":
        return ProviderError()
    return LengthStop()


RUN_STEP_LIMIT = 5_000
"""Host steps one action may take. A run verify generates settles within a few hundred (at
most 40 scripted replies and 40 queued messages, each turn some twenty steps); one still
running after this many never settles."""


class EndlessRun(Exception):
    """An action's run was still going after :data:`RUN_STEP_LIMIT` host steps."""


def _arguments(script: Script, index: int, name: str, serial: int) -> Mapping[str, JSON]:
    if index < len(script.arguments):
        arguments: Mapping[str, JSON] = json.loads(script.arguments[index])
        return arguments
    return {"text": f"t{serial}-{index}"} if name == "echo" else {}


def apply_action(
    session: ModelSession, action: Any, serial: int, boundary: Boundary = no_boundary
) -> bool:
    """Carry out one host action on the model session; ``False`` when the state does not
    allow it, and for any other action (a kit's own, which its world applies)."""
    if type(action).KIND not in HOST_ACTION_TYPES:
        return False
    try:
        return _apply(session, action, serial, boundary)
    except ModelHostError:
        return False


def _apply(session: ModelSession, action: Action, serial: int, boundary: Boundary) -> bool:
    if isinstance(action, Prompt):
        if not session.is_idle:
            return False
        session.prompt(filler(f"prompt-{serial}", action.chars))
    elif isinstance(action, Script):
        session.provider.push(response_of(action, serial))
    elif isinstance(action, Advance):
        for _ in range(action.steps):
            if session.step() is None:
                break
    elif isinstance(action, AdvanceTo):
        _advance_to(session, action)
    elif isinstance(action, Settle):
        _settle(session)
    elif isinstance(action, Steer | FollowUp):
        if session.is_idle:
            return False
        text = filler(f"{action.KIND}-{serial}", action.chars)
        (session.steer if isinstance(action, Steer) else session.follow_up)(text)
    elif isinstance(action, Abort):
        if session.is_idle:
            return False
        session.abort()
    else:
        return _apply_session_operation(session, action, boundary)
    return True


def _settle(session: ModelSession) -> None:
    for _ in range(RUN_STEP_LIMIT):
        if session.step() is None:
            return
    raise EndlessRun(f"the run had not settled after {RUN_STEP_LIMIT:,} host steps")


def _advance_to(session: ModelSession, action: AdvanceTo) -> None:
    passed = 0
    for _ in range(RUN_STEP_LIMIT):
        step = session.step()
        if step is None or passed + (step.name == action.step) >= action.count:
            return
        passed += step.name == action.step
    raise EndlessRun(f"no {action.step!r} step and no settling within {RUN_STEP_LIMIT:,} steps")


def anchor_of(entry: Entry, boundary: Boundary = no_boundary) -> Anchor:
    """The most specific anchor kind an entry belongs to (``any`` when none)."""
    if isinstance(entry, MessageEntry):
        role = entry.message.role
        if role == "assistant" and entry.message.tool_calls():
            return "tool_call"
        if role == "toolResult":
            return "tool_result"
        return "user" if role == "user" else "any"
    return "boundary" if boundary(entry) else "any"


def _target(session: ModelSession, action: Navigate | Fork, boundary: Boundary) -> str | None:
    entries = [
        e.id
        for e in session.entries
        if e.id is not None and (action.anchor == "any" or anchor_of(e, boundary) == action.anchor)
    ]
    return entries[action.index % len(entries)] if entries else None


def _apply_session_operation(session: ModelSession, action: Action, boundary: Boundary) -> bool:
    if not session.is_idle:
        return False
    if isinstance(action, Navigate | Fork):
        target = _target(session, action, boundary)
        if target is None:
            return False
        if isinstance(action, Navigate):
            session.navigate(target, summarize=action.summarize)
        else:
            session.fork(target, action.position)
    elif isinstance(action, Reload):
        session.reload()
    elif isinstance(action, ReloadExtensions):
        session.reload_extensions()
    elif isinstance(action, Compact):
        session.compact()
    return True
