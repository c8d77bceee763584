"""pi-context-management's side of the host contract: which hooks it subscribes to, how a
host's hook event becomes one of its events, and how its answer becomes the host's reply.

Every host — the model session (:mod:`pictx_fsm.hosts.model.context_memory`) and the real
Pi through the bridge (:mod:`pictx_fsm.hosts.pi.served_cm`) — maps Pi's hooks with these
functions, so both feed the runtime the same events for the same hooks (the reply end RE is
``agent_settled``, Q3; the foreground's abort is the aborted ``turn_end``, M41).

A host hands over what only it knows about a compaction as a :class:`Preparation` (Pi's
kept boundary, whether custom instructions were given, its file tracking, M26).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from attrs import field, frozen

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management.effects import CheckpointCompaction, CmResult
from pictx_fsm.extensions.context_management.notes import FileRecord
from pictx_fsm.extensions.context_management.state import Flags
from pictx_fsm.extensions.context_management.texts import (
    CHILD_ENV,
    FLAG_NO_AUTO_HANDOFF,
    FLAG_NO_BACKGROUND,
)
from pictx_fsm.host.effects import CancelResult, HookResult, ToolResult
from pictx_fsm.host.events import (
    AgentSettled,
    HookEvent,
    HostContext,
    ModelInfo,
    ModelSelect,
    SessionBeforeCompact,
    SessionShutdown,
    SessionStart,
    SessionTreeEvent,
    TurnEnd,
    TurnStart,
)
from pictx_fsm.host.extension import Reply, SuppliedCompaction

CM_HOOKS: Final[frozenset[str]] = frozenset(
    {
        "session_start",
        "agent_settled",
        "turn_start",
        "turn_end",
        "session_tree",
        "model_select",
        "session_before_compact",
        "session_shutdown",
    }
)
"""The hooks pi-context-management subscribes to (M2: no ``context`` hook)."""


def flags_from(env: Mapping[str, str], argv: Sequence[str] = ()) -> Flags:
    """M1, M3: only ``PI_SUBAGENT_CHILD=1`` marks a child; the two flags by name."""
    return Flags(
        child=env.get(CHILD_ENV) == "1",
        no_background=f"--{FLAG_NO_BACKGROUND}" in argv,
        no_auto_handoff=f"--{FLAG_NO_AUTO_HANDOFF}" in argv,
    )


@frozen(kw_only=True)
class Preparation:
    """What Pi prepared for a compaction (``session_before_compact``'s ``preparation``)."""

    first_kept: str | None = None
    custom_instructions: bool = False
    files: FileRecord = field(factory=FileRecord)


def model_name(model: ModelInfo | None) -> str | None:
    return None if model is None else f"{model.provider}/{model.id}"


def turn_ended(event: TurnEnd, ctx: HostContext) -> ev.TurnEnded:
    """A foreground reply's usage (M64, M70) and whether its run was aborted (M41)."""
    usage = event.message.get("usage")
    usage = usage if isinstance(usage, Mapping) else {}
    cost = usage.get("cost")
    total = cost.get("total", 0) if isinstance(cost, Mapping) else 0
    tokens = usage.get("input"), usage.get("output")
    known = all(isinstance(t, int) for t in tokens)
    return ev.TurnEnded(
        input_tokens=tokens[0] if known else None,
        output_tokens=tokens[1] if known else None,
        cost=float(total or 0),
        stop_reason=str(event.message.get("stopReason", "stop")),
        aborted=event.outcome == "aborted" or ctx.signal_aborted,
    )


def event_of(
    event: HookEvent, ctx: HostContext, preparation: Preparation | None = None
) -> ev.CmEvent | None:
    """The extension's event for one subscribed hook (``None``: nothing to handle)."""
    if isinstance(event, SessionStart):
        return ev.SessionStarted(reason=event.reason)
    if isinstance(event, AgentSettled):
        return ev.ReplyEnded()
    if isinstance(event, TurnStart):
        return ev.TurnStarted()
    if isinstance(event, TurnEnd):
        return turn_ended(event, ctx)
    if isinstance(event, SessionTreeEvent):
        return ev.BranchMoved()
    if isinstance(event, ModelSelect):
        return ev.ModelSelected(model=model_name(event.model))
    if isinstance(event, SessionShutdown):
        return ev.SessionEnding(reason=event.reason)
    if isinstance(event, SessionBeforeCompact):
        prepared = preparation or Preparation()
        return ev.CompactionStarting(
            reason=event.reason,
            first_kept=prepared.first_kept,
            files=prepared.files,
            custom_instructions=prepared.custom_instructions,
            signal_aborted=event.signal_aborted,
        )
    return None


def reply_of(result: CmResult, event: HookEvent) -> Reply:
    """What the hook's handler returns: a checkpoint for ``session_before_compact``
    (``{compaction}``), ``{cancel: true}``, or nothing."""
    value = result.value
    if isinstance(value, CheckpointCompaction):
        return SuppliedCompaction(
            summary=value.summary,
            first_kept_entry_id=value.first_kept_entry_id,
            details=dict(value.details),
        )
    if isinstance(value, CancelResult):
        return HookResult(hook=type(event).HOOK, value=value)
    return None


def tool_text(result: CmResult) -> str:
    """A tool's answer: its JSON text (refusals included: they are ordinary results)."""
    value = result.value
    return value.text if isinstance(value, ToolResult) else ""


def compaction_json(reply: Reply) -> Any:
    """``session_before_compact``'s return value as Pi reads it (``undefined`` is ``None``)."""
    if isinstance(reply, SuppliedCompaction):
        compaction: dict[str, Any] = {
            "summary": reply.summary,
            "firstKeptEntryId": reply.first_kept_entry_id,
        }
        if isinstance(reply.details, Mapping):
            compaction["details"] = dict(reply.details)
        return {"compaction": compaction}
    if isinstance(reply, HookResult):
        return reply.to_json()["value"]
    return None


__all__ = [
    "CM_HOOKS",
    "Preparation",
    "compaction_json",
    "event_of",
    "flags_from",
    "model_name",
    "reply_of",
    "tool_text",
    "turn_ended",
]
