"""Carrying out the intents the machines' actions return.

Actions stay pure: they return intents (:mod:`pictx_fsm.intents`) and host effects as data.
Here each intent becomes its consequence on the hook's :class:`HookTurn` (drafts, the
handler's value, host effects, events queued for other machines) or on the runtime's memory.
One function per intent type, looked up in one table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pictx_fsm import intents as it
from pictx_fsm.effects import (
    AbortRun,
    AppendEntry,
    CancelResult,
    CustomDraft,
    CustomMessageDraft,
    Draft,
    MessagesResult,
    Notify,
    SendMessage,
    ToolResult,
    TreeSummaryResult,
)
from pictx_fsm.facts import Facts
from pictx_fsm.hook_turn import HookTurn
from pictx_fsm.hooks import Context, ContextWithSystem
from pictx_fsm.memory import Staged
from pictx_fsm.protocol import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    MARKER_TYPE,
    NOTICE_MEMORY_CLEARED,
    NOTICE_RESET_BUILD_FAILED,
    WARNING_TYPE,
)
from pictx_fsm.session.reset_projection import project_reset
from pictx_fsm.session.windows import mint_window_id, uuid_draws

if TYPE_CHECKING:
    from pictx_fsm.runtime import LifecycleRuntime


def carry_out(rt: LifecycleRuntime, turn: HookTurn, outcome: it.Outcome, facts: Facts) -> None:
    """Host effects go to the turn as they are; every intent to its handler."""
    if isinstance(outcome, Notify | SendMessage | AppendEntry | AbortRun):
        turn.effects.append(outcome)
        return
    handler = _HANDLERS.get(type(outcome))
    if handler is None:  # pragma: no cover - every intent type has a handler
        raise TypeError(f"no handler for intent {outcome!r}")
    handler(rt, turn, outcome, facts)


def _tool_reply(rt: LifecycleRuntime, turn: HookTurn, intent: it.ToolReply, facts: Facts) -> None:
    turn.value = ToolResult(payload=intent.payload, terminate=intent.terminate)


def _build_reset(rt: LifecycleRuntime, turn: HookTurn, intent: it.BuildReset, facts: Facts) -> None:
    """R28/R35 (R29 on failure): marker → boot → continuation after the other drafts."""
    try:
        window_id, drafts = _reset_drafts(rt, turn, facts)
    except Exception as error:
        turn.effects.append(
            Notify(
                message=NOTICE_RESET_BUILD_FAILED.format(error=_js_string(error)),
                level="warning",
            )
        )
        turn.build_failed = True
        return
    turn.reset.extend(drafts)
    turn.continue_ = True
    turn.queue.append(("reset_control", "reset_built", {"built_window_id": window_id}))


def _reset_drafts(rt: LifecycleRuntime, turn: HookTurn, facts: Facts) -> tuple[str, list[Draft]]:
    window = rt.tree.current_window
    taken = window.marker_window_ids()
    window_id = mint_window_id(rt.tree.session_id, uuid_draws(rt.rng), taken)
    boot = rt.boot_writer.boot(
        turn=turn.effects,
        notified=rt.memory.incomplete_notes_notified,
        root_window_id=rt.tree.root_window.window_id,
        window_id=window_id,
        previous_window_id=window.window_id,
        reset_boot=True,
        model=turn.ctx.model,
        now_ms=rt.clock(),
    )
    drafts: list[Draft] = [
        CustomDraft(custom_type=MARKER_TYPE, data={"windowId": window_id}),
        CustomMessageDraft(
            custom_type=BOOT_TYPE, content=boot, display=False, details={"windowId": window_id}
        ),
        CustomMessageDraft(
            custom_type=CONTINUATION_TYPE, content=rt.texts.continuation, display=False
        ),
    ]
    return window_id, drafts


def _persist_wipe(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.PersistWipe, facts: Facts
) -> None:
    """R59/D2: the marker, the boot and (0.25.1) the continuation, written at once."""
    window_id, (marker, boot, continuation) = _reset_drafts(rt, turn, facts)
    assert isinstance(marker, CustomDraft) and isinstance(boot, CustomMessageDraft)
    assert isinstance(continuation, CustomMessageDraft)
    turn.effects.append(AppendEntry(custom_type=marker.custom_type, data=marker.data))
    sends = [boot, continuation] if rt.profile.wipe_sends_continuation else [boot]
    for draft in sends:
        turn.effects.append(
            SendMessage(
                custom_type=draft.custom_type,
                content=draft.content,
                display=draft.display,
                details=draft.details,
                trigger_turn=False,
            )
        )
    turn.planned_commits.add(window_id)
    turn.queue.append(("reset_control", "reset_built", {"built_window_id": window_id}))
    turn.queue.append(("reset_control", "announce", {}))


def _remember_reset(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.RememberResetNotice, facts: Facts
) -> None:
    if intent.window_id not in rt.memory.pending_resets:
        rt.memory.pending_resets.append(intent.window_id)


def _announce_resets(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.AnnounceResets, facts: Facts
) -> None:
    for window_id in intent.window_ids:
        turn.effects.append(
            Notify(message=NOTICE_MEMORY_CLEARED.format(window_id=window_id), level="info")
        )
        if window_id in rt.memory.pending_resets:
            rt.memory.pending_resets.remove(window_id)


def _forget_resets(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.ForgetResetNotices, facts: Facts
) -> None:
    rt.memory.pending_resets.clear()


def _stage(rt: LifecycleRuntime, turn: HookTurn, intent: it.StageReminder, facts: Facts) -> None:
    rt.memory.staged[intent.kind] = Staged(window_id=intent.window_id, content=intent.content)


def _drop(rt: LifecycleRuntime, turn: HookTurn, intent: it.DropReminder, facts: Facts) -> None:
    rt.memory.staged[intent.kind] = None


def _commit(rt: LifecycleRuntime, turn: HookTurn, intent: it.CommitReminder, facts: Facts) -> None:
    """R53: the staged reminder becomes a hidden draft and a pending notice."""
    staged = rt.memory.staged[intent.kind]
    if staged is None:  # pragma: no cover - the machine only commits from `staged`
        raise AssertionError(f"{intent.kind} committed without staging")
    turn.reminders.append(
        CustomMessageDraft(custom_type=intent.kind, content=staged.content, display=False)
    )
    rt.memory.notices[intent.kind] = staged.window_id
    rt.memory.staged[intent.kind] = None


def _forget_notice(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.ForgetReminderNotice, facts: Facts
) -> None:
    rt.memory.notices[intent.kind] = None


def _send_boot(rt: LifecycleRuntime, turn: HookTurn, intent: it.SendBoot, facts: Facts) -> None:
    """R64 step 5: the repaired or root boot, sent hidden without a model turn."""
    content = rt.boot_writer.boot(
        turn=turn.effects,
        notified=rt.memory.incomplete_notes_notified,
        root_window_id=rt.tree.root_window.window_id,
        window_id=intent.window_id,
        previous_window_id=intent.previous_window_id,
        reset_boot=intent.reset_boot,
        model=turn.ctx.model,
        now_ms=rt.clock(),
    )
    turn.effects.append(
        SendMessage(
            custom_type=BOOT_TYPE,
            content=content,
            display=False,
            details={"windowId": intent.window_id},
        )
    )


def _send_continuation(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.SendContinuation, facts: Facts
) -> None:
    turn.effects.append(
        SendMessage(custom_type=CONTINUATION_TYPE, content=rt.texts.continuation, display=False)
    )


def _project(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.ProjectMessages, facts: Facts
) -> None:
    assert isinstance(turn.event, ContextWithSystem)
    projected = project_reset(list(turn.event.messages), rt.tree.current_window)
    turn.value = MessagesResult(messages=projected.messages)


def _cancel_request(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.CancelRequest, facts: Facts
) -> None:
    """R68: abort; only the folded system head (or nothing) reaches the provider."""
    assert isinstance(turn.event, ContextWithSystem)
    turn.effects.append(AbortRun())
    safe = project_reset(list(turn.event.messages), rt.tree.current_window)
    turn.value = MessagesResult(messages=safe.messages)


def _remember_missing(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.RememberMissingBoot, facts: Facts
) -> None:
    rt.memory.missing_boot = intent.window_id


def _inject_warning(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.InjectWarning, facts: Facts
) -> None:
    assert isinstance(turn.event, Context)
    warning = {
        "role": "custom",
        "customType": WARNING_TYPE,
        "content": intent.content,
        "display": False,
        "timestamp": rt.clock(),
    }
    turn.value = MessagesResult(messages=(*turn.event.messages, warning))


def _dispatch(rt: LifecycleRuntime, turn: HookTurn, intent: it.Dispatch, facts: Facts) -> None:
    turn.queue.append((intent.machine, intent.event, {}))


def _report_status(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.ReportStatus, facts: Facts
) -> None:
    # Reported once the whole command ran: the toggle has moved, the boot was ensured.
    turn.report_status = True


def _cancel_compaction(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.CancelCompaction, facts: Facts
) -> None:
    turn.value = CancelResult()


def _skip_summary(
    rt: LifecycleRuntime, turn: HookTurn, intent: it.SkipBranchSummary, facts: Facts
) -> None:
    turn.value = TreeSummaryResult(summary="")


def _js_string(error: BaseException) -> str:
    """``String(error)`` of a JavaScript Error: ``"<Name>: <message>"``."""
    message = str(error)
    name = type(error).__name__
    return f"{name}: {message}" if message else name


_HANDLERS: dict[type[Any], Callable[[LifecycleRuntime, HookTurn, Any, Facts], None]] = {
    it.ToolReply: _tool_reply,
    it.BuildReset: _build_reset,
    it.PersistWipe: _persist_wipe,
    it.RememberResetNotice: _remember_reset,
    it.AnnounceResets: _announce_resets,
    it.ForgetResetNotices: _forget_resets,
    it.StageReminder: _stage,
    it.DropReminder: _drop,
    it.CommitReminder: _commit,
    it.ForgetReminderNotice: _forget_notice,
    it.SendBoot: _send_boot,
    it.SendContinuation: _send_continuation,
    it.ProjectMessages: _project,
    it.CancelRequest: _cancel_request,
    it.RememberMissingBoot: _remember_missing,
    it.InjectWarning: _inject_warning,
    it.Dispatch: _dispatch,
    it.ReportStatus: _report_status,
    it.CancelCompaction: _cancel_compaction,
    it.SkipBranchSummary: _skip_summary,
}
