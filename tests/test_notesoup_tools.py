"""notesoup's notes and history tools (S91–S116) on the runtime: the new addresses (``seq``,
``@previous``), the new note metadata read in both formats (0.25's snake_case migrates),
history paging's edges (Q5), and no text naming the old ``wipe_memory`` (Q7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from notesoup_kit import NotesoupKit, audits_verify  # noqa: F401

from pictx_fsm.extensions.notesoup import texts
from pictx_fsm.extensions.notesoup.notes.meta import parse_note, serialize_note
from pictx_fsm.extensions.notesoup.tools.specs import TOOL_SPECS
from pictx_fsm.host.events import ToolCall
from pictx_fsm.host.tool_outcome import ToolOutcome

NOW_MS = 1_796_000_000_000


def _kit(tmp_path: Path) -> NotesoupKit:
    kit = NotesoupKit.create(notes_home=tmp_path / "notes")
    kit.start()
    return kit


def _call(kit: NotesoupKit, name: str, **arguments: Any) -> ToolOutcome:
    value = kit.handle(ToolCall(name=name, arguments=arguments)).value
    assert isinstance(value, ToolOutcome)
    return value


# -- Q7: the tool is clear_memory ------------------------------------------------------------------


def test_q7_no_notesoup_text_names_wipe_memory() -> None:
    # Given every text notesoup shows the model or the human, and every tool registration
    shown = [value for name, value in vars(texts).items() if name.isupper()]
    shown += [json.dumps(spec.to_json()) for spec in TOOL_SPECS]
    flat = json.dumps(shown, default=str)
    # Then none names the 0.25 tool that does not exist here
    assert "wipe_memory" not in flat and "clear_memory" in flat


# -- Q5: history paging's edges ------------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, -1, -1000])
def test_q5_a_limit_below_one_is_an_error_naming_limit(tmp_path: Path, limit: int) -> None:
    kit = _kit(tmp_path)
    kit.build.user("a")
    outcome = _call(kit, "history_list", limit=limit)
    assert outcome.is_error and outcome.text == "limit must be an integer >= 1"


@given(seq=st.integers(min_value=0, max_value=8))
@settings(max_examples=20, deadline=None)
def test_q5_equal_before_and_after_select_nothing(seq: int) -> None:
    kit = NotesoupKit.create()
    kit.start()
    for text in ("one", "two", "three"):
        kit.build.user(text)
        kit.build.assistant(f"re {text}")
    outcome = _call(kit, "history_list", after=seq, before=seq)
    assert not outcome.is_error and outcome.text == "no events match this selection"


# -- seq and @previous -------------------------------------------------------------------------


def test_s102_history_read_takes_a_seq_and_at_previous_names_the_window_before(
    tmp_path: Path,
) -> None:
    # Given a first window with one exchange, then clear_memory and a second window
    kit = _kit(tmp_path)
    kit.build.user("first window question")
    kit.build.assistant("first window answer")
    kit.tool_turn("clear_memory")
    kit.build.user("second window question")
    # When the model lists the previous window and reads a seq it was given
    listed = _call(kit, "history_list", window_id="@previous")
    seq = int(listed.text.split("seq ", 1)[1].split(" ", 1)[0])
    read = _call(kit, "history_read", seq=seq)
    # Then @previous is the first window (only its events), and the seq reads one whole
    assert "first window question" in listed.text and "second window" not in listed.text
    assert "first window question" in read.text and not read.is_error


# -- the note metadata, in both formats ------------------------------------------------------------


def test_s96_a_0_25_note_is_read_and_rewritten_in_notesoup_s_format() -> None:
    # Given a note as pi-context 0.25 wrote it (snake_case, stale)
    raw = (
        "---\norigin: self\ncreated_at: 2026-01-02T03:04:05.000Z\n"
        "updated_at: 2026-01-03T03:04:05.000Z\nlast_accessed: 2026-01-04T03:04:05.000Z\n"
        "access_count: 3\nstale: true\ncolor: blue\n---\n\nthe body\n"
    )
    # When notesoup reads it and writes it back
    meta, body = parse_note(raw, NOW_MS)
    written = serialize_note(meta, body)
    # Then the timestamps, the count and the stale flag (now crumpled) carry over, an unknown
    # key is kept, and the file is camelCase
    assert meta.access_count == 3 and meta.crumpled and body.strip() == "the body"
    assert "accessCount: 3" in written and "crumpledAt:" in written and "color: blue" in written
    assert "access_count" not in written and "stale" not in written
    again, _ = parse_note(written, NOW_MS)
    assert again == meta


@given(
    count=st.integers(min_value=0, max_value=10**6),
    stale=st.booleans(),
    legacy=st.booleans(),
)
@settings(max_examples=40, deadline=None)
def test_s96_metadata_round_trips_from_either_format(count: int, stale: bool, legacy: bool) -> None:
    keys = (
        ("created_at", "updated_at", "last_accessed", "access_count")
        if legacy
        else ("createdAt", "updatedAt", "lastAccessed", "accessCount")
    )
    lines = [f"{keys[0]}: 2026-01-02T03:04:05.000Z", f"{keys[1]}: 2026-01-03T03:04:05.000Z"]
    lines += [f"{keys[2]}: 2026-01-04T03:04:05.000Z", f"{keys[3]}: {count}"]
    if stale:
        lines.append("stale: true" if legacy else "crumpledAt: 2026-01-03T03:04:05.000Z")
    raw = "---\n" + "\n".join(lines) + "\n---\n\nbody\n"
    meta, body = parse_note(raw, NOW_MS)
    assert meta.access_count == count and meta.crumpled == stale
    assert parse_note(serialize_note(meta, body), NOW_MS) == (meta, body)


def test_s95_a_write_lands_in_the_session_home_and_leaving_the_root_is_refused(
    tmp_path: Path,
) -> None:
    kit = _kit(tmp_path)
    wrote = _call(kit, "notes_write", address="plan", content="# Plan")
    refused = _call(kit, "notes_write", address="../x", content="x")
    assert wrote.structured == {"address": "plan.md", "outcome": "created"}
    assert refused.is_error and refused.text.startswith("error: invalid_address")
    assert [p.name for p in (tmp_path / "notes").rglob("*.md")] == ["plan.md"]
