"""The facts pi-context 0.25 and notesoup 0.38 read the same way (the rules marked SAME):
window identity, usage and policy, how a turn or a run ended, tool pairs, pending reset
notices, repair verdicts, and the host events of native compaction and tree navigation.

Each extension's catalogue starts from :data:`FAMILY_FACTS` and adds its own. A fact reads
an extension's fact environment through :class:`FamilyEnv`: the hook event, ``ctx``, the
state before the machine event, the services (``window_usage``), the policy of the hook,
the event's extras, the tree and the current window (each extension knows its windows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol

from pictx_fsm.extensions.shared import policy
from pictx_fsm.extensions.shared.machinery import FactCatalogue, FactError, Facts
from pictx_fsm.extensions.shared.repair import TailVerdict
from pictx_fsm.extensions.shared.windows import Window
from pictx_fsm.host.events import (
    AgentBeforeSettle,
    AgentEnd,
    HookEvent,
    HostContext,
    SessionBeforeCompact,
    SessionBeforeTree,
    TurnEnd,
)
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = ["FAMILY_FACTS", "FamilyEnv", "missing_tool_results", "need"]


class FamilyEnv(Protocol):
    """What the shared facts read of an extension's fact environment."""

    @property
    def event(self) -> HookEvent: ...

    @property
    def ctx(self) -> HostContext: ...

    @property
    def state(self) -> Any: ...

    @property
    def services(self) -> Any: ...

    @property
    def policy(self) -> Callable[[], policy.Policy]: ...

    @property
    def extras(self) -> Mapping[str, Any]: ...

    @property
    def tree(self) -> SessionTree: ...

    @property
    def window(self) -> Window:
        """The current window, as the extension's windows see it."""
        ...


FAMILY_FACTS: Final = FactCatalogue()
fact = FAMILY_FACTS.fact


def need(env: FamilyEnv, kinds: tuple[type[Any], ...], name: str) -> Any:
    """The hook event, when it is one of ``kinds``; a fact read at another hook is a
    binding error."""
    if not isinstance(env.event, kinds):
        raise FactError(f"fact {name!r} is not available at hook {type(env.event).HOOK!r}")
    return env.event


# -- window identity (R9, R11, R15 = S10) -------------------------------------------------------


@fact
def window_id(env: FamilyEnv, facts: Facts) -> str:
    """R11/S10: the current window id (last valid marker on the active branch, else the
    root)."""
    return env.window.window_id


@fact
def root_window(env: FamilyEnv, facts: Facts) -> bool:
    """R9/S80: no valid marker on the active branch."""
    return env.window.is_root


@fact
def marker_on_branch(env: FamilyEnv, facts: Facts) -> bool:
    """R62/S20: a valid marker exists on the active branch."""
    return not env.window.is_root


@fact
def previous_window_id(env: FamilyEnv, facts: Facts) -> str | None:
    """R15/S84: the window before the current one (root id before the first marker)."""
    return env.window.previous_window_id


# -- usage and policy (R17, R41, R44, R47–R51 = S13, S49–S55) -------------------------------------


@fact
def usage(env: FamilyEnv, facts: Facts) -> policy.Usage | None:
    """R47/R48, S52: the active window's usage (root: the host's; a marker window: its
    own)."""
    value: policy.Usage | None = env.services.window_usage(env.ctx)
    return value


@fact
def remaining(env: FamilyEnv, facts: Facts) -> int | None:
    """R49/S53: ``max(0, contextWindow − tokens)`` of the active window; None when unknown
    (including when the host reports no usage at all, R47)."""
    value = facts["usage"]
    return None if value is None else policy.remaining(value)


@fact
def usage_known(env: FamilyEnv, facts: Facts) -> bool:
    """R49/S53: remaining tokens can be computed."""
    return facts["remaining"] is not None


@fact
def automatic(env: FamilyEnv, facts: Facts) -> bool:
    """R41/S50: ``compaction.enabled`` — automatic resets are on."""
    return env.policy().automatic


@fact
def thresholds(env: FamilyEnv, facts: Facts) -> policy.Thresholds:
    """R44/S49: reminder, warning and reserve lines."""
    return env.policy().thresholds


@fact
def tool_remaining(env: FamilyEnv, facts: Facts) -> int | None:
    """R17/S13: ``max(0, remaining − warningLine)`` or None; works even when disabled."""
    if not facts["usage_known"]:
        return None
    return policy.tool_remaining(facts["usage"], facts["thresholds"])


@fact
def guidance_remaining(env: FamilyEnv, facts: Facts) -> int:
    """R51.4/S54: the count frozen into the guidance text, ``max(0, remaining − warning)``."""
    return facts["tool_remaining"] or 0


# -- how a turn or a run ended (R21, R24, R35, R37 = S25, S26, S29) -------------------------------


@fact
def aborted(env: FamilyEnv, facts: Facts) -> bool:
    """R21/S29 (turn_end), R35/S26 (before_settle) and R37/S28 (agent_end): the run was
    aborted."""
    event = need(env, (TurnEnd, AgentBeforeSettle, AgentEnd), "aborted")
    if isinstance(event, AgentEnd):
        return env.ctx.signal_aborted
    if event.outcome == "aborted" or env.ctx.signal_aborted:
        return True
    message = event.message if isinstance(event, TurnEnd) else {}
    return message.get("role") == "assistant" and message.get("stopReason") == "aborted"


@fact
def queued(env: FamilyEnv, facts: Facts) -> bool:
    """R24/R35, S25/S26: the host already holds the next message (pending or queued user
    input)."""
    event = need(env, (TurnEnd, AgentBeforeSettle), "queued")
    return event.pending_messages > 0 or env.ctx.has_pending_messages


@fact
def tool_pair_open(env: FamilyEnv, facts: Facts) -> bool:
    """FM19: the leaf sits between an assistant's tool calls and their results, so anything
    appended now would split a tool pair."""
    leaf = env.tree.leaf
    return leaf is not None and missing_tool_results(leaf.ancestors()) is not None


def missing_tool_results(
    path: Iterable[TreeNode], *, past_other_entries: bool = True
) -> tuple[str, int] | None:
    """The nearest assistant message on ``path`` (newest first) whose tool calls the tool
    results after it do not all answer, as (its entry id, how many are missing); ``None``
    when they do, or another message comes first. Entries that are not messages are passed
    over — or, with ``past_other_entries`` false, end the walk (FM19 before its fix)."""
    results = 0
    for node in path:
        entry = node.entry
        if not isinstance(entry, MessageEntry):
            if past_other_entries:
                continue
            return None
        role = entry.message.role
        if role == "toolResult":
            results += 1
        elif role == "assistant":
            missing = len(entry.message.tool_calls()) - results
            return (node.id, missing) if missing > 0 else None
        else:
            return None
    return None


# -- pending reset notices (R63 = S46) ------------------------------------------------------------


@fact
def every_pending_reset_committed(env: FamilyEnv, facts: Facts) -> bool:
    """R63/S46: every built reset awaiting its notice is committed on the branch."""
    pending = env.state.pending_resets
    return bool(pending) and len(facts["committed_pending_resets"]) == len(pending)


@fact
def some_pending_reset_committed(env: FamilyEnv, facts: Facts) -> bool:
    """R63/S46: at least one built reset awaiting its notice is committed."""
    return bool(facts["committed_pending_resets"])


@fact
def built_window_id(env: FamilyEnv, facts: Facts) -> str:
    """The window id of reset drafts just built (carried by the ``reset_built`` event)."""
    value = env.extras.get("built_window_id")
    if not isinstance(value, str):
        raise FactError("built_window_id is only known for reset_built")
    return value


# -- repair verdicts (D4 = S71–S74) --------------------------------------------------------------


@fact
def tail_intact(env: FamilyEnv, facts: Facts) -> bool:
    """D4/S72: the window's tail has its boot and continuation."""
    return bool(facts["tail_verdict"] is TailVerdict.INTACT)


@fact
def tail_refused(env: FamilyEnv, facts: Facts) -> bool:
    """D4/S73: the tail holds something repair must not complete."""
    return bool(facts["tail_verdict"] is TailVerdict.REFUSED)


@fact
def tail_needs_boot(env: FamilyEnv, facts: Facts) -> bool:
    """D4/S74: repair appends the window's boot."""
    return bool(facts["tail_verdict"].needs_boot)


@fact
def tail_needs_continuation(env: FamilyEnv, facts: Facts) -> bool:
    """D4/S74: repair appends a continuation."""
    return bool(facts["tail_verdict"].needs_continuation)


# -- the missing boot, native compaction, tree summaries (R62, R68, R75 = S20, S79, S82) ---------


@fact
def missing_boot_announced(env: FamilyEnv, facts: Facts) -> bool:
    """R68/S79: the missing-boot notice was already given for this window id."""
    return bool(env.state.missing_boot == facts["window_id"])


@fact
def signal_aborted(env: FamilyEnv, facts: Facts) -> bool:
    """R62/S20: the compaction's own signal is already aborted."""
    event = need(env, (SessionBeforeCompact,), "signal_aborted")
    return bool(event.signal_aborted)


@fact
def manual_compaction(env: FamilyEnv, facts: Facts) -> bool:
    """R62/S20: ``/compact`` (reason ``manual``) rather than threshold or overflow."""
    event = need(env, (SessionBeforeCompact,), "manual_compaction")
    return bool(event.reason == "manual")


@fact
def wants_summary(env: FamilyEnv, facts: Facts) -> bool:
    """R75/S82: the user asked Pi to summarize the branch being left."""
    event = need(env, (SessionBeforeTree,), "wants_summary")
    return bool(event.user_wants_summary)
