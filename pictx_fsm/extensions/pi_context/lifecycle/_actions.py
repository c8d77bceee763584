"""The actions the models in ``models/`` name: one pure reducer per name.

An action takes the facts of its machine event (:mod:`._facts`: the hook, ``ctx``, the state
before the event, the services) and the hook's :class:`~._turn.Turn` so far, and returns the
next turn: host effects, the handler's value, boundary drafts, follow-up machine events (as
data), and every change of the lifecycle's data. No other code changes that data, so the
transitions in ``models/`` — and the diagrams drawn from them — show all that happens.

The function name is the name a document uses (:data:`ACTIONS`); an action no document uses,
or a name no action answers, fails when the lifecycle is loaded.
"""

from __future__ import annotations

from collections.abc import Callable

from pictx_fsm import js
from pictx_fsm.extensions.pi_context.lifecycle._facts import Facts
from pictx_fsm.extensions.pi_context.lifecycle._state import Staged
from pictx_fsm.extensions.pi_context.lifecycle._turn import Turn
from pictx_fsm.extensions.pi_context.reset_projection import project_marker_window
from pictx_fsm.extensions.pi_context.reset_projection import project_root_window as project_root
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    NOTICE_COMPACT_DISABLED,
    NOTICE_GUIDANCE_RECORDED,
    NOTICE_MEMORY_CLEARED,
    NOTICE_MISSING_BOOT,
    NOTICE_RESET_BUILD_FAILED,
    NOTICE_TOGGLE_USAGE,
    NOTICE_TREE_SUMMARY_SKIPPED,
    NOTICE_WARNING_RECORDED,
    NOTICE_WIPE_NEEDS_ON,
    NOTICE_WIPE_SPLITS_TOOL_PAIR,
    WARNING_CONTENT,
    WARNING_TYPE,
    WIPE_DISABLED_ERROR,
    WIPE_STATUS_ALREADY_PENDING,
    WIPE_STATUS_REQUESTED,
    guidance_content,
)
from pictx_fsm.extensions.pi_context.windows import mint_window_id
from pictx_fsm.extensions.shared.reset_notice import reset_notice_actions
from pictx_fsm.host.effects import (
    AbortRun,
    AppendEntry,
    CancelResult,
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
from pictx_fsm.session.transcript import Transcript

__all__ = ["ACTIONS", "Action"]

Action = Callable[[Facts, Turn], Turn]
"""A reducer: the facts of one machine event and the turn so far → the next turn."""

ACTIONS: dict[str, Action] = {}


def action(fn: Action) -> Action:
    """Register ``fn`` under its function name (the name the documents use)."""
    ACTIONS[fn.__name__] = fn
    return fn


def _notify(message: str, level: NoticeLevel) -> Action:
    """An action that only tells the human."""

    def notify(facts: Facts, turn: Turn) -> Turn:
        return turn.emit(Notify(message=message, level=level))

    return notify


def _reply(payload: object, *, terminate: bool = False) -> Action:
    """An action that answers the tool call (R16, R17)."""

    def reply(facts: Facts, turn: Turn) -> Turn:
        return turn.evolve(value=ToolResult(payload=payload, terminate=terminate))

    return reply


# -- reset_control: the explicit request, resets, /wipe-memory (R16, R20, R28–R30, R59) ---------

ACTIONS["report_requested"] = _reply({"status": WIPE_STATUS_REQUESTED}, terminate=True)
ACTIONS["report_already_pending"] = _reply({"status": WIPE_STATUS_ALREADY_PENDING}, terminate=True)
ACTIONS["report_disabled"] = _reply({"error": WIPE_DISABLED_ERROR})
ACTIONS["report_wipe_needs_on"] = _notify(NOTICE_WIPE_NEEDS_ON, "error")
ACTIONS["report_wipe_splits_tool_pair"] = _notify(NOTICE_WIPE_SPLITS_TOOL_PAIR, "error")


def _build_reset(facts: Facts, turn: Turn) -> Turn:
    """R28/R35 (R29 on failure): marker → boot → continuation after the other drafts, then
    ``reset_built`` so the notice region awaits the commit."""
    try:
        window_id, turn, drafts = _reset_drafts(facts, turn)
    except Exception as error:
        message = NOTICE_RESET_BUILD_FAILED.format(error=js.error_string(error))
        return turn.emit(Notify(message=message, level="warning")).evolve(build_failed=True)
    built = turn.evolve(reset=(*turn.reset, *drafts), continue_=True)
    return built.raise_("reset_control", "reset_built", built_window_id=window_id)


ACTIONS["commit_reset"] = _build_reset
ACTIONS["recover_overflow"] = _build_reset


def _reset_drafts(facts: Facts, turn: Turn) -> tuple[str, Turn, tuple[Draft, ...]]:
    services = facts.services
    window = services.windows.current_window
    taken = services.windows.window_ids_on_branch(window)
    window_id = mint_window_id(services.tree.session_id, uuid_draws(services.rng), taken)
    turn, content = _boot(facts, turn, window_id, window.window_id, reset_boot=True)
    drafts: tuple[Draft, ...] = (
        CustomDraft(custom_type=MARKER_TYPE, data={"windowId": window_id}),
        CustomMessageDraft(
            custom_type=BOOT_TYPE, content=content, display=False, details={"windowId": window_id}
        ),
        CustomMessageDraft(
            custom_type=CONTINUATION_TYPE, content=services.texts.continuation, display=False
        ),
    )
    return window_id, turn, drafts


@action
def persist_wipe(facts: Facts, turn: Turn) -> Turn:
    """R59/D2: the marker, the boot and (0.25.1) the continuation, written at once."""
    window_id, turn, (marker, *messages) = _reset_drafts(facts, turn)
    assert isinstance(marker, CustomDraft)
    if not facts.services.profile.wipe_sends_continuation:
        messages = messages[:1]
    sends = tuple(_send(draft) for draft in messages if isinstance(draft, CustomMessageDraft))
    turn = turn.emit(AppendEntry(custom_type=marker.custom_type, data=marker.data), *sends)
    turn = turn.evolve(planned_commits=turn.planned_commits | {window_id})
    turn = turn.raise_("reset_control", "reset_built", built_window_id=window_id)
    return turn.raise_("reset_control", "announce")


def _send(draft: CustomMessageDraft) -> SendMessage:
    return SendMessage(
        custom_type=draft.custom_type,
        content=draft.content,
        display=draft.display,
        details=draft.details,
        trigger_turn=False,
    )


# -- reset_control: the success notice (R63, D3) ----------------------------------------------


ACTIONS.update(reset_notice_actions(NOTICE_MEMORY_CLEARED))


# -- budget: reminders (R51–R54) and the meter (R17) ------------------------------------------


@action
def stage_guidance(facts: Facts, turn: Turn) -> Turn:
    content = guidance_content(facts["guidance_remaining"])
    staged = Staged(window_id=facts["window_id"], content=content)
    return turn.evolve(state=turn.state.with_staged(GUIDANCE_TYPE, staged))


@action
def stage_warning(facts: Facts, turn: Turn) -> Turn:
    """R51.2: the warning is staged and also appended to the current provider request."""
    staged = Staged(window_id=facts["window_id"], content=WARNING_CONTENT)
    event = facts.env.event
    assert isinstance(event, Context)
    warning = {
        "role": "custom",
        "customType": WARNING_TYPE,
        "content": WARNING_CONTENT,
        "display": False,
        "timestamp": facts.services.clock(),
    }
    messages = event.messages
    extended = (
        messages.appended(warning) if isinstance(messages, Transcript) else (*messages, warning)
    )
    return turn.evolve(
        state=turn.state.with_staged(WARNING_TYPE, staged),
        value=MessagesResult(messages=extended),
    )


def _drop(kind: str) -> Action:
    def drop(facts: Facts, turn: Turn) -> Turn:
        return turn.evolve(state=turn.state.with_staged(kind, None))

    return drop


def _commit(kind: str) -> Action:
    """R53: the staged reminder becomes a hidden draft and awaits its notice."""

    def commit(facts: Facts, turn: Turn) -> Turn:
        staged = turn.state.staged_for(kind)
        if staged is None:  # pragma: no cover - the machine only commits from `staged`
            raise AssertionError(f"{kind} committed without staging")
        draft = CustomMessageDraft(custom_type=kind, content=staged.content, display=False)
        state = turn.state.with_staged(kind, None).with_notice(kind, staged.window_id)
        return turn.evolve(state=state, reminders=(*turn.reminders, draft))

    return commit


def _forget_notice(kind: str) -> Action:
    def forget(facts: Facts, turn: Turn) -> Turn:
        return turn.evolve(state=turn.state.with_notice(kind, None))

    return forget


def _announce(kind: str, message: str) -> Action:
    """R54: the committed reminder is in the current window: tell the human, once."""
    forget = _forget_notice(kind)

    def announce(facts: Facts, turn: Turn) -> Turn:
        return forget(facts, turn.emit(Notify(message=message, level="warning")))

    return announce


ACTIONS["drop_guidance"] = _drop(GUIDANCE_TYPE)
ACTIONS["drop_warning"] = _drop(WARNING_TYPE)
ACTIONS["commit_guidance"] = _commit(GUIDANCE_TYPE)
ACTIONS["commit_warning"] = _commit(WARNING_TYPE)
ACTIONS["forget_guidance_notice"] = _forget_notice(GUIDANCE_TYPE)
ACTIONS["forget_warning_notice"] = _forget_notice(WARNING_TYPE)
ACTIONS["announce_guidance"] = _announce(GUIDANCE_TYPE, NOTICE_GUIDANCE_RECORDED)
ACTIONS["announce_warning"] = _announce(WARNING_TYPE, NOTICE_WARNING_RECORDED)


@action
def report_remaining(facts: Facts, turn: Turn) -> Turn:
    """R17: ``get_context_remaining`` answers, even when disabled."""
    return turn.evolve(value=ToolResult(payload={"remaining_tokens": facts["tool_remaining"]}))


# -- boot_repair (R64–R66, D4) -----------------------------------------------------------------


def _boot(
    facts: Facts, turn: Turn, window_id: str, previous: str | None, *, reset_boot: bool
) -> tuple[Turn, str]:
    """Render a boot; warn the human about unavailable notes once per window id (R74)."""
    services = facts.services
    boot = services.boot_writer.boot(
        root_window_id=services.windows.root_window.window_id,
        window_id=window_id,
        previous_window_id=previous,
        reset_boot=reset_boot,
        model=facts.env.ctx.model,
        now_ms=services.clock(),
    )
    state = turn.state
    if boot.notes_warning is None or window_id in state.notes_notified:
        return turn, boot.content
    turn = turn.emit(Notify(message=boot.notes_warning, level="warning"))
    notified = state.evolve(notes_notified=state.notes_notified | {window_id})
    return turn.evolve(state=notified), boot.content


def _send_boot(facts: Facts, turn: Turn, previous: str | None, *, reset_boot: bool) -> Turn:
    """R64 step 5: the repaired or root boot, sent hidden without a model turn."""
    window_id = facts["window_id"]
    turn, content = _boot(facts, turn, window_id, previous, reset_boot=reset_boot)
    send = SendMessage(
        custom_type=BOOT_TYPE, content=content, display=False, details={"windowId": window_id}
    )
    return turn.emit(send)


@action
def append_root_boot(facts: Facts, turn: Turn) -> Turn:
    return _send_boot(facts, turn, None, reset_boot=False)


@action
def append_reset_boot(facts: Facts, turn: Turn) -> Turn:
    return _send_boot(facts, turn, facts["previous_window_id"], reset_boot=True)


@action
def append_continuation(facts: Facts, turn: Turn) -> Turn:
    continuation = facts.services.texts.continuation
    return turn.emit(
        SendMessage(custom_type=CONTINUATION_TYPE, content=continuation, display=False)
    )


# -- projection (R67–R69) ----------------------------------------------------------------------


def _request(facts: Facts) -> ContextWithSystem:
    event = facts.env.event
    assert isinstance(event, ContextWithSystem)
    return event


@action
def project_root_window(facts: Facts, turn: Turn) -> Turn:
    """R69: the root window keeps the transcript with one active boot."""
    projected = project_root(_request(facts).messages, facts["window_id"])
    return turn.evolve(value=MessagesResult(messages=projected.messages))


@action
def project_reset_window(facts: Facts, turn: Turn) -> Turn:
    """R67: the request is cut at the current window's boot."""
    projected = project_marker_window(_request(facts).messages, facts["window_id"])
    return turn.evolve(value=MessagesResult(messages=projected.messages))


@action
def cancel_request(facts: Facts, turn: Turn) -> Turn:
    """R68: abort; only the folded system head (or nothing) reaches the provider."""
    safe = project_marker_window(_request(facts).messages, facts["window_id"])
    return turn.emit(AbortRun()).evolve(value=MessagesResult(messages=safe.messages))


@action
def announce_missing_boot(facts: Facts, turn: Turn) -> Turn:
    window_id = facts["window_id"]
    notice = Notify(message=NOTICE_MISSING_BOOT.format(window_id=window_id), level="error")
    return turn.emit(notice).evolve(state=turn.state.evolve(missing_boot=window_id))


# -- toggle (R60–R62, R75) ---------------------------------------------------------------------


@action
def ensure_boot(facts: Facts, turn: Turn) -> Turn:
    return turn.raise_("boot_repair", "repair")


@action
def clear_reminders(facts: Facts, turn: Turn) -> Turn:
    return turn.raise_("budget", "clear")


@action
def clear_lifecycle(facts: Facts, turn: Turn) -> Turn:
    return turn.raise_("reset_control", "clear")


@action
def report_status(facts: Facts, turn: Turn) -> Turn:
    """R60: reported once the whole command ran (the toggle moved, the boot was ensured)."""
    return turn.evolve(report_status=True)


ACTIONS["report_usage"] = _notify(NOTICE_TOGGLE_USAGE, "error")
ACTIONS["report_compact_disabled"] = _notify(NOTICE_COMPACT_DISABLED, "warning")


@action
def cancel_compaction(facts: Facts, turn: Turn) -> Turn:
    """R62: ``{cancel: true}`` from ``session_before_compact``."""
    return turn.evolve(value=CancelResult())


@action
def skip_branch_summary(facts: Facts, turn: Turn) -> Turn:
    """R75: ``{summary: {summary: ""}}`` from ``session_before_tree``."""
    notice = Notify(message=NOTICE_TREE_SUMMARY_SKIPPED, level="info")
    return turn.emit(notice).evolve(value=TreeSummaryResult(summary=""))
