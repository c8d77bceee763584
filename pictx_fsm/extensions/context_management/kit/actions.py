"""Host actions for pi-context-management worlds: pi-context's session actions (prompt,
script, advance, settle, queue, abort, navigate, reload, compact) plus what this extension
adds — its tool calls, generator replies, delivering what the host owes, letting time pass,
``/ctx-memory``, a failing disk, a switch-vetoing extension, a model switch.

Every action is a small frozen value with a JSON form (traces replay exactly); an action the
session's state does not allow is a no-op reporting ``False``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeAlias

import attrs
from attrs import frozen

from pictx_fsm.extensions.context_management.texts import (
    NOTES_TOOL,
    READ_TOOL,
    SEARCH_TOOL,
    STATUS_TOOL,
)
from pictx_fsm.hosts.model import Call, Text, Tools
from pictx_fsm.hosts.model.generator import REPLY_KINDS
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing import actions as shared

__all__ = [
    "CM_ACTION_TYPES",
    "CUT_EMOJI",
    "JSON",
    "SHARED_KINDS",
    "SOURCE_REF",
    "Action",
    "AimAt",
    "CmAction",
    "CmTool",
    "CtxMemory",
    "Deliver",
    "Drain",
    "FailCreate",
    "FailDisk",
    "FailTakeover",
    "ForeignMessage",
    "Generate",
    "HideParent",
    "NavigateTo",
    "Rest",
    "SourcePick",
    "SwitchModel",
    "ToolKind",
    "Turn",
    "VetoReturn",
    "VetoSwitch",
    "Wait",
    "action_from_json",
    "action_to_json",
    "closing_text",
    "resolve_sources",
    "tool_reply",
]

JSON: TypeAlias = Any
ToolKind: TypeAlias = Literal["notes_update", "notes_read", "search", "read", "status"]
SourcePick: TypeAlias = Literal["user", "assistant", "missing"]
CUT_EMOJI = "\ud83d"
"""The first half of 😀: what a Pi session file holds for a cut emoji."""


@frozen(kw_only=True)
class CmTool:
    """The model's next reply calls one of the extension's tools, then answers in text."""

    KIND: ClassVar[str] = "cm_tool"
    tool: ToolKind
    key: int = 0
    kind: str = "goal"
    status: str = "active"
    source: SourcePick = "user"
    chars: int = 40
    handoff: bool = False
    """Search or read with ``scope: "handoff"`` (the captured parent, M24)."""
    max_bytes: int | None = None
    """A search page of at most this many bytes (M21, M23)."""
    cut: bool = False
    """A cut emoji — a lone surrogate — ends the note text or the search query (a note
    holding one is refused, a search finds it as JavaScript would)."""
    then: ToolKind | None = None
    """A second call in the same assistant message (one turn: one recall quota, M23)."""


@frozen(kw_only=True)
class Generate:
    """The generator's next reply (valid, invalid shape, over capacity, slow, failing, …)."""

    KIND: ClassVar[str] = "generate"
    reply: str = "valid"
    repair: str | None = None
    """The reply to a repair request after a capacity failure (default: by ``reply``)."""

    def __attrs_post_init__(self) -> None:
        for kind in (self.reply, self.repair or "valid"):
            if kind not in REPLY_KINDS:
                raise ValueError(f"unknown generator reply {kind!r}")


@frozen(kw_only=True)
class Deliver:
    """The host delivers what it owes the extension: ``waitForIdle`` or the next reply."""

    KIND: ClassVar[str] = "deliver"


@frozen(kw_only=True)
class Drain:
    """The host delivers everything it owes, one item at a time (at most ``limit``)."""

    KIND: ClassVar[str] = "drain"
    limit: int = 40


@frozen(kw_only=True)
class Turn:
    """A whole round: the user prompts, the run settles, and the host delivers what it owes
    (a background job's replies, an automatic handoff's idle wait and preparation), letting
    any run that starts (a takeover prompt) settle too."""

    KIND: ClassVar[str] = "turn"
    chars: int


@frozen(kw_only=True)
class Wait:
    """Time passes (cooldowns, deadlines, the rolling hour); whatever the host owes the
    extension meanwhile arrives at its time."""

    KIND: ClassVar[str] = "wait"
    ms: int


@frozen(kw_only=True)
class CtxMemory:
    """``/ctx-memory <args>``."""

    KIND: ClassVar[str] = "ctx_memory"
    args: str


@frozen(kw_only=True)
class FailDisk:
    """Session-file writes fail (or work again) from now on (M44)."""

    KIND: ClassVar[str] = "fail_disk"
    on: bool


@frozen(kw_only=True)
class VetoSwitch:
    """Another extension cancels session switches (or stops doing so, M49)."""

    KIND: ClassVar[str] = "veto_switch"
    on: bool


@frozen(kw_only=True)
class SwitchModel:
    """The user selects another model (``model_select``)."""

    KIND: ClassVar[str] = "switch_model"
    index: int


@frozen(kw_only=True)
class HideParent:
    """Parent session files become unreadable (moved away) or readable again (M24, M49)."""

    KIND: ClassVar[str] = "hide_parent"
    on: bool


@frozen(kw_only=True)
class FailTakeover:
    """The next takeover prompts fail to start (M50)."""

    KIND: ClassVar[str] = "fail_takeover"
    on: bool


@frozen(kw_only=True)
class VetoReturn:
    """Another extension cancels only the switch back to a source session (M49)."""

    KIND: ClassVar[str] = "veto_return"
    on: bool


@frozen(kw_only=True)
class NavigateTo:
    """``/tree`` to a landmark of the current file: ``first_user`` (before any note),
    ``first_notes`` / ``notes`` (the first / last notes entry), ``checkpoint`` (the last
    compaction), optionally with a branch summary."""

    KIND: ClassVar[str] = "navigate_to"
    mark: Literal["first_user", "first_notes", "notes", "checkpoint"]
    summarize: bool = False


@frozen(kw_only=True)
class FailCreate:
    """New session files cannot be created (or can again, M46 step 4)."""

    KIND: ClassVar[str] = "fail_create"
    on: bool


@frozen(kw_only=True)
class Rest:
    """Everything comes to rest: runs settle and the host delivers all it owes the extension
    (every reply at its time, every deadline, every idle wait), again until nothing is left —
    how every run ends before its promised outcomes are judged."""

    KIND: ClassVar[str] = "rest"
    rounds: int = 50


@frozen(kw_only=True)
class AimAt:
    """The next decision meets one of the policy's lines at ``offset`` (−1, 0, +1): a token
    line (a ratio of the window) — the model's next reply reports the context tokens on it,
    observed at the reply end that follows; a time line (milliseconds) — time passes until
    that long after the ``back``-th latest moment anything happened (a commit, a failure, a
    verified handoff), where the next reply end is judged."""

    KIND: ClassVar[str] = "aim"
    line: str
    offset: Literal[-1, 0, 1]
    back: int = 0


@frozen(kw_only=True)
class ForeignMessage:
    """Another extension appends a visible message while idle (``pi.sendMessage``)."""

    KIND: ClassVar[str] = "foreign_message"
    chars: int = 200


CmAction: TypeAlias = (
    CmTool
    | Generate
    | Deliver
    | Drain
    | Turn
    | Wait
    | CtxMemory
    | FailDisk
    | VetoSwitch
    | SwitchModel
    | HideParent
    | FailTakeover
    | FailCreate
    | VetoReturn
    | NavigateTo
    | ForeignMessage
    | Rest
    | AimAt
)
CM_ACTION_TYPES: Mapping[str, type[Any]] = {
    cls.KIND: cls
    for cls in (
        CmTool,
        Generate,
        Deliver,
        Drain,
        Turn,
        Wait,
        CtxMemory,
        FailDisk,
        VetoSwitch,
        SwitchModel,
        HideParent,
        FailTakeover,
        FailCreate,
        VetoReturn,
        NavigateTo,
        ForeignMessage,
        Rest,
        AimAt,
    )
}
SHARED_KINDS = (
    "prompt",
    "script",
    "advance",
    "settle",
    "follow_up",
    "abort",
    "navigate",
    "reload",
    "compact",
)
Action: TypeAlias = Any


def action_to_json(action: Action) -> dict[str, JSON]:
    if type(action).KIND in CM_ACTION_TYPES:
        out: dict[str, JSON] = {"action": action.KIND}
        out.update(attrs.asdict(action))
        return out
    return shared.action_to_json(action)


def action_from_json(obj: Mapping[str, JSON]) -> Action:
    kind = obj.get("action")
    cls = CM_ACTION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        if kind not in SHARED_KINDS:
            raise ValueError(f"unknown action {kind!r}")
        return shared.action_from_json(obj)
    try:
        return cls(**{k: v for k, v in obj.items() if k != "action"})
    except TypeError as error:
        raise ValueError(f"action {kind!r}: {error}") from None


def tool_reply(action: CmTool, ids: Mapping[str, list[str]], serial: int) -> Tools:
    """The scripted provider reply standing for a :class:`CmTool` on the current branch's
    messages."""
    name, arguments = _call(action, ids)
    calls = [Call(name=name, arguments=arguments, id=f"cm_{serial}")]
    if action.then is not None:
        name, arguments = _call(attrs.evolve(action, tool=action.then, then=None), ids)
        calls.append(Call(name=name, arguments=arguments, id=f"cm_{serial}_then"))
    return Tools(calls=tuple(calls), text="")


def _pick(action: CmTool, ids: Mapping[str, list[str]]) -> str:
    found = ids.get(action.source, [])
    return found[action.key % len(found)] if found else "deadbeef"


def _call(action: CmTool, ids: Mapping[str, list[str]]) -> tuple[str, dict[str, JSON]]:
    cut = CUT_EMOJI if action.cut else ""
    if action.tool == "notes_update":
        text = shared.filler(f"note-{action.key}", action.chars) + cut
        arguments = {
            "action": "update",
            "key": f"k{action.key}",
            "kind": action.kind,
            "status": action.status,
            "text": text,
            "sources": [_pick(action, ids)],
        }
        return NOTES_TOOL, arguments
    if action.tool == "notes_read":
        return NOTES_TOOL, {"action": "read"}
    scope = {"scope": "handoff"} if action.handoff else {}
    if action.tool == "search":
        page = {} if action.max_bytes is None else {"maxBytes": action.max_bytes}
        return SEARCH_TOOL, {"query": "prompt-" + cut, **scope, **page}
    if action.tool == "read":
        return READ_TOOL, {"sourceId": _pick(action, ids), "offset": 0, **scope}
    return STATUS_TOOL, {}


def closing_text(serial: int) -> Text:
    return Text(text=f"done-{serial}")


SOURCE_REF = "$source"
"""A tool argument ``{"$source": [role, n]}``: the id of the ``n``-th message of that role on
the branch when the call is made (negative: from the end) — how a script written before the
session exists cites a message (the real-Pi tests' faux model resolves it the same way)."""


def resolve_sources(arguments: Mapping[str, JSON], tree: SessionTree) -> Mapping[str, JSON]:
    """The call's arguments with every :data:`SOURCE_REF` replaced by a message id."""
    return {name: _resolved(value, tree) for name, value in arguments.items()}


def _resolved(value: JSON, tree: SessionTree) -> JSON:
    if isinstance(value, list):
        return [_resolved(item, tree) for item in value]
    if not isinstance(value, Mapping):
        return value
    if SOURCE_REF not in value:
        return {name: _resolved(item, tree) for name, item in value.items()}
    role, n = value[SOURCE_REF]
    ids = [
        e.id
        for e in tree.branch()
        if isinstance(e, MessageEntry) and e.message.role == role and e.id is not None
    ]
    index = n if n >= 0 else len(ids) + n
    return ids[index] if 0 <= index < len(ids) else "deadbeef"
