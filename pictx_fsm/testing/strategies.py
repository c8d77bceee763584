"""Hypothesis strategies for worlds and host actions.

The numbers are chosen so that generated runs reach the interesting regions within a few
dozen actions: context windows of 28k–48k tokens with the warning line at
``reserve + 12288`` (R44) mean a handful of long prompts crosses the reminder, the warning
and the reserve, and an over-long request overflows (the faux brain overflows any request
larger than the window). Actions that stop a run right after a chosen hook and world actions
(another extension voiding a boundary, hiding a boot or queueing at settle; automatic resets
switched mid-run) reach the interleavings the seed scenarios open.
"""

from __future__ import annotations

from hypothesis import strategies as st

from pictx_fsm.hosts.model.profiles import HOST_PROFILES
from pictx_fsm.protocol import Profile
from pictx_fsm.testing.actions import (
    Abort,
    Action,
    Advance,
    AdvanceTo,
    Compact,
    FollowUp,
    Fork,
    HideBoot,
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
from pictx_fsm.testing.world import WorldConfig

TOOLS = ("wipe_memory", "get_context_remaining", "echo")
STOPS = ("context", "tool_result", "turn_end", "agent_end", "agent_before_settle", "streaming")
"""Host steps after which a user acts: between staging and commit, after a tool, after a
boundary, between a run's end and its settle."""


PROFILES: tuple[str, ...] = tuple(profile.value for profile in Profile)
HOSTS: tuple[str, ...] = tuple(HOST_PROFILES)
"""The Pi versions the model session can behave as (host profiles)."""


def world_configs(
    profiles: tuple[str, ...] = PROFILES, fault: str | None = None, hosts: tuple[str, ...] = HOSTS
) -> st.SearchStrategy[WorldConfig]:
    """Reproducible world parameters; ``fault`` plants a named fault (see ``faults``)."""
    return st.builds(
        WorldConfig,
        profile=st.sampled_from(profiles),
        host=st.sampled_from(hosts),
        seed=st.integers(min_value=0, max_value=2**16),
        context_window=st.integers(min_value=28_000, max_value=48_000),
        max_tokens=st.sampled_from((2_048, 4_096)),
        reserve_tokens=st.integers(min_value=500, max_value=4_000),
        # Above the 12288-token warning runway, so the reminder line comes first (R44).
        reminder_margin=st.integers(min_value=12_800, max_value=20_000),
        automatic=st.sampled_from((True, True, True, False)),
        # Pi's 20 000 rarely leaves anything to compact in a short run.
        keep_recent_tokens=st.sampled_from((500, 2_000, 20_000)),
        fault=st.just(fault),
    )


def _chars() -> st.SearchStrategy[int]:
    return st.one_of(
        st.integers(min_value=8, max_value=400),
        st.integers(min_value=2_000, max_value=40_000),
    )


def scripts() -> st.SearchStrategy[Script]:
    return st.one_of(
        st.builds(Script, reply=st.just("text"), chars=_chars()),
        st.builds(
            Script,
            reply=st.just("tools"),
            chars=st.integers(min_value=8, max_value=2_000),
            tools=st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3).map(tuple),
        ),
        st.builds(Script, reply=st.sampled_from(("overflow", "error", "length"))),
    )


def host_actions() -> st.SearchStrategy[Action]:
    """One host action, weighted so that runs move forward in small steps and users act
    *between* host steps (queueing, aborting, toggling mid-turn) — the interleavings where
    boundary bugs live."""
    small_steps = st.builds(Advance, steps=st.integers(min_value=1, max_value=4))
    stop = st.builds(AdvanceTo, step=st.sampled_from(STOPS), count=st.integers(1, 2))
    return st.one_of(
        st.builds(Prompt, chars=_chars()),
        st.builds(Prompt, chars=_chars()),
        scripts(),
        scripts(),
        scripts(),
        st.builds(Script, reply=st.sampled_from(("overflow", "overflow", "error"))),
        small_steps,
        small_steps,
        small_steps,
        st.builds(Advance, steps=st.integers(min_value=5, max_value=30)),
        st.just(Settle()),
        st.builds(Steer, chars=st.integers(min_value=8, max_value=2_000)),
        st.builds(FollowUp, chars=st.integers(min_value=8, max_value=2_000)),
        st.just(Abort()),
        st.just(WipeCommand()),
        st.builds(Toggle, arg=st.sampled_from(("on", "off", "", "bogus"))),
        st.builds(Navigate, index=_entry_index(), summarize=st.booleans()),
        st.builds(Fork, index=_entry_index()),
        st.just(Reload()),
        st.just(Compact()),
        stop,
        stop,
        st.sampled_from((VoidNextBoundary(), HideBoot(), QueueAtSettle())),
        st.builds(SetAutomatic, enabled=st.booleans()),
    )


def _entry_index() -> st.SearchStrategy[int]:
    """Anywhere in the file, or (negative) one of its last entries: the tool calls, markers
    and boots a navigation or fork most often lands next to."""
    return st.one_of(
        st.integers(min_value=0, max_value=500), st.integers(min_value=-12, max_value=-1)
    )
