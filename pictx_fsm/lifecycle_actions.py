"""The guards and actions the lifecycle models in ``models/`` refer to, per machine.

A guard name is a fact name (:mod:`pictx_fsm.facts`); an action is a pure function of the
facts returning intents and host effects. This table is the only place where a name in a
model document meets Python: renaming or adding a transition in ``models/`` needs no change
here unless it introduces a new guard or action.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pictx_fsm import intents as it
from pictx_fsm.effects import Notify
from pictx_fsm.facts import Facts
from pictx_fsm.protocol import (
    GUIDANCE_TYPE,
    NOTICE_COMPACT_DISABLED,
    NOTICE_GUIDANCE_RECORDED,
    NOTICE_MISSING_BOOT,
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

Action = Callable[[Facts], tuple[it.Outcome, ...]]


def _const(*outcomes: it.Outcome) -> Action:
    return lambda facts: outcomes


def _guard(name: str) -> Callable[[Facts], bool]:
    """A guard that is exactly one fact: guards live in the models, facts in facts.py."""

    def guard(facts: Facts) -> bool:
        return bool(facts[name])

    guard.__name__ = name
    return guard


def _guards(*names: str) -> dict[str, Callable[[Facts], bool]]:
    return {name: _guard(name) for name in names}


# -- reset_control -----------------------------------------------------------------------------

RESET_CONTROL_GUARDS = _guards(
    "active",
    "enabled",
    "aborted",
    "overflow_like",
    "error_outcome",
    "reset_due",
    "queued",
    "automatic",
    "every_pending_reset_committed",
    "some_pending_reset_committed",
    "tool_pair_open",
)

RESET_CONTROL_ACTIONS: dict[str, Action] = {
    "report_requested": _const(
        it.ToolReply(payload={"status": WIPE_STATUS_REQUESTED}, terminate=True)
    ),
    "report_already_pending": _const(
        it.ToolReply(payload={"status": WIPE_STATUS_ALREADY_PENDING}, terminate=True)
    ),
    "report_disabled": _const(it.ToolReply(payload={"error": WIPE_DISABLED_ERROR})),
    "commit_reset": _const(it.BuildReset(trigger="turn_end")),
    "recover_overflow": _const(it.BuildReset(trigger="overflow")),
    "persist_wipe": _const(it.PersistWipe()),
    "report_wipe_needs_on": _const(Notify(message=NOTICE_WIPE_NEEDS_ON, level="error")),
    "report_wipe_splits_tool_pair": _const(
        Notify(message=NOTICE_WIPE_SPLITS_TOOL_PAIR, level="error")
    ),
    "remember_reset_notice": lambda f: (it.RememberResetNotice(window_id=f["built_window_id"]),),
    "announce_committed_resets": lambda f: (
        it.AnnounceResets(window_ids=f["committed_pending_resets"]),
    ),
    "forget_reset_notices": _const(it.ForgetResetNotices()),
}

# -- budget ------------------------------------------------------------------------------------

BUDGET_GUARDS = _guards(
    "active",
    "enabled",
    "aborted",
    "usage_known",
    "warning_in_window",
    "guidance_in_window",
    "warning_staged_here",
    "warning_due",
    "guidance_due",
    "guidance_window_current",
    "warning_window_current",
    "guidance_notice_due",
    "warning_notice_due",
)


def _stage_guidance(facts: Facts) -> tuple[it.Outcome, ...]:
    content = guidance_content(facts["guidance_remaining"])
    return (it.StageReminder(kind=GUIDANCE_TYPE, window_id=facts["window_id"], content=content),)


def _stage_warning(facts: Facts) -> tuple[it.Outcome, ...]:
    stage = it.StageReminder(
        kind=WARNING_TYPE, window_id=facts["window_id"], content=WARNING_CONTENT
    )
    return (stage, it.InjectWarning(content=WARNING_CONTENT))


BUDGET_ACTIONS: dict[str, Action] = {
    "stage_guidance": _stage_guidance,
    "stage_warning": _stage_warning,
    "drop_guidance": _const(it.DropReminder(kind=GUIDANCE_TYPE)),
    "drop_warning": _const(it.DropReminder(kind=WARNING_TYPE)),
    "commit_guidance": _const(it.CommitReminder(kind=GUIDANCE_TYPE)),
    "commit_warning": _const(it.CommitReminder(kind=WARNING_TYPE)),
    "announce_guidance": _const(
        Notify(message=NOTICE_GUIDANCE_RECORDED, level="warning"),
        it.ForgetReminderNotice(kind=GUIDANCE_TYPE),
    ),
    "announce_warning": _const(
        Notify(message=NOTICE_WARNING_RECORDED, level="warning"),
        it.ForgetReminderNotice(kind=WARNING_TYPE),
    ),
    "report_remaining": lambda f: (
        it.ToolReply(payload={"remaining_tokens": f["tool_remaining"]}),
    ),
}

# -- boot_repair -------------------------------------------------------------------------------

BOOT_REPAIR_GUARDS = _guards(
    "enabled",
    "tool_pair_open",
    "root_window",
    "root_boot_visible",
    "tail_intact",
    "tail_refused",
    "tail_needs_boot",
    "tail_needs_continuation",
)

BOOT_REPAIR_ACTIONS: dict[str, Action] = {
    "append_root_boot": lambda f: (
        it.SendBoot(window_id=f["window_id"], previous_window_id=None, reset_boot=False),
    ),
    "append_reset_boot": lambda f: (
        it.SendBoot(
            window_id=f["window_id"],
            previous_window_id=f["previous_window_id"],
            reset_boot=True,
        ),
    ),
    "append_continuation": _const(it.SendContinuation()),
}

# -- projection --------------------------------------------------------------------------------

PROJECTION_GUARDS = _guards("enabled", "root_window", "boot_visible", "missing_boot_announced")

PROJECTION_ACTIONS: dict[str, Action] = {
    "project_root_window": _const(it.ProjectMessages(reset_window=False)),
    "project_reset_window": _const(it.ProjectMessages(reset_window=True)),
    "announce_missing_boot": lambda f: (
        Notify(message=NOTICE_MISSING_BOOT.format(window_id=f["window_id"]), level="error"),
        it.RememberMissingBoot(window_id=f["window_id"]),
    ),
    "cancel_request": _const(it.CancelRequest()),
}

# -- toggle ------------------------------------------------------------------------------------

TOGGLE_GUARDS = _guards(
    "active",
    "signal_aborted",
    "manual_compaction",
    "marker_on_branch",
    "wants_summary",
    "marker_across",
)

TOGGLE_ACTIONS: dict[str, Action] = {
    "ensure_boot": _const(it.Dispatch(machine="boot_repair", event="repair")),
    "clear_reminders": _const(it.Dispatch(machine="budget", event="clear")),
    "clear_lifecycle": _const(it.Dispatch(machine="reset_control", event="clear")),
    "report_status": _const(it.ReportStatus()),
    "report_usage": _const(Notify(message=NOTICE_TOGGLE_USAGE, level="error")),
    "cancel_compaction": _const(it.CancelCompaction()),
    "report_compact_disabled": _const(Notify(message=NOTICE_COMPACT_DISABLED, level="warning")),
    "skip_branch_summary": _const(
        Notify(message=NOTICE_TREE_SUMMARY_SKIPPED, level="info"), it.SkipBranchSummary()
    ),
}

LIFECYCLE_BINDINGS: Mapping[
    str, tuple[Mapping[str, Callable[[Facts], bool]], Mapping[str, Action]]
] = {
    "reset_control": (RESET_CONTROL_GUARDS, RESET_CONTROL_ACTIONS),
    "budget": (BUDGET_GUARDS, BUDGET_ACTIONS),
    "boot_repair": (BOOT_REPAIR_GUARDS, BOOT_REPAIR_ACTIONS),
    "projection": (PROJECTION_GUARDS, PROJECTION_ACTIONS),
    "toggle": (TOGGLE_GUARDS, TOGGLE_ACTIONS),
}


def lifecycle_bindings() -> Mapping[str, tuple[Mapping[str, Any], Mapping[str, Action]]]:
    return LIFECYCLE_BINDINGS
