"""Applying a :class:`~pictx_fsm.host.effects.HookResult` to a session, as an idle Pi 0.87 does.

Every embedder needs the same few lines: notices are shown, ``pi.appendEntry`` and
``pi.sendMessage`` append at once (an idle host; a streaming host holds sent messages until
the tool batch ends, pi-host §5), ``ctx.abort()`` cancels the provider request, and the
boundary drafts of ``turn_end`` / ``agent_before_settle`` are committed in order after the
turn's last entry — the host's incoming drafts unchanged when the handler returned
``undefined`` (pi-host §4). :func:`apply` does exactly that and reports what the host must do
itself.
"""

from __future__ import annotations

from attrs import frozen

from pictx_fsm.host.effects import (
    AbortRun,
    AppendEntry,
    BoundaryResult,
    CompactionDraft,
    ContextEditDraft,
    CustomDraft,
    CustomMessageDraft,
    Draft,
    HookResult,
    HookValue,
    Notify,
    SendMessage,
)
from pictx_fsm.host.events import AgentBeforeSettle, HookEvent, TurnEnd
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.writer import SessionWriter

__all__ = ["Applied", "append_draft", "apply"]


@frozen(kw_only=True)
class Applied:
    """What applying one result did, and what is left to the host."""

    value: HookValue | None
    """The handler's return value (``None`` = ``undefined``)."""
    notices: tuple[Notify, ...] = ()
    appended: tuple[Entry, ...] = ()
    """Entries written, in order."""
    aborted: bool = False
    """``ctx.abort()`` was called: cancel the provider request being built (R68)."""
    trigger_turn: bool = False
    """A sent message asked for a model turn."""
    continue_: bool = False
    """The boundary asked for one more model turn (``continue: true``, R28)."""


def apply(result: HookResult, writer: SessionWriter, event: HookEvent | None = None) -> Applied:
    """Carry out ``result`` on ``writer``'s session; pass the hook ``event`` so a boundary
    handler that returned ``undefined`` still commits the host's incoming drafts."""
    appended: list[Entry] = []
    notices: list[Notify] = []
    aborted = trigger_turn = False
    for effect in result.effects:
        if isinstance(effect, Notify):
            notices.append(effect)
        elif isinstance(effect, AppendEntry):
            appended.append(writer.custom(effect.custom_type, effect.data))
        elif isinstance(effect, SendMessage):
            draft = CustomMessageDraft(
                custom_type=effect.custom_type,
                content=effect.content,
                display=effect.display,
                details=effect.details,
            )
            appended.append(append_draft(writer, draft))
            trigger_turn = trigger_turn or effect.trigger_turn
        elif isinstance(effect, AbortRun):
            aborted = True
    value = result.value
    appended.extend(append_draft(writer, d) for d in _boundary_drafts(value, event))
    return Applied(
        value=value,
        notices=tuple(notices),
        appended=tuple(appended),
        aborted=aborted,
        trigger_turn=trigger_turn,
        continue_=isinstance(value, BoundaryResult) and bool(value.continue_),
    )


def _boundary_drafts(value: HookValue | None, event: HookEvent | None) -> tuple[Draft, ...]:
    if isinstance(value, BoundaryResult):
        return value.entries
    if isinstance(event, TurnEnd | AgentBeforeSettle):
        return event.entries
    return ()


def append_draft(writer: SessionWriter, draft: Draft) -> Entry:
    """Commit one boundary draft as the entry Pi writes for it."""
    if isinstance(draft, CustomDraft):
        return writer.custom(draft.custom_type, draft.data)
    if isinstance(draft, CustomMessageDraft):
        return writer.custom_message(draft.custom_type, draft.content, draft.display, draft.details)
    if isinstance(draft, ContextEditDraft):
        return writer.context_edit(draft.target_id, draft.replacement)
    assert isinstance(draft, CompactionDraft)
    fields = {"summary": draft.summary, "details": draft.details, "from_hook": True}
    return writer.compaction(fields, draft.first_kept_entry_id)
