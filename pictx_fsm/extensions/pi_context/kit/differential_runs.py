"""The runs the differential draws for pi-context: verify's action language, in the shape a
real Pi can be driven through (``pictx_fsm.testing.differential.runs``).

A run is a sequence of moves while idle: a turn (replies scripted, a prompt, stops at hooks
with acts there — a steer, a follow-up, an abort, ``/pi-context on|off``, a settings change,
another extension's doing — then settled), or one idle operation (a reply scripted,
``/wipe-memory``, ``/pi-context``, ``/tree`` with or without a summary, fork, resume,
``/reload``, ``/compact``, a settings change, another extension armed). Swarm testing as in
verify: each run first draws which move groups it may use.

Replies and numbers are verify's (:mod:`.strategies`): windows of 28k–48k tokens, the reminder
margin above the warning runway, replies from a few characters to 40,000, tool batches of one
to three of ``wipe_memory``, ``get_context_remaining`` and ``echo`` (on 1.x also a
``wipe_memory`` run nested through ``call_tools``), overflows, provider errors and length
stops.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.kit.actions import (
    Abort,
    AdvanceTo,
    Compact,
    FollowUp,
    HideBoot,
    Navigate,
    Prompt,
    QueueAtSettle,
    Reload,
    ReloadExtensions,
    Script,
    SetAutomatic,
    Settle,
    Steer,
    Toggle,
    VoidNextBoundary,
    WipeCommand,
)
from pictx_fsm.extensions.pi_context.kit.differential import DIFFERENTIAL
from pictx_fsm.extensions.pi_context.kit.strategies import (
    ANCHOR,
    CHARS,
    ENTRY_INDEX,
    SHORT_CHARS,
    TOOL_LISTS,
    fork_at,
    weighted,
    world_configs,
)
from pictx_fsm.extensions.pi_context.kit.world import WorldConfig
from pictx_fsm.hosts.model.profiles import host_profile
from pictx_fsm.testing.differential.kit import HOOKS
from pictx_fsm.testing.differential.runs import normalize
from pictx_fsm.testing.tables import table

__all__ = ["GROUPS", "differential_runs"]

NESTED_WIPE = '{"calls": [{"name": "wipe_memory"}]}'
SETTLED = "agent_settled"


def _replies(nested: bool) -> st.SearchStrategy[Script]:
    tools = st.builds(
        lambda chars, names: Script(reply="tools", chars=chars, tools=names),
        table(SHORT_CHARS),
        table(TOOL_LISTS),
    )
    branches = [
        table(tuple(Script(reply="text", chars=chars) for chars in CHARS)),
        tools,
        table(tuple(Script(reply=reply) for reply in ("overflow", "error", "length"))),
    ]
    if nested:
        nest = Script(reply="tools", tools=("call_tools",), arguments=(NESTED_WIPE,))
        branches.append(st.just(nest))
    return st.one_of(branches)


_SWITCHES = (Toggle(arg="on"), Toggle(arg="off"))
_SETTINGS = (SetAutomatic(enabled=False), SetAutomatic(enabled=True))
_ARMS = (VoidNextBoundary(), HideBoot(), QueueAtSettle())
_ACTS: st.SearchStrategy[Any] = st.one_of(
    table(tuple(Steer(chars=chars) for chars in SHORT_CHARS)),
    table(tuple(FollowUp(chars=chars) for chars in SHORT_CHARS)),
    st.just(Abort()),
    table(_SWITCHES),
    table(_SETTINGS),
    table(_ARMS),
)
"""What a user, a settings change or another extension does at a stop."""


def _stop(stop: AdvanceTo, acts: list[Any], idle_hooks: frozenset[str]) -> tuple[Any, ...]:
    """A stop and its acts. Where Pi is idle at the stop's hook (``agent_settled``; on 0.87
    also ``before_agent_start``, a run still starting), a steer or a follow-up is a prompt of
    its own that runs to its end before Pi's driver goes on: it comes last at its stop, so
    that what follows it happens after that run on both hosts. No command is done at
    ``agent_settled``: Pi defers a prompt sent while its settled handlers run until they have
    returned (``_deferredSettledActions``, both versions), and the driver's handler waits for
    the command to have run — neither goes on (run 77 of seed 0 on 1.6.0: no output from Pi
    for 60 s). The command once the run has settled is drawn as an idle ``/pi-context``."""
    if stop.step == SETTLED:
        acts = [act for act in acts if not isinstance(act, Toggle)]
    if stop.step in idle_hooks:
        acts = sorted(acts, key=lambda act: isinstance(act, Steer | FollowUp))
    return (stop, *acts)


@functools.cache
def _stops(idle_hooks: frozenset[str]) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.builds(
        _stop,
        table(tuple(AdvanceTo(step=hook, count=n) for hook in HOOKS for n in (1, 2))),
        st.lists(_ACTS, min_size=1, max_size=2),
        st.just(idle_hooks),
    )


def _turn(
    replies: list[Script], prompt: Prompt, stops: list[tuple[Any, ...]], idle_hooks: frozenset[str]
) -> tuple[Any, ...]:
    """A turn: its replies, its prompt, its stops, settled. A steer or follow-up at a hook
    where Pi is idle is the turn's last stop: the run it starts has passed the hooks a later
    stop would wait for by the time Pi's driver goes on."""
    actions: list[Any] = [*replies, prompt]
    for stop, *acts in stops:
        actions += [stop, *acts]
        if stop.step in idle_hooks and any(isinstance(act, Steer | FollowUp) for act in acts):
            break
    return (*actions, Settle())


@functools.cache
def _turns(nested: bool, idle_hooks: frozenset[str]) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.builds(
        _turn,
        st.lists(_replies(nested), max_size=3),
        table(tuple(Prompt(chars=chars) for chars in CHARS)),
        st.lists(_stops(idle_hooks), max_size=2),
        st.just(idle_hooks),
    )


def _idle(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[Any, ...]]:
    return strategy.map(lambda action: (action, Settle()))


@functools.cache
def _groups(
    nested: bool, idle_hooks: frozenset[str]
) -> dict[str, st.SearchStrategy[tuple[Any, ...]]]:
    return {
        "turn": _turns(nested, idle_hooks),
        "reply": _replies(nested).map(lambda script: (script,)),
        "wipe": st.just((WipeCommand(), Settle())),
        "toggle": _idle(table((*_SWITCHES, Toggle(arg=""), Toggle(arg="bogus")))),
        "navigate": _idle(
            st.builds(Navigate, index=ENTRY_INDEX, summarize=st.booleans(), anchor=ANCHOR)
        ),
        "fork": _idle(st.builds(fork_at, ENTRY_INDEX, ANCHOR)),
        "resume": st.just((Reload(), Settle())),
        "reload": st.just((ReloadExtensions(), Settle())),
        "compact": st.just((Compact(), Settle())),
        "settings": _idle(table(_SETTINGS)),
        "noise": _idle(table(_ARMS)),
    }


GROUPS = tuple(_groups(False, frozenset()))
"""The move groups; ``turn`` is in every swarm (without it nothing runs)."""
WEIGHTS = {"turn": 4, "reply": 2}
"""How much likelier a group's move is than one of weight 1."""


@functools.cache
def _moves(
    swarm: tuple[str, ...], nested: bool, idle_hooks: frozenset[str]
) -> st.SearchStrategy[tuple[Any, ...]]:
    """The next move of a run of ``swarm``, each group by its weight. Built once per swarm:
    Hypothesis labels ``weighted``'s choice by the hash of its branch table, which for a table
    made afresh at every draw follows the memory it happens to get, and its mutations follow
    the labels — so the same seed drew other runs in another process (a label must not
    depend on where an object lives: runs are a function of the seed alone)."""
    groups = _groups(nested, idle_hooks)
    return weighted([groups[name] for name in swarm for _ in range(WEIGHTS.get(name, 1))])


@functools.cache
def differential_runs(
    host: str, max_actions: int
) -> st.SearchStrategy[tuple[WorldConfig, tuple[Any, ...]]]:
    """A configuration in the host profile ``host`` and a canonical run of at most
    ``max_actions`` actions."""
    profile = host_profile(host)
    idle_hooks = frozenset(
        {SETTLED, *(() if profile.starting_run_is_busy else ("before_agent_start",))}
    )
    groups = _groups(profile.nested_tool_calls, idle_hooks)
    optional = [name for name in groups if name != "turn"]

    @st.composite
    def runs(draw: st.DrawFn) -> tuple[WorldConfig, tuple[Any, ...]]:
        config = draw(world_configs(hosts=(host,)))
        config = DIFFERENTIAL.config_for(config, host)
        chosen = draw(st.lists(st.booleans(), min_size=len(optional), max_size=len(optional)))
        swarm = ("turn", *(name for name, on in zip(optional, chosen, strict=True) if on))
        moves = _moves(swarm, profile.nested_tool_calls, idle_hooks)
        length = draw(st.integers(min_value=3, max_value=max_actions))
        actions: list[Any] = []
        while len(actions) < length:
            actions.extend(draw(moves))
        return config, normalize(actions, DIFFERENTIAL.category)

    return runs()
