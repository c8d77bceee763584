"""Hypothesis strategies for notesoup worlds and runs (swarm testing, as pi-context's kit).

Worlds have context windows of 56k–96k tokens: notesoup's warning line sits 16384 above the
reserve, and Pi 1.x's system message with eleven tool declarations alone costs some 15k, so a
few long prompts cross the reminder, the warning and the hard reserve. A quarter of the worlds
resume a pi-context 0.25 session (a mixed history). Each run first draws which action groups
it may use, then every action from those.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar

from hypothesis import strategies as st

from pictx_fsm.extensions.notesoup.kit import actions as act
from pictx_fsm.extensions.notesoup.kit.legacy import TAILS, LegacyHistory
from pictx_fsm.extensions.notesoup.kit.world import NotesoupConfig
from pictx_fsm.extensions.shared.kit import actions as family
from pictx_fsm.testing import actions as host
from pictx_fsm.testing.actions import ANCHORS

__all__ = ["GROUPS", "SWARMS", "legacy_histories", "swarm_moves", "world_configs"]

T = TypeVar("T")

STOPS: Final = (
    "context",
    "context_with_system",
    "tool_result",
    "turn_end",
    "agent_end",
    "agent_before_settle",
    "streaming",
    "compaction",
    "custom",
    "custom_message",
)
"""Host steps after which a user acts: between staging and commit, after a tool, after a
boundary hook, between a run's end and its settle, between two entries of a reset's commit."""


def legacy_histories() -> st.SearchStrategy[LegacyHistory]:
    return st.builds(
        LegacyHistory,
        windows=st.integers(min_value=0, max_value=3),
        turns=st.integers(min_value=1, max_value=3),
        tail=st.sampled_from(TAILS),
        warning=st.booleans(),
        chars=st.sampled_from((200, 2_000, 20_000)),
    )


@functools.cache
def world_configs(fault: str | None = None) -> st.SearchStrategy[NotesoupConfig]:
    return st.builds(
        NotesoupConfig,
        seed=st.integers(min_value=0, max_value=2**16),
        context_window=st.integers(min_value=56_000, max_value=96_000),
        max_tokens=st.sampled_from((2_048, 4_096)),
        reserve_tokens=st.integers(min_value=1_000, max_value=6_000),
        # Above the 16384-token warning runway, so guidance comes first (S49).
        reminder_margin=st.integers(min_value=18_000, max_value=30_000),
        automatic=st.sampled_from((True, True, True, False)),
        keep_recent_tokens=st.sampled_from((500, 2_000, 20_000)),
        fault=st.just(fault),
        legacy=st.one_of(st.none(), st.none(), st.none(), legacy_histories()),
    )


# -- scripted tool calls ------------------------------------------------------------------------

_ADDRESSES: Final = (
    "plan",
    "MAP.md",
    "@project/decisions",
    "@self/diary",
    "@model/tricks",
    "@human/manual",
    "@agents/other/x",
    "legacy-plan",
    "legacy-closed",
    "../escape",
    "@bogus/x",
    "@human/leak",
    "@human/escape/x",
    "@agents/evil/x",
)
_PATTERNS: Final = (None, "**", "@self/**", "@agents/*/**", "@human/escape/**", "a\\b")


def _call(name: str, arguments: Mapping[str, Any]) -> tuple[str, str]:
    return name, json.dumps(arguments)


def _notes_call() -> st.SearchStrategy[tuple[str, str]]:
    address = st.sampled_from(_ADDRESSES)
    text = st.sampled_from(("# Plan\nstep one", "line\nline", "", "x" * 3_000))
    return st.one_of(
        st.builds(lambda a, c: _call("notes_write", {"address": a, "content": c}), address, text),
        st.builds(
            lambda a, old: _call(
                "notes_update", {"address": a, "edits": [{"oldText": old, "newText": "changed"}]}
            ),
            address,
            st.sampled_from(("step one", "line", "absent")),
        ),
        st.builds(
            lambda a, c: _call("notes_update", {"address": a, "crumpled": c}),
            address,
            st.booleans(),
        ),
        st.builds(
            lambda a, b: _call("notes_update", {"address": a, "rename_to": b}), address, address
        ),
        st.builds(
            lambda a, o: _call("notes_read", {"address": a, "offset_chars": o}),
            address,
            st.sampled_from((0, -5, 99_999)),
        ),
        st.builds(
            lambda p, w: _call("notes_list", {"pattern": p, "wastebasket": w}),
            st.sampled_from(_PATTERNS),
            st.booleans(),
        ),
        st.builds(
            lambda q, p: _call("notes_search", {"query": q, "pattern": p}),
            st.sampled_from(("step", ["LINE", "plan"], "", "sentinel")),
            st.sampled_from(_PATTERNS),
        ),
    )


def _history_call() -> st.SearchStrategy[tuple[str, str]]:
    return st.one_of(
        st.just(_call("history_windows", {})),
        st.builds(
            lambda w, r, lim: _call(
                "history_list",
                {k: v for k, v in (("window_id", w), ("roles", r), ("limit", lim)) if v},
            ),
            st.sampled_from((None, "@previous", "pcw:nope:root")),
            st.sampled_from((None, ["tool"], ["context", "user"])),
            st.sampled_from((None, 1, 5)),
        ),
        st.builds(
            lambda s: _call("history_read", {"seq": s}), st.integers(min_value=0, max_value=60)
        ),
        st.builds(
            lambda q: _call("history_search", {"query": q}),
            st.sampled_from(("prompt", ["reply", "ERASED"], "legacy-erased")),
        ),
    )


def _tool_script(calls: Sequence[tuple[str, str]]) -> host.Script:
    return host.Script(
        reply="tools",
        chars=40,
        tools=tuple(name for name, _ in calls),
        arguments=tuple(arguments for _, arguments in calls),
    )


_LIFECYCLE_CALL: Final = st.sampled_from(
    (
        ("clear_memory", "{}"),
        ("get_context_remaining", "{}"),
        ("echo", '{"text": "e"}'),
    )
)
_SCRIPTS = st.one_of(
    st.builds(host.Script, reply=st.just("text"), chars=st.integers(min_value=8, max_value=400)),
    st.builds(
        _tool_script,
        st.lists(
            st.one_of(_LIFECYCLE_CALL, _LIFECYCLE_CALL, _notes_call(), _history_call()),
            min_size=1,
            max_size=3,
        ),
    ),
    st.builds(host.Script, reply=st.sampled_from(("overflow", "error", "length"))),
)
_CHARS = st.one_of(
    st.integers(min_value=8, max_value=400), st.integers(min_value=4_000, max_value=60_000)
)
_ENTRY_INDEX = st.one_of(
    st.integers(min_value=0, max_value=500), st.integers(min_value=-12, max_value=-1)
)
_NAVIGATE = st.builds(
    host.Navigate,
    index=_ENTRY_INDEX,
    summarize=st.booleans(),
    anchor=st.sampled_from((*ANCHORS, "boundary", "tool_call")),
)
_FORK = st.builds(host.Fork, index=_ENTRY_INDEX, anchor=st.sampled_from((*ANCHORS, "boundary")))
_CLEAR = st.builds(
    act.ClearMemory,
    prompt=st.sampled_from(("", "", "   ", "continue the plan")),
    alias=st.booleans(),
)
_TOGGLE = st.builds(family.Toggle, arg=st.sampled_from(("on", "off", "on", "off", "", "bogus")))
_NOISE: st.SearchStrategy[act.Action] = st.sampled_from(
    (family.VoidNextBoundary(), family.HideBoot(), family.QueueAtSettle())
)
_SETTINGS = st.builds(family.SetAutomatic, enabled=st.booleans())
_STOP = st.builds(host.AdvanceTo, step=st.sampled_from(STOPS), count=st.integers(1, 2))
_MID_RUN = st.one_of(
    _CLEAR,
    _TOGGLE,
    st.builds(host.Steer, chars=st.integers(min_value=8, max_value=2_000)),
    st.builds(host.FollowUp, chars=st.integers(min_value=8, max_value=2_000)),
    st.just(host.Abort()),
    _NOISE,
    _SETTINGS,
    st.just(host.Compact()),
)


def _one(strategy: st.SearchStrategy[act.Action]) -> st.SearchStrategy[tuple[act.Action, ...]]:
    return strategy.map(lambda action: (action,))


Moves = st.SearchStrategy[tuple[act.Action, ...]]

GROUPS: Final[Mapping[str, tuple[Moves, int, int]]] = {
    "prompt": (_one(st.builds(host.Prompt, chars=_CHARS)), 2, 0),
    "turn": (
        st.tuples(_SCRIPTS, st.builds(host.Prompt, chars=_CHARS), st.just(host.Settle())),
        2,
        0,
    ),
    "script": (_one(_SCRIPTS), 2, 1),
    "step": (_one(st.builds(host.Advance, steps=st.integers(min_value=1, max_value=4))), 0, 3),
    "stop": (_one(_STOP), 0, 2),
    "interrupt": (st.tuples(_STOP, _MID_RUN), 0, 3),
    "settle": (_one(st.just(host.Settle())), 0, 1),
    "clear": (_one(_CLEAR), 2, 1),
    "toggle": (_one(_TOGGLE), 1, 1),
    "navigate": (_one(_NAVIGATE), 2, 0),
    "fork": (_one(_FORK), 1, 0),
    "reload": (_one(st.just(host.Reload())), 1, 0),
    "compact": (_one(st.just(host.Compact())), 1, 1),
    "noise": (_one(_NOISE), 1, 1),
    "settings": (_one(_SETTINGS), 1, 1),
    "abort": (_one(st.just(host.Abort())), 0, 1),
    "queue": (
        _one(
            st.one_of(
                st.builds(host.Steer, chars=st.integers(min_value=8, max_value=2_000)),
                st.builds(host.FollowUp, chars=st.integers(min_value=8, max_value=2_000)),
            )
        ),
        0,
        1,
    ),
}
CORE: Final = ("prompt", "script", "step")
OPTIONAL: Final = tuple(name for name in GROUPS if name not in CORE)

SWARMS: Final[st.SearchStrategy[tuple[str, ...]]] = st.lists(
    st.booleans(), min_size=len(OPTIONAL), max_size=len(OPTIONAL)
).map(lambda chosen: CORE + tuple(g for g, on in zip(OPTIONAL, chosen, strict=True) if on))


@functools.lru_cache(maxsize=4096)
def swarm_moves(swarm: tuple[str, ...], idle: bool) -> Moves:
    branches = []
    for name in swarm:
        moves, idle_weight, running_weight = GROUPS[name]
        branches += [moves] * (idle_weight if idle else running_weight)
    return st.sampled_from(tuple(branches)).flatmap(lambda moves: moves)
