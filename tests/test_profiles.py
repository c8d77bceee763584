"""The 0.25.1 deltas D1–D5 and the profile table ("Profiles at a glance") through the runtime."""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import WINDOW, Kit, audits_verify  # noqa: F401

from pictx_fsm.extensions.pi_context.notes import InMemoryNotesSource
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_0_24,
    CONTINUATION_0_25_1,
    CONTINUATION_TYPE,
    DEFAULT_PROFILE,
    MARKER_TYPE,
    RESET_SUMMARY_0_24,
    Profile,
    Texts,
)
from pictx_fsm.host.effects import BoundaryResult, SendMessage
from pictx_fsm.host.events import TurnEnd

TAIL = [MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE]


def _reset_drafts(kit: Kit) -> list[Any]:
    kit.build.user("x")
    value = kit.tool_turn("wipe_memory").value
    assert isinstance(value, BoundaryResult)
    return list(value.entries)


# -- the table -----------------------------------------------------------------------------------


def test_profile_default_is_0_25_1_and_unknown_profiles_are_refused() -> None:
    assert DEFAULT_PROFILE is Profile.V0_25_1
    assert Kit.create().runtime.profile is Profile.V0_25_1
    with pytest.raises(ValueError, match="unknown profile"):
        Kit.create(profile="0.26.0")


@pytest.mark.parametrize("profile", ["0.25.0", "0.25.1"])
def test_profile_table_running_reset_is_marker_boot_continuation_in_both(profile: str) -> None:
    # Given either profile, for a turn_end reset and an overflow recovery
    kit = Kit.create(profile=profile)
    assert [d.custom_type for d in _reset_drafts(kit)] == TAIL
    kit.overflow_turn()
    value = kit.before_settle().value
    assert isinstance(value, BoundaryResult)
    assert [d.custom_type for d in value.entries] == TAIL  # type: ignore[union-attr]


# -- D1 ------------------------------------------------------------------------------------------


def test_d1_0_25_1_reset_boot_has_no_reset_line_and_the_exact_continuation() -> None:
    _, boot, continuation = _reset_drafts(Kit.create(profile="0.25.1"))
    assert boot.content.startswith("<context_window>")
    assert RESET_SUMMARY_0_24 not in boot.content
    assert continuation.content == (
        "Your memory was just erased. Your head is blank. Good news: your notes are still here, "
        "and history remains... searchable. Do try to keep up."
    )
    assert continuation.content == CONTINUATION_0_25_1


def test_d1_0_25_0_defaults_to_the_0_24_candidates_and_lets_both_be_overridden() -> None:
    # Given profile 0.25.0 with default texts
    _, boot, continuation = _reset_drafts(Kit.create(profile="0.25.0"))
    assert boot.content.startswith(RESET_SUMMARY_0_24) and continuation.content == CONTINUATION_0_24
    # When both texts are overridden
    texts = attrs.evolve(
        Texts.for_profile(Profile.V0_25_0), reset_summary="WAKE UP.", continuation="GO ON."
    )
    _, boot, continuation = _reset_drafts(Kit.create(profile="0.25.0", texts=texts))
    # Then the overrides are written
    assert boot.content.startswith("WAKE UP.\n\n<context_window>")
    assert continuation.content == "GO ON."


def test_d1_root_boots_never_carry_the_reset_line() -> None:
    for profile in ("0.25.0", "0.25.1"):
        kit = Kit.create(profile=profile)
        (send,) = [e for e in kit.start().effects if isinstance(e, SendMessage)]
        assert str(send.content).startswith("<context_window>")


# -- D2 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "sent"), [("0.25.0", [BOOT_TYPE]), ("0.25.1", [BOOT_TYPE, CONTINUATION_TYPE])]
)
def test_d2_wipe_memory_sends_boot_then_continuation_only_in_0_25_1(
    profile: str, sent: list[str]
) -> None:
    kit = Kit.create(profile=profile)
    kit.start()
    sends = [e for e in kit.wipe().effects if isinstance(e, SendMessage)]
    assert [s.custom_type for s in sends] == sent
    assert all(s.trigger_turn is False for s in sends)


# -- D3 ------------------------------------------------------------------------------------------


def _tail_without_continuation(profile: str, *, continuation_first: bool = False) -> Kit:
    """Reset drafts built, but the host committed only marker and boot (plus, optionally, a
    continuation before the boot)."""
    kit = Kit.create(profile=profile)
    kit.start()
    call = kit.build.assistant("c", stop="toolUse", calls=[{"name": "wipe_memory"}])
    kit.tool("wipe_memory")
    kit.build.tool_result("{}", name="wipe_memory")
    value = kit.runtime.handle(TurnEnd(message=kit.message(call)), kit.ctx).value
    assert isinstance(value, BoundaryResult)
    marker, boot, continuation = value.entries
    kit.append_draft(marker)
    if continuation_first:
        kit.append_draft(continuation)
    kit.append_draft(boot)
    return kit


@pytest.mark.parametrize(("profile", "announced"), [("0.25.0", True), ("0.25.1", False)])
def test_d3_0_25_1_announces_only_a_tail_with_the_continuation_after_the_boot(
    profile: str, announced: bool
) -> None:
    # Given a committed marker and boot without continuation
    kit = _tail_without_continuation(profile)
    # When the next turn starts
    notices = kit.turn_start().notices
    # Then 0.25.0 announces (marker + boot), 0.25.1 waits for the continuation
    assert bool(notices) is announced
    # And settlement forgets what was not announced
    kit.settled()
    assert kit.runtime.state.pending_resets == ()


def test_d3_a_continuation_before_the_boot_does_not_complete_the_tail() -> None:
    kit = _tail_without_continuation("0.25.1", continuation_first=True)
    assert kit.turn_start().notices == ()


def test_d3_the_complete_tail_is_announced_in_0_25_1() -> None:
    kit = Kit.create(profile="0.25.1")
    kit.start()
    _reset_drafts(kit)
    assert len(kit.turn_start().notices) == 1


# -- D4 (the profile difference; the tail cases are in test_rules_repair) -----------------------


@pytest.mark.parametrize(
    ("profile", "appended"),
    [("0.25.0", [BOOT_TYPE]), ("0.25.1", [BOOT_TYPE, CONTINUATION_TYPE])],
)
def test_d4_repair_of_a_bare_marker_per_profile(profile: str, appended: list[str]) -> None:
    kit = Kit.create(profile=profile)
    kit.build.marker("pcw:12345678:d4d4d4d4")
    sends = [e for e in kit.start().effects if isinstance(e, SendMessage)]
    assert [s.custom_type for s in sends] == appended


@pytest.mark.parametrize(("profile", "appended"), [("0.25.0", []), ("0.25.1", [CONTINUATION_TYPE])])
def test_d4_a_boot_without_continuation_is_completed_only_in_0_25_1(
    profile: str, appended: list[str]
) -> None:
    kit = Kit.create(profile=profile)
    kit.build.marker("pcw:12345678:d4d4d4d4")
    kit.build.boot("pcw:12345678:d4d4d4d4")
    sends = [e for e in kit.start().effects if isinstance(e, SendMessage)]
    assert [s.custom_type for s in sends] == appended


# -- D5 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("failing", [["human"], ["human", "model"]])
def test_d5_0_25_1_incomplete_notes_wording(failing: list[str]) -> None:
    notes = InMemoryNotesSource()
    for scope in failing:
        notes = notes.failing(scope, errno.EIO)  # type: ignore[arg-type]
    kit = Kit.create(profile="0.25.1", notes=notes)
    (send,) = [e for e in kit.start().effects if isinstance(e, SendMessage)]
    labels = ", ".join({"human": "@human", "model": "@model"}[s] for s in failing)
    assert (
        f"Notes index incomplete: index for {labels} unavailable during boot; notes_list can "
        "retry after recovery." in str(send.content)
    )


# -- lifecycle state: no behaviour change between the profiles ----------------------------------

Step = Callable[[Kit], Any]
STEPS: dict[str, Step] = {
    "wipe_tool": lambda k: k.tool("wipe_memory"),
    "turn": lambda k: k.turn_end("ok"),
    "aborted_turn": lambda k: k.turn_end("x", stop="aborted"),
    "overflow_turn": lambda k: k.overflow_turn(),
    "queued_overflow": lambda k: k.overflow_turn(has_pending_messages=True),
    "error_turn": lambda k: k.turn_end("", stop="error", error="rate limit"),
    "settle": lambda k: k.before_settle(),
    "queued_settle": lambda k: k.before_settle(pending=1),
    "agent_end": lambda k: k.agent_end(),
    "aborted_end": lambda k: k.agent_end(signal_aborted=True),
    "settled": lambda k: k.settled(),
    "turn_start": lambda k: k.turn_start(),
    "wipe_command": lambda k: k.wipe(),
    "off": lambda k: k.toggle("off"),
    "on": lambda k: k.toggle("on"),
    "tree": lambda k: k.navigate(k.tree.leaf_id),
}


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(st.sampled_from(sorted(STEPS)), max_size=12),
    tokens=st.sampled_from([1_000, WINDOW - 20_000]),
)
def test_profiles_share_the_request_and_overflow_state_for_any_event_sequence(
    steps: list[str], tokens: int
) -> None:
    # Given the same event sequence in both profiles
    kits = [Kit.create(profile=p, tokens=tokens) for p in ("0.25.0", "0.25.1")]
    for kit in kits:
        kit.start()
        kit.build.user("go")
    for name in steps:
        for kit in kits:
            STEPS[name](kit)
        # Then the reset-control request and overflow regions agree after every step
        a, b = (k.configuration("reset_control") for k in kits)
        assert (a["request"], a["overflow"], a["activity"]) == (
            b["request"],
            b["overflow"],
            b["activity"],
        )


class _Spelled(str):
    """A text that is not exactly a ``str``: parsed by walking the profiles."""


@given(
    st.one_of(
        st.sampled_from([profile.value for profile in Profile]),
        st.sampled_from([_Spelled(profile.value) for profile in Profile]),
        st.text(max_size=8),
    )
)
def test_a_profile_parses_by_its_value_as_the_walk_of_every_profile_finds_it(value: str) -> None:
    # Given a profile's value (as a str or a str subclass) or any other text
    walked = [profile for profile in Profile if profile.value == value]
    # When it is parsed
    # Then it is the profile the walk finds, and anything else is refused naming the profiles
    if walked:
        assert Profile.parse(value) is walked[0]
    else:
        with pytest.raises(ValueError, match="unknown profile"):
            Profile.parse(value)
