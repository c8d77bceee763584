"""Hypothesis strategies: pi-context-management worlds and host actions (every integer drawn
between -99 and 99, so a seed means the same runs on every install:
:mod:`pictx_fsm.testing.tables`)."""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from pictx_fsm.extensions.context_management.kit import actions as cm
from pictx_fsm.extensions.context_management.kit.boundary import LINES
from pictx_fsm.extensions.context_management.kit.world import WorldConfig
from pictx_fsm.hosts.model.generator import REPLY_KINDS
from pictx_fsm.testing import actions as shared
from pictx_fsm.testing.boundaries import DELTAS, offsets

__all__ = ["COMMANDS", "boundary_moves", "moves", "rounds", "world_configs"]

COMMANDS = (
    "status",
    "notes",
    "compact",
    "cancel",
    "handoff",
    "auto on",
    "auto off",
    "session",
    "session close",
    "session export",
    "bogus",
)


@functools.cache
def world_configs(
    companions: tuple[tuple[str, ...], ...], fault: str | None
) -> st.SearchStrategy[WorldConfig]:
    """Generated configurations, each with one of ``companions`` (the extensions loaded
    first) and ``fault`` planted."""
    return st.builds(
        WorldConfig,
        seed=st.integers(min_value=0, max_value=99),
        companions=st.sampled_from(companions),
        no_background=st.sampled_from((False, False, False, True)),
        no_auto_handoff=st.sampled_from((False, False, False, True)),
        child=st.sampled_from((False,) * 15 + (True,)),
        fault=st.just(fault),
    )


_SIZES = tuple(int(line.value) + d for line in LINES if line.page_size for d in DELTAS)
"""Page sizes at each size line −1, exactly and +1 (M21, M22)."""


def _tool() -> st.SearchStrategy[Any]:
    return st.builds(
        cm.CmTool,
        tool=st.sampled_from(
            ("notes_update", "notes_update", "notes_read", "search", "read", "status")
        ),
        key=st.integers(min_value=0, max_value=6),
        kind=st.sampled_from(("goal", "constraint", "decision", "failed_attempt", "open_item")),
        status=st.sampled_from(("active", "resolved")),
        source=st.sampled_from(("user", "user", "assistant", "missing")),
        chars=st.sampled_from((40, 400, 2_500)),
        max_bytes=st.sampled_from((None, None, 300, 1_200, *_SIZES)),
        cut=st.sampled_from((False, False, False, True)),
        then=st.sampled_from((None, None, None, "status", "read", "search")),
    )


@functools.cache
def moves() -> st.SearchStrategy[Any]:
    """Weighted towards what drives the schedulers: prompts, settling, deliveries, time.
    Built once (Hypothesis validates a strategy on its first draw: see
    :mod:`pictx_fsm.extensions.pi_context.kit.strategies`)."""
    prompt = st.builds(shared.Prompt, chars=st.sampled_from((200, 4_000, 9_000, 30_000, 60_000)))
    return st.one_of(
        prompt,
        prompt,
        st.just(shared.Settle()),
        st.just(shared.Settle()),
        st.builds(shared.Advance, steps=st.integers(min_value=1, max_value=6)),
        _tool(),
        st.builds(cm.Generate, reply=st.sampled_from(REPLY_KINDS)),
        st.just(cm.Deliver()),
        st.just(cm.Drain()),
        st.builds(cm.Wait, ms=st.sampled_from((5_000, 61_000, 330_000, 3_600_000))),
        st.builds(cm.CtxMemory, args=st.sampled_from(COMMANDS)),
        st.builds(cm.FailDisk, on=st.booleans()),
        st.builds(cm.VetoSwitch, on=st.booleans()),
        st.builds(cm.HideParent, on=st.booleans()),
        st.builds(cm.FailTakeover, on=st.booleans()),
        st.builds(cm.FailCreate, on=st.booleans()),
        st.builds(cm.SwitchModel, index=st.integers(min_value=0, max_value=1)),
        st.builds(cm.ForeignMessage, chars=st.sampled_from((200, 9_000))),
        st.builds(shared.Navigate, index=st.integers(min_value=0, max_value=60)),
        st.builds(shared.FollowUp, chars=st.sampled_from((40, 400))),
        st.just(shared.Abort()),
        st.just(shared.Reload()),
        st.just(shared.Compact()),
    )


def _names(unit: str) -> tuple[str, ...]:
    return tuple(line.name for line in LINES if line.unit == unit)


@functools.cache
def boundary_moves() -> st.SearchStrategy[tuple[Any, ...]]:
    """A line met at −1, exactly or +1 (:mod:`pictx_fsm.testing.boundaries`), then a round
    whose reply end judges it: usage on a token line, a reply end that long after an earlier
    moment (a commit, a failure, a verified handoff), or both at once (a window full at the
    very end of a cooldown)."""
    turn = st.builds(cm.Turn, chars=st.sampled_from((200, 4_000)))
    tokens = st.builds(cm.AimAt, line=st.sampled_from(_names("tokens")), offset=offsets())
    times = st.builds(
        cm.AimAt,
        line=st.sampled_from(_names("ms")),
        offset=offsets(),
        back=st.integers(min_value=0, max_value=6),
    )
    return st.one_of(
        st.tuples(tokens, turn), st.tuples(times, turn), st.tuples(times, tokens, turn)
    )


@functools.cache
def rounds() -> st.SearchStrategy[tuple[Any, ...]]:
    """The next actions of a run: one move, or (one time in six) a boundary round."""
    single = moves().map(lambda action: (action,))
    return st.one_of(single, single, single, single, single, boundary_moves())
