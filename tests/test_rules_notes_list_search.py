"""notes_list, notes_search, paging, storage and the boot index (notes spec N38–N58)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from session_builders import SessionBuilder
from test_rules_notes_tools import ADDR
from tools_kit import SESSION, START_MS, Notes, read_result

from pictx_fsm import js_date
from pictx_fsm.extensions.pi_context.notes import FileNotesSource, load_notes_snapshot
from pictx_fsm.extensions.pi_context.texts import NOTES_HOME_BLOCK_0_25_0
from pictx_fsm.extensions.pi_context.tools import NotesIdentity, tool_spec
from pictx_fsm.extensions.pi_context.tools.homes import atomic_write
from pictx_fsm.extensions.pi_context.tools.output import (
    middle_truncate,
    page,
    prefix_fit,
    result_text,
)


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    return Notes(root=tmp_path / "notes")


def put(notes: Notes, relative: str, body: str = "body", updated_ms: int = START_MS) -> None:
    """A hand-written note file with a legacy scope line (as the anchor's fixtures write)."""
    path = notes.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = js_date.local_iso(updated_ms)
    path.write_text(
        f"---\nscope: x\norigin: self\nstatus: active\nstale: false\ncreated_at: {stamp}\n"
        f"updated_at: {stamp}\nlast_accessed: {stamp}\naccess_count: 0\n---\n\n{body}",
        encoding="utf-8",
    )


def addresses(rows: list[dict[str, Any]]) -> list[str]:
    return [row["address"] for row in rows]


SESSION_DIR = f"pi/session/{SESSION}"


# -- N38–N43 notes_list -------------------------------------------------------------------------


def test_n38_notes_list_parameters_and_description() -> None:
    spec = tool_spec("notes_list")
    assert list(spec.parameters["properties"]) == ["pattern", "cursor", "max_results"]
    assert "required" not in spec.parameters
    assert spec.description == (
        "List note files as rows carrying address, updated_at, and stale, most recently "
        "updated first. " + ADDR + " Listings merge your five reachable homes: this session, "
        "@project/, @human/, your @self home, and the current @model home; other agents and "
        "models appear only under an explicit glob (@agents/<name>/**, @models/<name>/**, or a "
        "glob in the name segment to scan a whole namespace)."
    )


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (False, "glob pattern must be a string"),
        (0, "glob pattern must be a string"),
        (7, "pattern.startsWith is not a function"),
        (["**"], "pattern.startsWith is not a function"),
        ("a\\b", "glob pattern must not contain NUL or backslashes"),
        ("a\0b", "glob pattern must not contain NUL or backslashes"),
    ],
)
def test_n39_bad_patterns_are_thrown(notes: Notes, pattern: object, message: str) -> None:
    assert notes.error("notes_list", pattern=pattern) == message
    assert notes.error("notes_search", query="x", pattern=pattern) == message


def test_n39_an_empty_or_null_pattern_is_no_filter(notes: Notes) -> None:
    notes.ok("notes_write", address="a", content="x")
    for pattern in (None, ""):
        assert addresses(notes.ok("notes_list", pattern=pattern)["files"]) == ["a.md"]


def test_n40_the_pattern_head_selects_the_homes_scanned(notes: Notes) -> None:
    # Given notes in every home and in two other agents' homes
    for relative in (
        f"{SESSION_DIR}/s.md",
        "project/repo-0a1b2c3d/p.md",
        "human/h.md",
        "agents/root/a.md",
        "agents/faye/f.md",
        "agents/spike/k.md",
        "models/default/m.md",
        "models/gpt/g.md",
    ):
        put(notes, relative)

    def listed(pattern: str | None) -> list[str]:
        return sorted(addresses(notes.ok("notes_list", pattern=pattern)["files"]))

    # Then the default merges the five reachable homes only
    assert listed(None) == sorted(
        ["s.md", "@project/p.md", "@human/h.md", "@agents/root/a.md", "@models/default/m.md"]
    )
    assert listed("@self/**") == ["@agents/root/a.md"]
    assert listed("@model/**") == ["@models/default/m.md"]
    assert listed("@agents/faye/**") == ["@agents/faye/f.md"]
    assert listed("@agents/*/**") == [
        "@agents/faye/f.md",
        "@agents/root/a.md",
        "@agents/spike/k.md",
    ]
    assert listed("@models/g?t/**") == []
    assert listed("@project") == [] and listed("@nowhere/**") == []


def test_n40_a_pattern_name_that_is_not_a_slug_is_refused_not_joined_into_a_path(
    notes: Notes,
) -> None:
    # Given notes at the root of the notes home (what "@agents/../" would reach in the anchor)
    put(notes, f"{SESSION_DIR}/secret.md")
    # Then a non-slug name segment is refused as the later anchor's store refuses it
    for pattern in ("@agents/../**", "@models/../pi/**", "@agents/Faye/**", "@agents/./**"):
        assert notes.refusal("notes_list", pattern=pattern) == {
            "error": "who must be a canonical lowercase slug"
        }
        assert notes.refusal("notes_search", query="body", pattern=pattern)["error"]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("**", ["@human/checkpoint/进度.md", "a?.md", "ab.md", "deep/nested/a.md", "top.md"]),
        ("*.md", ["a?.md", "ab.md", "top.md"]),
        ("deep/**", ["deep/nested/a.md"]),
        ("**/a.md", ["deep/nested/a.md"]),
        ("a?.md", ["a?.md"]),
        ("ab.md", ["ab.md"]),
        ("a*", ["a?.md", "ab.md"]),
        ("@human/*", []),
        ("@human/checkpoint/**", ["@human/checkpoint/进度.md"]),
    ],
)
def test_n41_globs_match_canonical_addresses_with_a_literal_question_mark(
    notes: Notes, pattern: str, expected: list[str]
) -> None:
    for address in ("top", "a?", "deep/nested/a", "@human/checkpoint/进度.md", "ab"):
        notes.ok("notes_write", address=address, content="x")
    expected_set = set(expected)
    assert set(addresses(notes.ok("notes_list", pattern=pattern)["files"])) == expected_set


def test_n42_the_walk_skips_symlinks_temp_files_and_non_markdown(notes: Notes) -> None:
    put(notes, f"{SESSION_DIR}/real.md")
    directory = notes.root / SESSION_DIR
    (directory / "image.png").write_text("x")
    (directory / "real.md.123.abc.tmp").write_text("x")
    os.symlink(directory / "real.md", directory / "link.md")
    os.symlink(directory, directory / "loop")
    assert addresses(notes.ok("notes_list")["files"]) == ["real.md"]


def test_n42_a_missing_home_is_empty_and_a_file_home_is_an_error(notes: Notes) -> None:
    assert notes.ok("notes_list") == {"files": [], "next_cursor": None}
    notes.root.mkdir()
    (notes.root / "human").write_text("not a directory")
    assert notes.error("notes_list").startswith("ENOTDIR: not a directory, ")


def test_n43_newest_first_then_address_by_locale_compare(notes: Notes) -> None:
    base = 1_700_000_000_000
    put(notes, f"{SESSION_DIR}/b.md", updated_ms=base + 10)
    put(notes, f"{SESSION_DIR}/a.md", updated_ms=base + 10)
    put(notes, "project/repo-0a1b2c3d/c.md", updated_ms=base + 5)
    put(notes, "human/e.md", updated_ms=base + 20)
    rows = notes.ok("notes_list")["files"]
    assert addresses(rows) == ["@human/e.md", "a.md", "b.md", "@project/c.md"]
    assert list(rows[0]) == ["address", "stale", "updated_at"]
    put(notes, "human/a.md", updated_ms=base + 10)
    rows = [row for row in notes.ok("notes_list")["files"] if row["address"].endswith("a.md")]
    assert addresses(rows) == ["@human/a.md", "a.md"]
    assert rows[0]["updated_at"] == "2023-11-14T22:13:20.010+00:00"


def test_n43_a_row_too_big_alone_gets_a_middle_truncated_address() -> None:
    # Given a listing row whose address alone exceeds the wire budget (no file system
    # allows such a path, so the page is built from the row directly)
    from pictx_fsm.extensions.pi_context.tools.notes_tools import _fit_row

    row = {"address": "n/" * 20_000 + "x.md", "stale": False, "updated_at": "t"}
    result = page([row, row], 0, "files", None, _fit_row)
    # Then it is kept, marked, and the cursor moves past it
    (fitted,) = result["files"]
    assert fitted["address_truncated"] is True and "…[truncated " in fitted["address"]
    assert list(fitted) == ["address", "stale", "updated_at", "address_truncated"]
    assert result["next_cursor"] == 1
    assert len(result_text(result).encode()) <= 32 * 1024


# -- N44–N46 notes_search -----------------------------------------------------------------------


def test_n44_notes_search_parameters_description_and_query_errors(notes: Notes) -> None:
    spec = tool_spec("notes_search")
    assert spec.parameters["required"] == ["query"]
    assert list(spec.parameters["properties"]) == [
        "query",
        "pattern",
        "cursor",
        "max_matches_per_file",
        "max_files",
    ]
    assert spec.description.startswith(
        "Case-sensitive literal substring search over note bodies; query is one string or "
        "several (OR), each matched line appears once. " + ADDR + " Search merges the same "
    )
    assert notes.error("notes_search", query=[]) == (
        "query must be a string or a non-empty array of strings"
    )
    assert notes.error("notes_search", query=["alpha", 7]) == "query array elements must be strings"
    assert notes.error("notes_search", query="") == (
        "query strings must be non-empty: an empty query matches everything"
    )


def test_n45_a_match_offset_is_where_the_next_read_serves_the_query(notes: Notes) -> None:
    notes.ok("notes_write", address="@human/c.md", content="第一行\nsay needle Café")
    found = notes.ok("notes_search", query=["Café", "needle"])
    (file,) = found["files"]
    (match,) = file["matches"]
    assert (match["line"], match["text"], match["truncated"]) == (2, "say needle Café", False)
    assert list(match) == ["line", "text", "truncated", "offset_chars"]
    read = read_result(
        notes.call("notes_read", address="@human/c.md", offset_chars=match["offset_chars"])
    )
    assert read.content.startswith("needle Café")


def test_n45_bodies_only_and_each_matching_line_once(notes: Notes) -> None:
    notes.ok("notes_write", address="alpha.md", content="alpha\nalpha beta")
    notes.ok("notes_write", address="beta.md", content="beta")
    notes.ok("notes_write", address="both.md", content="alpha beta")
    found = notes.ok("notes_search", query=["alpha", "beta"])
    assert addresses(found["files"]) == ["alpha.md", "beta.md", "both.md"]
    assert found["files"][0]["matches_total"] == 2
    assert found == notes.ok("notes_search", query=["alpha", "beta"], pattern="**")
    assert notes.ok("notes_search", query="origin")["files"] == []
    assert notes.ok("notes_search", query="alpha") == notes.ok("notes_search", query=["alpha"])


def test_n46_entries_cap_matches_but_keep_the_total(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="x1\nx2\nx3")
    (file,) = notes.ok("notes_search", query="x", max_matches_per_file=2)["files"]
    assert list(file) == ["address", "updated_at", "stale", "matches_total", "matches"]
    assert file["matches_total"] == 3 and [m["line"] for m in file["matches"]] == [1, 2]
    assert notes.ok("notes_search", query="x", pattern="absent/**") == {
        "files": [],
        "next_cursor": None,
    }


def test_n46_an_oversized_match_is_a_named_prefix_and_paging_moves_past_it(notes: Notes) -> None:
    huge_line = "p" * 500 + "needle " + "y" * (32 * 1024 * 2)
    notes.ok("notes_write", address="a.md", content="needle small")
    notes.ok("notes_write", address="search.md", content=huge_line)
    files = [
        file for page_ in notes.pages("notes_search", query="needle") for file in page_["files"]
    ]
    assert addresses(files) == ["a.md", "search.md"]
    oversized = files[1]
    (match,) = oversized["matches"]
    assert (oversized["matches_total"], match["truncated"], match["line"]) == (1, True, 1)
    assert huge_line.startswith(match["text"])
    read = read_result(
        notes.call("notes_read", address="search.md", offset_chars=match["offset_chars"])
    )
    assert read.content.startswith("needle")


# -- N47–N48 paging and fitting -----------------------------------------------------------------


def test_n47_a_limit_caps_the_page_not_the_set(notes: Notes) -> None:
    for index in range(7):
        notes.ok("notes_write", address=f"f{index}.md", content="hit")
    cursors = [
        page_["next_cursor"] for page_ in notes.pages("notes_search", query="hit", max_files=3)
    ]
    assert cursors == [3, 6, None]
    assert notes.ok("notes_list", cursor=7) == {"files": [], "next_cursor": None}
    assert notes.ok("notes_list", cursor=99) == {"files": [], "next_cursor": None}


def test_n47_the_cursor_of_a_budget_break_is_the_first_item_left_out() -> None:
    items = [{"text": "x" * 10_000} for _ in range(5)]
    first = page(items, 0, "items")
    assert len(first["items"]) == 3 and first["next_cursor"] == 3
    assert len(result_text(first).encode()) <= 32 * 1024


def test_n48_prefix_fit_and_middle_truncate() -> None:
    assert prefix_fit("abcdef", lambda text: len(text) <= 4) == "abcd"
    assert prefix_fit("😀😀😀", lambda text: len(text.encode()) <= 9) == "😀😀"
    kept = middle_truncate("abcdefghij" * 10, lambda text: len(text) <= 40)
    assert kept == "abcdefghi…[truncated 82 chars]…bcdefghij"
    assert middle_truncate("short", lambda text: True) == "short"


# -- N49–N53 storage ----------------------------------------------------------------------------


def test_n50_concurrent_writers_are_last_writer_wins(notes: Notes) -> None:
    notes.ok("notes_write", address="n.md", content="first")
    notes.ok("notes_write", address="n.md", content="second")
    assert (notes.root / SESSION_DIR / "n.md").read_text().endswith("\n\nsecond")


def test_n51_writes_go_through_a_temp_file_that_never_stays_behind(tmp_path: Path) -> None:
    # Given a write whose rename fails (the target is a directory)
    target = tmp_path / "deep" / "er" / "n.md"
    target.mkdir(parents=True)
    with pytest.raises(IsADirectoryError):
        atomic_write(target, "x")
    # Then no temp file is left behind, and a normal write creates its directories
    assert list(target.parent.iterdir()) == [target]
    atomic_write(tmp_path / "new" / "dir" / "n.md", "x")
    assert [p.name for p in (tmp_path / "new" / "dir").iterdir()] == ["n.md"]


def test_n52_times_come_from_the_frontmatter_never_the_file_mtime(notes: Notes) -> None:
    put(notes, f"{SESSION_DIR}/n.md", updated_ms=1_000_000_000_000)
    os.utime(notes.root / SESSION_DIR / "n.md", (2_000_000_000, 2_000_000_000))
    (row,) = notes.ok("notes_list")["files"]
    assert row["updated_at"] == js_date.local_iso(1_000_000_000_000, notes.context.zone)


def test_n53_filesystem_errors_are_error_results_named_by_their_code(notes: Notes) -> None:
    (notes.root / SESSION_DIR / "dir.md").mkdir(parents=True)
    text = notes.error("notes_read", address="dir.md")
    assert text.startswith("EISDIR: illegal operation on a directory, ")
    assert notes.error("notes_write", address="dir.md", content="x").startswith("EISDIR")


# -- N54–N58 the boot index ---------------------------------------------------------------------


def boot_addresses(notes: Notes) -> dict[str, list[str]]:
    identity = NotesIdentity(session_id=SESSION, project_key="repo-0a1b2c3d")
    source = FileNotesSource(home=notes.root, identity=identity)
    snapshot = load_notes_snapshot(source, lambda: START_MS)
    return {home.home.scope: [note.address for note in home.recent] for home in snapshot.homes}


def test_n54_the_boot_indexes_exactly_what_the_tools_list(notes: Notes) -> None:
    # Given notes written by the tools in every home, one stale
    for address in ("a", "b", "@project/p", "@human/h", "@self/s", "@model/m"):
        notes.ok("notes_write", address=address, content=f"{address} body")
    notes.ok("notes_edit", address="b", stale=True)
    # Then the boot's fresh notes are the tool listing minus stale rows, in the same order
    listed = notes.ok("notes_list")["files"]
    fresh = [row["address"] for row in listed if not row["stale"]]
    boot = boot_addresses(notes)
    assert [
        a for scope in ("session", "project", "human", "agent", "model") for a in boot[scope]
    ] == [a for a in fresh if a == "a.md"] + [a for a in fresh if a.startswith("@project")] + [
        a for a in fresh if a.startswith("@human")
    ] + [a for a in fresh if a.startswith("@agents")] + [
        a for a in fresh if a.startswith("@models")
    ]


def test_n55_map_md_is_an_ordinary_note_to_the_tools(notes: Notes) -> None:
    notes.ok("notes_write", address="@human/MAP.md", content="# map")
    assert addresses(notes.ok("notes_list")["files"]) == ["@human/MAP.md"]
    assert boot_addresses(notes)["human"] == []


def test_n56_the_boot_notes_home_text_is_verbatim() -> None:
    assert NOTES_HOME_BLOCK_0_25_0 == (
        "Notes_* addresses have five homes: bare <vpath> is this session, @project/<vpath> is "
        "this project, @human/<vpath> is the human's cross-project home, @self/<vpath> and "
        "@agents/<name>/<vpath> are agent homes (current vs named), and @model/<vpath> and "
        "@models/<name>/<vpath> are model homes. @self and @model resolve to who is running now; "
        "listings always show resolved names. @ means leaving home; there is no cross-home "
        "fallback. Anything else after @ — or @ inside a vpath — is a hard error. Any other "
        "note is a plain file — use the file tools."
    )


def test_n57_a_note_written_before_a_reset_is_in_the_next_boots_index(notes: Notes) -> None:
    notes.ok("notes_write", address="checkpoint.md", content="CHECKPOINT_SENTINEL")
    assert boot_addresses(notes)["session"] == ["checkpoint.md"]
    # And a new session over the same root sees the non-session homes only
    notes.ok("notes_write", address="@project/plan.md", content="plan")
    other = Notes(root=notes.root, session="s-0002")
    assert addresses(other.ok("notes_list")["files"]) == ["@project/plan.md"]


def test_n58_legacy_note_entries_in_the_session_are_never_replayed(notes: Notes) -> None:
    # Given a session holding legacy pi-context/note custom entries
    builder = SessionBuilder()
    builder.custom("pi-context/note", {"path": "old.md", "content": "replayed?"})
    notes.history = builder.tree
    # Then the tools see only files
    assert notes.ok("notes_list") == {"files": [], "next_cursor": None}
    assert notes.ok("notes_search", query="replayed") == {"files": [], "next_cursor": None}


def test_n42_an_errno_failure_of_a_home_reaches_the_boot_isolation(notes: Notes) -> None:
    notes.root.mkdir()
    (notes.root / "human").write_text("file")
    identity = NotesIdentity(session_id=SESSION, project_key="repo-0a1b2c3d")
    snapshot = load_notes_snapshot(FileNotesSource(home=notes.root, identity=identity), lambda: 0)
    assert snapshot.unavailable_labels == ("@human",)
