"""notes_edit and notes_read, rule by rule (notes spec N28–N37)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from test_rules_notes_tools import ADDR
from tools_kit import Notes, follow_reads, read_result

from pictx_fsm.extensions.pi_context.tools import tool_spec
from pictx_fsm.extensions.pi_context.tools.frontmatter import parse_note


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    return Notes(root=tmp_path / "notes")


def file_of(notes: Notes, name: str = "n.md") -> Path:
    return notes.session_dir() / name


def edit(old: str, new: str) -> dict[str, str]:
    return {"oldText": old, "newText": new}


# -- N28–N33 notes_edit -----------------------------------------------------------------------


def test_n28_notes_edit_parameters_and_description() -> None:
    spec = tool_spec("notes_edit")
    properties = spec.parameters["properties"]
    assert spec.parameters["required"] == ["address"]
    assert list(properties) == ["address", "edits", "origin", "stale", "replace_all"]
    assert properties["edits"] == {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["oldText", "newText"],
            "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
            "additionalProperties": False,
        },
    }
    assert spec.description == (
        "Edit a note body by exact-text replacement; frontmatter is never editable this way. "
        + ADDR
        + " Each oldText must occur exactly once unless replace_all is set; a multi-match "
        "anchor fails with its match line numbers and a zero-match anchor names the failing "
        "edit index. edits may be omitted (or empty) for a metadata-only update, which requires "
        "at least one of origin/stale. Moving while awake means notes_write at a new address and "
        "notes_edit at the old address with stale=true. The success return carries the address "
        "and a diff of what changed."
    )


def test_n29_nothing_to_do_comes_before_not_found_and_not_found_before_edits(
    notes: Notes,
) -> None:
    nothing = {"error": "nothing to do: provide edits or at least one of origin, stale"}
    assert notes.refusal("notes_edit", address="missing.md") == nothing
    assert notes.refusal("notes_edit", address="missing.md", edits=[]) == nothing
    assert notes.refusal("notes_edit", address="missing.md", edits=[edit("", "")]) == {
        "error": "note not found"
    }
    assert notes.refusal("notes_edit", address="missing.md", stale=True) == {
        "error": "note not found"
    }
    assert not notes.root.exists()


def test_n30_edits_apply_in_order_each_on_the_previous_result(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="alpha")
    result = notes.ok(
        "notes_edit", address="n.md", edits=[edit("alpha", "beta"), edit("beta", "gamma")]
    )
    assert result["applied"] == 2
    assert parse_note(file_of(notes).read_text(encoding="utf-8"), 0)[1] == "gamma"


def test_n30_an_ambiguous_anchor_names_its_body_lines_and_replace_all_replaces_each(
    notes: Notes,
) -> None:
    # Given a body with a repeated line
    notes.ok("notes_write", address="n.md", content="alpha\nA\nA\ngamma")
    # When an edit's anchor occurs twice
    refusal = notes.refusal("notes_edit", address="n.md", edits=[edit("A", "B")])
    # Then it fails naming the body lines and the edit index
    assert refusal == {
        "error": "edit 0: oldText occurs 2 times (lines 2, 3); pass replace_all to replace "
        "every occurrence",
        "line_numbers": [2, 3],
        "edit_index": 0,
    }
    # And replace_all replaces every occurrence
    assert (
        notes.ok("notes_edit", address="n.md", edits=[edit("A", "B")], replace_all=True)["applied"]
        == 1
    )
    assert parse_note(file_of(notes).read_text(encoding="utf-8"), 0)[1] == "alpha\nB\nB\ngamma"


def test_n30_occurrences_are_counted_left_to_right_without_overlap(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="aaaa\naa")
    refusal = notes.refusal("notes_edit", address="n.md", edits=[edit("aa", "b")])
    assert refusal["line_numbers"] == [1, 1, 2]


def test_n30_failures_name_the_edit_and_leave_the_file_byte_identical(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="one two")
    before = file_of(notes).read_bytes()
    cases = [
        (
            [edit("one", "1"), edit("zzz", "3")],
            "edit 1: oldText does not occur in the note body",
            1,
        ),
        (
            [edit("one", "1"), {"oldText": "", "newText": "x"}],
            "edit 1: oldText must be a non-empty string",
            1,
        ),
        ([{"oldText": "one"}], "edit 0: newText must be a string", 0),
        (["not an object"], "edit 0: oldText must be a non-empty string", 0),
        ([edit("origin", "x")], "edit 0: oldText does not occur in the note body", 0),
    ]
    for edits, message, index in cases:
        assert notes.refusal("notes_edit", address="n.md", edits=edits) == {
            "error": message,
            "edit_index": index,
        }
        assert file_of(notes).read_bytes() == before
    zero = notes.refusal("notes_edit", address="n.md", edits=[edit("zzz", "x")], replace_all=True)
    assert zero["edit_index"] == 0


def test_n30_new_text_is_inserted_literally(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="price: X")
    notes.ok("notes_edit", address="n.md", edits=[edit("X", "$& $1 $$ \\1")])
    assert parse_note(file_of(notes).read_text(encoding="utf-8"), 0)[1] == "price: $& $1 $$ \\1"


def test_n31_edit_sets_origin_stale_and_updated_at_and_keeps_the_rest(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="x", origin="external")
    notes.call("notes_read", address="n.md")
    before, _ = parse_note(file_of(notes).read_text(encoding="utf-8"), 0)
    notes.ok("notes_edit", address="n.md", origin="user", stale=True)
    after, _ = parse_note(file_of(notes).read_text(encoding="utf-8"), 0)
    assert (after["origin"], after["stale"]) == ("user", True)
    assert after["updated_at"] > before["updated_at"]
    for key in ("status", "created_at", "last_accessed", "access_count"):
        assert after[key] == before[key]


def test_n31_an_edit_that_changes_nothing_still_rewrites_updated_at(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="x")
    before, _ = parse_note(file_of(notes).read_text(encoding="utf-8"), 0)
    assert notes.ok("notes_edit", address="n.md", stale=False)["diff"] == ""
    after, _ = parse_note(file_of(notes).read_text(encoding="utf-8"), 0)
    assert after["updated_at"] > before["updated_at"]


def test_n32_the_diff_shows_the_body_the_frontmatter_or_the_whole_file(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="a\nb\nc")
    body = notes.ok("notes_edit", address="n.md", edits=[edit("b", "B")])["diff"]
    assert body == " 1 a\n-2 b\n+2 B\n 3 c"
    meta = notes.ok("notes_edit", address="n.md", stale=True)["diff"]
    assert "-4 stale: false\n+4 stale: true" in meta and meta.startswith(" 1 ---")
    assert "updated_at" in meta and " 9 ---" in meta
    both = notes.ok("notes_edit", address="n.md", edits=[edit("a", "A")], origin="user")["diff"]
    assert "- 2 origin: self\n+ 2 origin: user" in both and "-11 a\n+11 A" in both


def test_n33_edit_success_carries_address_applied_and_diff(notes: Notes) -> None:
    notes.ok("notes_write", address="@project/n", content="x")
    result = notes.ok("notes_edit", address="@project/n", stale=True)
    assert list(result) == ["address", "applied", "diff"]
    assert (result["address"], result["applied"]) == ("@project/n", 0)


# -- N34–N37 notes_read -----------------------------------------------------------------------


def test_n34_notes_read_parameters_and_description() -> None:
    spec = tool_spec("notes_read")
    properties = spec.parameters["properties"]
    assert list(properties) == ["address", "offset_chars", "limit_chars"]
    assert spec.parameters["required"] == ["address"]
    assert "minimum" not in properties["offset_chars"]
    assert (properties["limit_chars"]["minimum"], properties["limit_chars"]["maximum"]) == (
        1,
        50000,
    )
    assert properties["offset_chars"]["description"] == (
        "Code-point offset to start from (default 0). A negative value counts back from the "
        "end; the response echoes the resolved absolute offset. Pass the previous "
        "next_offset_chars back unchanged to continue."
    )
    assert properties["limit_chars"]["description"] == (
        "Largest requested window in code points (default 12000). A window too large for the "
        "wire budget is cut short; next_offset_chars names where the next read resumes."
    )
    assert spec.description == (
        "Read a character window of a note file, frontmatter included. " + ADDR + " "
        "offset_chars is the code-point offset to start from (default 0) — a negative value "
        "counts back from the end — and limit_chars caps the window (default 12000, max 50000). "
        "Each response delivers the longest fitting prefix of that window in the shared READ "
        "WINDOW block: concatenate only the content after the block to reconstruct the note."
    )


def test_n34_a_missing_note_is_a_json_refusal_with_error_and_address(notes: Notes) -> None:
    outcome = notes.call("notes_read", address="@project/missing.md")
    assert json.loads(outcome.text) == {"error": "note not found", "address": "@project/missing.md"}
    assert "details" not in outcome.to_json()


def test_n35_a_read_bumps_access_and_normalizes_the_file_even_in_read_only_homes(
    notes: Notes,
) -> None:
    # Given a hand-written note in another agent's home, with a legacy scope key
    home = notes.root / "agents" / "spike"
    home.mkdir(parents=True)
    (home / "a.md").write_text("---\nscope: agent\naccess_count: 4\n---\nbody", encoding="utf-8")
    # When it is read
    served = read_result(notes.call("notes_read", address="@agents/spike/a")).content
    # Then the served text is the rewritten file: normalized, scope dropped, count bumped
    on_disk = (home / "a.md").read_text(encoding="utf-8")
    assert served == on_disk
    assert "scope:" not in on_disk and "access_count: 5" in on_disk
    meta, _ = parse_note(on_disk, 0)
    assert meta["last_accessed"] == notes.clock.now


def test_n36_offsets_resolve_from_either_end_and_a_past_end_offset_is_refused(
    notes: Notes,
) -> None:
    notes.ok("notes_write", address="@human/c/进度.md", content="第一行\nneedle Café")
    tail = read_result(notes.call("notes_read", address="@human/c/进度.md", offset_chars=-4))
    assert tail.content == "Café" and tail.next_offset is None
    total = tail.total
    whole = read_result(notes.call("notes_read", address="@human/c/进度.md", offset_chars=-(10**6)))
    assert whole.start == 0
    end = read_result(notes.call("notes_read", address="@human/c/进度.md", offset_chars=total))
    assert (end.content, end.next_offset) == ("", None)
    refusal = notes.refusal("notes_read", address="@human/c/进度.md", offset_chars=total + 1)
    # The access bump of this very read is already on disk, so the note grew by nothing
    assert refusal == {
        "error": f"offset_chars {total + 1} is past the end: the note has {total} chars; the "
        f"largest legal offset is {total} (an empty end-read)",
        "address": "@human/c/进度.md",
        "offset_chars": total + 1,
        "total_chars": total,
    }


def test_n36_limit_chars_caps_the_window_at_50000(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="ab" * 40_000)
    small = read_result(notes.call("notes_read", address="n.md", limit_chars=5))
    assert (small.start, small.end, small.next_offset) == (0, 5, 5)
    big = read_result(notes.call("notes_read", address="n.md", limit_chars=10**6))
    assert big.end - big.start <= 50_000


def test_n37_an_oversized_note_is_served_as_prefixes_that_reconstruct_it(notes: Notes) -> None:
    # Given a note far larger than the 32 KiB wire budget
    text = "H" + "x" * (32 * 1024 * 2) + "\ntail line"
    notes.ok("notes_write", address="huge.md", content=text)
    # When it is read from 0 following next_offset_chars
    served, reads = follow_reads(notes, "notes_read", address="huge.md")
    first = reads[0]
    # Then each window fits, is a plain prefix, and the header is exact
    assert len(reads) > 1 and served.endswith(text) and served.startswith("---\n")
    assert first.header == (
        f"--- READ WINDOW ---\naddress: huge.md\nchars: [0,{first.next_offset}) of "
        f"{first.total}\nnext_offset_chars: {first.next_offset}\n"
    )
    assert "…" not in first.content
    assert first.details == {
        "address": "huge.md",
        "offset_chars": 0,
        "total_chars": first.total,
        "next_offset_chars": first.next_offset,
    }
    assert all(read.start == previous.end for previous, read in itertools.pairwise(reads))
