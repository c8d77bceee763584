"""The runs the differential draws for pi-context-management: verify's action language
(:mod:`.strategies`), in the shape a real Pi can be driven through
(``pictx_fsm.testing.differential.runs``).

A run is a sequence of moves while idle: a turn (notes calls and text replies scripted, a
prompt of 200 to 60,000 characters — past the background notes' source threshold — settled,
what the extension owes delivered), a wait past a time line (the notes' cooldown, a
generation's deadline, the handoffs' hour), ``/ctx-memory`` (verify's arguments: ``status``,
``notes``, ``compact``, ``handoff``, ``auto on|off``, ``cancel``, ``session [close|export]``,
a bad one; a manual handoff is also a move group of its own), Pi's ``/compact`` (the
extension's checkpoint), ``/tree`` with or without a summary, a resume. Windows of 32,000 or
64,000 tokens with Pi's threshold compaction on or off: long turns reach the automatic
handoff at 80 % or a compaction. Swarm testing as in verify: each run first draws which move
groups it may use.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from pictx_fsm.extensions.context_management.kit import actions as cm
from pictx_fsm.extensions.context_management.kit.differential import DIFFERENTIAL
from pictx_fsm.extensions.context_management.kit.strategies import COMMANDS
from pictx_fsm.extensions.context_management.kit.world import WorldConfig
from pictx_fsm.testing import actions as shared
from pictx_fsm.testing.differential.runs import normalize
from pictx_fsm.testing.tables import table

__all__ = ["GROUPS", "WAITS", "differential_runs"]

PROMPT_CHARS = (200, 4_000, 30_000, 60_000)
"""Prompts from a line to past the background notes' source threshold (16,384 bytes)."""
REPLY_CHARS = (8, 400, 9_000)
WAITS = (5_000, 61_000, 330_000, 3_601_000)
"""Verify's waits: a few seconds, and a second past the notes' cooldown, a generation's
deadline, the handoffs' hour."""
WINDOWS = (32_000, 64_000)
"""Context windows: two long turns reach the automatic handoff at 80 % of the smaller, four
of the larger (or Pi's threshold compaction, when it is on)."""
PAGE_BYTES = (None, None, 300, 1_200)
"""Search pages: the default, or a few hundred bytes."""


@functools.cache
def _notes_calls() -> st.SearchStrategy[cm.CmTool]:
    return st.builds(
        cm.CmTool,
        tool=table(("notes_update", "notes_update", "notes_read", "search", "read", "status")),
        key=st.integers(min_value=0, max_value=6),
        kind=table(("goal", "constraint", "decision", "failed_attempt", "open_item")),
        status=table(("active", "resolved")),
        source=table(("user", "user", "assistant", "missing")),
        chars=table((40, 400, 2_500)),
        handoff=table((False, False, False, True)),
        max_bytes=table(PAGE_BYTES),
        then=table((None, None, None, "status", "read", "search")),
    )


def _replies() -> st.SearchStrategy[Any]:
    return st.one_of(
        _notes_calls(), table(tuple(shared.Script(reply="text", chars=c) for c in REPLY_CHARS))
    )


def _turn(replies: list[Any], chars: int) -> tuple[Any, ...]:
    return (*replies, shared.Prompt(chars=chars), shared.Settle())


def _idle(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[Any, ...]]:
    return strategy.map(lambda action: (action, shared.Settle()))


@functools.cache
def _groups() -> dict[str, st.SearchStrategy[tuple[Any, ...]]]:
    idle = _idle
    return {
        "turn": st.builds(_turn, st.lists(_replies(), max_size=2), table(PROMPT_CHARS)),
        "wait": idle(table(tuple(cm.Wait(ms=ms) for ms in WAITS))),
        "command": idle(table(tuple(cm.CtxMemory(args=args) for args in COMMANDS))),
        "handoff": st.just((cm.CtxMemory(args="handoff"), shared.Settle())),
        "compact": st.just((shared.Compact(), shared.Settle())),
        "navigate": idle(
            st.builds(
                shared.Navigate,
                index=st.integers(min_value=0, max_value=60),
                summarize=st.booleans(),
                anchor=table(("any", "user")),
            )
        ),
        "resume": st.just((shared.Reload(), shared.Settle())),
    }


GROUPS = tuple(_groups())
"""The move groups; ``turn`` is in every swarm (without it nothing runs)."""
WEIGHTS = {"turn": 4, "wait": 2, "command": 2}


@functools.cache
def differential_runs(
    host: str, max_actions: int
) -> st.SearchStrategy[tuple[WorldConfig, tuple[Any, ...]]]:
    """A configuration in the host profile ``host`` and a canonical run of at most
    ``max_actions`` actions."""
    groups = _groups()
    optional = [name for name in groups if name != "turn"]

    @st.composite
    def runs(draw: st.DrawFn) -> tuple[WorldConfig, tuple[Any, ...]]:
        config = WorldConfig(
            seed=draw(st.integers(min_value=0, max_value=99)),
            context_window=draw(table(WINDOWS)),
            automatic_compaction=draw(st.booleans()),
        )
        config = DIFFERENTIAL.config_for(config, host)
        chosen = draw(st.lists(st.booleans(), min_size=len(optional), max_size=len(optional)))
        swarm = ["turn", *(name for name, on in zip(optional, chosen, strict=True) if on)]
        # repeated for weight, drawn by index (``st.one_of`` drops repeated branches)
        moves = [groups[name] for name in swarm for _ in range(WEIGHTS.get(name, 1))]
        length = draw(st.integers(min_value=3, max_value=max_actions))
        actions: list[Any] = []
        while len(actions) < length:
            actions.extend(draw(moves[draw(st.integers(0, len(moves) - 1))]))
        return config, normalize(actions, DIFFERENTIAL.category)

    return runs()
