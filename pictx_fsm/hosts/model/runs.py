"""A whole run, from the prompt to ``agent_settled`` (pi-host §7 steps 1–4).

After each low-level run that was not aborted, Pi handles its end: a retryable error is
hidden (``context_edit{replacement:null}``) and retried after a backoff; an overflow is hidden
and compacted (reason ``overflow``) with one compact-and-retry per failure chain; a context
above the threshold is compacted (no retry); queued work continues the run. When nothing
continues, ``agent_before_settle`` may continue it (a new low-level run). Finally the held
custom messages are appended and ``agent_settled`` fires. After an abort nothing but the
settle happens (no recovery, no ``agent_before_settle``).
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
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.session.estimate import context_tokens
from pictx_fsm.session.projection import latest_compaction_index

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


def agent_run(host: HostState, prompts: Sequence[Queued]) -> Steps[None]:
    """One run: low-level runs until nothing continues, then ``agent_settled``."""
    run = host.run = RunState()
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
    yield step_at("hook", "agent_settled")


# -- after a low-level run ---------------------------------------------------------------------


def _post_run(host: HostState, run: RunState) -> Steps[bool]:
    """``_handlePostAgentRun``: whether it continued the run."""
    message = run.last_message
    if message is None:
        return host.queues.queued
    if _is_retryable(host, message):
        if (yield from _retry(host, run)):
            return True
    elif _is_overflow(host, message):
        if (yield from _recover_overflow(host, run)):
            return True
    elif _over_threshold(host, message):
        yield from run_compaction(host, "threshold", will_retry=False)
    return host.queues.queued and not run.aborted


def _is_overflow(host: HostState, message: Mapping[str, JSON]) -> bool:
    enabled = host.settings.compaction.enabled
    return enabled and is_context_overflow(message, host.model.context_window)


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
    yield from _hide_failed(host, run)
    yield step_at("pause", "retry_wait")
    return not run.aborted


def _recover_overflow(host: HostState, run: RunState) -> Steps[bool]:
    """One compact-and-retry per failure chain; a second overflow gives up."""
    if run.overflow_attempted:
        yield failed(host, "overflow", error_message=OVERFLOW_RECOVERY_FAILED, aborted=False)
        return False
    run.overflow_attempted = True
    yield from _hide_failed(host, run)
    outcome = yield from run_compaction(host, "overflow", will_retry=True)
    return outcome.status == "compacted" and not run.aborted


def _hide_failed(host: HostState, run: RunState) -> Steps[None]:
    if run.last_entry_id is not None:
        entry = host.store.context_edit(run.last_entry_id, None)
        yield step_at("persist", entry.type)


def _over_threshold(host: HostState, message: Mapping[str, JSON]) -> bool:
    """``contextTokens > contextWindow − reserveTokens`` for a settled reply."""
    settings = host.settings.compaction
    window = host.model.context_window
    if not settings.enabled or window is None or message.get("stopReason") in ("error", "aborted"):
        return False
    try:
        tokens = context_tokens(message.get("usage"))
    except Exception:
        return False
    return tokens > window - settings.reserve_tokens


def check_before_prompt(host: HostState) -> Steps[None]:
    """The threshold check Pi runs before sending a prompt (on the last settled reply after
    the latest compaction)."""
    branch = host.store.branch()
    latest = latest_compaction_index(branch)
    begin = 0 if latest is None else latest + 1
    for entry in reversed(branch[begin:]):
        if isinstance(entry, MessageEntry) and entry.message.role == "assistant":
            if _over_threshold(host, entry.message.raw):
                yield from run_compaction(host, "threshold", will_retry=False)
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
