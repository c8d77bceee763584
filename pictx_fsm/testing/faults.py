"""Planted faults: deliberate bugs that ``pictx-fsm verify`` must catch (issue 4, item 7).

Each fault changes one guard, action or model transition — the way a real regression would
— or, for the two queue faults, the host itself. A fault names the invariant expected to
catch it. ``bench/mutation.py`` and ``tests/test_mutation.py`` run ``verify`` on each and
require exit 1 with a short counterexample that ``pictx-fsm replay`` reproduces.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from pictx_fsm import intents as it
from pictx_fsm.facts import Facts, Memory
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.hosts.model.queues import Queued, Queues
from pictx_fsm.lifecycle import Lifecycle, build_lifecycle, load_lifecycle
from pictx_fsm.lifecycle_actions import LIFECYCLE_BINDINGS
from pictx_fsm.machines import load_models
from pictx_fsm.repair import TailVerdict
from pictx_fsm.session.entries import MessageEntry

Bindings = Mapping[str, tuple[Mapping[str, Any], Mapping[str, Any]]]


@frozen(kw_only=True)
class Fault:
    name: str
    description: str
    caught_by: str
    """The invariant expected to report it."""
    bindings: Callable[[Bindings], Bindings] | None = None
    model_patch: tuple[str, str, str] | None = None
    """(document, old text, new text): an edit of one model document."""
    host: Callable[[ModelSession], None] | None = None

    def lifecycle(self, base: Lifecycle | None = None) -> Lifecycle:
        """The lifecycle with this fault planted."""
        base = base or load_lifecycle()
        specs = dict(base.specs)
        directory = base.directory
        if self.model_patch is not None:
            document, old, new = self.model_patch
            text = (base.directory / f"{document}.yaml").read_text(encoding="utf-8")
            if old not in text:
                raise ValueError(f"fault {self.name}: the model text to patch was not found")
            tmp = Path(tempfile.mkdtemp(prefix=f"pictx-fault-{self.name}-"))
            for spec in base.specs.values():
                (tmp / Path(spec.source).name).write_bytes(spec.document)
            (tmp / f"{document}.yaml").write_text(text.replace(old, new, 1), encoding="utf-8")
            specs = dict(load_models(tmp))
            directory = tmp
        bindings = (
            LIFECYCLE_BINDINGS if self.bindings is None else self.bindings(LIFECYCLE_BINDINGS)
        )
        return build_lifecycle(specs, directory, bindings)


def _with(
    bindings: Bindings,
    machine: str,
    *,
    guards: Mapping[str, Any] | None = None,
    actions: Mapping[str, Any] | None = None,
) -> Bindings:
    out = dict(bindings)
    old_guards, old_actions = out[machine]
    out[machine] = ({**old_guards, **(guards or {})}, {**old_actions, **(actions or {})})
    return out


def _never(facts: Facts) -> bool:
    return False


def _duplicate_reset(bindings: Bindings) -> Bindings:
    build = it.BuildReset(trigger="turn_end")
    return _with(bindings, "reset_control", actions={"commit_reset": lambda f: (build, build)})


def _ignore_abort(bindings: Bindings) -> Bindings:
    out = _with(bindings, "reset_control", guards={"aborted": _never})
    return _with(out, "budget", guards={"aborted": _never})


def _repair_anything(bindings: Bindings) -> Bindings:
    return _with(
        bindings,
        "boot_repair",
        guards={
            "tail_refused": _never,
            "tail_needs_boot": lambda f: bool(f["tail_verdict"].needs_boot or f["tail_refused"]),
        },
    )


def _pair_closed_by_any_entry(facts: Facts) -> bool:
    """``tool_pair_open`` as it was before FM19's fix: the walk stopped at the first entry
    that is not a message (a branch summary ``/tree`` wrote) and answered "not open"."""
    leaf = facts.env.tree.leaf
    results = 0
    for node in leaf.ancestors() if leaf is not None else ():
        entry = node.entry
        if not isinstance(entry, MessageEntry) or entry.message.role not in (
            "toolResult",
            "assistant",
        ):
            return False
        if entry.message.role == "toolResult":
            results += 1
        else:
            return len(entry.message.tool_calls()) > results
    return False


def _split_tool_pairs(bindings: Bindings) -> Bindings:
    guards = {"tool_pair_open": _pair_closed_by_any_entry}
    out = _with(bindings, "reset_control", guards=guards)
    return _with(out, "boot_repair", guards=guards)


class _NoResetInFlight:
    """The runtime memory with its pending resets hidden."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def __getattr__(self, name: str) -> Any:
        return getattr(self._memory, name)

    def pending_reset_ids(self) -> tuple[str, ...]:
        return ()


def _verdict_blind_to_commit(facts: Facts) -> Any:
    """The tail verdict as it was before R65's fix: repair ignored that the window's reset
    drafts were still being committed, and completed the tail a second time."""
    env = attrs.evolve(facts.env, memory=_NoResetInFlight(facts.env.memory))
    return Facts(env)["tail_verdict"]


def _repair_during_commit(bindings: Bindings) -> Bindings:
    return _with(
        bindings,
        "boot_repair",
        guards={
            "tail_intact": lambda f: _verdict_blind_to_commit(f) is TailVerdict.INTACT,
            "tail_refused": lambda f: _verdict_blind_to_commit(f) is TailVerdict.REFUSED,
            "tail_needs_boot": lambda f: _verdict_blind_to_commit(f).needs_boot,
            "tail_needs_continuation": lambda f: _verdict_blind_to_commit(f).needs_continuation,
        },
    )


def _leak_history(bindings: Bindings) -> Bindings:
    return _with(bindings, "projection", actions={"project_reset_window": lambda f: ()})


def _announce_early(bindings: Bindings) -> Bindings:
    def remember_and_announce(facts: Facts) -> tuple[it.Outcome, ...]:
        window_id = facts["built_window_id"]
        return (
            it.RememberResetNotice(window_id=window_id),
            it.AnnounceResets(window_ids=(window_id,)),
        )

    return _with(
        bindings, "reset_control", actions={"remember_reset_notice": remember_and_announce}
    )


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


FAULTS: Mapping[str, Fault] = {
    fault.name: fault
    for fault in (
        Fault(
            name="skip-dedupe",
            description="commit_reset builds the reset twice: two resets for one tool batch",
            caught_by="one_reset_per_batch",
            bindings=_duplicate_reset,
        ),
        Fault(
            name="continue-after-abort",
            description="the aborted guard is always false: aborted turns commit and continue",
            caught_by="nothing_after_abort",
            bindings=_ignore_abort,
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
            bindings=_repair_anything,
        ),
        Fault(
            name="split-tool-pair-behind-summary",
            description="tool_pair_open stops at a branch summary: a boot between a tool call "
            "and its results",
            caught_by="reset_tail",
            bindings=_split_tool_pairs,
        ),
        Fault(
            name="repair-during-commit",
            description="repair ignores the reset its own boundary is committing: a second "
            "boot in one window",
            caught_by="narrow_repair",
            bindings=_repair_during_commit,
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
            bindings=_leak_history,
        ),
        Fault(
            name="announce-uncommitted",
            description="the reset notice is given when the drafts are built, before commit",
            caught_by="honest_notices",
            bindings=_announce_early,
        ),
    )
}


@functools.cache
def faulty_lifecycle(name: str) -> Lifecycle:
    """The lifecycle with the named fault planted (built once per process)."""
    return fault_named(name).lifecycle()


def fault_named(name: str) -> Fault:
    try:
        return FAULTS[name]
    except KeyError:
        known = ", ".join(sorted(FAULTS))
        raise ValueError(f"unknown fault {name!r}; known faults: {known}") from None
