"""Effects as data: what the lifecycle asks its host to do, and what a hook handler returns.

Nothing here talks to a host. The runtime returns a :class:`HookResult` per hook event: the
value Pi's handler would return (boundary drafts with ``continue``, ``cancel``, a replacement
message list, a tree summary, a tool result) plus the side effects Pi's ``ctx``/``pi`` calls
would perform, in order (notices, sent messages, appended entries, abort). An adapter applies
them; the model session applies them exactly as Pi 0.87 does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from attrs import field, frozen

from pictx_fsm.fastjson import utf8_string
from pictx_fsm.session.entries import ABSENT

__all__ = [
    "AbortRun",
    "AppendEntry",
    "BoundaryResult",
    "CancelResult",
    "CompactionDraft",
    "ContextEditDraft",
    "CustomDraft",
    "CustomMessageDraft",
    "Draft",
    "HookResult",
    "HookValue",
    "HostEffect",
    "MessagesResult",
    "NoticeLevel",
    "Notify",
    "SendMessage",
    "ToolResult",
    "TreeSummaryResult",
    "compose_entries",
    "draft_from_json",
]

if TYPE_CHECKING:
    from pictx_fsm.host.tool_outcome import ToolOutcome
    from pictx_fsm.machines import Step

JSON: TypeAlias = Any
NoticeLevel: TypeAlias = Literal["info", "warning", "error"]


def _tuple(items: Sequence[Any]) -> tuple[Any, ...]:
    # A tuple is kept as it is: a Transcript (a tuple that knows its digests) stays one.
    return items if isinstance(items, tuple) else tuple(items)


# -- boundary drafts (SessionBoundaryDraft, pi-host §4.1) --------------------------------------


@frozen(kw_only=True)
class CustomDraft:
    custom_type: str
    data: JSON = ABSENT

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"type": "custom", "customType": self.custom_type}
        if self.data is not ABSENT:
            out["data"] = self.data
        return out


@frozen(kw_only=True)
class CustomMessageDraft:
    custom_type: str
    content: JSON
    display: bool
    details: JSON = ABSENT

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "type": "custom_message",
            "customType": self.custom_type,
            "content": self.content,
            "display": self.display,
        }
        if self.details is not ABSENT:
            out["details"] = self.details
        return out


@frozen(kw_only=True)
class ContextEditDraft:
    target_id: str
    replacement: JSON = None

    def to_json(self) -> dict[str, JSON]:
        return {"type": "context_edit", "targetId": self.target_id, "replacement": self.replacement}


@frozen(kw_only=True)
class CompactionDraft:
    summary: str
    first_kept_entry_id: str | None
    details: JSON = ABSENT

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "type": "compaction",
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
        }
        if self.details is not ABSENT:
            out["details"] = self.details
        return out


Draft: TypeAlias = CustomDraft | CustomMessageDraft | ContextEditDraft | CompactionDraft


def draft_from_json(obj: Mapping[str, JSON]) -> Draft:
    """Read a draft as a host sends it in ``event.entries`` (unknown kinds raise ValueError)."""
    kind = obj.get("type")
    if kind == "custom":
        return CustomDraft(custom_type=str(obj["customType"]), data=obj.get("data", ABSENT))
    if kind == "custom_message":
        return CustomMessageDraft(
            custom_type=str(obj["customType"]),
            content=obj.get("content", ""),
            display=bool(obj.get("display", False)),
            details=obj.get("details", ABSENT),
        )
    if kind == "context_edit":
        return ContextEditDraft(target_id=str(obj["targetId"]), replacement=obj.get("replacement"))
    if kind == "compaction":
        kept = obj.get("firstKeptEntryId")
        return CompactionDraft(
            summary=str(obj.get("summary", "")),
            first_kept_entry_id=kept if isinstance(kept, str) else None,
            details=obj.get("details", ABSENT),
        )
    raise ValueError(f"unknown boundary draft type {kind!r}")


# -- side effects (ctx.ui.notify, pi.sendMessage, pi.appendEntry, ctx.abort) ------------------


@frozen(kw_only=True)
class Notify:
    message: str
    level: NoticeLevel

    def to_json(self) -> dict[str, JSON]:
        return {"effect": "notify", "message": self.message, "level": self.level}


@frozen(kw_only=True)
class SendMessage:
    """``pi.sendMessage(message, {triggerTurn})``; idle hosts append at once, streaming hosts
    hold it until the current tool batch completes (pi-host §5)."""

    custom_type: str
    content: JSON
    display: bool
    details: JSON = ABSENT
    trigger_turn: bool = False

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "effect": "send_message",
            "customType": self.custom_type,
            "content": self.content,
            "display": self.display,
            "triggerTurn": self.trigger_turn,
        }
        if self.details is not ABSENT:
            out["details"] = self.details
        return out


@frozen(kw_only=True)
class AppendEntry:
    """``pi.appendEntry(customType, data)``: a ``custom`` entry, never in model context."""

    custom_type: str
    data: JSON = ABSENT

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"effect": "append_entry", "customType": self.custom_type}
        if self.data is not ABSENT:
            out["data"] = self.data
        return out


@frozen(kw_only=True)
class AbortRun:
    """``ctx.abort()``: the provider request being built is cancelled (R68)."""

    def to_json(self) -> dict[str, JSON]:
        return {"effect": "abort"}


HostEffect: TypeAlias = Notify | SendMessage | AppendEntry | AbortRun


# -- hook return values ------------------------------------------------------------------------


@frozen(kw_only=True)
class BoundaryResult:
    """``{entries, continue?}`` of ``turn_end`` / ``agent_before_settle``."""

    entries: tuple[Draft, ...] = field(converter=_tuple, default=())
    continue_: bool | None = None
    """``None`` = not given (Pi keeps the accumulated flag); a bool replaces it (§4.2)."""

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"entries": [d.to_json() for d in self.entries]}
        if self.continue_ is not None:
            out["continue"] = self.continue_
        return out


@frozen(kw_only=True)
class CancelResult:
    def to_json(self) -> dict[str, JSON]:
        return {"cancel": True}


@frozen(kw_only=True)
class TreeSummaryResult:
    """``{summary: {summary}}``: bypasses Pi's summarizer (R75)."""

    summary: str = ""

    def to_json(self) -> dict[str, JSON]:
        return {"summary": {"summary": self.summary}}


@frozen(kw_only=True)
class MessagesResult:
    messages: tuple[JSON, ...] = field(converter=_tuple)

    def to_json(self) -> dict[str, JSON]:
        return {"messages": list(self.messages)}


def pretty_json(payload: JSON) -> str:
    """``json.dumps(payload, indent=2, ensure_ascii=False)``. A flat object of strings,
    integers, booleans and nulls (what the lifecycle's own tools answer) is written member by
    member: ``json`` indents with its pure-Python encoder, slower than a whole audit record."""
    if type(payload) is dict and payload:
        members = [
            f"  {_json_string(key)}: {write(value)}"
            for key, value in payload.items()
            if type(key) is str and (write := _FLAT_TEXTS.get(type(value))) is not None
        ]
        if len(members) == len(payload):
            return "{\n" + ",\n".join(members) + "\n}"
    return json.dumps(payload, indent=2, ensure_ascii=False)


_json_string: Final = utf8_string
_FLAT_TEXTS: Final[dict[type, Callable[[Any], str]]] = {
    str: _json_string,
    int: int.__repr__,
    bool: {True: "true", False: "false"}.__getitem__,
    type(None): {None: "null"}.__getitem__,
}
"""What ``json`` writes for a value of exactly these types (``bool`` is not ``int`` here)."""


@frozen(kw_only=True)
class ToolResult:
    """A tool's result: JSON pretty-printed with two spaces (R16, R17)."""

    payload: JSON
    terminate: bool = False

    @cached_property
    def text(self) -> str:
        # Once per result: the host sends it and the audit records it.
        return pretty_json(self.payload)

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"content": [{"type": "text", "text": self.text}]}
        if self.terminate:
            out["terminate"] = True
        return out


HookValue: TypeAlias = (
    "BoundaryResult | CancelResult | TreeSummaryResult | MessagesResult | ToolResult | ToolOutcome"
)
"""A handler's return value; a notes or history tool answers with the
:class:`~pictx_fsm.extensions.pi_context.tools.ToolOutcome` of
:func:`~pictx_fsm.extensions.pi_context.tools.execute_tool`."""


@frozen(kw_only=True)
class HookResult:
    """What one handled hook event produced: the handler's return value (``None`` means the
    handler returned ``undefined``), the side effects in order, and the machine steps that
    decided them (what the audit records; not part of the host's JSON)."""

    hook: str
    value: HookValue | None = None
    effects: tuple[HostEffect, ...] = field(converter=_tuple, default=())
    steps: tuple[Step[str], ...] = field(converter=_tuple, default=())

    def to_json(self) -> dict[str, JSON]:
        return {
            "hook": self.hook,
            "value": None if self.value is None else self.value.to_json(),
            "effects": [e.to_json() for e in self.effects],
        }

    @property
    def notices(self) -> tuple[Notify, ...]:
        return tuple(e for e in self.effects if isinstance(e, Notify))


def compose_entries(
    incoming: Sequence[Draft], reminders: Sequence[Draft], reset: Sequence[Draft]
) -> tuple[Draft, ...]:
    """R22/R28: a boundary's entries — the host's incoming drafts first (other extensions'
    work, untouched), then the committed reminders, then the reset tail, which therefore
    always closes the boundary.

    post: __return__[: len(incoming)] == tuple(incoming)
    post: __return__[len(__return__) - len(reset) :] == tuple(reset)
    post: len(__return__) == len(incoming) + len(reminders) + len(reset)
    """
    return (*incoming, *reminders, *reset)
