"""Facts: the named, typed observations every guard reads.

A guard in ``models/`` is a boolean expression over fact names; it binds to the fact of that
name (there is no other list of guards). Facts are computed lazily from one immutable view
per machine event (the hook event, the host's ``ctx`` facts, the lifecycle state before the
event, the services), so a guard that is not reached is never computed — the reducer's
"guards evaluated lazily only in the branch that needs them" (D6) — and the audit log
records exactly the facts a decision used.

The fact catalogue (:data:`FACTS`) is the single owner of how each observation is derived;
the lifecycle rule each one implements is in its docstring. Two facts read the machines'
own states (:data:`STATE_FACTS`): the lifecycle checks at load time that those states exist.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from attrs import frozen

from pictx_fsm.extensions.pi_context import policy
from pictx_fsm.extensions.pi_context.lifecycle._state import LifecycleState
from pictx_fsm.extensions.pi_context.repair import TailVerdict, classify_tail, tail_kind
from pictx_fsm.extensions.pi_context.texts import GUIDANCE_TYPE, WARNING_TYPE, Profile
from pictx_fsm.extensions.pi_context.windows import Window, WindowIndex, boot_key, is_boot_message
from pictx_fsm.host import overflow
from pictx_fsm.host.events import (
    AgentBeforeSettle,
    AgentEnd,
    Command,
    ContextWithSystem,
    HookEvent,
    HostContext,
    SessionBeforeCompact,
    SessionBeforeTree,
    SessionStart,
    TurnEnd,
)
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.session.transcript import Transcript
from pictx_fsm.session.tree import SessionTree

if TYPE_CHECKING:
    from pictx_fsm.extensions.pi_context.lifecycle._services import Services

__all__ = ["FACTS", "STATE_FACTS", "Fact", "FactEnv", "FactError", "Facts", "fact"]


class FactError(LookupError):
    """A guard asked for a fact this event cannot provide (a model or runtime defect)."""


@frozen(kw_only=True)
class FactEnv:
    """Everything a fact may be computed from, for one machine event."""

    event: HookEvent
    ctx: HostContext
    state: LifecycleState
    """The lifecycle state before this machine event."""
    services: Services
    policy: Callable[[], policy.Policy]
    """The settings policy of this hook (resolved, or reused while cached: R40, R55)."""
    extras: Mapping[str, Any]
    planned_commits: frozenset[str]
    """Window ids whose complete tail this very hook writes (``/wipe-memory``): Pi appends
    them synchronously while idle, so the immediate notice check sees them (R59)."""

    @property
    def tree(self) -> SessionTree:
        return self.services.tree

    @property
    def windows(self) -> WindowIndex:
        """pi-context's window identity over the session tree."""
        return self.services.windows

    @property
    def profile(self) -> Profile:
        return self.services.profile


FactFn = Callable[[FactEnv, "Facts"], Any]


@frozen(kw_only=True)
class Fact:
    name: str
    compute: FactFn
    doc: str


FACTS: dict[str, Fact] = {}


def fact(fn: FactFn) -> FactFn:
    """Register a fact under its function name; the docstring is its documentation."""
    FACTS[fn.__name__] = Fact(name=fn.__name__, compute=fn, doc=(fn.__doc__ or "").strip())
    return fn


class Facts:
    """Lazily computed facts for one machine event; records what was read, in order."""

    def __init__(self, env: FactEnv, catalogue: Mapping[str, Fact] = FACTS) -> None:
        self.env = env
        self._catalogue = catalogue
        self._values: dict[str, Any] = {}

    @property
    def services(self) -> Services:
        return self.env.services

    def __getitem__(self, name: str) -> Any:
        if name in self._values:
            return self._values[name]
        entry = self._catalogue.get(name)
        if entry is None:
            raise FactError(f"unknown fact {name!r}")
        value = entry.compute(self.env, self)
        self._values[name] = value
        return value

    def used(self) -> tuple[tuple[str, Any], ...]:
        return tuple(self._values.items())

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)


def _need(env: FactEnv, kinds: tuple[type[Any], ...], name: str) -> Any:
    if not isinstance(env.event, kinds):
        raise FactError(f"fact {name!r} is not available at hook {type(env.event).HOOK!r}")
    return env.event


# -- the lifecycle's own state -----------------------------------------------------------------


STATE_FACTS: Mapping[str, tuple[str, str, str]] = {
    "enabled": ("toggle", "toggle", "on"),
    "active": ("reset_control", "activity", "active"),
}
"""Facts that are a machine's state: name → (machine, region, state)."""


def in_state(state: LifecycleState, name: str) -> bool:
    """The state fact ``name`` (:data:`STATE_FACTS`) in ``state``."""
    machine, region, target = STATE_FACTS[name]
    return state.state_of(machine, region) == target


@fact
def enabled(env: FactEnv, facts: Facts) -> bool:
    """``/pi-context`` is on (R60): the toggle machine is in ``on``."""
    return in_state(env.state, "enabled")


@fact
def active(env: FactEnv, facts: Facts) -> bool:
    """The lifecycle is active: not between ``session_shutdown`` and ``session_start`` (R19)."""
    return in_state(env.state, "active")


# -- window identity (R9–R13) ------------------------------------------------------------------


def _window(env: FactEnv) -> Window:
    return env.windows.current_window


@fact
def window_id(env: FactEnv, facts: Facts) -> str:
    """R11: the current window id (last valid marker on the active branch, else the root)."""
    return _window(env).window_id


@fact
def root_window(env: FactEnv, facts: Facts) -> bool:
    """No valid marker on the active branch (R9)."""
    return _window(env).is_root


@fact
def marker_on_branch(env: FactEnv, facts: Facts) -> bool:
    """A valid marker exists on the active branch (R62)."""
    return not _window(env).is_root


@fact
def guidance_in_window(env: FactEnv, facts: Facts) -> bool:
    """R13: a guidance message is persisted in the current window on this branch."""
    return env.windows.has_window_message(GUIDANCE_TYPE)


@fact
def warning_in_window(env: FactEnv, facts: Facts) -> bool:
    """R13: a final warning is persisted in the current window on this branch."""
    return env.windows.has_window_message(WARNING_TYPE)


# -- usage and policy (R40–R52) ----------------------------------------------------------------


@fact
def usage(env: FactEnv, facts: Facts) -> policy.Usage | None:
    """R47/R48: the active window's usage (root: the host's; marker: the projected window)."""
    return env.services.window_usage(env.ctx)


@fact
def usage_known(env: FactEnv, facts: Facts) -> bool:
    """R49: remaining tokens can be computed."""
    return facts["remaining"] is not None


@fact
def remaining(env: FactEnv, facts: Facts) -> int | None:
    """R49: ``max(0, contextWindow − tokens)`` of the active window; None when unknown
    (including when the host reports no usage at all, R47)."""
    usage = facts["usage"]
    return None if usage is None else policy.remaining(usage)


@fact
def automatic(env: FactEnv, facts: Facts) -> bool:
    """R41: ``compaction.enabled`` — automatic resets are on."""
    return env.policy().automatic


@fact
def thresholds(env: FactEnv, facts: Facts) -> policy.Thresholds:
    """R44: reminder, warning and reserve lines."""
    return env.policy().thresholds


@fact
def reset_due(env: FactEnv, facts: Facts) -> bool:
    """R50: automatic, usage known and ``contextWindow − tokens ≤ reserve``."""
    if not facts["automatic"] or not facts["usage_known"]:
        return False
    return policy.reset_due(facts["usage"], facts["thresholds"].reserve, True)


@fact
def warning_due(env: FactEnv, facts: Facts) -> bool:
    """R51.2/R52: remaining at or below the warning line."""
    return policy.reminder_stage(facts["remaining"], facts["thresholds"]) == "warning"


@fact
def guidance_due(env: FactEnv, facts: Facts) -> bool:
    """R51.4/R52: remaining at or below the reminder line (and above the warning line)."""
    return policy.reminder_stage(facts["remaining"], facts["thresholds"]) == "guidance"


# -- budget staging (R51–R54) ------------------------------------------------------------------


def _staged_here(env: FactEnv, facts: Facts, kind: str) -> bool:
    return bool(env.state.staged_window(kind) == facts["window_id"])


@fact
def warning_staged_here(env: FactEnv, facts: Facts) -> bool:
    """R51.1: a warning is staged for the current window."""
    return _staged_here(env, facts, WARNING_TYPE)


@fact
def guidance_window_current(env: FactEnv, facts: Facts) -> bool:
    """R31/R53: the staged guidance belongs to the window that is current at turn_end."""
    return _staged_here(env, facts, GUIDANCE_TYPE)


@fact
def warning_window_current(env: FactEnv, facts: Facts) -> bool:
    """R31/R53: the staged warning belongs to the window that is current at turn_end."""
    return _staged_here(env, facts, WARNING_TYPE)


def _notice_due(env: FactEnv, facts: Facts, kind: str) -> bool:
    if env.state.notice_window(kind) != facts["window_id"]:
        return False
    return bool(env.windows.has_window_message(kind))


@fact
def guidance_notice_due(env: FactEnv, facts: Facts) -> bool:
    """R54: the committed guidance is for the current window and present in it."""
    return _notice_due(env, facts, GUIDANCE_TYPE)


@fact
def warning_notice_due(env: FactEnv, facts: Facts) -> bool:
    """R54: the committed warning is for the current window and present in it."""
    return _notice_due(env, facts, WARNING_TYPE)


@fact
def guidance_remaining(env: FactEnv, facts: Facts) -> int:
    """R51.4: the count frozen into the guidance text, ``max(0, remaining − warning)``."""
    return facts["tool_remaining"] or 0


@fact
def tool_remaining(env: FactEnv, facts: Facts) -> int | None:
    """R17: ``max(0, remaining − warningLine)`` or None; works even when disabled."""
    if not facts["usage_known"]:
        return None
    return policy.tool_remaining(facts["usage"], facts["thresholds"])


@fact
def tool_pair_open(env: FactEnv, facts: Facts) -> bool:
    """FM19: the leaf sits between an assistant's tool calls and their results, so anything
    appended now would split a tool pair (a navigation can put the leaf there). Entries that
    are not messages (a branch summary ``/tree`` wrote, custom entries) do not close the
    pair: the walk looks through them to the nearest assistant message."""
    leaf = env.tree.leaf
    results = 0
    for node in leaf.ancestors() if leaf is not None else ():
        entry = node.entry
        if not isinstance(entry, MessageEntry):
            continue
        if entry.message.role == "toolResult":
            results += 1
        elif entry.message.role == "assistant":
            return len(entry.message.tool_calls()) > results
        else:
            return False
    return False


# -- the turn (R21, R24–R26, R33, R35) ---------------------------------------------------------


@fact
def aborted(env: FactEnv, facts: Facts) -> bool:
    """R21 (turn_end), R35 (before_settle) and R37 (agent_end): the run was aborted."""
    event = _need(env, (TurnEnd, AgentBeforeSettle, AgentEnd), "aborted")
    if isinstance(event, AgentEnd):
        return env.ctx.signal_aborted
    if event.outcome == "aborted" or env.ctx.signal_aborted:
        return True
    message = event.message if isinstance(event, TurnEnd) else {}
    return message.get("role") == "assistant" and message.get("stopReason") == "aborted"


@fact
def overflow_like(env: FactEnv, facts: Facts) -> bool:
    """R33: the turn's assistant message is a context overflow or a recoverable length stop."""
    event = _need(env, (TurnEnd,), "overflow_like")
    return overflow.is_overflow_like(event.message, env.ctx.model)


@fact
def error_outcome(env: FactEnv, facts: Facts) -> bool:
    """R26: the turn ended with ``outcome == "error"``."""
    event = _need(env, (TurnEnd,), "error_outcome")
    return bool(event.outcome == "error")


@fact
def queued(env: FactEnv, facts: Facts) -> bool:
    """R24/R35: the host already holds the next message (pending or queued user input)."""
    event = _need(env, (TurnEnd, AgentBeforeSettle), "queued")
    return event.pending_messages > 0 or env.ctx.has_pending_messages


# -- reset notices (R63, D3) -------------------------------------------------------------------


@fact
def committed_pending_resets(env: FactEnv, facts: Facts) -> tuple[str, ...]:
    """The pending reset notices whose reset the active branch shows committed (R63/D3)."""
    pending = env.state.pending_resets
    if not pending:
        return ()
    committed = set(env.planned_commits)
    needs_continuation = env.profile.notice_needs_continuation
    committed |= _committed_windows(env.tree, env.windows, set(pending), needs_continuation)
    return tuple(w for w in pending if w in committed)


def _committed_windows(
    tree: SessionTree, windows: WindowIndex, wanted: set[str], continuation: bool
) -> set[str]:
    """Window ids among ``wanted`` whose marker, boot (and, with ``continuation``, a
    continuation after the boot) are on the active branch. O(windows on the branch): each
    window's last node on the path knows what its tail holds."""
    leaf = tree.leaf
    if leaf is None:
        return set()
    found: set[str] = set()
    last = leaf
    for window in windows.window_of(leaf).chain():
        if window.is_root:
            break
        known = windows.at(last)
        complete = known.boot_id is not None and (known.continued or not continuation)
        if window.window_id in wanted and known.window is window and complete:
            found.add(window.window_id)
            if found == wanted:  # the rest of the branch cannot add to it
                break
        marker = tree.node(window.marker_id) if window.marker_id else None
        if marker is None or marker.parent is None:
            break
        last = marker.parent
    return found


@fact
def every_pending_reset_committed(env: FactEnv, facts: Facts) -> bool:
    pending = env.state.pending_resets
    return bool(pending) and len(facts["committed_pending_resets"]) == len(pending)


@fact
def some_pending_reset_committed(env: FactEnv, facts: Facts) -> bool:
    return bool(facts["committed_pending_resets"])


@fact
def built_window_id(env: FactEnv, facts: Facts) -> str:
    """The window id of reset drafts just built (carried by the ``reset_built`` event)."""
    value = env.extras.get("built_window_id")
    if not isinstance(value, str):
        raise FactError("built_window_id is only known for reset_built")
    return value


# -- boot repair (R64–R66, D4) -----------------------------------------------------------------


def has_boot_message(tree: SessionTree, window_id: str) -> bool:
    """R64 step 2: Pi's projection of the active branch shows a boot for ``window_id``
    (kept for the leaf by the tree's transcript index: O(what changed since it was asked))."""
    return tree.transcripts.has_tagged(boot_key, window_id)


@fact
def root_boot_visible(env: FactEnv, facts: Facts) -> bool:
    """R64 step 2: Pi's projection holds a boot for the current root window id."""
    return has_boot_message(env.tree, facts["window_id"])


@fact
def repair_held(env: FactEnv, facts: Facts) -> bool:
    """R64, pictx_fsm's decision: a repair asked for while a run is under way is owed until
    the turn's end (``turn_end`` is awaited; ``agent_settled`` is pipelined, Pi does not wait
    for what it answers). Pi holds a message sent mid-run until the turn's end (pi-host §5
    ``sendMessage``), behind the run's own conversation — and behind a reset that turn
    commits, where a root boot lands in the new window. Two repairs can come mid-run:
    ``/pi-context on`` while not idle, and the ``session_start`` a restarted bridge runtime
    resynchronises with at a request of a running turn (Pi emits none mid-run).
    ``session_tree`` is not one: its repair appends at once, and Pi's ``isIdle()`` can be
    false around it (a bridge resync at ``/tree``, tests/test_pi_faults.py)."""
    return isinstance(env.event, Command | SessionStart) and not env.ctx.idle


@fact
def reset_committing(env: FactEnv, facts: Facts) -> bool:
    """At turn_end, a reset this runtime drafted is not yet the branch's window: this
    turn_end commits it (the repair a ``turn_end`` raises runs after the reset is built)."""
    return isinstance(env.event, TurnEnd) and any(
        window != facts["window_id"] for window in env.state.pending_resets
    )


@fact
def tail_verdict(env: FactEnv, facts: Facts) -> TailVerdict:
    """R65/D4: what the current marker's tail needs (classified once per repair). A window
    whose reset this runtime drafted and has not yet seen settle is the host's to complete:
    a command between two appends of its boundary commit must not append a second boot."""
    window = _window(env)
    if window.window_id in env.state.pending_resets:
        return TailVerdict.INTACT
    tail = env.windows.tail_after_marker()
    kinds = [tail_kind(entry, window.window_id) for entry in tail]
    visible = False
    if env.profile is Profile.V0_25_0:
        visible = has_boot_message(env.tree, window.window_id)
    return classify_tail(kinds, env.profile, visible)


@fact
def tail_intact(env: FactEnv, facts: Facts) -> bool:
    return bool(facts["tail_verdict"] is TailVerdict.INTACT)


@fact
def tail_refused(env: FactEnv, facts: Facts) -> bool:
    return bool(facts["tail_verdict"] is TailVerdict.REFUSED)


@fact
def tail_needs_boot(env: FactEnv, facts: Facts) -> bool:
    return bool(facts["tail_verdict"].needs_boot)


@fact
def tail_needs_continuation(env: FactEnv, facts: Facts) -> bool:
    return bool(facts["tail_verdict"].needs_continuation)


@fact
def previous_window_id(env: FactEnv, facts: Facts) -> str | None:
    """R15: the window before the current one (root id before the first marker)."""
    return _window(env).previous_window_id


# -- projection (R67–R69) ----------------------------------------------------------------------


@fact
def boot_visible(env: FactEnv, facts: Facts) -> bool:
    """R67: the request's messages hold a boot for the current window."""
    event = _need(env, (ContextWithSystem,), "boot_visible")
    wid = facts["window_id"]
    if isinstance(event.messages, Transcript):  # the list knows its boots: no scan
        return event.messages.has_tagged(boot_key, wid)
    return any(isinstance(m, Mapping) and is_boot_message(m, wid) for m in event.messages)


@fact
def missing_boot_announced(env: FactEnv, facts: Facts) -> bool:
    """R68: the missing-boot notice was already given for this window id."""
    return bool(env.state.missing_boot == facts["window_id"])


# -- native compaction and tree summaries (R62, R75) ------------------------------------------


@fact
def signal_aborted(env: FactEnv, facts: Facts) -> bool:
    """R62: the compaction's own signal is already aborted."""
    event = _need(env, (SessionBeforeCompact,), "signal_aborted")
    return bool(event.signal_aborted)


@fact
def manual_compaction(env: FactEnv, facts: Facts) -> bool:
    """R62: ``/compact`` (reason ``manual``) rather than threshold or overflow."""
    event = _need(env, (SessionBeforeCompact,), "manual_compaction")
    return bool(event.reason == "manual")


@fact
def wants_summary(env: FactEnv, facts: Facts) -> bool:
    """R75: the user asked Pi to summarize the branch being left."""
    event = _need(env, (SessionBeforeTree,), "wants_summary")
    return bool(event.user_wants_summary)


@fact
def marker_across(env: FactEnv, facts: Facts) -> bool:
    """R75: the current branch or the destination branch contains a valid marker."""
    event = _need(env, (SessionBeforeTree,), "marker_across")
    if not env.windows.current_window.is_root:
        return True
    if event.target_id is None or event.target_id not in env.tree:
        return False
    return not env.windows.window_at(event.target_id).is_root  # O(1): the index knows it
