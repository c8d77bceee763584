"""A whole run, from the prompt to ``agent_settled`` (pi-host §7 steps 1–4).

After each low-level run that was not aborted, Pi handles its end: a retryable error is
hidden (``context_edit{replacement:null}``) and retried after a backoff; an overflow — or a
length stop below the model's output limit — is hidden and compacted (reason ``overflow``)
with one compact-and-retry per failure chain (:func:`check_compaction`, Pi's
``_checkCompaction``); a context above the threshold is compacted (no retry); queued work
continues the run. Before a prompt Pi runs the same check on the last reply, aborted or
not. When nothing continues, ``agent_before_settle`` may continue it (a new low-level run).
Finally the held custom messages are appended and ``agent_settled`` fires. After an abort
nothing but the settle happens (no recovery, no ``agent_before_settle``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

from pictx_fsm.host.events import AgentBeforeSettle, AgentSettled
from pictx_fsm.host.overflow import is_context_overflow
from pictx_fsm.hosts.model.boundary import can_continue, chain, commit
from pictx_fsm.hosts.model.compaction import OVERFLOW_RECOVERY_FAILED, failed, run_compaction
from pictx_fsm.hosts.model.dispatch import emit, error
from pictx_fsm.hosts.model.queues import Queued
from pictx_fsm.hosts.model.records import step_at
from pictx_fsm.hosts.model.state import HostState, RunState
from pictx_fsm.hosts.model.steps import Steps
from pictx_fsm.hosts.model.turns import BOUNDARY, flush_held, low_level_run, outcome_of
from pictx_fsm.js_regex import compile_regex
from pictx_fsm.session.entries import CompactionEntry, ContextEditEntry, Entry
from pictx_fsm.session.estimate import context_tokens, estimate_host, timestamp_of
from pictx_fsm.session.projection import (
    build_context_entries,
    iso_to_epoch_ms,
    latest_compaction_index,
    project_branch,
)

__all__ = ["JSON", "RETRYABLE", "SETTLED", "agent_run", "check_before_prompt", "check_compaction"]

JSON: TypeAlias = Any

RETRYABLE: Final = compile_regex(
    r"overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504"
    r"|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error"
    r"|connection.?refused|other side closed|fetch failed|upstream.?connect"
    r"|reset before headers|socket hang up|ended without|timed? out|timeout|terminated"
    r"|retry delay",
    "i",
)
"""Pi's ``_isRetryableError`` patterns (checked after the overflow classifier), compiled with
JavaScript's rules (``.`` stops at line terminators, ``i`` folds as JS does)."""

SETTLED: Final = step_at("hook", "agent_settled")
"""The last step of a run: Pi is idle again (not streaming) once ``agent_settled`` fires."""


def agent_run(host: HostState, prompts: Sequence[Queued]) -> Steps[None]:
    """One run: low-level runs until nothing continues, then ``agent_settled``."""
    run = host.run = RunState()
    host.starting = False
    run.aborted, host.abort_requested = host.abort_requested, False
    yield from low_level_run(host, prompts)
    while not run.aborted:
        continued = yield from _post_run(host, run)
        if not continued and not run.aborted:
            continued = yield from _before_settle(host, run)
        if not continued or run.aborted:
            break
        yield from low_level_run(host, [])
    yield from flush_held(host)
    host.run = None
    aborted = {"aborted": run.aborted} if host.settings.profile.settled_reports_aborted else {}
    emit(host, AgentSettled(), **aborted)
    yield SETTLED


# -- after a low-level run ---------------------------------------------------------------------


def _post_run(host: HostState, run: RunState) -> Steps[bool]:
    """``_handlePostAgentRun``: whether it continued the run."""
    message = run.last_message
    if message is None:
        return host.queues.queued
    if _is_retryable(host, message) and (yield from _retry(host, run)):
        return True
    if run.aborted:
        return False
    if (yield from check_compaction(host, message, run.last_entry_id, skip_aborted=True)):
        return not run.aborted
    return host.queues.queued and not run.aborted


def _is_retryable(host: HostState, message: Mapping[str, JSON]) -> bool:
    if message.get("stopReason") != "error" or not host.settings.retry.enabled:
        return False
    if is_context_overflow(message, host.model.context_window):
        return False
    return RETRYABLE.test(str(message.get("errorMessage", "")))


def _retry(host: HostState, run: RunState) -> Steps[bool]:
    """Hide the failed reply and retry after the backoff, up to ``retry.maxRetries``."""
    run.retry_attempt += 1
    if run.retry_attempt > host.settings.retry.max_retries:
        run.retry_attempt = 0
        return False
    yield from _hide(host, run.last_entry_id)
    yield step_at("pause", "retry_wait")
    return not run.aborted


def _hide(host: HostState, entry_id: str | None) -> Steps[None]:
    if entry_id is not None:
        entry = host.store.context_edit(entry_id, None)
        yield step_at("persist", entry.type)


def check_compaction(
    host: HostState, message: Mapping[str, JSON], entry_id: str | None, *, skip_aborted: bool
) -> Steps[bool]:
    """Pi's ``_checkCompaction`` on a reply: an overflow (an overflow error the reply is still
    there for, or a usage above the window) or a length stop below the model's output limit
    is hidden and compacted with one compact-and-retry per failure chain; otherwise a context
    above ``contextWindow − reserveTokens`` is compacted. Whether the run goes on."""
    settings = host.settings.compaction
    if not settings.enabled or (skip_aborted and message.get("stopReason") == "aborted"):
        return False
    branch = host.store.branch()
    latest = latest_compaction_index(branch)
    if latest is not None and timestamp_of(message) <= _entry_ms(branch[latest]):
        return False
    window = host.model.context_window or 0
    projection = project_branch(branch)
    projected = entry_id is None or any(
        source == entry_id and m.get("role") == "assistant"
        for source, m in zip(projection.sources, projection.messages, strict=True)
    )
    index = next((i for i, e in enumerate(branch) if e.id == entry_id), None)
    after = branch[index + 1 :] if index is not None else []
    edits = [e for e in after if isinstance(e, ContextEditEntry)]
    own = [e for e in edits if e.target_id == entry_id]
    retained = entry_id is None or (
        not any(isinstance(e, CompactionEntry) for e in after)
        and (not own or own[-1].replacement is not None)
    )
    stop = message.get("stopReason")
    explicit = stop == "error" and is_context_overflow(message, None)
    overflow = (explicit and retained) or (
        projected and not edits and is_context_overflow(message, window)
    )
    output_limit = host.model.max_tokens or 0
    usage = message.get("usage")
    output = usage.get("output", 0) if isinstance(usage, Mapping) else 0
    length = projected and stop == "length" and output_limit > 0 and output < output_limit
    if overflow or length:
        if stop == "stop":
            outcome = yield from run_compaction(host, "overflow", will_retry=False)
            return outcome.status == "compacted" and host.queues.queued
        if host.overflow_attempted:
            yield failed(host, "overflow", error_message=OVERFLOW_RECOVERY_FAILED, aborted=False)
            return False
        host.overflow_attempted = True
        yield from _hide(host, entry_id)
        outcome = yield from run_compaction(host, "overflow", will_retry=True)
        return outcome.status == "compacted"
    if _threshold_tokens(host, message, branch) > window - settings.reserve_tokens:
        outcome = yield from run_compaction(host, "threshold", will_retry=False)
        return outcome.status == "compacted" and host.queues.queued
    return False


def _entry_ms(entry: Entry) -> float:
    ms = iso_to_epoch_ms(entry.timestamp)
    return float("-inf") if ms is None else ms


def _threshold_tokens(
    host: HostState, message: Mapping[str, JSON], branch: Sequence[Entry]
) -> float:
    """The context size Pi judges the threshold on: the projected estimate when context edits
    are in play, a plain estimate after an error or a reply without usage, else its usage."""
    if host.model.context_window is None:
        return float("-inf")
    try:
        direct = context_tokens(message.get("usage")) if message.get("usage") else 0
    except Exception:
        direct = 0
    if any(isinstance(e, ContextEditEntry) for e in build_context_entries(branch)):
        tokens = host.store.context_tokens()
        return (
            tokens
            if tokens is not None
            else estimate_host(host.store.context_messages(), host.counter)
        )
    if message.get("stopReason") == "error" or direct == 0:
        return estimate_host(host.store.context_messages(), host.counter)
    return direct


def check_before_prompt(host: HostState) -> Steps[None]:
    """The check Pi runs before sending a prompt, on the last reply in the context (aborted
    ones included): an overflow or a length stop left from a run that ended early is hidden
    and compacted then; else the threshold."""
    projection = project_branch(host.store.branch())
    for source, message in zip(
        reversed(projection.sources), reversed(projection.messages), strict=True
    ):
        if message.get("role") == "assistant":
            yield from check_compaction(host, message, source, skip_aborted=False)
            return


# -- agent_before_settle -----------------------------------------------------------------------


def _before_settle(host: HostState, run: RunState) -> Steps[bool]:
    """The settle boundary: whether it continued the run."""
    outcome = outcome_of(run.last_message)

    def event(drafts: tuple[Any, ...]) -> AgentBeforeSettle:
        pending = host.queues.pending_messages()
        return AgentBeforeSettle(outcome=outcome, entries=drafts, pending_messages=pending)

    boundary = chain(host, "agent_before_settle", event, outcome=outcome)
    yield step_at("hook", "agent_before_settle")
    yield from commit(host, boundary.entries)
    if boundary.continue_:
        if can_continue(host):
            return True
        error(
            host,
            "agent_before_settle",
            BOUNDARY,
            "agent_before_settle requested continuation without runnable model context",
        )
    return host.queues.queued
