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
time it is drawn from, and rebuilding one per draw cost 83% of ``verify``'s time.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TypeVar

from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.kit.actions import (
    ANCHORS,
    LINE_NAMES,
    Abort,
    Action,
    Advance,
    AdvanceTo,
    AimAt,
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
from pictx_fsm.extensions.pi_context.kit.tool_calls import tool_scripts
from pictx_fsm.extensions.pi_context.kit.world import WorldConfig
from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.hosts.model.profiles import HOST_PROFILES
from pictx_fsm.testing.boundaries import offsets
from pictx_fsm.testing.lean import builds, flatmapped, lists, mapped, one_of, sampled_from

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
    return builds(
        WorldConfig,
        profile=sampled_from(profiles),
        seed=st.integers(min_value=0, max_value=2**16),
        context_window=st.integers(min_value=28_000, max_value=48_000),
        max_tokens=sampled_from((2_048, 4_096)),
        reserve_tokens=st.integers(min_value=500, max_value=4_000),
        # Above the 12288-token warning runway, so the reminder line comes first (R44).
        reminder_margin=st.integers(min_value=12_800, max_value=20_000),
        automatic=sampled_from((True, True, True, False)),
        # Pi's 20 000 rarely leaves anything to compact in a short run.
        keep_recent_tokens=sampled_from((500, 2_000, 20_000)),
        fault=st.just(fault),
        host=sampled_from(hosts),
    )


_CHARS = one_of(
    st.integers(min_value=8, max_value=400),
    st.integers(min_value=2_000, max_value=40_000),
)
_SCRIPTS: st.SearchStrategy[Script] = one_of(
    builds(Script, reply=st.just("text"), chars=_CHARS),
    builds(
        Script,
        reply=st.just("tools"),
        chars=st.integers(min_value=8, max_value=2_000),
        tools=mapped(lists(sampled_from(TOOLS), min_size=1, max_size=3), tuple),
    ),
    builds(Script, reply=sampled_from(("overflow", "error", "length"))),
)
_ENTRY_INDEX = one_of(
    st.integers(min_value=0, max_value=500), st.integers(min_value=-12, max_value=-1)
)
"""Anywhere among the chosen entries, or (negative) one of the last ones: the tool calls,
markers and boots a navigation or fork most often lands next to."""
_ANCHOR = sampled_from((*ANCHORS, "tool_call", "boundary"))
"""Where navigations and forks aim: tool calls and boundary entries count twice."""
_SMALL_STEPS = builds(Advance, steps=st.integers(min_value=1, max_value=4))
_STOP = builds(AdvanceTo, step=sampled_from(STOPS), count=st.integers(1, 2))
_TOGGLE = builds(Toggle, arg=sampled_from(("on", "off", "on", "off", "", "bogus")))
_FAILURES: st.SearchStrategy[Action] = builds(
    Script, reply=sampled_from(("overflow", "overflow", "error"))
)
_NOISE: st.SearchStrategy[Action] = sampled_from((VoidNextBoundary(), HideBoot(), QueueAtSettle()))
_SETTINGS = builds(SetAutomatic, enabled=st.booleans())
_COMPACT = st.just(Compact())
_COMMIT_STOP = builds(AdvanceTo, step=sampled_from(COMMIT_STEPS), count=st.integers(1, 2))
_SWITCH = builds(Toggle, arg=sampled_from(("on", "off")))


def weighted(branches: Sequence[st.SearchStrategy[T]]) -> st.SearchStrategy[T]:
    """A choice among strategies, a branch listed twice twice as likely (``st.one_of``
    drops repeated branches, so repetition cannot weight it)."""
    return flatmapped(sampled_from(tuple(branches)), _itself)


def _itself(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    return strategy


_MID_RUN_ACTS: st.SearchStrategy[Action] = weighted(
    [
        _SWITCH,
        _SWITCH,
        _SWITCH,
        _SWITCH,
        builds(Steer, chars=st.integers(min_value=8, max_value=2_000)),
        builds(FollowUp, chars=st.integers(min_value=8, max_value=2_000)),
        st.just(Abort()),
        _NOISE,
        _SETTINGS,
        _COMPACT,
    ]
)
"""What a user (or another extension, or a settings change) does while a run is active."""
_NAVIGATE: st.SearchStrategy[Action] = builds(
    Navigate, index=_ENTRY_INDEX, summarize=st.booleans(), anchor=_ANCHOR
)
_FORK: st.SearchStrategy[Action] = builds(Fork, index=_ENTRY_INDEX, anchor=_ANCHOR)
_TREE_OPS = weighted(
    [_NAVIGATE, _NAVIGATE, _FORK, st.just(Reload()), _SWITCH, st.just(WipeCommand())]
)
"""Tree churn between runs: each of these makes boot repair run, or a reset start, wherever
the previous one left the leaf."""


_AIM_REPLY: st.SearchStrategy[tuple[Action, ...]] = st.tuples(
    st.builds(AimAt, line=st.sampled_from(LINE_NAMES), offset=offsets(), at=st.just("reply")),
    st.builds(Prompt, chars=st.integers(min_value=8, max_value=400)),
    st.just(Settle()),
)
_AIM_PROMPT: st.SearchStrategy[tuple[Action, ...]] = st.tuples(
    st.just(Settle()),
    st.builds(AimAt, line=st.sampled_from(LINE_NAMES), offset=offsets(), at=st.just("prompt")),
    st.just(Settle()),
)
_BOUNDARY: st.SearchStrategy[tuple[Action, ...]] = st.one_of(_AIM_REPLY, _AIM_PROMPT)
"""A budget line met at −1, exactly or +1 (:mod:`pictx_fsm.testing.boundaries`): a turn
whose reply ends at it (R50 at ``turn_end``), or — the run settled first — a prompt whose
request starts at it (R51, R17 at ``context``), each run to its end."""


def _one(strategy: st.SearchStrategy[Action]) -> st.SearchStrategy[tuple[Action, ...]]:
    return mapped(strategy, lambda action: (action,))


Moves = st.SearchStrategy[tuple[Action, ...]]

GROUPS: Mapping[str, tuple[Moves, int, int]] = {
    "prompt": (_one(builds(Prompt, chars=_CHARS)), 2, 0),
    "turn": (st.tuples(_SCRIPTS, builds(Prompt, chars=_CHARS), st.just(Settle())), 2, 0),
    "script": (_one(_SCRIPTS), 2, 1),
    "failure": (_one(_FAILURES), 1, 1),
    "notes_tools": (_one(tool_scripts()), 1, 1),
    "step": (_one(_SMALL_STEPS), 0, 3),
    "stop": (_one(_STOP), 0, 2),
    "interrupt": (st.tuples(_COMMIT_STOP, _MID_RUN_ACTS), 0, 3),
    "run": (_one(builds(Advance, steps=st.integers(min_value=5, max_value=30))), 0, 1),
    "settle": (_one(st.just(Settle())), 0, 1),
    "steer": (_one(builds(Steer, chars=st.integers(min_value=8, max_value=2_000))), 0, 1),
    "follow_up": (
        _one(builds(FollowUp, chars=st.integers(min_value=8, max_value=2_000))),
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
    "tree": (mapped(lists(_TREE_OPS, min_size=2, max_size=3), tuple), 1, 0),
    "reload": (_one(st.just(Reload())), 1, 0),
    "compact": (_one(_COMPACT), 1, 1),
    "noise": (_one(_NOISE), 1, 1),
    "settings": (_one(_SETTINGS), 1, 1),
    "kill": (_one(builds(KillRuntime, permanent=sampled_from((False, False, True)))), 1, 1),
    "boundary": (_BOUNDARY, 1, 1),
}
"""Action groups: (moves, weight while idle, weight while a run is active). A move is one
action, a whole turn (the model's reply, a prompt, settle), tree churn (two or three
navigations, forks, reloads, switches or ``/wipe-memory`` in a row), or an interrupt: stop
right after a boundary hook or one of the entries its commit persists, and act there at once;
or a budget line met at −1, exactly or +1 (``boundary``).
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
        mapped(moves, _first)
        for moves, idle, running in GROUPS.values()
        for _ in range(max(idle, running))
    ]
    return weighted(branches)


def _first(actions: tuple[Action, ...]) -> Action:
    return actions[0]


SWARMS: st.SearchStrategy[tuple[str, ...]] = mapped(
    lists(st.booleans(), min_size=len(OPTIONAL), max_size=len(OPTIONAL)),
    lambda chosen: CORE + tuple(g for g, on in zip(OPTIONAL, chosen, strict=True) if on),
)
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
