"""The boot text of a context window (lifecycle spec R72–R74, D1, D5)."""

from __future__ import annotations

import errno
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.boot import (
    BootIdentity,
    human_incomplete_notice,
    identity_block,
    incomplete_notice,
    pocket_notes,
    relative_time,
    render_boot,
)
from pictx_fsm.extensions.pi_context.notes import (
    NOTES_HOMES,
    HomeSnapshot,
    InMemoryNotesSource,
    NotesIdentity,
    NotesSnapshot,
    NoteSummary,
    Scope,
    load_notes_snapshot,
)
from pictx_fsm.extensions.pi_context.texts import (
    CONTEXT_WINDOW_OPEN_TAG,
    PROTOCOL_BLOCK,
    RESET_SUMMARY_0_24,
    Profile,
    Texts,
)

OPENED_AT = 1_800_000_000_000
HOUR = 3_600_000
V0 = Texts.for_profile(Profile.V0_25_0)
V1 = Texts.for_profile(Profile.V0_25_1)
ROOT = BootIdentity(
    agent_name="root",
    model_name="faux-1",
    root_window_id="pcw:12345678:root",
    current_window_id="pcw:12345678:root",
)
RESET = BootIdentity(
    agent_name="root",
    model_name="faux-1",
    root_window_id="pcw:12345678:root",
    current_window_id="pcw:12345678:0a1b2c3d",
    previous_window_id="pcw:12345678:root",
)
NOTES = NotesIdentity(session_id="s", project_key="p-00000000", agent="root", model="faux-1")


def snapshot_of(source: InMemoryNotesSource) -> NotesSnapshot:
    return load_notes_snapshot(source, lambda: OPENED_AT)


def empty_snapshot() -> NotesSnapshot:
    return snapshot_of(InMemoryNotesSource(identity=NOTES))


def with_notes(counts: dict[Scope, int], body: str = "BODY-SECRET") -> InMemoryNotesSource:
    """``counts[scope]`` fresh notes per home, ``n0.md`` newest."""
    source = InMemoryNotesSource(identity=NOTES)
    for scope, count in counts.items():
        for index in range(count):
            source = source.with_note(
                scope, f"n{index}.md", f"{body}\n{index}", updated_at_ms=OPENED_AT - index * HOUR
            )
    return source


# -- R72 identity and shape -----------------------------------------------------------------------


@pytest.mark.parametrize("texts", [V0, V1])
def test_r72_root_boot_starts_with_the_identity_and_has_no_previous_id(texts: Texts) -> None:
    # Given a root boot in either profile
    # When it is rendered
    text = render_boot(ROOT, empty_snapshot(), texts, reset_boot=False)
    # Then it opens with <context_window>, names the root twice and no previous window
    assert text.startswith(CONTEXT_WINDOW_OPEN_TAG + "\nAgent name: root (brain: faux-1)\n")
    assert "First context window id: pcw:12345678:root" in text
    assert "Current context window id: pcw:12345678:root" in text
    assert "Previous context window id" not in text


def test_r72_identity_block_lists_previous_id_for_reset_boots() -> None:
    # Given a reset identity
    # Then the block is exactly the spec's five-line shape plus the previous id
    assert identity_block(RESET) == (
        "<context_window>\n"
        "Agent name: root (brain: faux-1)\n"
        "First context window id: pcw:12345678:root\n"
        "Current context window id: pcw:12345678:0a1b2c3d\n"
        "Previous context window id: pcw:12345678:root\n"
        "</context_window>"
    )


def test_r72_reset_boot_of_0_25_0_starts_with_the_reset_summary() -> None:
    # Given a reset boot in profile 0.25.0
    text = render_boot(RESET, empty_snapshot(), V0, reset_boot=True)
    # Then the reset line comes first, then the identity block
    assert text.startswith(RESET_SUMMARY_0_24 + "\n\n" + CONTEXT_WINDOW_OPEN_TAG)


def test_d1_reset_boot_of_0_25_1_has_no_reset_line() -> None:
    # Given a reset boot in profile 0.25.1
    text = render_boot(RESET, empty_snapshot(), V1, reset_boot=True)
    # Then it starts with the identity block like a root boot
    assert text.startswith(CONTEXT_WINDOW_OPEN_TAG)
    assert "Previous context window id: pcw:12345678:root" in text


@pytest.mark.parametrize("texts", [V0, V1])
def test_r72_boot_without_notes_is_identity_home_instructions_and_protocol(texts: Texts) -> None:
    # Given no notes anywhere
    # When a root boot is rendered
    text = render_boot(ROOT, empty_snapshot(), texts, reset_boot=False)
    # Then it has exactly three parts joined by blank lines
    assert text == "\n\n".join((identity_block(ROOT), texts.notes_home_block, PROTOCOL_BLOCK))


def test_r72_parts_come_in_spec_order() -> None:
    # Given notes, a map and one unavailable home
    source = (
        with_notes({"session": 1})
        .with_note("human", "MAP.md", "HUMAN-MAP", updated_at_ms=1)
        .failing("model", errno.EIO)
    )
    # When a 0.25.0 reset boot is rendered
    text = render_boot(RESET, snapshot_of(source), V0, reset_boot=True)
    # Then reset line < identity < home block < notice < map < pocket < protocol
    markers = [
        RESET_SUMMARY_0_24,
        CONTEXT_WINDOW_OPEN_TAG,
        V0.notes_home_block,
        "Notes index incomplete:",
        "HUMAN-MAP",
        "You find 1 crumpled note in your pocket",
        PROTOCOL_BLOCK,
    ]
    positions = [text.index(marker) for marker in markers]
    assert positions == sorted(positions)
    assert text.endswith(PROTOCOL_BLOCK)


# -- R72 notes index ------------------------------------------------------------------------------


def test_r72_resident_maps_are_human_project_agent_model_and_never_session() -> None:
    # Given fresh maps in all five homes and a stale one replacing agent's
    source = InMemoryNotesSource(identity=NOTES)
    for scope in ("session", "project", "human", "model"):
        source = source.with_note(scope, "MAP.md", f"MAP-{scope}", updated_at_ms=1)
    source = source.with_note("agent", "MAP.md", "MAP-agent", updated_at_ms=1, stale=True)
    # When the boot is rendered
    text = render_boot(ROOT, snapshot_of(source), V1, reset_boot=False)
    # Then the fresh non-session maps appear broadest first; no map takes a pocket seat
    assert re.findall(r"MAP-\w+", text) == ["MAP-human", "MAP-project", "MAP-model"]
    assert "crumpled" not in text


def test_r72_pocket_quotas_are_5_2_2_1_1_most_recent_first() -> None:
    # Given more notes than seats in every home
    source = with_notes({"session": 7, "project": 3, "human": 3, "agent": 2, "model": 2})
    # When the pocket is filled
    seats = pocket_notes(snapshot_of(source))
    # Then each home contributes its newest notes up to its quota, homes in order
    assert [seat.address for seat in seats] == [
        *[f"n{i}.md" for i in range(5)],
        "@project/n0.md",
        "@project/n1.md",
        "@human/n0.md",
        "@human/n1.md",
        "@agents/root/n0.md",
        "@models/faux-1/n0.md",
    ]


def test_r72_pocket_lines_give_address_lines_bytes_and_relative_time_never_bodies() -> None:
    # Given two session notes, 0h and 1h old, whose bodies carry a secret
    text = render_boot(ROOT, snapshot_of(with_notes({"session": 2})), V1, reset_boot=False)
    # Then each note is one metadata line and no body text appears
    assert "- n0.md (2 lines, 13 UTF-8 bytes, updated 0s ago)" in text
    assert "- n1.md (2 lines, 13 UTF-8 bytes, updated 1h ago)" in text
    assert "BODY-SECRET" not in text
    assert "You find 2 crumpled notes in your pocket (by prefix," in text


def test_d5_pocket_header_wording_differs_between_profiles() -> None:
    # Given one session note
    snapshot = snapshot_of(with_notes({"session": 1}))
    # When rendered in both profiles
    old = render_boot(ROOT, snapshot, V0, reset_boot=False)
    new = render_boot(ROOT, snapshot, V1, reset_boot=False)
    # Then 0.25.0 says "by home … this project", 0.25.1 "by prefix … @project"
    assert "You find 1 crumpled note in your pocket (by home, most recent first" in old
    assert "2 from this project, 2 from @human, 1 from your @self home" in old
    assert "(by prefix, most recent first within each: up to 5 from this session, 2 from " in new
    assert "@project, 2 from @human, 1 from @self, 1 from @model)" in new


homes_notes = st.fixed_dictionaries({home.scope: st.integers(0, 7) for home in NOTES_HOMES})


@given(counts=homes_notes)
def test_r72_pocket_holds_min_of_quota_and_fresh_notes_per_home(counts: dict[Scope, int]) -> None:
    # Given any number of fresh notes per home
    seats = pocket_notes(snapshot_of(with_notes(counts)))
    quotas = {"session": 5, "project": 2, "human": 2, "agent": 1, "model": 1}
    # Then the pocket has min(quota, count) seats per home
    assert len(seats) == sum(min(quotas[s], n) for s, n in counts.items())


# -- relative time --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("delta_ms", "text"),
    [
        (0, "0s ago"),
        (-999, "0s ago"),
        (500, "0s ago"),
        (-59_999, "59s ago"),
        (-60_000, "1m ago"),
        (-90 * 60_000, "1h ago"),
        (-2 * 86_400_000 - 1, "2d ago"),
        (3 * HOUR, "in 3h"),
        (61_000, "in 1m"),
    ],
)
def test_r72_relative_time_uses_the_largest_unit_truncated(delta_ms: int, text: str) -> None:
    # Given a timestamp delta_ms after the opening instant
    # Then it renders with the largest fitting unit
    assert relative_time(OPENED_AT + delta_ms, OPENED_AT) == text


@given(delta_ms=st.integers(-(10**13), 10**13))
def test_r72_relative_time_always_has_the_spec_shape(delta_ms: int) -> None:
    # Given any timestamp
    text = relative_time(OPENED_AT + delta_ms, OPENED_AT)
    # Then it is "<n><d|h|m|s> ago" or "in <n><unit>", future only when a second ahead
    assert re.fullmatch(r"(in \d+[dhms])|(\d+[dhms] ago)", text)
    assert text.startswith("in ") == (delta_ms >= 1000)


# -- R73, R74, D5 incomplete notices -------------------------------------------------------------


def test_r73_one_unavailable_home_names_it_in_the_singular() -> None:
    # Given one label
    # Then the 0.25.0 wording is singular
    assert incomplete_notice(["@project"], V0) == (
        "Notes index incomplete: @project home's index was unavailable during boot; "
        "notes_list can retry after recovery."
    )


def test_r73_several_unavailable_homes_are_joined_in_the_plural() -> None:
    assert incomplete_notice(["this session", "@human"], V0) == (
        "Notes index incomplete: this session, @human home indexes were unavailable during "
        "boot; notes_list can retry after recovery."
    )


def test_d5_incomplete_notice_wording_of_0_25_1() -> None:
    assert incomplete_notice(["@self", "@model"], V1) == (
        "Notes index incomplete: index for @self, @model unavailable during boot; notes_list "
        "can retry after recovery."
    )


def test_r73_no_unavailable_home_means_no_notice() -> None:
    assert incomplete_notice([], V0) is None
    assert human_incomplete_notice([]) is None


@pytest.mark.parametrize("texts", [V0, V1])
def test_r73_identity_and_protocol_survive_when_all_five_homes_fail(texts: Texts) -> None:
    # Given every home failing with an OS error
    source = InMemoryNotesSource(identity=NOTES)
    for home in NOTES_HOMES:
        source = source.failing(home.scope, errno.EIO)
    # When a reset boot is rendered
    text = render_boot(RESET, snapshot_of(source), texts, reset_boot=True)
    # Then identity, notice (all five labels, no OS text) and protocol are present
    assert identity_block(RESET) in text
    assert text.endswith(PROTOCOL_BLOCK)
    notice = incomplete_notice(["this session", "@project", "@human", "@self", "@model"], texts)
    assert notice is not None and notice in text
    assert "Input/output error" not in text and "EIO" not in text


def test_r74_human_notice_lists_the_labels() -> None:
    # Given two unavailable homes
    # Then the human warning names both
    assert human_incomplete_notice(["@project", "@model"]) == (
        "pi-context: notes index incomplete for @project, @model; notes_list can retry after "
        "recovery."
    )


def test_r72_rendering_never_reads_a_clock() -> None:
    # Given a snapshot built by hand (no source, no clock)
    snapshot = NotesSnapshot(
        opened_at_ms=10_000,
        homes=tuple(
            HomeSnapshot(
                home=home,
                recent=(NoteSummary(address="a.md", lines=1, size_bytes=1, updated_at_ms=0),)
                if home.scope == "session"
                else (),
            )
            for home in NOTES_HOMES
        ),
    )
    # When it is rendered twice
    # Then the relative time is computed from opened_at alone, identically
    first = render_boot(ROOT, snapshot, V1, reset_boot=False)
    assert "updated 10s ago" in first
    assert render_boot(ROOT, snapshot, V1, reset_boot=False) == first
