"""The actions notesoup's machines name: one pure reducer per name.

An action takes the facts of its machine event and the hook's :class:`~.turn.Turn` so far and
returns the next turn: host effects, the handler's value, boundary drafts, follow-up machine
events (data), and every change of the lifecycle's data. Names are the ones the documents in
``models/notesoup/`` use; an action no document names, or a name no action answers, fails
when the machines are loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pictx_fsm import js
from pictx_fsm.extensions.notesoup.lifecycle.facts import RESET_CONTROL, FactEnv
from pictx_fsm.extensions.notesoup.lifecycle.state import Request, Staged
from pictx_fsm.extensions.notesoup.lifecycle.turn import Turn
from pictx_fsm.extensions.notesoup.texts import (
    BOOT_TYPE,
    CHECKPOINT_SUMMARY,
    CLEAR_MEMORY_DISABLED_ERROR,
    CONTINUATION,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MANUAL_WIPE_TYPE,
    MARKER_TYPE,
    NOTICE_CLEAR_ALREADY_PENDING,
    NOTICE_CLEAR_NEEDS_ON,
    NOTICE_CLEAR_QUEUED_BUSY,
    NOTICE_CLEAR_QUEUED_PROMPT,
    NOTICE_CLEAR_RECEIVED_IDLE,
    NOTICE_CLEAR_SPLITS_TOOL_PAIR,
    NOTICE_COMPACT_DISABLED,
    NOTICE_MEMORY_CLEARED,
    NOTICE_MISSING_BOOT,
    NOTICE_PROMPT_NOT_RUN,
    NOTICE_RESET_BUILD_FAILED,
    NOTICE_TOGGLE_USAGE,
    NOTICE_TREE_SUMMARY_SKIPPED,
    NOTICE_WARNING_RECORDED,
    RESET_PROMPT_TYPE,
    STATUS_ALREADY_PENDING,
    STATUS_REQUESTED,
    WARNING_CONTENT,
    WARNING_TYPE,
    guidance_content,
)
from pictx_fsm.extensions.shared.machinery import Facts
from pictx_fsm.extensions.shared.projection import project_marker_window
from pictx_fsm.extensions.shared.projection import project_root_window as project_root
from pictx_fsm.extensions.shared.reset_notice import reset_notice_actions
from pictx_fsm.extensions.shared.windows import mint_window_id
from pictx_fsm.host.effects import (
    AbortRun,
    AppendEntry,
    CancelResult,
    CompactionDraft,
    CustomDraft,
    CustomMessageDraft,
    Draft,
    MessagesResult,
    NoticeLevel,
    Notify,
    SendMessage,
    ToolResult,
    TreeSummaryResult,
)
from pictx_fsm.host.events import Context, ContextWithSystem
from pictx_fsm.session.ids import uuid_draws
from pictx_fsm.session.projection import fold_system

__all__ = ["ACTIONS", "Action"]

Action = Callable[[Facts, Turn], Turn]
ACTIONS: Final[dict[str, Action]] = {}


def action(fn: Action) -> Action:
    ACTIONS[fn.__name__] = fn
    return fn


def _env(facts: Facts) -> FactEnv:
    env = facts.env
    assert isinstance(env, FactEnv)
    return env


def _notify(message: str, level: NoticeLevel) -> Action:
    def notify(facts: Facts, turn: Turn) -> Turn:
        return turn.emit(Notify(message=message, level=level))

    return notify


def _reply(payload: object, *, terminate: bool = False) -> Action:
    """S11: one text part of compact JSON."""

    def reply(facts: Facts, turn: Turn) -> Turn:
        return turn.evolve(value=ToolResult(payload=payload, terminate=terminate, compact=True))

    return reply


# -- the request (S12, S15–S24) ----------------------------------------------------------------

ACTIONS["report_requested"] = _reply({"status": STATUS_REQUESTED}, terminate=True)
ACTIONS["report_already_pending"] = _reply({"status": STATUS_ALREADY_PENDING}, terminate=True)
ACTIONS["report_disabled"] = _reply({"error": CLEAR_MEMORY_DISABLED_ERROR})
ACTIONS["report_clear_needs_on"] = _notify(NOTICE_CLEAR_NEEDS_ON, "error")
ACTIONS["report_clear_already_pending"] = _notify(NOTICE_CLEAR_ALREADY_PENDING, "info")
ACTIONS["report_clear_splits_tool_pair"] = _notify(NOTICE_CLEAR_SPLITS_TOOL_PAIR, "error")


def _prompt(facts: Facts) -> str | None:
    """S17: the trimmed command arguments, none when blank."""
    raw = _env(facts).extras.get("prompt")
    text = js.trim(raw) if isinstance(raw, str) else ""
    return text or None


@action
def arm_tool_request(facts: Facts, turn: Turn) -> Turn:
    request = Request(window_id=facts["window_id"])
    return turn.evolve(state=turn.state.evolve(request=request))


@action
def arm_budget_close_out(facts: Facts, turn: Turn) -> Turn:
    request = Request(window_id=facts["window_id"])
    return turn.evolve(state=turn.state.evolve(request=request))


@action
def arm_manual_close_out(facts: Facts, turn: Turn) -> Turn:
    request = Request(window_id=facts["window_id"], prompt=_prompt(facts))
    return turn.evolve(state=turn.state.evolve(request=request))


@action
def take_manual_prompt(facts: Facts, turn: Turn) -> Turn:
    """S23.2/S23.3: the request stays in its window, with the manual command's prompt."""
    current = turn.state.request
    window_id = current.window_id if current is not None else facts["window_id"]
    request = Request(window_id=window_id, prompt=_prompt(facts))
    return turn.evolve(state=turn.state.evolve(request=request))


@action
def start_manual_close_out(facts: Facts, turn: Turn) -> Turn:
    """S17/S18: tell the human, then steer the hidden warning into a close-out turn."""
    if _prompt(facts) is not None:
        message = NOTICE_CLEAR_QUEUED_PROMPT
    elif facts["idle"]:
        message = NOTICE_CLEAR_RECEIVED_IDLE
    else:
        message = NOTICE_CLEAR_QUEUED_BUSY
    send = SendMessage(
        custom_type=MANUAL_WIPE_TYPE,
        content=WARNING_CONTENT,
        display=False,
        trigger_turn=True,
        deliver_as="steer",
    )
    return turn.emit(Notify(message=message, level="info"), send)


@action
def arm_budget_close_out_event(facts: Facts, turn: Turn) -> Turn:
    """S54.1: every eligible provider request re-arms the budget close-out."""
    return turn.raise_(RESET_CONTROL, "budget_close_out")


# -- the reset (S32, S38, S43) -----------------------------------------------------------------


def _build(facts: Facts, turn: Turn, *, continue_: bool, prompt: str | None) -> Turn:
    """S32/S38: the checkpoint, marker, boot and continuation (and the prompt) after the other
    drafts; on failure the notice and no ``continue``."""
    try:
        window_id, turn, drafts = _reset_drafts(facts, turn, prompt)
    except Exception as error:
        message = NOTICE_RESET_BUILD_FAILED.format(error=js.error_string(error))
        if prompt is not None:
            message += NOTICE_PROMPT_NOT_RUN
        return turn.emit(Notify(message=message, level="warning")).evolve(build_failed=True)
    built = turn.evolve(reset=(*turn.reset, *drafts), continue_=continue_)
    return built.raise_(RESET_CONTROL, "reset_built", built_window_id=window_id)


def _reset_drafts(
    facts: Facts, turn: Turn, prompt: str | None
) -> tuple[str, Turn, tuple[Draft, ...]]:
    services = _env(facts).services
    window = services.windows.current_window
    taken = services.windows.window_ids_on_branch(window)
    window_id = mint_window_id(services.tree.session_id, uuid_draws(services.rng), taken)
    turn, content = _boot(facts, turn, window_id, window.window_id)
    drafts: list[Draft] = [
        CompactionDraft(summary=CHECKPOINT_SUMMARY, first_kept_entry_id=None),
        CustomDraft(custom_type=MARKER_TYPE, data={"windowId": window_id}),
        CustomMessageDraft(
            custom_type=BOOT_TYPE, content=content, display=False, details={"windowId": window_id}
        ),
        CustomMessageDraft(custom_type=CONTINUATION_TYPE, content=CONTINUATION, display=False),
    ]
    if prompt is not None:
        drafts.append(
            CustomMessageDraft(custom_type=RESET_PROMPT_TYPE, content=prompt, display=True)
        )
    return window_id, turn, tuple(drafts)


def _request_prompt(turn: Turn) -> str | None:
    request = turn.state.request
    return None if request is None else request.prompt


@action
def commit_reset(facts: Facts, turn: Turn) -> Turn:
    """S25.6/S30: a reset that continues once in the fresh window."""
    return _build(facts, turn, continue_=True, prompt=None)


@action
def commit_reset_with_prompt(facts: Facts, turn: Turn) -> Turn:
    """S22/S43: a prompted manual reset continues once, the prompt after the continuation."""
    return _build(facts, turn, continue_=True, prompt=_request_prompt(turn))


@action
def commit_reset_stop(facts: Facts, turn: Turn) -> Turn:
    """S22/S34: a bare manual reset stops in the fresh window."""
    return _build(facts, turn, continue_=False, prompt=None)


@action
def recover_overflow(facts: Facts, turn: Turn) -> Turn:
    """S65: the one bounded recovery of an overflow chain, and one retry request."""
    return _build(facts, turn, continue_=True, prompt=None)


@action
def settle_stop(facts: Facts, turn: Turn) -> Turn:
    """S26.2/S31: the latched stop — the safety reset already committed."""
    return turn.evolve(settle_stop=True)


@action
def cancel_follow_up(facts: Facts, turn: Turn) -> Turn:
    """S35: abort Pi's tool-batch follow-up; only the folded system head goes out."""
    event = _env(facts).event
    assert isinstance(event, ContextWithSystem)
    messages = turn.value.messages if isinstance(turn.value, MessagesResult) else event.messages
    head = fold_system(messages)
    safe = () if head is None else (head,)
    return turn.emit(AbortRun()).evolve(value=MessagesResult(messages=safe))


@action
def persist_recovery_reset(facts: Facts, turn: Turn) -> Turn:
    """Q6 (ours): ``/clear-memory`` in a refused window writes marker → boot → continuation at
    once, as 0.25's ``/wipe-memory`` did: without a checkpoint (an extension cannot append a
    compaction outside a boundary), so the fresh window is cut at its boot (S78)."""
    window_id, turn, drafts = _reset_drafts(facts, turn, None)
    marker = drafts[1]
    assert isinstance(marker, CustomDraft)
    sends = [
        SendMessage(
            custom_type=d.custom_type,
            content=d.content,
            display=d.display,
            details=d.details,
            trigger_turn=False,
        )
        for d in drafts[2:]
        if isinstance(d, CustomMessageDraft)
    ]
    notice = Notify(message=NOTICE_MEMORY_CLEARED.format(window_id=window_id), level="info")
    return turn.emit(AppendEntry(custom_type=marker.custom_type, data=marker.data), *sends, notice)


# -- the success notice (S46) ------------------------------------------------------------------


ACTIONS.update(reset_notice_actions(NOTICE_MEMORY_CLEARED))


# -- budget (S54–S57, S13) ---------------------------------------------------------------------


@action
def stage_guidance(facts: Facts, turn: Turn) -> Turn:
    staged = Staged(
        window_id=facts["window_id"], content=guidance_content(facts["guidance_remaining"])
    )
    return turn.evolve(state=turn.state.evolve(guidance=staged))


@action
def stage_warning(facts: Facts, turn: Turn) -> Turn:
    """S54.1: staged, and appended to this very provider request."""
    env = _env(facts)
    staged = Staged(window_id=facts["window_id"], content=WARNING_CONTENT)
    event = env.event
    assert isinstance(event, Context)
    warning = {
        "role": "custom",
        "customType": WARNING_TYPE,
        "content": WARNING_CONTENT,
        "display": False,
        "timestamp": env.services.clock(),
    }
    return turn.evolve(
        state=turn.state.evolve(warning=staged),
        value=MessagesResult(messages=(*event.messages, warning)),
    )


@action
def drop_guidance(facts: Facts, turn: Turn) -> Turn:
    return turn.evolve(state=turn.state.evolve(guidance=None))


@action
def drop_warning(facts: Facts, turn: Turn) -> Turn:
    return turn.evolve(state=turn.state.evolve(warning=None, warning_notice=None))


@action
def commit_guidance(facts: Facts, turn: Turn) -> Turn:
    """S56: the staged guidance becomes a hidden draft; it never notifies."""
    staged = turn.state.guidance
    assert staged is not None
    draft = CustomMessageDraft(custom_type=GUIDANCE_TYPE, content=staged.content, display=False)
    return turn.evolve(state=turn.state.evolve(guidance=None), reminders=(*turn.reminders, draft))


@action
def commit_warning(facts: Facts, turn: Turn) -> Turn:
    """S56: the staged warning becomes a hidden draft and awaits its notice."""
    staged = turn.state.warning
    assert staged is not None
    draft = CustomMessageDraft(custom_type=WARNING_TYPE, content=staged.content, display=False)
    state = turn.state.evolve(warning=None, warning_notice=staged.window_id)
    return turn.evolve(state=state, reminders=(*turn.reminders, draft))


@action
def announce_warning(facts: Facts, turn: Turn) -> Turn:
    """S57: the committed warning is on the branch: tell the human, once."""
    notice = Notify(message=NOTICE_WARNING_RECORDED, level="warning")
    return turn.emit(notice).evolve(state=turn.state.evolve(warning_notice=None))


@action
def forget_warning_notice(facts: Facts, turn: Turn) -> Turn:
    return turn.evolve(state=turn.state.evolve(warning_notice=None))


@action
def report_remaining(facts: Facts, turn: Turn) -> Turn:
    """S13: ``{"remaining_tokens": …}`` in compact JSON; works while disabled."""
    payload = {"remaining_tokens": facts["tool_remaining"]}
    return turn.evolve(value=ToolResult(payload=payload, compact=True))


# -- boot repair (S70–S76) ---------------------------------------------------------------------


def _boot(facts: Facts, turn: Turn, window_id: str, previous: str | None) -> tuple[Turn, str]:
    """S84/S89: render a boot; warn about unavailable notes once per window id."""
    env = _env(facts)
    boot = env.services.boot(env.ctx, window_id, previous)
    state = turn.state
    if boot.notes_warning is None or window_id in state.notes_notified:
        return turn, boot.content
    turn = turn.emit(Notify(message=boot.notes_warning, level="warning"))
    notified = state.evolve(notes_notified=state.notes_notified | {window_id})
    return turn.evolve(state=notified), boot.content


def _send_boot(facts: Facts, turn: Turn, previous: str | None) -> Turn:
    window_id = facts["window_id"]
    turn, content = _boot(facts, turn, window_id, previous)
    send = SendMessage(
        custom_type=BOOT_TYPE, content=content, display=False, details={"windowId": window_id}
    )
    return turn.emit(send)


@action
def append_root_boot(facts: Facts, turn: Turn) -> Turn:
    return _send_boot(facts, turn, None)


@action
def append_reset_boot(facts: Facts, turn: Turn) -> Turn:
    return _send_boot(facts, turn, facts["previous_window_id"])


@action
def append_continuation(facts: Facts, turn: Turn) -> Turn:
    return turn.emit(
        SendMessage(custom_type=CONTINUATION_TYPE, content=CONTINUATION, display=False)
    )


# -- projection (S77–S80) ----------------------------------------------------------------------


def _request(facts: Facts) -> ContextWithSystem:
    event = _env(facts).event
    assert isinstance(event, ContextWithSystem)
    return event


@action
def project_root_window(facts: Facts, turn: Turn) -> Turn:
    """S80: the root window keeps the transcript with one active root boot."""
    scheme = _env(facts).services.scheme
    projected = project_root(_request(facts).messages, facts["window_id"], scheme)
    return turn.evolve(value=MessagesResult(messages=projected.messages))


@action
def project_legacy_window(facts: Facts, turn: Turn) -> Turn:
    """S78: a marker-only window (a migrated 0.25 one too) is cut at its boot."""
    scheme = _env(facts).services.scheme
    projected = project_marker_window(_request(facts).messages, facts["window_id"], scheme)
    return turn.evolve(value=MessagesResult(messages=projected.messages))


@action
def cancel_request(facts: Facts, turn: Turn) -> Turn:
    """S79: abort; only the folded system head (or nothing) reaches the provider."""
    scheme = _env(facts).services.scheme
    safe = project_marker_window(_request(facts).messages, facts["window_id"], scheme)
    return turn.emit(AbortRun()).evolve(value=MessagesResult(messages=safe.messages))


@action
def announce_missing_boot(facts: Facts, turn: Turn) -> Turn:
    window_id = facts["window_id"]
    notice = Notify(message=NOTICE_MISSING_BOOT.format(window_id=window_id), level="error")
    return turn.emit(notice).evolve(state=turn.state.evolve(missing_boot=window_id))


# -- toggle (S14, S20, S82) --------------------------------------------------------------------


@action
def ensure_boot(facts: Facts, turn: Turn) -> Turn:
    return turn.raise_("notesoup_boot_repair", "repair")


@action
def clear_reminders(facts: Facts, turn: Turn) -> Turn:
    return turn.raise_("notesoup_budget", "clear")


@action
def clear_lifecycle(facts: Facts, turn: Turn) -> Turn:
    return turn.raise_(RESET_CONTROL, "clear")


@action
def forget_reset_notices_event(facts: Facts, turn: Turn) -> Turn:
    return turn.raise_(RESET_CONTROL, "forget_notices")


@action
def report_status(facts: Facts, turn: Turn) -> Turn:
    """S14: reported once the whole command ran."""
    return turn.evolve(report_status=True)


ACTIONS["report_usage"] = _notify(NOTICE_TOGGLE_USAGE, "error")
ACTIONS["report_compact_disabled"] = _notify(NOTICE_COMPACT_DISABLED, "warning")


@action
def cancel_compaction(facts: Facts, turn: Turn) -> Turn:
    return turn.evolve(value=CancelResult())


@action
def skip_branch_summary(facts: Facts, turn: Turn) -> Turn:
    notice = Notify(message=NOTICE_TREE_SUMMARY_SKIPPED, level="info")
    return turn.emit(notice).evolve(value=TreeSummaryResult(summary=""))
