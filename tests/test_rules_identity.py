"""Lifecycle §2–§3 through the runtime: persisted kinds (R1–R7) and window identity (R8–R15)."""

from __future__ import annotations

import random
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import ROOT_ID, Kit, audits_verify, boot_ids  # noqa: F401

from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_0_25_1,
    CONTINUATION_TYPE,
    CUSTOM_TYPE_PREFIX,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    NOTE_TYPE,
    WARNING_TYPE,
)
from pictx_fsm.host.effects import AppendEntry, BoundaryResult, CustomMessageDraft, SendMessage
from pictx_fsm.session.entries import CustomEntry, CustomMessageEntry
from pictx_fsm.session.ids import uuid_draws

MINTED = re.compile(r"^pcw:12345678:[0-9a-f]{8}$")


def _reset_by_tool(kit: Kit) -> BoundaryResult:
    kit.build.user("wipe please")
    value = kit.tool_turn("wipe_memory").value
    assert isinstance(value, BoundaryResult)
    return value


def _started(**kw: Any) -> Kit:
    kit = Kit.create(**kw)
    kit.start()
    return kit


# -- R1 ------------------------------------------------------------------------------------------


def test_r1_marker_is_a_custom_entry_whose_data_has_exactly_the_window_id() -> None:
    # Given a running session
    kit = _started()
    # When the model's wipe request commits at turn_end
    value = _reset_by_tool(kit)
    # Then the first reset draft is a custom marker with data {windowId} and nothing else
    marker = value.entries[0].to_json()
    assert marker["type"] == "custom" and marker["customType"] == MARKER_TYPE
    assert list(marker["data"]) == ["windowId"]


def test_r1_wipe_command_appends_the_same_one_key_marker() -> None:
    # Given a running session
    kit = _started()
    # When /wipe-memory persists a window
    effects = kit.wipe().effects
    # Then the appended entry is a marker whose data holds only the window id
    (append,) = [e for e in effects if isinstance(e, AppendEntry)]
    assert append.custom_type == MARKER_TYPE and list(append.data) == ["windowId"]


def test_r1_marker_never_reaches_the_provider() -> None:
    # Given a committed reset window
    kit = _started()
    _reset_by_tool(kit)
    # When the provider request is projected
    messages = kit.project().value.messages  # type: ignore[union-attr]
    # Then no message carries the marker type
    assert all(m.get("customType") != MARKER_TYPE for m in messages)


# -- R2 ------------------------------------------------------------------------------------------


def test_r2_reset_boot_is_hidden_and_names_exactly_the_marker_window() -> None:
    # Given a running session
    kit = _started()
    # When a reset commits
    marker, boot, _ = _reset_by_tool(kit).entries[-3:]
    # Then the boot is a hidden custom_message whose details are exactly {windowId: marker id}
    assert isinstance(boot, CustomMessageDraft) and boot.custom_type == BOOT_TYPE
    assert boot.display is False
    assert boot.details == {"windowId": marker.data["windowId"]}  # type: ignore[union-attr]


def test_r2_root_boot_names_the_root_window() -> None:
    # Given a fresh session
    kit = Kit.create()
    # When it starts
    (send,) = [e for e in kit.start().effects if isinstance(e, SendMessage)]
    # Then the root boot is hidden and its details name the root window id
    assert send.custom_type == BOOT_TYPE and send.display is False
    assert send.details == {"windowId": ROOT_ID}


# -- R3 ------------------------------------------------------------------------------------------


def test_r3_running_reset_ends_with_a_hidden_continuation_without_details() -> None:
    # Given a running session (profile 0.25.1)
    kit = _started()
    # When a reset commits at turn_end
    continuation = _reset_by_tool(kit).entries[-1]
    # Then the last draft is the continuation: hidden, no details, the CONTINUATION text
    assert isinstance(continuation, CustomMessageDraft)
    assert continuation.to_json() == {
        "type": "custom_message",
        "customType": CONTINUATION_TYPE,
        "content": CONTINUATION_0_25_1,
        "display": False,
    }


def test_r3_profile_0_25_0_writes_no_continuation_on_wipe_command_or_repair() -> None:
    # Given profile 0.25.0 and a marker whose boot is missing
    kit = Kit.create(profile="0.25.0")
    kit.build.user("hi")
    kit.build.marker("pcw:12345678:aaaaaaaa")
    # When startup repairs it and /wipe-memory runs
    kit.start()
    kit.wipe()
    # Then no continuation was ever written
    assert kit.of_type(CONTINUATION_TYPE) == []
    assert len(kit.of_type(BOOT_TYPE)) == 2


# -- R4, R5, R7 ----------------------------------------------------------------------------------


def _reminder_drafts(tokens: int) -> tuple[Kit, list[CustomMessageDraft]]:
    kit = _started(tokens=tokens)
    kit.build.user("work")
    kit.context()
    value = kit.turn_end("working").value
    assert isinstance(value, BoundaryResult)
    return kit, [d for d in value.entries if isinstance(d, CustomMessageDraft)]


def test_r4_guidance_is_a_hidden_custom_message_without_details() -> None:
    # Given usage inside the reminder band (remaining 35000 ≤ 40960)
    # When the staged guidance commits at turn_end
    _, (draft,) = _reminder_drafts(200_000 - 35_000)
    # Then it is a hidden guidance custom_message without details
    assert draft.custom_type == GUIDANCE_TYPE and draft.display is False
    assert "details" not in draft.to_json()


def test_r5_warning_is_a_hidden_custom_message_without_details() -> None:
    # Given usage below the warning line (remaining 20000 ≤ 28672)
    # When the staged warning commits at turn_end
    _, (draft,) = _reminder_drafts(200_000 - 20_000)
    # Then it is a hidden warning custom_message without details
    assert draft.custom_type == WARNING_TYPE and draft.display is False
    assert "details" not in draft.to_json()


def test_r7_every_lifecycle_message_including_the_injected_warning_is_hidden() -> None:
    # Given a session that reaches the warning line and then resets by /wipe-memory
    kit = _started(tokens=200_000 - 20_000)
    injected = kit.context().value.messages[-1]  # type: ignore[union-attr]
    kit.turn_end("noted")
    kit.wipe()
    # Then the injected warning and every persisted pi-context custom_message are hidden
    assert injected["customType"] == WARNING_TYPE and injected["display"] is False
    written = [e for e in kit.tree.branch() if isinstance(e, CustomMessageEntry)]
    assert {e.custom_type for e in written} == {BOOT_TYPE, CONTINUATION_TYPE, WARNING_TYPE}
    assert all(e.display is False for e in written)


# -- R6 ------------------------------------------------------------------------------------------


def test_r6_every_type_the_lifecycle_writes_carries_the_pi_context_prefix() -> None:
    # Given a session that writes boots, reminders, markers and continuations
    kit = _started(tokens=200_000 - 20_000)
    kit.context()
    kit.turn_end("noted")
    kit.turn_start()
    _reset_by_tool(kit)
    kit.settled()
    kit.wipe()
    # Then every custom type on the branch is authored by pi-context ("pi-context/…")
    types = {
        e.custom_type for e in kit.tree.branch() if isinstance(e, CustomEntry | CustomMessageEntry)
    }
    assert types and all(t.startswith(CUSTOM_TYPE_PREFIX) for t in types)
    assert NOTE_TYPE.startswith(CUSTOM_TYPE_PREFIX) and NOTE_TYPE not in types


def test_r6_legacy_reset_v2_compaction_and_state_entries_open_no_window() -> None:
    # Given legacy entries: a reset-v2 compaction and a pi-context/state custom entry
    kit = Kit.create()
    kit.build.user("old")
    kit.build.add(
        "compaction",
        summary="<context_window>old</context_window>",
        firstKeptEntryId="00000001",
        tokensBefore=10,
        details={"piContext": "reset-v2", "windowId": "pcw:12345678:legacy00"},
    )
    kit.build.custom("pi-context/state", {"windowId": "pcw:12345678:legacy01"})
    # When the session starts
    kit.start()
    # Then the active window is still the root window and a root boot was appended
    assert kit.window_id() == ROOT_ID
    assert [e.details for e in kit.of_type(BOOT_TYPE)] == [{"windowId": ROOT_ID}]  # type: ignore[attr-defined]


# -- R8 ------------------------------------------------------------------------------------------

_NOT_A_WINDOW_ID = st.one_of(
    st.none(),
    st.just(""),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
)


@settings(max_examples=40, deadline=None)
@given(window_id=_NOT_A_WINDOW_ID)
def test_r8_marker_without_a_non_empty_string_id_is_not_a_marker(window_id: object) -> None:
    # Given a marker-typed custom entry whose windowId is not a non-empty string
    kit = Kit.create()
    kit.build.user("hi")
    kit.build.custom(MARKER_TYPE, {"windowId": window_id})
    # When a provider request is projected
    result = kit.project()
    # Then the root window is active: nothing is cut, nothing aborted
    assert kit.window_id() == ROOT_ID and kit.aborts == 0
    assert result.value.messages == kit.projection()  # type: ignore[union-attr]


@settings(max_examples=20, deadline=None)
@given(data=st.one_of(st.none(), st.integers(), st.text(max_size=4), st.lists(st.integers())))
def test_r8_marker_data_that_is_not_an_object_is_not_a_marker(data: object) -> None:
    # Given marker-typed custom entries with non-object data
    kit = Kit.create()
    kit.build.user("hi")
    kit.build.add("custom", customType=MARKER_TYPE, data=data)
    # When the session starts
    kit.start()
    # Then the root window keeps its (root) boot
    assert kit.window_id() == ROOT_ID
    assert [e.details for e in kit.of_type(BOOT_TYPE)] == [{"windowId": ROOT_ID}]  # type: ignore[attr-defined]


def test_r8_a_marker_shaped_custom_message_is_not_a_marker() -> None:
    # Given a custom_message (not a custom entry) with the marker type and a window id
    kit = Kit.create()
    kit.build.custom_message(MARKER_TYPE, "x", details={"windowId": "pcw:12345678:aaaaaaaa"})
    kit.build.add("custom", customType="other/marker", data={"windowId": "pcw:12345678:bbbbbbbb"})
    # Then the active window is the root window
    kit.project()
    assert kit.window_id() == ROOT_ID and kit.aborts == 0


# -- R9, R11 -------------------------------------------------------------------------------------


def test_r9_r11_the_last_valid_marker_on_the_branch_is_the_current_window() -> None:
    # Given two markers on the branch, the later one without a boot
    kit = Kit.create()
    kit.build.marker("pcw:12345678:11111111")
    kit.build.boot("pcw:12345678:11111111")
    kit.build.marker("pcw:12345678:22222222")
    # When a provider request is projected
    kit.project()
    # Then the missing boot is reported for the later marker's window
    (notice,) = kit.notices
    assert "pcw:12345678:22222222" in notice.message and kit.aborts == 1


def test_r9_a_marker_on_a_sibling_branch_does_not_count() -> None:
    # Given a marker on one branch and a sibling branch without any marker
    kit = _started()
    fork_point = kit.build.user("question")
    kit.build.assistant("one way")
    kit.build.marker("pcw:12345678:33333333")
    # When the user navigates to the sibling and a request is projected
    kit.navigate(fork_point)
    kit.build.assistant("other way")
    kit.project()
    # Then the root window is current there: no cut, no abort, a reset names the root as previous
    assert kit.window_id() == ROOT_ID and kit.aborts == 0
    boot = _reset_by_tool(kit).entries[-2]
    assert boot_ids(boot.content)["previous"] == ROOT_ID  # type: ignore[union-attr]


# -- R10 -----------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(session_id=st.text(alphabet="0123456789abcdef-", min_size=8, max_size=36))
def test_r10_root_window_id_is_pcw_first_eight_chars_of_the_session_id(session_id: str) -> None:
    # Given a session with an arbitrary id
    kit = Kit.create(session_id=session_id)
    # When it starts
    (send,) = [e for e in kit.start().effects if isinstance(e, SendMessage)]
    # Then the root boot names "pcw:" + the first 8 characters + ":root", first and current
    expected = f"pcw:{session_id[:8]}:root"
    assert send.details == {"windowId": expected}
    assert boot_ids(send.content) == {"first": expected, "current": expected}


# -- R12 -----------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_r12_minted_window_ids_are_session_prefix_and_eight_hex_digits(seed: int) -> None:
    # Given any random source
    kit = _started(seed=seed)
    # When a reset mints a window id
    marker = _reset_by_tool(kit).entries[0]
    # Then the id is pcw:<8 chars of the session id>:<8 lowercase hex digits>
    assert MINTED.match(marker.data["windowId"])  # type: ignore[union-attr]


def test_r12_a_draw_that_collides_with_a_marker_on_the_branch_is_drawn_again() -> None:
    # Given a branch whose marker already uses the id the random source will draw first
    first, second = _first_draws(seed=7, count=2)
    kit = Kit.create(seed=7)
    kit.build.marker(f"pcw:12345678:{first}")
    kit.build.boot(f"pcw:12345678:{first}")
    kit.build.continuation()
    kit.start()
    # When a reset mints an id
    marker = _reset_by_tool(kit).entries[0]
    # Then the colliding draw was skipped for the next one
    assert marker.data == {"windowId": f"pcw:12345678:{second}"}  # type: ignore[union-attr]


def test_r12_ids_of_markers_on_other_branches_do_not_count_as_collisions() -> None:
    # Given a sibling branch holding the id the random source draws first
    (first,) = _first_draws(seed=3, count=1)
    kit = Kit.create(seed=3)
    root = kit.build.user("q")
    kit.build.marker(f"pcw:12345678:{first}")
    kit.navigate(root)
    # When a reset mints an id on the active branch
    marker = _reset_by_tool(kit).entries[0]
    # Then the first draw is used
    assert marker.data == {"windowId": f"pcw:12345678:{first}"}  # type: ignore[union-attr]


def _first_draws(*, seed: int, count: int) -> list[str]:
    draws = uuid_draws(random.Random(seed))
    return [next(iter(draws))[:8] for _ in range(count)] if count == 1 else _take(draws, count)


def _take(draws: Any, count: int) -> list[str]:
    iterator = iter(draws)
    return [next(iterator)[:8] for _ in range(count)]


# -- R13 -----------------------------------------------------------------------------------------


def test_r13_a_reminder_of_an_earlier_window_does_not_count_in_the_new_window() -> None:
    # Given guidance persisted in the root window, then a reset to a new window
    kit = _started(tokens=200_000 - 35_000)
    kit.context()
    kit.turn_end("noted")
    kit.settled()
    assert len(kit.of_type(GUIDANCE_TYPE)) == 1
    kit.wipe()
    # When the new window's own usage enters the reminder band
    kit.build.user("more")
    kit.turn_start()
    kit.turn_end("long", total=200_000 - 35_000)
    kit.turn_start()
    kit.context()
    kit.turn_end("still working")
    # Then a guidance is staged and committed again for the new window
    assert len(kit.of_type(GUIDANCE_TYPE)) == 2


# -- R14 -----------------------------------------------------------------------------------------


def test_r14_a_boot_with_a_non_string_or_other_window_id_does_not_match() -> None:
    # Given a marker window whose only boots name other ids (one numeric, one another window)
    kit = Kit.create()
    kit.build.marker("pcw:12345678:44444444")
    kit.build.custom_message(BOOT_TYPE, "x", details={"windowId": 44444444})
    kit.build.custom_message(BOOT_TYPE, "y", details={"windowId": "pcw:12345678:55555555"})
    # When a request is projected
    kit.project()
    # Then the boot is missing: the request is cancelled
    assert kit.aborts == 1


def test_r14_raw_boot_after_the_marker_satisfies_repair_even_when_hidden() -> None:
    # Given a marker, its boot and continuation, the boot hidden by a context edit
    kit = Kit.create()
    kit.build.marker("pcw:12345678:66666666")
    boot = kit.build.boot("pcw:12345678:66666666")
    kit.build.continuation()
    kit.build.edit(boot)
    # When startup repair runs
    kit.start()
    # Then the raw boot counts: nothing is appended
    assert len(kit.of_type(BOOT_TYPE)) == 1 and len(kit.of_type(CONTINUATION_TYPE)) == 1


# -- R15 -----------------------------------------------------------------------------------------


def test_r15_running_reset_boot_names_the_window_it_replaces() -> None:
    # Given a session already in a reset window W1
    kit = _started()
    first = _reset_by_tool(kit).entries[0].data["windowId"]  # type: ignore[union-attr]
    # When a second reset commits
    boot = _reset_by_tool(kit).entries[-2]
    # Then its boot names the root as first, the new id as current and W1 as previous
    ids = boot_ids(boot.content)  # type: ignore[union-attr]
    assert ids["first"] == ROOT_ID and ids["previous"] == first
    assert ids["current"] == boot.details["windowId"]  # type: ignore[union-attr]


def test_r15_repaired_boot_names_the_last_marker_before_it_or_the_root() -> None:
    # Given two markers; the second lacks its boot
    kit = Kit.create()
    kit.build.marker("pcw:12345678:77777777")
    kit.build.boot("pcw:12345678:77777777")
    kit.build.continuation()
    kit.build.custom("foreign/metadata")
    kit.build.marker("pcw:12345678:88888888")
    # When startup repairs it
    (send, _) = [e for e in kit.start().effects if isinstance(e, SendMessage)]
    # Then the repaired boot's previous id is the earlier marker's id
    assert boot_ids(send.content)["previous"] == "pcw:12345678:77777777"
    # And a first marker's repaired boot names the root
    lone = Kit.create()
    lone.build.marker("pcw:12345678:99999999")
    (send, _) = [e for e in lone.start().effects if isinstance(e, SendMessage)]
    assert boot_ids(send.content)["previous"] == ROOT_ID


def test_r15_first_window_id_is_the_root_of_the_current_session() -> None:
    # Given a fork: a new session id holding a copied branch with the old session's root boot
    old = _started()
    old.build.user("q")
    forked = Kit.create(session_id="abcdef01-0000")
    for entry in old.tree.branch():
        forked.tree.add(entry)
    # When the fork starts and then resets
    forked.start()
    boot = _reset_by_tool(forked).entries[-2]
    # Then "first" is the fork's own root id, not the old session's
    assert boot_ids(boot.content)["first"] == "pcw:abcdef01:root"  # type: ignore[union-attr]
