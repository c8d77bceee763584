"""Hypothesis strategies for worlds and host actions, built once per process.

The numbers are chosen so that generated runs reach the interesting regions within a few
dozen actions: context windows of 28k–48k tokens with the warning line at
``reserve + 12288`` (R44) mean a handful of long prompts crosses the reminder, the warning
and the reserve, and an over-long request overflows (the faux brain overflows any request
larger than the window). Actions that stop a run right after a chosen hook — or between two
entries of a boundary's commit — and world actions (another extension voiding a boundary,
hiding a boot or queueing at settle; automatic resets switched mid-run) reach the
interleavings the seed scenarios open; navigations and forks aim at tool calls, tool results
and boundary entries as often as anywhere.

**Swarm testing** (:func:`swarms`, :func:`swarm_actions`): each generated run first draws
which action groups it may use at all, then draws every action from those. A run without
``settle`` or long advances stays mid-flight; one without prompts but with tree, fork and
toggle churns the tree — sequences a single fixed mix almost never produces.

Every strategy is a module constant or cached: Hypothesis validates a strategy the first
time it is drawn from, and rebuilding one per draw cost 83% of ``verify``'s time. Only
Hypothesis's public strategies are used. **A seed means the same runs on every install**:
every integer drawn lies between -99 and 99, a larger number comes from a table drawn by index
(:mod:`.tables`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.hosts.model.profiles import HOST_PROFILES
from pictx_fsm.testing.actions import (
    ANCHORS,
    Abort,
    Action,
    Advance,
    AdvanceTo,
    Compact,
    FollowUp,
    Fork,
    HideBoot,
    KillRuntime,
    Navigate,
    Prompt,
    QueueAtSettle,
    Reload,
    Script,
    SetAutomatic,
    Settle,
    Steer,
    Toggle,
    VoidNextBoundary,
    WipeCommand,
)
from pictx_fsm.testing.tables import TABLE_SIZE, spread, table
from pictx_fsm.testing.tool_calls import tool_scripts
from pictx_fsm.testing.world import WorldConfig

__all__ = [
    "CORE",
    "GROUPS",
    "OPTIONAL",
    "SWARMS",
    "Moves",
    "host_actions",
    "swarm_moves",
    "weighted",
    "world_configs",
]

T = TypeVar("T")

TOOLS = ("wipe_memory", "get_context_remaining", "echo")
STOPS = (
    "context",
    "tool_result",
    "turn_end",
    "agent_end",
    "agent_before_settle",
    "streaming",
    "custom",
    "custom_message",
)
"""Host steps after which a user acts: between staging and commit, after a tool, after a
boundary, between a run's end and its settle, and between two persisted entries of a
boundary's commit (``custom`` is the marker, ``custom_message`` a boot or continuation)."""
COMMIT_STEPS = ("custom", "custom_message", "turn_end", "agent_before_settle")
"""The steps around a boundary's commit: its hook, and each entry it persists."""


PROFILES: tuple[str, ...] = tuple(profile.value for profile in Profile)
HOSTS: tuple[str, ...] = tuple(HOST_PROFILES)
"""The Pi versions the model session can behave as (host profiles)."""


@functools.cache
def world_configs(
    profiles: tuple[str, ...] = PROFILES, fault: str | None = None, hosts: tuple[str, ...] = HOSTS
) -> st.SearchStrategy[WorldConfig]:
    """Reproducible world parameters; ``fault`` plants a named fault (see ``faults``)."""
    return st.builds(
        WorldConfig,
        profile=st.sampled_from(profiles),
        seed=st.integers(min_value=0, max_value=99),
        context_window=table(spread(28_000, 48_000, 80)),
        max_tokens=st.sampled_from((2_048, 4_096)),
        reserve_tokens=table(spread(500, 4_000, 80)),
        # Above the 12288-token warning runway, so the reminder line comes first (R44).
        reminder_margin=table(spread(12_800, 20_000, 80)),
        automatic=st.sampled_from((True, True, True, False)),
        # Pi's 20 000 rarely leaves anything to compact in a short run.
        keep_recent_tokens=st.sampled_from((500, 2_000, 20_000)),
        fault=st.just(fault),
        host=st.sampled_from(hosts),
    )


_CHARS = st.one_of(table(spread(8, 400)), table(spread(2_000, 40_000)))
_SHORT_CHARS = table(spread(8, 2_000))
"""Steering, follow-up and tool-call reply lengths (8–2,000 characters)."""
_SCRIPTS: st.SearchStrategy[Script] = st.one_of(
    st.builds(Script, reply=st.just("text"), chars=_CHARS),
    st.builds(
        Script,
        reply=st.just("tools"),
        chars=_SHORT_CHARS,
        tools=st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3).map(tuple),
    ),
    st.builds(Script, reply=st.sampled_from(("overflow", "error", "length"))),
)
_ENTRY_INDEX = st.one_of(table(spread(0, 500)), st.integers(min_value=-12, max_value=-1))
"""Anywhere among the chosen entries, or (negative) one of the last ones: the tool calls,
markers and boots a navigation or fork most often lands next to."""
_ANCHOR = st.sampled_from((*ANCHORS, "tool_call", "boundary"))
"""Where navigations and forks aim: tool calls and boundary entries count twice."""
_SMALL_STEPS = st.builds(Advance, steps=st.integers(min_value=1, max_value=4))
_STOP = st.builds(AdvanceTo, step=st.sampled_from(STOPS), count=st.integers(1, 2))
_TOGGLE = st.builds(Toggle, arg=st.sampled_from(("on", "off", "on", "off", "", "bogus")))
_FAILURES: st.SearchStrategy[Action] = st.builds(
    Script, reply=st.sampled_from(("overflow", "overflow", "error"))
)
_NOISE: st.SearchStrategy[Action] = st.sampled_from(
    (VoidNextBoundary(), HideBoot(), QueueAtSettle())
)
_SETTINGS = st.builds(SetAutomatic, enabled=st.booleans())
_COMPACT = st.just(Compact())
_COMMIT_STOP = st.builds(AdvanceTo, step=st.sampled_from(COMMIT_STEPS), count=st.integers(1, 2))
_SWITCH = st.builds(Toggle, arg=st.sampled_from(("on", "off")))


def weighted(branches: Sequence[st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """A choice among strategies, a branch listed twice twice as likely (``st.one_of``
    drops repeated branches, so repetition cannot weight it). The branch is drawn by its
    index: ``st.sampled_from`` over strategies checks on every draw whether all its elements
    are strategies."""
    chosen = tuple(branches)
    if not 0 < len(chosen) <= TABLE_SIZE:
        raise ValueError(f"a choice among 1 to {TABLE_SIZE} branches, not {len(chosen)}")
    return st.integers(min_value=0, max_value=len(chosen) - 1).flatmap(chosen.__getitem__)


_MID_RUN_ACTS: st.SearchStrategy[Action] = weighted(
    [
        _SWITCH,
        _SWITCH,
        _SWITCH,
        _SWITCH,
        st.builds(Steer, chars=_SHORT_CHARS),
        st.builds(FollowUp, chars=_SHORT_CHARS),
        st.just(Abort()),
        _NOISE,
        _SETTINGS,
        _COMPACT,
    ]
)
"""What a user (or another extension, or a settings change) does while a run is active."""
_NAVIGATE: st.SearchStrategy[Action] = st.builds(
    Navigate, index=_ENTRY_INDEX, summarize=st.booleans(), anchor=_ANCHOR
)
_FORK: st.SearchStrategy[Action] = st.builds(Fork, index=_ENTRY_INDEX, anchor=_ANCHOR)
_TREE_OPS: st.SearchStrategy[Action] = weighted(
    [_NAVIGATE, _NAVIGATE, _FORK, st.just(Reload()), _SWITCH, st.just(WipeCommand())]
)
"""Tree churn between runs: each of these makes boot repair run, or a reset start, wherever
the previous one left the leaf."""


def _one(strategy: st.SearchStrategy[Action]) -> st.SearchStrategy[tuple[Action, ...]]:
    return strategy.map(_single)


def _single(action: Action) -> tuple[Action, ...]:
    return (action,)


Moves = st.SearchStrategy[tuple[Action, ...]]

GROUPS: Mapping[str, tuple[Moves, int, int]] = {
    "prompt": (_one(st.builds(Prompt, chars=_CHARS)), 2, 0),
    "turn": (st.tuples(_SCRIPTS, st.builds(Prompt, chars=_CHARS), st.just(Settle())), 2, 0),
    "script": (_one(_SCRIPTS), 2, 1),
    "failure": (_one(_FAILURES), 1, 1),
    "notes_tools": (_one(tool_scripts()), 1, 1),
    "step": (_one(_SMALL_STEPS), 0, 3),
    "stop": (_one(_STOP), 0, 2),
    "interrupt": (st.tuples(_COMMIT_STOP, _MID_RUN_ACTS), 0, 3),
    "run": (_one(st.builds(Advance, steps=st.integers(min_value=5, max_value=30))), 0, 1),
    "settle": (_one(st.just(Settle())), 0, 1),
    "steer": (_one(st.builds(Steer, chars=_SHORT_CHARS)), 0, 1),
    "follow_up": (
        _one(st.builds(FollowUp, chars=_SHORT_CHARS)),
        0,
        1,
    ),
    "abort": (_one(st.just(Abort())), 0, 1),
    "wipe": (_one(st.just(WipeCommand())), 1, 0),
    "toggle": (_one(_TOGGLE), 1, 1),
    "navigate": (
        _one(_NAVIGATE),
        2,
        0,
    ),
    "fork": (_one(_FORK), 1, 0),
    "tree": (st.lists(_TREE_OPS, min_size=2, max_size=3).map(tuple), 1, 0),
    "reload": (_one(st.just(Reload())), 1, 0),
    "compact": (_one(_COMPACT), 1, 1),
    "noise": (_one(_NOISE), 1, 1),
    "settings": (_one(_SETTINGS), 1, 1),
    "kill": (_one(st.builds(KillRuntime, permanent=st.sampled_from((False, False, True)))), 1, 1),
}
"""Action groups: (moves, weight while idle, weight while a run is active). A move is one
action, a whole turn (the model's reply, a prompt, settle), tree churn (two or three
navigations, forks, reloads, switches or ``/wipe-memory`` in a row), or an interrupt: stop
right after a boundary hook or one of the entries its commit persists, and act there at once.
Runs move forward in small steps and users act *between* host steps (queueing, aborting,
toggling mid-turn) — the interleavings where boundary bugs live; idle sessions are
prompted, navigated, forked, reloaded and compacted."""
CORE = ("prompt", "script", "step")
"""Groups every swarm keeps: without them nothing happens."""
OPTIONAL = tuple(name for name in GROUPS if name not in CORE)


@functools.cache
def host_actions() -> st.SearchStrategy[Action]:
    """One host action from any group, whatever the session's state (the plain mix used by
    :class:`~.stateful.LifecycleStateMachine`; an interrupt contributes its stop)."""
    branches = [
        moves.map(_first)
        for moves, idle, running in GROUPS.values()
        for _ in range(max(idle, running))
    ]
    return weighted(branches)


def _first(actions: tuple[Action, ...]) -> Action:
    return actions[0]


def _swarm(chosen: list[bool]) -> tuple[str, ...]:
    return CORE + tuple(g for g, on in zip(OPTIONAL, chosen, strict=True) if on)


SWARMS: st.SearchStrategy[tuple[str, ...]] = st.lists(
    st.booleans(), min_size=len(OPTIONAL), max_size=len(OPTIONAL)
).map(_swarm)
"""A swarm: the core groups plus each optional group with probability ½ (shrinks towards
the core alone, so a counterexample names only the groups it needs)."""


@functools.lru_cache(maxsize=8192)
def swarm_moves(swarm: tuple[str, ...], idle: bool) -> Moves:
    """The next move of a run restricted to ``swarm``: only what the session's state allows
    (a prompt, a navigation or a fork needs an idle session; steps, stops and queued input
    need a run), each group by its weight."""
    branches = []
    for name in swarm:
        moves, idle_weight, running_weight = GROUPS[name]
        branches += [moves] * (idle_weight if idle else running_weight)
    return weighted(branches)
