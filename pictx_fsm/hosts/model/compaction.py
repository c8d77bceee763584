"""Native compaction: Pi's ``prepareCompaction`` cut point, the ``session_before_compact``
hook, and the ``compaction`` entry (pi-host §3.1, §7 "Manual compaction", §8.7).

Summaries are deterministic texts instead of a summarization request to the provider (the
provider's script is only consumed by agent requests). The cut point follows Pi's
``prepareCompaction`` and ``findProjectedCutPoint`` over the projected context entries: walk
back from the newest, accumulating every context message's estimate (the system message's
too); once ``keepRecentTokens`` is reached, keep from the closest cut point at or after that
entry (a user, assistant, custom or summary message; a tool result never). Nothing to
summarize before the cut → "Nothing to compact (session too small)" (``cli_rpc``). The
system message's share was found by the generated differential runs against the real Pi.

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
    CompactionEntry,
    ContextEditEntry,
    Entry,
    MessageEntry,
)
from pictx_fsm.session.estimate import TokenCounter, estimate_host, host_text, usage_anchor
from pictx_fsm.session.projection import (
    Message,
    build_context_entries,
    entry_contribution,
    entry_messages,
    fold_system,
    latest_edits,
    project_branch,
)

__all__ = [
    "CUT_POINT_ROLES",
    "JSON",
    "NOTHING_TO_COMPACT",
    "OVERFLOW_RECOVERY_FAILED",
    "TURN_START_ROLES",
    "CompactOutcome",
    "CompactStatus",
    "CompactionPlan",
    "Projected",
    "checkpoint_fields",
    "compact_before_next_turn",
    "default_summary",
    "failed",
    "plan_compaction",
    "projected_tokens",
    "run_compaction",
]

JSON: TypeAlias = Any
NOTHING_TO_COMPACT = "Nothing to compact (session too small)"
OVERFLOW_RECOVERY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
CompactStatus: TypeAlias = Literal["compacted", "cancelled", "nothing_to_compact"]
CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
"""Pi's ``isCutPointMessage``: a compaction may keep from such a message on."""
TURN_START_ROLES = CUT_POINT_ROLES - {"assistant"}
"""Pi's ``isTurnStartMessage``."""


@frozen(kw_only=True)
class CompactionPlan:
    first_kept_entry_id: str
    summarized: int
    """Messages before the cut (what the summary covers)."""
    split: bool = False
    """The cut falls inside a turn (Pi summarizes the turn's prefix separately)."""


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
    """Where Pi would cut this branch (``prepareCompaction``), or ``None`` when nothing
    precedes the cut (or the branch ends with a compaction)."""
    if branch and isinstance(branch[-1], CompactionEntry):
        return None
    projected = _projected(branch)
    newest = next(
        (
            i
            for i, (entry, messages) in enumerate(projected)
            if isinstance(entry, CompactionEntry) and messages
        ),
        None,
    )
    start = 0 if newest is None else newest + 1
    cut, turn_start = _cut_point(projected, start, keep_recent_tokens, counter)
    if cut >= len(projected) or projected[cut][0].id is None:
        return None
    split = turn_start is not None
    history_end = turn_start if turn_start is not None else cut
    history = _summarizable(projected[start:history_end])
    prefix = _summarizable(projected[turn_start:cut]) if turn_start is not None else 0
    if history == 0 and prefix == 0:
        return None
    return CompactionPlan(
        first_kept_entry_id=str(projected[cut][0].id), summarized=history + prefix, split=split
    )


Projected: TypeAlias = list[tuple[Entry, list[Message]]]


def _projected(branch: Sequence[Entry]) -> Projected:
    """``buildSessionProjection``'s entries: each context entry with the messages it puts in
    the context (its latest edit applied; an older compaction puts none)."""
    selected = build_context_entries(branch)
    edits = latest_edits(selected)
    return [
        (
            entry,
            entry_contribution(
                entry,
                edits.get(entry.id) if entry.id is not None else None,
                newest_compaction=position == 0 and isinstance(entry, CompactionEntry),
            ),
        )
        for position, entry in enumerate(selected)
    ]


def _cut_point(
    projected: Projected, start: int, keep_recent: int, counter: TokenCounter
) -> tuple[int, int | None]:
    """Pi's ``findProjectedCutPoint``: walk back from the newest entry, accumulating every
    context message's estimate (the system message's too); once ``keepRecentTokens`` is
    reached, keep from the closest cut point at or after that entry. Returns the first kept
    index and, for a cut inside a turn, the index of the turn's start."""
    cut_points = [
        i
        for i in range(start, len(projected))
        if not isinstance(projected[i][0], CompactionEntry)
        and any(m.get("role") in CUT_POINT_ROLES for m in projected[i][1])
    ]
    if not cut_points:
        return start, None
    cut = cut_points[0]
    exceeded = False
    accumulated = 0
    for index in range(len(projected) - 1, start - 1, -1):
        tokens = sum(counter.count(host_text(message)) for message in projected[index][1])
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep_recent:
            exceeded = True
            cut = next((c for c in cut_points if c >= index), cut_points[-1])
            break
    if exceeded and _omitted_attempt_follows(projected, cut):
        cut += 1
    while cut > start:
        entry, messages = projected[cut - 1]
        if isinstance(entry, CompactionEntry) or messages:
            break
        cut -= 1
    if _turn_start(projected[cut]):
        return cut, None
    turn_start = next((i for i in range(cut, start - 1, -1) if _turn_start(projected[i])), None)
    return cut, turn_start


def _omitted_attempt_follows(projected: Projected, cut: int) -> bool:
    """Pi's recovery-omission suffix: after the cut only entries hidden by context edits
    (an omitted assistant attempt among them) and invisible ones, and no edit that replaces
    something else: the cut moves past it."""
    suffix = projected[cut + 1 :]

    def visible(entry: Entry) -> bool:
        return not isinstance(entry, ContextEditEntry) and bool(entry_messages(entry))

    omitted = {entry.id for entry, messages in suffix if visible(entry) and not messages}
    replaces = any(
        isinstance(entry, ContextEditEntry)
        and entry.replacement is not None
        and entry.target_id not in omitted
        for entry, _ in suffix
    )
    attempt = any(
        isinstance(entry, MessageEntry)
        and entry.message.role == "assistant"
        and entry.id in omitted
        for entry, _ in suffix
    )
    settled = all(
        not isinstance(entry, CompactionEntry) and (not visible(entry) or entry.id in omitted)
        for entry, _ in suffix
    )
    return attempt and settled and not replaces


def _turn_start(item: tuple[Entry, list[Message]]) -> bool:
    entry, messages = item
    return not isinstance(entry, CompactionEntry) and any(
        m.get("role") in TURN_START_ROLES for m in messages
    )


def _summarizable(items: Projected) -> int:
    """``getMessagesFromProjectedEntryForCompaction``: the messages a summary covers."""
    return sum(
        1
        for entry, messages in items
        if not isinstance(entry, CompactionEntry)
        for message in messages
        if message.get("role") != "system"
    )


def default_summary(plan: CompactionPlan) -> str:
    return f"## Goal\nModel-host summary of {plan.summarized} message(s)"


# -- running a compaction ----------------------------------------------------------------------


def compact_before_next_turn(host: HostState) -> Steps[None]:
    """Pi's threshold check before the next turn of a run: the projected estimate
    (:func:`projected_tokens`) above ``contextWindow − reserveTokens`` runs a threshold
    compaction."""
    settings = host.settings.compaction
    window = host.model.context_window
    if not settings.enabled or window is None or window <= 0:
        return
    if projected_tokens(host.store.branch(), host.counter) > window - settings.reserve_tokens:
        yield from run_compaction(host, "threshold", will_retry=False)


def projected_tokens(branch: Sequence[Entry], counter: TokenCounter) -> int:
    """Pi's ``estimateProjectedContextTokens``: the last usage plus what follows it, while no
    context edit or compaction on the branch comes after that usage's entry; else a plain
    estimate of the projection — the current system message once, every other message. (A
    reset's context edit made at ``turn_end`` voids the usage: found by the differential.)"""
    projection = project_branch(branch)
    messages = projection.messages
    anchor = usage_anchor(messages, strict=False)
    if anchor is not None:
        source = projection.sources[anchor[0]]
        position = {entry.id: i for i, entry in enumerate(branch)}
        usage_at = position.get(source, -1)
        invalidating = max(
            (i for i, e in enumerate(branch) if isinstance(e, ContextEditEntry | CompactionEntry)),
            default=-1,
        )
        if usage_at > invalidating:
            return estimate_host(messages, counter)
    system = fold_system(messages)
    tokens = counter.count(host_text(system)) if system is not None else 0
    return tokens + sum(counter.count(host_text(m)) for m in messages if m.get("role") != "system")


def run_compaction(host: HostState, reason: str, *, will_retry: bool) -> Steps[CompactOutcome]:
    """``session_before_compact`` → cancelled, extension-supplied, or the default summary."""
    keep = host.settings.compaction.keep_recent_tokens
    plan = plan_compaction(host.store.branch(), keep, host.counter)
    if plan is None:
        if reason == "manual":  # an automatic one with nothing to cut never starts (Pi)
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
