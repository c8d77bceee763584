"""Properties of the tool surface, quantified over generated inputs (issue 10, item 4)."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from session_builders import SessionBuilder
from tools_kit import SESSION, Notes, follow_reads, read_result

from pictx_fsm.extensions.pi_context.tools.frontmatter import parse_note, split_frontmatter
from pictx_fsm.extensions.pi_context.tools.notes_tools import _fit_row
from pictx_fsm.extensions.pi_context.tools.output import _page_bytes, _Sized, page, result_text

LIMIT = 32 * 1024
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOWER = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SECRET = "OUTSIDE-SECRET-5f1c"
TOOLS_WITH_ADDRESS = ("notes_write", "notes_edit", "notes_read")

# Path pieces that try to leave a home: dot segments, separators, absolute roots, look-alikes
# that some systems normalise (fullwidth dots, one-dot leaders, division slash), NUL.
TRICKS = st.sampled_from(
    [
        "..",
        ".",
        "/",
        "\\",
        "\0",
        "@",
        "~",
        "．．",
        "\u2024\u2024",
        "\u2215",
        "\uff0f",
        "%2e%2e",
        ".\u0338",
        "e\u0301",
        "\u00e9",
        "agents",
        "models",
        "human",
        "outside",
        "link",
        "ln",
        "x.md",
    ]
)
ADDRESSES = st.lists(TRICKS, min_size=1, max_size=6).map("/".join) | st.lists(
    TRICKS, max_size=6
).map("".join)
PREFIXES = st.sampled_from(
    ["", "@project/", "@human/", "@self/", "@model/", "@agents/", "@models/", "@"]
)


def snapshot(directory: Path) -> dict[str, str]:
    """Every path below ``directory`` with a hash of its content (or a type marker)."""
    found: dict[str, str] = {}
    for path in sorted(directory.rglob("*")):
        key = str(path.relative_to(directory))
        if path.is_symlink():
            found[key] = "link:" + os.readlink(path)
        elif path.is_file():
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[key] = "dir"
    return found


def planted(tmp_path: Path) -> tuple[Notes, Path]:
    """A notes root whose homes hold symlinks pointing out of it, at every level."""
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.md").write_text(SECRET)
    (outside / "dir" / "x.md").write_text(SECRET)
    notes = Notes(root=tmp_path / "root", agent="faye")
    session = notes.session_dir()
    session.mkdir(parents=True)
    (notes.root / "agents").mkdir()
    (notes.root / "models").mkdir()
    os.symlink(outside, notes.root / "human")  # a whole home
    os.symlink(outside, session / "link")  # a sub-directory
    os.symlink(outside / "secret.md", session / "ln.md")  # a note file
    os.symlink(outside, notes.root / "agents" / "faye")  # the current agent's home
    os.symlink(outside, notes.root / "models" / "outside")  # a namespace member
    os.symlink(outside / "missing.md", session / "dangling.md")  # a link to nowhere
    (session / "inside.md").write_text("inside body")
    return notes, outside


def no_secret(notes: Notes, name: str, **arguments: Any) -> str:
    outcome = notes.call(name, **arguments)
    assert SECRET not in outcome.text, (name, arguments)
    return outcome.status


# -- the security boundary ----------------------------------------------------------------------


@SLOWER
@given(prefix=PREFIXES, address=ADDRESSES, content=st.text(max_size=20))
def test_no_address_reads_or_writes_outside_the_notes_root(
    tmp_path_factory: pytest.TempPathFactory, prefix: str, address: str, content: str
) -> None:
    # Given a notes root with symlinks planted to a directory outside it
    notes, outside = planted(tmp_path_factory.mktemp("jail"))
    before = snapshot(outside)
    # When every address-taking tool is called with a generated address
    for name in TOOLS_WITH_ADDRESS:
        no_secret(notes, name, address=prefix + address, content=content, stale=True)
    no_secret(
        notes,
        "notes_edit",
        address=prefix + address,
        edits=[{"oldText": SECRET[:3], "newText": "x"}],
    )
    # Then nothing outside the root was read, created or changed
    assert snapshot(outside) == before
    for path in notes.root.rglob("*"):
        if not path.is_symlink():
            assert os.path.realpath(path).startswith(os.path.realpath(notes.root) + os.sep)


@SLOWER
@given(pattern=st.one_of(st.none(), PREFIXES.flatmap(lambda p: ADDRESSES.map(lambda a: p + a))))
def test_no_pattern_lists_or_searches_outside_the_notes_root(
    tmp_path_factory: pytest.TempPathFactory, pattern: str | None
) -> None:
    notes, outside = planted(tmp_path_factory.mktemp("jail"))
    before = snapshot(outside)
    for suffix in ("", "/**", "**"):
        full = None if pattern is None else pattern + suffix
        no_secret(notes, "notes_list", pattern=full)
        no_secret(notes, "notes_search", query=[SECRET, "OUTSIDE", "body"], pattern=full)
    assert snapshot(outside) == before


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("@human/a.md", "@human/a.md"),
        ("link/x.md", "link/x.md"),
        ("ln.md", "ln.md"),
        ("ln", "ln"),
        ("dangling.md", "dangling.md"),
        ("@self/new.md", "@agents/faye/new.md"),
        ("@agents/faye/x.md", "@agents/faye/x.md"),
        ("@models/outside/x.md", "@models/outside/x.md"),
    ],
)
def test_each_planted_link_out_of_the_root_is_refused_by_every_address_tool(
    tmp_path: Path, address: str, message: str
) -> None:
    notes, outside = planted(tmp_path)
    before = snapshot(outside)
    jail = f"note path resolves outside the notes root through a symbolic link: {message}"
    assert notes.error("notes_read", address=address) == jail
    if address.startswith("@models/"):  # another model's home: refused before any path
        assert (
            "is not your home"
            in notes.refusal("notes_write", address=address, content="x")["error"]
        )
    else:
        assert notes.error("notes_write", address=address, content="x") == jail
        assert notes.error("notes_edit", address=address, stale=True) == jail
    assert snapshot(outside) == before


def test_listings_refuse_homes_that_resolve_outside_and_skip_linked_notes(tmp_path: Path) -> None:
    notes, _ = planted(tmp_path)
    # The default listing includes @human (a link out) and the current agent's home (a link out)
    assert notes.error("notes_list").startswith(
        "note path resolves outside the notes root through a symbolic link: "
    )
    # Without the home-level links, linked files and directories inside a home are skipped
    (notes.root / "human").unlink()
    (notes.root / "agents" / "faye").unlink()
    files = notes.ok("notes_list", pattern="*")["files"]
    assert [row["address"] for row in files] == ["inside.md"]
    assert notes.ok("notes_list", pattern="@models/*/**") == {"files": [], "next_cursor": None}


@SLOWER
@given(name=st.text(min_size=1, max_size=12).filter(lambda name: "/" not in name))
def test_a_name_the_anchor_would_not_validate_never_becomes_a_path(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    import re

    assume(not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name))
    notes = Notes(root=tmp_path_factory.mktemp("names") / "root")
    for home in ("agents", "models"):
        assert notes.call("notes_write", address=f"@{home}/{name}/x.md", content="x").is_error
        assert notes.call("notes_read", address=f"@{home}/{name}/x.md").status != "ok"
        listing = notes.call("notes_list", pattern=f"@{home}/{name}/**")
        if not set(name) & set("*?\0\\"):
            assert listing.text == '{\n  "error": "who must be a canonical lowercase slug"\n}'
        else:  # a namespace glob, or a pattern refused for its characters
            assert listing.status in ("ok", "error")
    assert not notes.root.exists()


# -- write, read, edit ---------------------------------------------------------------------------


def no_leading_block(text: str) -> bool:
    return split_frontmatter(text)[0] == {} and split_frontmatter(text)[1] == text


@FAST
@given(content=st.text(), repeat=st.integers(1, 3000))
def test_write_then_read_returns_the_content_exactly(
    tmp_path_factory: pytest.TempPathFactory, content: str, repeat: int
) -> None:
    # Given any text without a leading frontmatter block or CRs at line ends, up to the limit
    text = content * min(repeat, 990_000 // max(1, len(content.encode())))
    assume(no_leading_block(text) and "\r\n" not in text and not text.endswith("\r"))
    notes = Notes(root=tmp_path_factory.mktemp("rw"))
    notes.ok("notes_write", address="n.md", content=text)
    # When it is read back following the cursors
    served, _ = follow_reads(notes, "notes_read", address="n.md")
    # Then the body is the text, exactly
    assert parse_note(served, 0)[1] == text


def test_crlf_line_ends_are_normalised_by_parsing_as_in_the_anchor(tmp_path: Path) -> None:
    notes = Notes(root=tmp_path)
    notes.ok("notes_write", address="n.md", content="a\r\nb\r")
    assert read_result(notes.call("notes_read", address="n.md")).content.endswith("\n\na\nb")


EDIT_TEXT = st.text(alphabet="ab\n$é", max_size=12)


def reference_edits(body: str, edits: list[tuple[str, str]], replace_all: bool) -> str | int:
    """An independent model of N30: the new body, or the index of the first failing edit."""
    for index, (old, new) in enumerate(edits):
        count = body.count(old) if old else 0
        if count == 0 or (count > 1 and not replace_all):
            return index
        body = body.replace(old, new) if replace_all else body.replace(old, new, 1)
    return body


@FAST
@given(
    body=st.text(alphabet="ab\n$é", min_size=1, max_size=40),
    edits=st.lists(st.tuples(EDIT_TEXT, EDIT_TEXT), min_size=1, max_size=4),
    replace_all=st.booleans(),
)
def test_edits_apply_in_order_and_all_or_nothing(
    tmp_path_factory: pytest.TempPathFactory,
    body: str,
    edits: list[tuple[str, str]],
    replace_all: bool,
) -> None:
    assume(no_leading_block(body))
    notes = Notes(root=tmp_path_factory.mktemp("edit"))
    notes.ok("notes_write", address="n.md", content=body)
    path = notes.session_dir() / "n.md"
    before = path.read_bytes()
    expected = reference_edits(body, edits, replace_all)
    outcome = notes.call(
        "notes_edit",
        address="n.md",
        edits=[{"oldText": old, "newText": new} for old, new in edits],
        replace_all=replace_all,
    )
    if isinstance(expected, int):
        assert outcome.status == "refusal" and f'"edit_index": {expected}' in outcome.text
        assert path.read_bytes() == before
    else:
        assert outcome.status == "ok"
        assert parse_note(path.read_text(encoding="utf-8"), 0)[1] == expected


@SLOWER
@given(text=st.text(min_size=1, max_size=50).map(lambda t: t * 400), parts=st.integers(1, 40))
def test_following_next_offset_chars_reconstructs_a_history_item(
    tmp_path_factory: pytest.TempPathFactory, text: str, parts: int
) -> None:
    # Given an item and a window size that takes up to ``parts`` reads (or more, at the budget)
    builder = SessionBuilder()
    entry = builder.user(text)
    notes = Notes(root=tmp_path_factory.mktemp("history"), history=builder.tree)
    root_window = f"pcw:{builder.tree.session_id[:8]}:root"
    limit = max(1, len(text) // parts)
    # When it is read from 0 following next_offset_chars
    item, reads = follow_reads(
        notes, "history_read", window_id=root_window, item_id=entry, limit_chars=limit
    )
    # Then the pieces are adjacent and concatenate to the item exactly
    assert item == text and reads[-1].end == reads[-1].total


@SLOWER
@given(text=st.text(min_size=1, max_size=50).map(lambda t: t * 400), parts=st.integers(1, 8))
def test_following_next_offset_chars_reconstructs_a_note(
    tmp_path_factory: pytest.TempPathFactory, text: str, parts: int
) -> None:
    # Given a note read in at most eight windows (each read bumps access_count in the file it
    # serves, N35; below ten reads the frontmatter keeps its length, so offsets stay valid)
    assume(no_leading_block(text) and "\r" not in text)
    notes = Notes(root=tmp_path_factory.mktemp("note"))
    notes.ok("notes_write", address="n.md", content=text)
    limit = max(3000, len(text) // parts + 300)
    served, reads = follow_reads(notes, "notes_read", address="n.md", limit_chars=limit)
    assert parse_note(served, 0)[1] == text and len(reads) <= 9


def test_a_read_sequence_that_crosses_ten_accesses_shifts_by_the_grown_count(
    tmp_path: Path,
) -> None:
    # Given a note whose reads push access_count from 9 to 10 (one more character)
    notes = Notes(root=tmp_path)
    notes.ok("notes_write", address="n.md", content="0123456789")
    for _ in range(8):
        notes.call("notes_read", address="n.md")
    first = read_result(notes.call("notes_read", address="n.md", offset_chars=-5))
    rest = read_result(notes.call("notes_read", address="n.md", offset_chars=first.start))
    # Then the same offset names one character earlier of the grown text (spec §16.6)
    assert (first.content, rest.total) == ("56789", first.total + 1)
    assert rest.content == "456789"


# -- pages ---------------------------------------------------------------------------------------

ROWS = st.lists(
    st.builds(
        lambda size, char, stale: {"address": char * size, "stale": stale, "updated_at": "t"},
        st.sampled_from([0, 1, 10, 500, 5_000, 20_000, 40_000]),
        st.sampled_from(["a", "é", "😀", '"', "\n"]),
        st.booleans(),
    ),
    max_size=30,
)


@FAST
@given(rows=ROWS, limit=st.one_of(st.none(), st.integers(1, 8)))
def test_following_next_cursor_lists_every_item_once_in_order_within_the_budget(
    rows: list[dict[str, Any]], limit: int | None
) -> None:
    items = [{**row, "index": index} for index, row in enumerate(rows)]
    seen: list[int] = []
    cursor: int | None = 0
    while cursor is not None:
        result = page(items, cursor, "files", limit, _fit_row)
        assert len(result_text(result).encode("utf-8")) <= LIMIT
        for item in result["files"]:
            original = items[item["index"]]
            assert item == original or (len(result["files"]) == 1 and item["address_truncated"])
        seen.extend(item["index"] for item in result["files"])
        assert result["next_cursor"] is None or result["next_cursor"] > cursor
        cursor = result["next_cursor"]
    assert seen == list(range(len(items)))


@FAST
@given(rows=ROWS, next_cursor=st.one_of(st.none(), st.integers(0, 10**6)))
def test_page_sizes_are_computed_exactly_without_serializing_the_page(
    rows: list[dict[str, Any]], next_cursor: int | None
) -> None:
    expected = len(result_text({"files": rows, "next_cursor": next_cursor}).encode("utf-8"))
    assert _page_bytes("files", [_Sized.of(row) for row in rows], next_cursor) == expected


# -- two writers ---------------------------------------------------------------------------------


def _writer(root: str, body: str, rounds: int) -> None:
    notes = Notes(root=Path(root))
    for _ in range(rounds):
        outcome = notes.call("notes_write", address="shared.md", content=body)
        assert outcome.status == "ok"


def test_two_writer_processes_never_leave_a_torn_or_mixed_note(tmp_path: Path) -> None:
    # Given two processes rewriting the same note with different large bodies
    bodies = ("A" * 300_000, "B" * 250_000 + "é" * 1000)
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_writer, args=(str(tmp_path), body, 40)) for body in bodies]
    for writer in writers:
        writer.start()
    path = tmp_path / "pi" / "session" / SESSION / "shared.md"
    # When the file is read while they run
    observed = set()
    while any(writer.is_alive() for writer in writers):
        if path.exists():
            observed.add(parse_note(path.read_text(encoding="utf-8"), 0)[1] in bodies)
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    # Then every observed file was one writer's complete note, and no temp file is left
    assert observed <= {True}
    assert parse_note(path.read_text(encoding="utf-8"), 0)[1] in bodies
    assert [p.name for p in path.parent.iterdir()] == ["shared.md"]


def test_a_boot_isolates_homes_that_resolve_outside_the_root(tmp_path: Path) -> None:
    # Given the planted root, read by the boot's notes index
    from pictx_fsm.extensions.pi_context.notes import FileNotesSource, load_notes_snapshot
    from pictx_fsm.extensions.pi_context.tools import NotesIdentity

    notes, outside = planted(tmp_path)
    before = snapshot(outside)
    identity = NotesIdentity(session_id=SESSION, project_key="repo-0a1b2c3d", agent="faye")
    source = FileNotesSource(home=notes.root, identity=identity)
    boot = load_notes_snapshot(source, lambda: 0)
    # Then the escaping homes are unavailable (R71), the session shows its real note only
    assert boot.unavailable_labels == ("@human", "@self")
    assert [note.address for note in boot.home("session").recent] == ["inside.md"]
    assert snapshot(outside) == before


def test_a_file_name_that_is_not_utf8_is_listed_as_node_shows_it(tmp_path: Path) -> None:
    notes = Notes(root=tmp_path)
    directory = notes.session_dir()
    directory.mkdir(parents=True)
    with open(os.fsencode(directory) + b"/caf\xe9.md", "wb") as handle:
        handle.write(b"body")
    (row,) = notes.ok("notes_list")["files"]
    assert row["address"] == "caf\ufffd.md"
    (hit,) = notes.ok("notes_search", query="body")["files"]
    assert hit["address"] == "caf\ufffd.md"
