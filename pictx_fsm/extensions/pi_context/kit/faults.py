"""Planted faults: deliberate bugs that ``pictx-fsm verify`` must catch (issue 4, item 7).

Each fault changes one fact (what a guard reads), one action (a reducer a transition names) or
one model transition — the way a real regression would — or, for the two queue faults, the
host itself. A fault names the invariant expected to
catch it. ``bench/mutation.py`` and ``tests/test_mutation.py`` run ``verify`` on each and
require exit 1 with a short counterexample that ``pictx-fsm replay`` reproduces.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

import attrs
from attrs import frozen

from pictx_fsm.extensions.pi_context.lifecycle import (
    ACTIONS,
    FACTS,
    FactEnv,
    Facts,
    Lifecycle,
    Turn,
    load_lifecycle,
)
from pictx_fsm.extensions.pi_context.policy import ReminderStage
from pictx_fsm.extensions.pi_context.repair import TailVerdict
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE, NOTICE_MEMORY_CLEARED
from pictx_fsm.extensions.shared.facts import missing_tool_results
from pictx_fsm.extensions.shared.kit.faults import FamilyFault
from pictx_fsm.host.effects import CustomMessageDraft, Draft, Notify, ToolResult
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.hosts.model.queues import Queued, Queues
from pictx_fsm.testing.kit import faults_by_name, named_fault

__all__ = ["FAULTS", "Fault", "fault_named", "faulty_lifecycle"]


@frozen(kw_only=True)
class Fault(FamilyFault):
    host: Callable[[ModelSession], None] | None = None
    """A change of the host itself (the queue faults)."""

    def lifecycle(self, base: Lifecycle | None = None) -> Lifecycle:
        """The lifecycle with this fault planted."""
        return self.planted(base or load_lifecycle())


def _never(env: FactEnv, facts: Facts) -> bool:
    return False


def _repair_refused(env: FactEnv, facts: Facts) -> bool:
    verdict = facts["tail_verdict"]
    return bool(verdict.needs_boot or verdict is TailVerdict.REFUSED)


def _build_reset_twice(facts: Facts, turn: Turn) -> Turn:
    build = ACTIONS["commit_reset"]
    return build(facts, build(facts, turn))


def _leave_request_unprojected(facts: Facts, turn: Turn) -> Turn:
    return turn


def _pair_closed_by_any_entry(env: FactEnv, facts: Facts) -> bool:
    """``tool_pair_open`` as it was before FM19's fix: the walk stopped at the first entry
    that is not a message (a branch summary ``/tree`` wrote) and answered "not open"."""
    leaf = env.tree.leaf
    path = leaf.ancestors() if leaf is not None else ()
    return missing_tool_results(path, past_other_entries=False) is not None


def _verdict_blind_to_commit(env: FactEnv, facts: Facts) -> TailVerdict:
    """``tail_verdict`` as it was before R65's fix: blind to the reset this runtime's own
    boundary is still committing, so a repair mid-commit completes the tail a second time
    (planted with ``repair_held`` never: on a host that reports idle then)."""
    return _verdict_in(attrs.evolve(env, state=attrs.evolve(env.state, pending_resets=())))


def _verdict_in(env: FactEnv) -> TailVerdict:
    """``tail_verdict`` as the lifecycle computes it in ``env`` (every fact it reads there)."""
    verdict: TailVerdict = Facts(env, FACTS)["tail_verdict"]
    return verdict


def _announce_when_built(facts: Facts, turn: Turn) -> Turn:
    """Tells the human at once instead of remembering the notice until the commit."""
    message = NOTICE_MEMORY_CLEARED.format(window_id=facts["built_window_id"])
    return turn.emit(Notify(message=message, level="info"))


def _reserve_strict(env: FactEnv, facts: Facts) -> bool:
    """R50 with ``<`` for ``≤``: a window exactly at the reserve is not due."""
    if not facts["automatic"] or not facts["usage_known"]:
        return False
    usage = facts["usage"]
    return bool(usage.context_window - usage.tokens < facts["thresholds"].reserve)


def _stage_strict(facts: Facts) -> ReminderStage:
    """R52 with ``<`` for ``≤`` on the warning line (guidance keeps its ``≤``)."""
    remaining, lines = facts["remaining"], facts["thresholds"]
    if remaining is None:
        return "none"
    if remaining < lines.warning:
        return "warning"
    return "guidance" if remaining <= lines.reminder else "none"


def _warning_strict(env: FactEnv, facts: Facts) -> bool:
    return _stage_strict(facts) == "warning"


def _guidance_strict(env: FactEnv, facts: Facts) -> bool:
    return _stage_strict(facts) == "guidance"


def _boot_naming_previous(facts: Facts, turn: Turn) -> Turn:
    """A running reset whose boot says the current window is the one just left (R15 read
    for R11: the previous id in the current line)."""
    previous = facts.services.windows.current_window.window_id
    built = ACTIONS["commit_reset"](facts, turn)
    return built.evolve(reset=tuple(_renamed(draft, previous) for draft in built.reset))


def _renamed(draft: Draft, previous: str) -> Draft:
    if not isinstance(draft, CustomMessageDraft) or draft.custom_type != BOOT_TYPE:
        return draft
    current = (draft.details or {}).get("windowId")
    content = str(draft.content).replace(
        f"Current context window id: {current}", f"Current context window id: {previous}"
    )
    return attrs.evolve(draft, content=content)


def _remaining_with_runway(facts: Facts, turn: Turn) -> Turn:
    """R17 without ``− warning``: the model is shown the runway it must never count on."""
    return turn.evolve(value=ToolResult(payload={"remaining_tokens": facts["remaining"]}))


class _DroppingQueues(Queues):
    """Loses the first steering message it hands out."""

    dropped = False

    def take_steering(self) -> list[Queued]:
        taken = super().take_steering()
        if taken and not self.dropped:
            self.dropped = True
            self.started(taken[0])
            return super().take_steering()
        return taken


class _DuplicatingQueues(Queues):
    """Hands out every follow-up twice."""

    def take_follow_up(self) -> list[Queued]:
        taken = super().take_follow_up()
        seen = self.__dict__.setdefault("_twice", set())
        if taken and id(taken[0]) not in seen:
            seen.add(id(taken[0]))
            self.follow_up.appendleft(taken[0])
        return taken


def _swap_queues(kind: type[Queues]) -> Callable[[ModelSession], None]:
    def plant(session: ModelSession) -> None:
        session._host.queues = kind()

    return plant


FAULTS: Mapping[str, Fault] = faults_by_name(
    Fault(
        name="skip-dedupe",
        description="commit_reset builds the reset twice: two resets for one tool batch",
        caught_by="one_reset_per_batch",
        actions={"commit_reset": _build_reset_twice},
    ),
    Fault(
        name="continue-after-abort",
        description="the aborted guard is always false: aborted turns commit and continue",
        caught_by="nothing_after_abort",
        facts={"aborted": _never},
    ),
    Fault(
        name="recover-twice",
        description="pending_spent recovers again: a second overflow recovery per chain",
        caught_by="overflow_bounded",
        model_patch=(
            "reset_control",
            "              # Recovery already used in this chain: no second reset (R36).\n"
            "              - {event: before_settle, target: spent}",
            "              - {event: before_settle, target: spent, "
            "cond: enabled and automatic and not aborted, before: recover_overflow}\n"
            "              - {event: before_settle, target: spent}",
        ),
    ),
    Fault(
        name="repair-after-later-work",
        description="a refused tail is repaired anyway: a boot after later conversation",
        caught_by="narrow_repair",
        facts={"tail_refused": _never, "tail_needs_boot": _repair_refused},
    ),
    Fault(
        name="split-tool-pair-behind-summary",
        description="tool_pair_open stops at a branch summary: a boot between a tool call "
        "and its results",
        caught_by="reset_tail",
        facts={"tool_pair_open": _pair_closed_by_any_entry},
    ),
    Fault(
        name="repair-during-commit",
        description="repair ignores the reset its own boundary is committing: a second "
        "boot in one window",
        caught_by="repair_when_due",
        # On a host that reports idle mid-commit: the held repair would cover it.
        facts={"tail_verdict": _verdict_blind_to_commit, "repair_held": _never},
    ),
    Fault(
        name="repair-mid-run",
        description="repair while a run is under way: Pi appends the boot after the run's "
        "conversation (after a reset the turn commits, in the new window)",
        caught_by="repair_when_due",
        facts={"repair_held": _never},
    ),
    Fault(
        name="drop-queued-message",
        description="the host loses the first steering message",
        caught_by="queued_once_in_order",
        host=_swap_queues(_DroppingQueues),
    ),
    Fault(
        name="duplicate-queued-message",
        description="the host delivers every follow-up twice",
        caught_by="queued_once_in_order",
        host=_swap_queues(_DuplicatingQueues),
    ),
    Fault(
        name="leak-pre-marker",
        description="the reset projection returns nothing: erased history reaches the model",
        caught_by="no_erased_history",
        actions={"project_reset_window": _leave_request_unprojected},
    ),
    Fault(
        name="second-wipe-cancels",
        description="a second wipe_memory in one batch cancels the pending request: the "
        "batch commits no reset",
        caught_by="resets_commit",
        model_patch=(
            "reset_control",
            "              - {event: request, target: explicit, cond: enabled, "
            "before: report_already_pending}",
            "              - {event: request, target: none, cond: enabled, "
            "before: report_already_pending}",
        ),
    ),
    Fault(
        name="guidance-never-committed",
        description="the staged guidance's window check always fails: it is dropped at "
        "turn_end instead of committed",
        caught_by="reminders_when_due",
        facts={"guidance_window_current": _never},
    ),
    Fault(
        name="repair-skips-continuation",
        description="repair never sees a missing continuation: a bare reset tail gets "
        "its boot and no continuation",
        caught_by="repair_when_due",
        facts={"tail_needs_continuation": _never},
    ),
    Fault(
        name="reserve-off-by-one",
        description="the reserve test is < for ≤ (R50): a window exactly at the reserve "
        "is not reset",
        caught_by="resets_commit",
        facts={"reset_due": _reserve_strict},
    ),
    Fault(
        name="warning-line-off-by-one",
        description="the warning line is < for ≤ (R52): exactly on it, guidance is "
        "staged instead of the final warning",
        caught_by="reminders_when_due",
        facts={"warning_due": _warning_strict, "guidance_due": _guidance_strict},
    ),
    Fault(
        name="boot-names-previous-window",
        description="a running reset's boot names the window just left as the current one",
        caught_by="exact_reset_entries",
        actions={"commit_reset": _boot_naming_previous},
    ),
    Fault(
        name="remaining-counts-the-runway",
        description="get_context_remaining reports remaining tokens without subtracting "
        "the warning line (R17)",
        caught_by="exact_lifecycle_answers",
        actions={"report_remaining": _remaining_with_runway},
    ),
    Fault(
        name="announce-uncommitted",
        description="the reset notice is given when the drafts are built, before commit",
        caught_by="honest_notices",
        actions={"remember_reset_notice": _announce_when_built},
    ),
)


@functools.cache
def faulty_lifecycle(name: str) -> Lifecycle:
    """The lifecycle with the named fault planted (built once per process)."""
    return fault_named(name).lifecycle()


def fault_named(name: str) -> Fault:
    return named_fault(FAULTS, name)
