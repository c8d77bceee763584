"""Facts: the named observations notesoup's guards read, computed lazily from one view of a
machine event (the hook event, ``ctx``, the state before the event, the services), so the
audit records exactly what a decision used. The catalogue (:data:`FACTS`) is the single owner
of how each is derived; the rule each implements is in its docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from attrs import frozen

from pictx_fsm.extensions.notesoup.lifecycle.state import NotesoupState
from pictx_fsm.extensions.notesoup.windows import (
    GUIDANCE_TYPES,
    WARNING_TYPES,
    boundary_committed,
    warning_in_segment,
)
from pictx_fsm.extensions.notesoup.windows import (
    checkpoint_backed as marker_checkpoint_backed,
)
from pictx_fsm.extensions.shared import policy
from pictx_fsm.extensions.shared.facts import FAMILY_FACTS, need
from pictx_fsm.extensions.shared.machinery import FactCatalogue, Facts
from pictx_fsm.extensions.shared.repair import TailVerdict, classify_raw_tail, tail_kind
from pictx_fsm.extensions.shared.windows import Window
from pictx_fsm.host import overflow
from pictx_fsm.host.events import (
    AgentBeforeSettle,
    Command,
    ContextWithSystem,
    HookEvent,
    HostContext,
    SessionBeforeTree,
    TurnEnd,
)
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.session.tree import SessionTree

if TYPE_CHECKING:
    from pictx_fsm.extensions.notesoup.lifecycle.services import Services

__all__ = ["FACTS", "STATE_FACTS", "FactEnv", "in_state"]


@frozen(kw_only=True)
class FactEnv:
    """Everything a fact may be computed from, for one machine event."""

    event: HookEvent
    ctx: HostContext
    state: NotesoupState
    """The lifecycle state before this machine event."""
    services: Services
    policy: Callable[[], policy.Policy]
    extras: Mapping[str, Any]

    @property
    def tree(self) -> SessionTree:
        return self.services.tree

    @property
    def window(self) -> Window:
        """The current window (the shared facts' view of it)."""
        return self.services.windows.current_window


FACTS: Final = FactCatalogue(FAMILY_FACTS)
fact = FACTS.fact

RESET_CONTROL: Final = "notesoup_reset_control"
STATE_FACTS: Final[Mapping[str, tuple[str, str, str]]] = {
    "enabled": ("notesoup_toggle", "notesoup_toggle", "on"),
    "active": (RESET_CONTROL, "activity", "active"),
    "stop_pending": (RESET_CONTROL, "request", "stop_pending"),
}
"""Facts that are a machine's state: name → (machine, region, state)."""


def in_state(state: NotesoupState, name: str) -> bool:
    machine, region, target = STATE_FACTS[name]
    return state.state_of(machine, region) == target


# -- the lifecycle's own state -----------------------------------------------------------------


@fact
def enabled(env: FactEnv, facts: Facts) -> bool:
    """``/notesoup`` is on (S14)."""
    return in_state(env.state, "enabled")


@fact
def active(env: FactEnv, facts: Facts) -> bool:
    """Between ``session_start`` and ``session_shutdown`` (S28)."""
    return in_state(env.state, "active")


@fact
def stop_pending(env: FactEnv, facts: Facts) -> bool:
    """The request is the stop-pending latch (S34)."""
    return in_state(env.state, "stop_pending")


@fact
def request_current(env: FactEnv, facts: Facts) -> bool:
    """S21: the request was made in the window that is still current."""
    request = env.state.request
    return request is not None and request.window_id == facts["window_id"]


@fact
def manual_close_out(env: FactEnv, facts: Facts) -> bool:
    """A manual close-out is armed for the current window (S23)."""
    armed = env.state.state_of(RESET_CONTROL, "request") == "close_out_manual"
    return armed and bool(facts["request_current"])


@fact
def has_prompt(env: FactEnv, facts: Facts) -> bool:
    """S22: the manual close-out carries a prompt to continue with."""
    request = env.state.request
    return request is not None and bool(request.prompt)


@fact
def overflow_armed(env: FactEnv, facts: Facts) -> bool:
    """S26.3: the overflow chain is ``pending`` or ``pending-spent``."""
    return env.state.state_of(RESET_CONTROL, "overflow") in ("pending", "pending_spent")


@fact
def latch_window_moved(env: FactEnv, facts: Facts) -> bool:
    """S26.2: the safety reset committed — the current window is no longer the latch's."""
    request = env.state.request
    return request is not None and request.window_id != facts["window_id"]


# -- window identity (S10, S40) ---------------------------------------------------------------


@fact
def checkpoint_backed(env: FactEnv, facts: Facts) -> bool:
    """S40: the current marker follows a retain-none empty compaction."""
    return marker_checkpoint_backed(env.tree, env.window)


@fact
def guidance_in_window(env: FactEnv, facts: Facts) -> bool:
    """S62: a guidance message persists in the current window (a migrated 0.25 one too)."""
    return env.services.windows.has_window_message(*GUIDANCE_TYPES)


@fact
def warning_in_window(env: FactEnv, facts: Facts) -> bool:
    """S62: a final warning persists in the current window (a migrated 0.25 one too)."""
    return env.services.windows.has_window_message(*WARNING_TYPES)


# -- usage and policy (S49–S55, S60) -----------------------------------------------------------


@fact
def hard_reserve_due(env: FactEnv, facts: Facts) -> bool:
    """S60: automatic, usage known and ``contextWindow − tokens ≤ reserve`` (unclamped)."""
    if not facts["automatic"] or not facts["usage_known"]:
        return False
    return policy.reset_due(facts["usage"], facts["thresholds"].reserve, True)


@fact
def warning_due(env: FactEnv, facts: Facts) -> bool:
    """S54.1/S55: remaining at or below the warning line, and automatic compaction on."""
    remaining = facts["remaining"]
    return (
        remaining is not None
        and remaining <= facts["thresholds"].warning
        and bool(facts["automatic"])
    )


@fact
def warning_staging(env: FactEnv, facts: Facts) -> bool:
    """S54.1: the warning is due, and neither persisted in this window nor staged for it."""
    if not facts["enabled"] or not facts["usage_known"] or not facts["warning_due"]:
        return False
    return not facts["warning_in_window"] and not facts["warning_staged_here"]


@fact
def guidance_due(env: FactEnv, facts: Facts) -> bool:
    """S54.2: remaining at or below the reminder line (inclusive, S55)."""
    remaining = facts["remaining"]
    return remaining is not None and remaining <= facts["thresholds"].reminder


def _staged_here(staged: Any, facts: Facts) -> bool:
    return staged is not None and staged.window_id == facts["window_id"]


@fact
def warning_staged_here(env: FactEnv, facts: Facts) -> bool:
    return _staged_here(env.state.warning, facts)


@fact
def guidance_window_current(env: FactEnv, facts: Facts) -> bool:
    """S56: the staged guidance belongs to the window current at turn_end."""
    return _staged_here(env.state.guidance, facts)


@fact
def warning_window_current(env: FactEnv, facts: Facts) -> bool:
    """S56: the staged warning belongs to the window current at turn_end."""
    return _staged_here(env.state.warning, facts)


@fact
def warning_notice_due(env: FactEnv, facts: Facts) -> bool:
    """S57: the committed warning lies in its window's segment of the active branch."""
    notice = env.state.warning_notice
    scheme = env.services.scheme
    return notice is not None and warning_in_segment(env.tree, env.tree.leaf, notice, scheme)


# -- the turn (S29, S63) -----------------------------------------------------------------------


@fact
def overflow_like(env: FactEnv, facts: Facts) -> bool:
    """S63: the turn's assistant message is a context overflow or a recoverable length stop
    (never an aborted turn)."""
    event = need(env, (TurnEnd,), "overflow_like")
    if facts["aborted"]:
        return False
    return overflow.is_overflow_like(event.message, env.ctx.model)


@fact
def error_outcome(env: FactEnv, facts: Facts) -> bool:
    """S29: ``failed`` — the turn (or run) ended with outcome ``error``."""
    event = need(env, (TurnEnd, AgentBeforeSettle), "error_outcome")
    return bool(event.outcome == "error")


@fact
def idle(env: FactEnv, facts: Facts) -> bool:
    """``ctx.isIdle()`` (S16, S17)."""
    return env.ctx.idle


# -- the stop latch (S35) ----------------------------------------------------------------------


@fact
def latch_cancels(env: FactEnv, facts: Facts) -> bool:
    """S35: a latched stop cancels Pi's tool-batch follow-up — nothing pending, the current
    marker is a new window whose boundary committed, and no user message follows it."""
    if not facts["active"] or env.ctx.has_pending_messages:
        return False
    window = env.window
    request = env.state.request
    if window.is_root or request is None or window.window_id == request.window_id:
        return False
    leaf = env.tree.leaf
    if not boundary_committed(env.tree, window, leaf, env.services.scheme):
        return False
    for node in env.services.windows.tail_since_marker(leaf) if leaf is not None else ():
        entry = node.entry
        if isinstance(entry, MessageEntry) and entry.message.role == "user":
            return False
    return True


# -- reset notices (S46, S47) ------------------------------------------------------------------


@fact
def committed_pending_resets(env: FactEnv, facts: Facts) -> tuple[str, ...]:
    """S46: the pending reset notices whose boundary the active branch shows committed."""
    pending = env.state.pending_resets
    if not pending:
        return ()
    tree, leaf = env.tree, env.tree.leaf
    if leaf is None:
        return ()
    committed = set()
    for window in env.services.windows.current_window.chain():
        scheme = env.services.scheme
        if window.window_id in pending and boundary_committed(tree, window, leaf, scheme):
            committed.add(window.window_id)
    return tuple(w for w in pending if w in committed)


# -- boot repair (S70–S76) ---------------------------------------------------------------------


def _projection_has_boot(env: FactEnv, window_id: str) -> bool:
    scheme = env.services.scheme
    return any(scheme.is_boot_message(m, window_id) for m in env.tree.transcripts.transcript())


@fact
def root_boot_visible(env: FactEnv, facts: Facts) -> bool:
    """S71: Pi's projection already holds a boot for the current root id."""
    return _projection_has_boot(env, facts["window_id"])


@fact
def window_refused(env: FactEnv, facts: Facts) -> bool:
    """Q6 (ours): the current reset window has no boot in Pi's projection, so every request
    in it is cancelled (S79) — ``/clear-memory`` recovers it at once."""
    if env.window.is_root:
        return False
    return not _projection_has_boot(env, facts["window_id"])


@fact
def repair_deferred(env: FactEnv, facts: Facts) -> bool:
    """Ours (as pi-context's R65 fix): a reset this runtime built is not yet committed on the
    branch — the host is appending its boundary — or a command arrived mid-run (Pi holds a
    sent boot until the turn's end, behind the run's own conversation)."""
    if isinstance(env.event, Command) and not env.ctx.idle:
        return True
    pending = env.state.pending_resets
    return bool(pending) and len(facts["committed_pending_resets"]) < len(pending)


@fact
def tail_verdict(env: FactEnv, facts: Facts) -> TailVerdict:
    """S73/S74: what the current marker's tail needs (classified once per repair)."""
    window = env.window
    tail = env.services.windows.tail_after_marker()
    scheme = env.services.scheme
    return classify_raw_tail([tail_kind(entry, window.window_id, scheme) for entry in tail])


# -- projection (S77–S80) ----------------------------------------------------------------------


@fact
def boot_visible(env: FactEnv, facts: Facts) -> bool:
    """S77: the request's messages hold a boot for the current window."""
    event = need(env, (ContextWithSystem,), "boot_visible")
    wid = facts["window_id"]
    scheme = env.services.scheme
    return any(isinstance(m, Mapping) and scheme.is_boot_message(m, wid) for m in event.messages)


# -- native compaction and tree summaries (S20, S82) -------------------------------------------


@fact
def marker_across(env: FactEnv, facts: Facts) -> bool:
    """S82: the current branch or the destination branch contains a valid marker."""
    event = need(env, (SessionBeforeTree,), "marker_across")
    windows = env.services.windows
    if not windows.current_window.is_root:
        return True
    if event.target_id is None or event.target_id not in env.tree:
        return False
    return not windows.window_at(event.target_id).is_root
