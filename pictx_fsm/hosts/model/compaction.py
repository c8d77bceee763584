"""Native compaction: Pi's ``prepareCompaction`` cut point, the ``session_before_compact``
hook, and the ``compaction`` entry (pi-host §3.1, §7 "Manual compaction", §8.7).

Summaries are deterministic texts instead of a summarization request to the provider (the
provider's script is only consumed by agent requests). The cut point follows Pi's
``findCutPoint``: walk back from the newest ``message`` entry, accumulating estimated tokens;
once ``keepRecentTokens`` is reached, keep from the closest valid cut point at or after that
entry (any message but a tool result or system message, a custom message, a branch summary).
Nothing to summarize before the cut → "Nothing to compact (session too small)" (``cli_rpc``).

Inside a run Pi also checks the threshold before each next turn (``prepareNextTurn`` →
``_compactBeforeNextAssistantResponse``) on the projected estimate, so a reply that crosses
the reserve mid-run is compacted (or the compaction cancelled) before the next ``turn_start``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

from attrs import frozen

from pictx_fsm.host.effects import CancelResult, HookResult
from pictx_fsm.host.events import SessionBeforeCompact
from pictx_fsm.host.extension import Reply, SuppliedCompaction
from pictx_fsm.hosts.model.dispatch import emit, record
from pictx_fsm.hosts.model.records import Step, step_at
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.hosts.model.steps import Steps
from pictx_fsm.session.entries import (
    ABSENT,
    BranchSummaryEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
)
from pictx_fsm.session.estimate import TokenCounter, estimate_host, host_text
from pictx_fsm.session.projection import fold_system, latest_compaction_index

JSON: TypeAlias = Any
NOTHING_TO_COMPACT = "Nothing to compact (session too small)"
OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
CompactStatus: TypeAlias = Literal["compacted", "cancelled", "nothing_to_compact"]


@frozen(kw_only=True)
class CompactionPlan:
    first_kept_entry_id: str
    summarized: int
    """Messages before the cut (what the summary covers)."""


@frozen(kw_only=True)
class CompactOutcome:
    status: CompactStatus
    entry_id: str | None = None


def checkpoint_fields(
    host: HostState, summary: str, *, details: JSON = ABSENT, from_hook: bool, usage: JSON = ABSENT
) -> dict[str, JSON]:
    """The fields of a compaction entry written now: the estimate before it and the current
    system message as its checkpoint (``systemMessage``)."""
    messages = host.store.context_messages()
    fields: dict[str, JSON] = {
        "summary": summary,
        "tokens_before": estimate_host(messages, host.counter),
        "details": details,
        "usage": usage,
        "from_hook": from_hook,
    }
    system = fold_system(messages)
    if system is not None:
        fields["system_message"] = dict(system)
    return fields


# -- the cut point -----------------------------------------------------------------------------


def plan_compaction(
    branch: Sequence[Entry], keep_recent_tokens: int, counter: TokenCounter
) -> CompactionPlan | None:
    """Where Pi would cut this branch, or ``None`` when nothing precedes the cut."""
    latest = latest_compaction_index(branch)
    start = 0 if latest is None else latest + 1
    window = list(branch[start:])
    cut_points = [i for i, entry in enumerate(window) if _is_cut_point(entry)]
    if not cut_points:
        return None
    cut = _cut_index(window, cut_points, keep_recent_tokens, counter)
    summarized = sum(1 for entry in window[:cut] if _is_summarizable(entry))
    kept_id = window[cut].id
    if summarized == 0 or kept_id is None:
        return None
    return CompactionPlan(first_kept_entry_id=kept_id, summarized=summarized)


def _cut_index(
    window: list[Entry], cut_points: list[int], keep_recent: int, counter: TokenCounter
) -> int:
    accumulated = 0
    for index in range(len(window) - 1, -1, -1):
        entry = window[index]
        if not isinstance(entry, MessageEntry) or entry.message.role == "system":
            continue
        accumulated += counter.count(host_text(entry.message.raw))
        if accumulated >= keep_recent:
            return next((c for c in cut_points if c >= index), cut_points[0])
    return cut_points[0]


def _is_cut_point(entry: Entry) -> bool:
    if isinstance(entry, CustomMessageEntry | BranchSummaryEntry):
        return True
    return isinstance(entry, MessageEntry) and entry.message.role not in ("toolResult", "system")


def _is_summarizable(entry: Entry) -> bool:
    if isinstance(entry, MessageEntry):
        return entry.message.role != "system"
    return isinstance(entry, CustomMessageEntry | BranchSummaryEntry)


def default_summary(plan: CompactionPlan) -> str:
    return f"## Goal\nModel-host summary of {plan.summarized} message(s)"


# -- running a compaction ----------------------------------------------------------------------


def compact_before_next_turn(host: HostState) -> Steps[None]:
    """Pi's threshold check before the next turn of a run: the projected estimate (the usage
    figure, or a plain estimate while a compaction hides the last usage) above
    ``contextWindow − reserveTokens`` runs a threshold compaction."""
    settings = host.settings.compaction
    window = host.model.context_window
    if not settings.enabled or window is None or window <= 0:
        return
    tokens = host.store.context_tokens()
    if tokens is None:
        tokens = estimate_host(host.store.context_messages(), host.counter)
    if tokens > window - settings.reserve_tokens:
        yield from run_compaction(host, "threshold", will_retry=False)


def run_compaction(host: HostState, reason: str, *, will_retry: bool) -> Steps[CompactOutcome]:
    """``session_before_compact`` → cancelled, extension-supplied, or the default summary."""
    keep = host.settings.compaction.keep_recent_tokens
    plan = plan_compaction(host.store.branch(), keep, host.counter)
    if plan is None:
        text = f"Compaction failed: {NOTHING_TO_COMPACT}"
        yield failed(host, reason, error_message=text, aborted=False)
        return CompactOutcome(status="nothing_to_compact")
    event = SessionBeforeCompact(reason=reason, signal_aborted=host.signal_aborted)  # type: ignore[arg-type]
    replies = emit(host, event, reason=reason, willRetry=will_retry)
    yield step_at("hook", "session_before_compact")
    decision = _decision(replies)
    if isinstance(decision, CancelResult):
        yield failed(host, reason, error_message=None, aborted=True)
        return CompactOutcome(status="cancelled")
    if isinstance(decision, SuppliedCompaction):
        fields = checkpoint_fields(host, decision.summary, details=decision.details, from_hook=True)
        first_kept = decision.first_kept_entry_id
    else:
        details: JSON = {"readFiles": [], "modifiedFiles": []}
        fields = checkpoint_fields(host, default_summary(plan), details=details, from_hook=False)
        first_kept = plan.first_kept_entry_id
    entry = host.store.compaction(fields, first_kept)
    yield step_at("persist", entry.type)
    from_ext = isinstance(decision, SuppliedCompaction)
    yield record(host, "session_compact", reason=reason, fromExtension=from_ext)
    return CompactOutcome(status="compacted", entry_id=entry.id)


def _decision(replies: list[Reply]) -> CancelResult | SuppliedCompaction | None:
    """The first cancel wins; otherwise the first extension-supplied compaction."""
    supplied: SuppliedCompaction | None = None
    for reply in replies:
        if isinstance(reply, HookResult) and isinstance(reply.value, CancelResult):
            return reply.value
        if isinstance(reply, SuppliedCompaction) and supplied is None:
            supplied = reply
    return supplied


def failed(host: HostState, reason: str, *, error_message: str | None, aborted: bool) -> Step:
    """``session_compact_failed``."""
    detail: dict[str, JSON] = {"reason": reason, "aborted": aborted}
    if error_message is not None:
        detail["errorMessage"] = error_message
    return record(host, "session_compact_failed", **detail)
