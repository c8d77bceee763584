"""The entry tree and window identity (pi-host §8.6, lifecycle R8–R15)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_builders import SESSION_ID, SessionBuilder, entry, header

from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    WARNING_TYPE,
)
from pictx_fsm.extensions.pi_context.windows import (
    WindowIndex,
    boot_window_id,
    is_boot_for,
    is_boot_message,
    is_valid_marker,
    mint_window_id,
    root_window_id,
    window_id_candidate,
    window_id_of_marker,
)
from pictx_fsm.session.entries import Entry, LabelEntry
from pictx_fsm.session.ids import uuid_draws
from pictx_fsm.session.tree import SessionTree

ROOT = root_window_id(SESSION_ID)


def raw_custom(custom_type: str, data: Any, entry_id: str = "aaaaaaaa") -> dict[str, Any]:
    return {
        "type": "custom",
        "id": entry_id,
        "parentId": None,
        "timestamp": "2026-11-30T03:04:05.000Z",
        "customType": custom_type,
        "data": data,
    }


# -- R8 ---------------------------------------------------------------------------------------


def test_r8_custom_entry_with_marker_type_and_string_window_id_is_a_marker() -> None:
    # Given a custom entry of the marker type with a non-empty string windowId
    marker = entry(raw_custom(MARKER_TYPE, {"windowId": "pcw:01a22a68:0badf00d"}))
    # Then it is a valid marker opening that window
    assert is_valid_marker(marker)
    assert window_id_of_marker(marker) == "pcw:01a22a68:0badf00d"


@pytest.mark.parametrize(
    "data",
    [{"windowId": 7}, {"windowId": ""}, None, "pcw:x", [], {"window": "pcw:x"}],
    ids=["numeric", "empty", "null-data", "string-data", "list-data", "wrong-key"],
)
def test_r8_marker_without_a_non_empty_string_window_id_is_not_a_marker(data: Any) -> None:
    # Given a marker-typed custom entry whose data lacks a usable windowId
    candidate = entry(raw_custom(MARKER_TYPE, data))
    # Then it is not a marker
    assert not is_valid_marker(candidate)


def test_r8_custom_message_of_marker_type_is_not_a_marker() -> None:
    # Given a custom_message (not a custom entry) with the marker's type and data
    builder = SessionBuilder()
    builder.custom_message(MARKER_TYPE, "x", details={"windowId": "pcw:01a22a68:0badf00d"})
    # Then the tree does not open a window for it
    assert WindowIndex.of(builder.tree).current_window.window_id == ROOT
    assert not is_valid_marker(builder.tree.leaf.entry if builder.tree.leaf else None)


def test_r8_legacy_reset_v2_compaction_is_not_a_marker() -> None:
    # Given a ≤0.24 compaction whose details name a reset-v2 window
    builder = SessionBuilder()
    builder.user()
    builder.add(
        "compaction",
        summary="boot",
        firstKeptEntryId="00000001",
        details={"piContext": "reset-v2", "windowId": "pcw:01a22a68:legacy00"},
    )
    # Then the branch is still in the root window
    assert WindowIndex.of(builder.tree).current_window.is_root


# -- R9, R11 ----------------------------------------------------------------------------------


def test_r9_r11_current_window_is_the_last_marker_on_the_active_branch() -> None:
    # Given two markers on the branch
    builder = SessionBuilder()
    builder.user()
    builder.marker("pcw:01a22a68:00000001")
    builder.user()
    builder.marker("pcw:01a22a68:00000002")
    # When the leaf is after both
    builder.user()
    # Then the current window is the second marker's
    assert WindowIndex.of(builder.tree).current_window.window_id == "pcw:01a22a68:00000002"


def test_r9_a_marker_on_a_sibling_branch_does_not_count() -> None:
    # Given a marker on one branch and a navigation back before it
    builder = SessionBuilder()
    fork_point = builder.user()
    builder.marker("pcw:01a22a68:00000001")
    builder.tree.navigate(fork_point)
    # When a new branch grows from the fork point
    builder.user("other branch")
    # Then its window is the root window
    assert WindowIndex.of(builder.tree).current_window.window_id == ROOT
    assert not WindowIndex.of(builder.tree).tail_after_marker()


def test_r11_without_a_marker_the_window_is_the_root_window() -> None:
    builder = SessionBuilder()
    builder.user()
    assert WindowIndex.of(builder.tree).current_window.window_id == ROOT
    assert WindowIndex.of(builder.tree).current_window.is_root


# -- R10, R12 ---------------------------------------------------------------------------------


def test_r10_root_window_id_uses_the_first_8_characters_of_the_session_id() -> None:
    assert root_window_id("12345678-abcd") == "pcw:12345678:root"


def test_r12_minted_id_is_pcw_session_prefix_and_8_hex_digits() -> None:
    # Given a seeded random source
    draws = uuid_draws(random.Random(7))
    # When an id is minted
    minted = mint_window_id("12345678-abcd", draws, taken=())
    # Then it has the R12 shape
    prefix, session, suffix = minted.split(":")
    assert (prefix, session) == ("pcw", "12345678")
    assert len(suffix) == 8 and all(c in "0123456789abcdef" for c in suffix)


def test_r12_a_draw_that_collides_with_a_branch_marker_is_drawn_again() -> None:
    # Given a branch whose marker uses the first candidate the source will produce
    builder = SessionBuilder()
    builder.marker(window_id_candidate(SESSION_ID, "deadbeef" + "0" * 24))
    taken = WindowIndex.of(builder.tree).current_window.marker_window_ids()
    # When minting with that candidate first
    minted = mint_window_id(SESSION_ID, iter(["deadbeef" + "0" * 24, "cafef00d" + "0" * 24]), taken)
    # Then the second candidate is used
    assert minted == window_id_candidate(SESSION_ID, "cafef00d")


# -- R13 --------------------------------------------------------------------------------------


def test_r13_a_guidance_after_the_marker_is_a_window_message() -> None:
    builder = SessionBuilder()
    builder.marker("pcw:01a22a68:00000001")
    builder.custom_message(GUIDANCE_TYPE, "low")
    builder.user()
    assert WindowIndex.of(builder.tree).has_window_message(GUIDANCE_TYPE)
    assert not WindowIndex.of(builder.tree).has_window_message(WARNING_TYPE)


def test_r13_a_guidance_before_the_marker_is_not_in_this_window() -> None:
    builder = SessionBuilder()
    builder.custom_message(GUIDANCE_TYPE, "low")
    builder.marker("pcw:01a22a68:00000001")
    assert not WindowIndex.of(builder.tree).has_window_message(GUIDANCE_TYPE)


def test_r13_a_custom_entry_of_the_type_is_not_a_window_message() -> None:
    builder = SessionBuilder()
    builder.custom(GUIDANCE_TYPE)
    assert not WindowIndex.of(builder.tree).has_window_message(GUIDANCE_TYPE)


# -- R14, R15 ---------------------------------------------------------------------------------


def test_r14_boot_matches_by_details_window_id_in_both_forms() -> None:
    # Given a boot entry for a window and its projection message
    builder = SessionBuilder()
    builder.boot("pcw:01a22a68:00000001")
    boot = builder.tree.leaf.entry if builder.tree.leaf else None
    message = {
        "role": "custom",
        "customType": BOOT_TYPE,
        "details": {"windowId": "pcw:01a22a68:00000001"},
    }
    # Then both match that id only
    assert boot_window_id(boot) == "pcw:01a22a68:00000001"
    assert is_boot_for(boot, "pcw:01a22a68:00000001")
    assert not is_boot_for(boot, "pcw:01a22a68:00000002")
    assert is_boot_message(message, "pcw:01a22a68:00000001")
    assert is_boot_message(message)
    assert not is_boot_message({**message, "details": {"windowId": 1}}, "1")
    assert not is_boot_message({**message, "role": "user"})


def test_r14_the_window_boot_is_the_first_raw_boot_after_the_marker() -> None:
    builder = SessionBuilder()
    builder.boot("pcw:01a22a68:00000001")  # before the marker: not this window's boot
    builder.marker("pcw:01a22a68:00000001")
    builder.boot(ROOT)  # another window's boot
    first = builder.boot("pcw:01a22a68:00000001")
    builder.boot("pcw:01a22a68:00000001")
    leaf = builder.tree.leaf
    assert leaf is not None and WindowIndex.of(builder.tree).at(leaf).boot_id == first


def test_r15_previous_window_is_the_last_marker_before_else_the_root() -> None:
    builder = SessionBuilder()
    builder.marker("pcw:01a22a68:00000001")
    assert WindowIndex.of(builder.tree).current_window.previous_window_id == ROOT
    builder.marker("pcw:01a22a68:00000002")
    assert WindowIndex.of(builder.tree).current_window.previous_window_id == "pcw:01a22a68:00000001"


def test_tail_after_marker_lists_the_entries_following_the_current_marker() -> None:
    builder = SessionBuilder()
    builder.user()
    builder.marker("pcw:01a22a68:00000001")
    boot = builder.boot("pcw:01a22a68:00000001")
    continuation = builder.continuation()
    assert [e.id for e in WindowIndex.of(builder.tree).tail_after_marker()] == [boot, continuation]


# -- tree semantics (pi-host §8.6) ------------------------------------------------------------


def test_reload_puts_the_leaf_on_the_last_entry_in_file_order() -> None:
    # Given a navigation that appended nothing (not durable)
    builder = SessionBuilder()
    first = builder.user()
    builder.assistant()
    builder.tree.navigate(first)
    # When the entries are reloaded
    reloaded = SessionTree.from_entries(builder.tree.header, builder.tree.entries)
    # Then the leaf is the last entry in the file again
    assert reloaded.leaf_id == builder.tree.entries[-1].id


def test_fork_copies_the_path_with_the_same_ids_and_drops_labels() -> None:
    builder = SessionBuilder()
    first = builder.user()
    builder.label(first)
    answer = builder.assistant()
    forked = builder.tree.fork(answer, header("01a22a68-ffff"))
    assert [e.id for e in forked.branch()] == [first, answer]
    assert not any(isinstance(e, LabelEntry) for e in forked.entries)


# -- properties -------------------------------------------------------------------------------

Op = tuple[str, int]
OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["user", "marker", "boot", "guidance", "custom", "navigate", "fork", "reload"]
        ),
        st.integers(min_value=0, max_value=10_000),
    ),
    max_size=40,
)


def naive_path(entries: list[Entry], leaf_id: str | None) -> list[str]:
    by_id = {e.id: e for e in entries}
    path: list[str] = []
    current = by_id.get(leaf_id) if leaf_id else None
    while current is not None and current.id is not None:
        path.append(current.id)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return path[::-1]


def naive_window(entries: list[Entry], path: list[str]) -> tuple[str, bool]:
    by_id = {e.id: e for e in entries}
    window, guidance = ROOT, False
    for entry_id in path:
        opened = window_id_of_marker(by_id[entry_id])
        if opened is not None:
            window, guidance = opened, False
        elif getattr(by_id[entry_id], "custom_type", None) == GUIDANCE_TYPE:
            guidance = guidance or by_id[entry_id].type == "custom_message"
    return window, guidance


def apply(builder: SessionBuilder, op: Op, serial: int) -> SessionBuilder:
    kind, pick = op
    tree = builder.tree
    ids = [e.id for e in tree.entries if e.id is not None]
    if kind == "user":
        builder.user()
    elif kind == "marker":
        builder.marker(f"pcw:01a22a68:{serial:08x}")
    elif kind == "boot":
        builder.boot(WindowIndex.of(tree).current_window.window_id)
    elif kind == "guidance":
        builder.custom_message(GUIDANCE_TYPE, "low")
    elif kind == "custom":
        builder.custom(GUIDANCE_TYPE)
    elif kind == "navigate" and ids:
        tree.navigate(ids[pick % len(ids)])
    elif kind == "fork" and ids:
        return SessionBuilder(tree=tree.fork(ids[pick % len(ids)], header("01a22a68-f0f0")))
    elif kind == "reload":
        return SessionBuilder(tree=SessionTree.from_entries(tree.header, tree.entries))
    return builder


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_property_branch_is_always_the_path_to_the_leaf(ops: list[Op]) -> None:
    # Given any sequence of appends, navigations, forks and reloads
    builder = SessionBuilder()
    for serial, op in enumerate(ops):
        builder = apply(builder, op, serial)
        tree = builder.tree
        entries = list(tree.entries)
        # Then the branch is the parent-link path to the leaf
        path = naive_path(entries, tree.leaf_id)
        assert [e.id for e in tree.branch()] == path
        # And window identity read at the leaf equals a rescan of that path
        window, guidance = naive_window(entries, path)
        assert WindowIndex.of(tree).current_window.window_id == window
        assert WindowIndex.of(tree).has_window_message(GUIDANCE_TYPE) == guidance


@settings(max_examples=150, deadline=None)
@given(
    markers=st.lists(st.text("0123456789abcdef", min_size=8, max_size=8), max_size=12),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_property_minted_ids_never_collide_on_the_branch(markers: list[str], seed: int) -> None:
    # Given a branch with markers, and a source that first replays their draws
    builder = SessionBuilder()
    for draw in markers:
        builder.marker(window_id_candidate(SESSION_ID, draw))
        builder.user()
    taken = WindowIndex.of(builder.tree).current_window.marker_window_ids()

    def draws() -> Any:
        yield from (draw + "0" * 24 for draw in markers)
        yield from uuid_draws(random.Random(seed))

    # When a new window id is minted
    minted = mint_window_id(SESSION_ID, draws(), taken)
    # Then no valid marker on the branch uses it
    branch_ids = {window_id_of_marker(e) for e in builder.tree.branch()}
    assert minted not in branch_ids
