"""Hypothesis strategies for worlds and host actions, built once per process.

The numbers are chosen so that generated runs reach the interesting regions within a few
dozen actions: context windows of 28k–48k tokens with the warning line at
``reserve + 12288`` (R44) mean a handful of long prompts crosses the reminder, the warning
and the reserve, and an over-long request overflows (the faux provider overflows any request
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
Hypothesis's public strategies are used, tuned for speed by drawing little: most moves are one
``st.sampled_from`` over prebuilt actions (no ``builds`` or ``map`` per draw).

**A seed means the same runs on every install**: every integer drawn lies between -99 and
99, a larger number is an element of a table drawn by its index
(:mod:`pictx_fsm.testing.tables`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

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
from pictx_fsm.extensions.pi_context.kit.tool_calls import tool_script_moves
from pictx_fsm.extensions.pi_context.kit.world import WorldConfig
from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.hosts.model.profiles import HOST_PROFILES
from pictx_fsm.testing.actions import Anchor
from pictx_fsm.testing.boundaries import DELTAS
from pictx_fsm.testing.tables import TABLE_SIZE, table

__all__ = [
    "ANCHOR",
    "CHARS",
    "CORE",
    "ENTRY_INDEX",
    "GROUPS",
    "OPTIONAL",
    "SHORT_CHARS",
    "SWARMS",
    "TOOL_LISTS",
    "Moves",
    "fork_at",
    "host_actions",
    "moves",
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

CHARS = (*range(8, 401, 8), *range(2_000, 40_001, 800))
"""Prompt and reply lengths: short (8–400 characters) or long (2,000–40,000), about as often."""
SHORT_CHARS = tuple(range(8, 2_001, 24))
"""Steering, follow-up and tool-call reply lengths (8–2,000 characters)."""
ENTRY_INDICES = (*range(60), *range(60, 500, 11))
"""Where a navigation or fork lands, modulo the entries of its anchor: every one of the first
60, then every eleventh up to 500."""

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
        context_window=table(range(28_000, 48_001, 250)),
        max_tokens=st.sampled_from((2_048, 4_096)),
        reserve_tokens=table(range(500, 4_001, 50)),
        # Above the 12288-token warning runway, so the reminder line comes first (R44).
        reminder_margin=table(range(12_800, 20_001, 100)),
        automatic=st.sampled_from((True, True, True, False)),
        # Pi's 20 000 rarely leaves anything to compact in a short run.
        keep_recent_tokens=st.sampled_from((500, 2_000, 20_000)),
        fault=st.just(fault),
        host=st.sampled_from(hosts),
    )


Moves = st.SearchStrategy[Sequence[Action]]
"""A move: the actions a run takes next, in order."""


def moves(actions: Iterable[Action]) -> Moves:
    """A move of one action among prebuilt ones (repeated ones weigh more)."""
    return table((action,) for action in actions)


def _tools_script(chars: int, tools: tuple[str, ...]) -> Script:
    return Script(reply="tools", chars=chars, tools=tools)


def _tools_move(chars: int, tools: tuple[str, ...]) -> tuple[Action]:
    return (_tools_script(chars, tools),)


def _navigate_move(index: int, summarize: bool, anchor: Anchor) -> tuple[Action]:
    return (Navigate(index=index, summarize=summarize, anchor=anchor),)


def fork_at(index: int, anchor: Anchor) -> Fork:
    """A fork aimed at ``anchor``: before a user message (Pi's ``/fork``), at anything else
    (Pi refuses to fork before an entry that is not a user message)."""
    return Fork(index=index, anchor=anchor, position="before" if anchor == "user" else "at")


def _fork_move(index: int, anchor: Anchor) -> tuple[Action]:
    return (fork_at(index, anchor),)


TOOL_LISTS = tuple(
    (first, *rest)
    for first in TOOLS
    for rest in ((), *((t,) for t in TOOLS), *((t, u) for t in TOOLS for u in TOOLS))
)
"""Every list of one to three of :data:`TOOLS`, in order."""

_PROMPTS = tuple(Prompt(chars=chars) for chars in CHARS)
_TEXT_SCRIPTS = tuple(Script(reply="text", chars=chars) for chars in CHARS)
_ERROR_SCRIPTS = tuple(Script(reply=reply) for reply in ("overflow", "error", "length"))
_SCRIPTS: st.SearchStrategy[Action] = st.one_of(
    table(_TEXT_SCRIPTS),
    st.builds(_tools_script, table(SHORT_CHARS), table(TOOL_LISTS)),
    table(_ERROR_SCRIPTS),
)
"""The model's next reply: text, a batch of 1–3 tool calls, or a failure (a third each)."""
_SCRIPT_MOVES: Moves = st.one_of(
    moves(_TEXT_SCRIPTS),
    st.builds(_tools_move, table(SHORT_CHARS), table(TOOL_LISTS)),
    moves(_ERROR_SCRIPTS),
)
_ENTRY_INDEX = st.one_of(table(ENTRY_INDICES), st.integers(min_value=-12, max_value=-1))
"""Anywhere among the chosen entries, or (negative) one of the last ones: the tool calls,
markers and boots a navigation or fork most often lands next to."""
_ANCHOR: st.SearchStrategy[Anchor] = st.sampled_from((*ANCHORS, "tool_call", "boundary"))
"""Where navigations and forks aim: tool calls and boundary entries count twice."""
ENTRY_INDEX = _ENTRY_INDEX
ANCHOR = _ANCHOR
_SWITCHES = (Toggle(arg="on"), Toggle(arg="off"))
_NOISE = (VoidNextBoundary(), HideBoot(), QueueAtSettle())
_SETTINGS = (SetAutomatic(enabled=False), SetAutomatic(enabled=True))
_STEERS = tuple(Steer(chars=chars) for chars in SHORT_CHARS)
_FOLLOW_UPS = tuple(FollowUp(chars=chars) for chars in SHORT_CHARS)
_COMMIT_STOPS = tuple(AdvanceTo(step=step, count=n) for step in COMMIT_STEPS for n in (1, 2))


def weighted(branches: Sequence[st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """A choice among strategies, a branch listed twice twice as likely (``st.one_of``
    drops repeated branches, so repetition cannot weight it). The branch is drawn by its
    index: ``st.sampled_from`` over strategies checks on every draw whether all its elements
    are strategies."""
    chosen = tuple(branches)
    if not 0 < len(chosen) <= TABLE_SIZE:
        raise ValueError(f"a choice among 1 to {TABLE_SIZE} branches, not {len(chosen)}")
    return st.integers(min_value=0, max_value=len(chosen) - 1).flatmap(chosen.__getitem__)


_SWITCH = table(_SWITCHES)
_MID_RUN_ACTS: st.SearchStrategy[Action] = weighted(
    [
        _SWITCH,
        _SWITCH,
        _SWITCH,
        _SWITCH,
        table(_STEERS),
        table(_FOLLOW_UPS),
        st.just(Abort()),
        table(_NOISE),
        table(_SETTINGS),
        st.just(Compact()),
    ]
)
"""What a user (or another extension, or a settings change) does while a run is active."""
_TREE_OPS: st.SearchStrategy[Action] = weighted(
    [
        st.builds(Navigate, index=_ENTRY_INDEX, summarize=st.booleans(), anchor=_ANCHOR),
        st.builds(Navigate, index=_ENTRY_INDEX, summarize=st.booleans(), anchor=_ANCHOR),
        st.builds(fork_at, _ENTRY_INDEX, _ANCHOR),
        st.just(Reload()),
        _SWITCH,
        st.just(WipeCommand()),
    ]
)
"""Tree churn between runs: each of these makes boot repair run, or a reset start, wherever
the previous one left the leaf."""
_FORK_AND_TREE: Moves = st.tuples(
    st.builds(Fork, index=_ENTRY_INDEX, anchor=_ANCHOR),
    st.builds(Navigate, index=_ENTRY_INDEX, summarize=st.just(True), anchor=_ANCHOR),
)
"""A fork, then ``/tree`` with a summary inside the forked session. A summarised navigation
onto an assistant's tool calls leaves the leaf on a branch summary between the calls and
their results, where neither repair nor a following ``/wipe-memory`` may append (FM19). The
plain churn lists rarely land there: most navigations aimed at tool calls come before the
session has any, and only half of them ask for a summary."""

_BOUNDARY: Moves = table(
    move
    for line in LINE_NAMES
    for offset in DELTAS
    for move in (
        (AimAt(line=line, offset=offset, at="reply"), Prompt(chars=40), Settle()),
        (Settle(), AimAt(line=line, offset=offset, at="prompt"), Settle()),
    )
)
"""A budget line met at −1, exactly or +1 (:mod:`pictx_fsm.testing.boundaries`): a turn
whose reply ends at it (R50 at ``turn_end``), or — the run settled first — a prompt whose
request starts at it (R51, R17 at ``context``), each run to its end."""

GROUPS: Mapping[str, tuple[Moves, int, int]] = {
    "prompt": (moves(_PROMPTS), 2, 0),
    "turn": (st.tuples(_SCRIPTS, table(_PROMPTS), st.just(Settle())), 2, 0),
    "script": (_SCRIPT_MOVES, 2, 1),
    "failure": (moves(Script(reply=reply) for reply in ("overflow", "overflow", "error")), 1, 1),
    "notes_tools": (tool_script_moves(), 1, 1),
    "step": (moves(Advance(steps=n) for n in range(1, 5)), 0, 3),
    "stop": (moves(AdvanceTo(step=step, count=n) for step in STOPS for n in (1, 2)), 0, 2),
    "interrupt": (st.tuples(table(_COMMIT_STOPS), _MID_RUN_ACTS), 0, 3),
    "run": (moves(Advance(steps=n) for n in range(5, 31)), 0, 1),
    "settle": (st.just((Settle(),)), 0, 1),
    "steer": (moves(_STEERS), 0, 1),
    "follow_up": (moves(_FOLLOW_UPS), 0, 1),
    "abort": (st.just((Abort(),)), 0, 1),
    "wipe": (st.just((WipeCommand(),)), 1, 0),
    "toggle": (moves(Toggle(arg=arg) for arg in ("on", "off", "on", "off", "", "bogus")), 1, 1),
    "navigate": (st.builds(_navigate_move, _ENTRY_INDEX, st.booleans(), _ANCHOR), 2, 0),
    "fork": (st.builds(_fork_move, _ENTRY_INDEX, _ANCHOR), 1, 0),
    "tree": (weighted([st.lists(_TREE_OPS, min_size=2, max_size=3), _FORK_AND_TREE]), 1, 0),
    "reload": (st.just((Reload(),)), 1, 0),
    "compact": (st.just((Compact(),)), 1, 1),
    "noise": (moves(_NOISE), 1, 1),
    "settings": (moves(_SETTINGS), 1, 1),
    "kill": (moves(KillRuntime(permanent=p) for p in (False, False, True)), 1, 1),
    "boundary": (_BOUNDARY, 1, 1),
}
"""Action groups: (moves, weight while idle, weight while a run is active). A move is one
action, a whole turn (the model's reply, a prompt, settle), tree churn (two or three
navigations, forks, reloads, switches or ``/wipe-memory`` in a row, or as often a fork and a
summarised ``/tree`` inside it), or an interrupt: stop
right after a boundary hook or one of the entries its commit persists, and act there at once;
or a budget line met at −1, exactly or +1 (``boundary``).
Runs move forward in small steps and users act *between* host steps (queueing, aborting,
toggling mid-turn) — the interleavings where boundary bugs live; idle sessions are
prompted, navigated, forked, reloaded and compacted. Most moves are one draw from a table of
prebuilt moves."""
CORE = ("prompt", "script", "step")
"""Groups every swarm keeps: without them nothing happens."""
OPTIONAL = tuple(name for name in GROUPS if name not in CORE)


@functools.cache
def host_actions() -> st.SearchStrategy[Action]:
    """One host action from any group, whatever the session's state (the plain mix used by
    :class:`~.stateful.LifecycleStateMachine`; an interrupt contributes its stop)."""
    branches = [
        group.map(_first)
        for group, idle, running in GROUPS.values()
        for _ in range(max(idle, running))
    ]
    return weighted(branches)


def _first(actions: Sequence[Action]) -> Action:
    return actions[0]


def _swarm(chosen: Sequence[bool]) -> tuple[str, ...]:
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
    branches: list[Moves] = []
    for name in swarm:
        group, idle_weight, running_weight = GROUPS[name]
        branches += [group] * (idle_weight if idle else running_weight)
    return weighted(branches)
