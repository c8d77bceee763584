"""The notes snapshot of a boot (lifecycle spec §13: R70, R71)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.notes import (
    NOTES_HOMES,
    FileNotesSource,
    InMemoryNotesSource,
    NoteRow,
    NotesIdentity,
    NoteSummary,
    Scope,
    agent_slug,
    default_notes_home,
    isolated_failure,
    load_notes_snapshot,
    model_slug,
    note_file,
    parse_note,
    project_key,
    slugify,
)

OPENED_AT = 1_800_000_000_000
IDENTITY = NotesIdentity(session_id="s-1234", project_key="repo-0a1b2c3d", agent="faye", model="m")


def at(ms: int) -> InMemoryNotesSource:
    """An in-memory source with one note per home, updated at ``ms``."""
    source = InMemoryNotesSource(identity=IDENTITY)
    for home in NOTES_HOMES:
        source = source.with_note(home.scope, f"{home.scope}.md", "x", updated_at_ms=ms)
    return source


def clock(value: int = OPENED_AT) -> tuple[list[int], Callable[[], int]]:
    calls: list[int] = []

    def read() -> int:
        calls.append(value)
        return value

    return calls, read


# -- R70 homes, order, clock ------------------------------------------------------------------


def test_r70_five_homes_in_boot_order_with_their_labels() -> None:
    # Given the home table
    # Then it lists session, project, human, agent, model with the spec's labels
    assert [(h.scope, h.label) for h in NOTES_HOMES] == [
        ("session", "this session"),
        ("project", "@project"),
        ("human", "@human"),
        ("agent", "@self"),
        ("model", "@model"),
    ]


def test_r70_the_snapshot_reads_the_clock_once_and_lists_each_home_once() -> None:
    # Given a source that records its calls and a counting clock
    listed: list[str] = []

    class Recording(InMemoryNotesSource):
        def list_home(self, scope: Scope, now_ms: float) -> tuple[NoteRow, ...]:
            listed.append(scope)
            return super().list_home(scope, now_ms)

    calls, read = clock()
    # When a snapshot is loaded
    snapshot = load_notes_snapshot(Recording(identity=IDENTITY), read)
    # Then the clock was read once and each home listed once, in order
    assert calls == [OPENED_AT]
    assert snapshot.opened_at_ms == OPENED_AT
    assert listed == ["session", "project", "human", "agent", "model"]
    assert [h.home.scope for h in snapshot.homes] == listed


def test_r70_file_layout_and_addresses_of_the_five_homes(tmp_path: Path) -> None:
    # Given one note in each home directory under the notes home
    layout = {
        "pi/session/s-1234/plan.md": "plan",
        "project/repo-0a1b2c3d/arch.md": "arch",
        "human/prefs.md": "prefs",
        "agents/faye/gripes.md": "gripes",
        "models/m/quirks.md": "quirks",
        "agents/other/not-mine.md": "no",
    }
    for relative, body in layout.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_file(body, updated_at_ms=OPENED_AT), encoding="utf-8")
    # When the snapshot is loaded
    snapshot = load_notes_snapshot(FileNotesSource(home=tmp_path, identity=IDENTITY), clock()[1])
    # Then each home shows its own note under its public address
    addresses = {h.home.scope: [n.address for n in h.recent] for h in snapshot.homes}
    assert addresses == {
        "session": ["plan.md"],
        "project": ["@project/arch.md"],
        "human": ["@human/prefs.md"],
        "agent": ["@agents/faye/gripes.md"],
        "model": ["@models/m/quirks.md"],
    }
    assert snapshot.unavailable == ()


def test_r70_listing_is_recursive_markdown_only_and_skips_symlinks(tmp_path: Path) -> None:
    # Given nested notes, a non-markdown file and a symlinked note in the human home
    human = tmp_path / "human"
    (human / "deep" / "er").mkdir(parents=True)
    (human / "deep" / "er" / "n.md").write_text("n", encoding="utf-8")
    (human / "top.md").write_text("t", encoding="utf-8")
    (human / "image.png").write_text("x", encoding="utf-8")
    os.symlink(human / "top.md", human / "link.md")
    source = FileNotesSource(home=tmp_path, identity=IDENTITY)
    # When the home is listed
    paths = sorted(row.path for row in source.list_home("human", OPENED_AT))
    # Then only regular .md files count, with /-separated relative paths
    assert paths == ["deep/er/n.md", "top.md"]


def test_r70_recent_notes_are_most_recently_updated_first_then_by_address() -> None:
    # Given session notes with distinct and equal update times
    source = (
        InMemoryNotesSource(identity=IDENTITY)
        .with_note("session", "old.md", "o", updated_at_ms=1)
        .with_note("session", "b.md", "b", updated_at_ms=5)
        .with_note("session", "a.md", "a", updated_at_ms=5)
        .with_note("session", "new.md", "n", updated_at_ms=9)
    )
    # When the snapshot is loaded
    snapshot = load_notes_snapshot(source, clock()[1])
    # Then the order is newest first, ties broken by address
    assert [n.address for n in snapshot.home("session").recent] == [
        "new.md",
        "a.md",
        "b.md",
        "old.md",
    ]


def test_r70_summaries_count_lines_and_utf8_bytes_and_drop_bodies() -> None:
    # Given a note whose body has two lines and a two-byte character
    source = InMemoryNotesSource(identity=IDENTITY).with_note(
        "session", "é.md", "é\nz", updated_at_ms=7
    )
    # When the snapshot is loaded
    snapshot = load_notes_snapshot(source, clock()[1])
    # Then the summary carries counts and time, not the body
    assert snapshot.home("session").recent == (
        NoteSummary(address="é.md", lines=2, size_bytes=4, updated_at_ms=7),
    )


def test_r70_map_body_is_kept_only_when_fresh_and_non_empty() -> None:
    # Given a fresh map, a stale map, an empty map and a nested MAP.md
    source = (
        InMemoryNotesSource(identity=IDENTITY)
        .with_note("human", "MAP.md", "# human", updated_at_ms=1)
        .with_note("project", "MAP.md", "# stale", updated_at_ms=1, stale=True)
        .with_note("agent", "MAP.md", "", updated_at_ms=1)
        .with_note("model", "sub/MAP.md", "# nested", updated_at_ms=1)
    )
    # When the snapshot is loaded
    snapshot = load_notes_snapshot(source, clock()[1])
    # Then only the fresh non-empty top-level map is a map body; maps never become pocket notes
    assert [snapshot.home(s).map_body for s in ("human", "project", "agent", "model")] == [
        "# human",
        None,
        None,
        None,
    ]
    assert [n.address for n in snapshot.home("model").recent] == ["@models/m/sub/MAP.md"]
    assert snapshot.home("human").recent == ()


def test_r70_stale_notes_are_not_recent() -> None:
    # Given a stale and a fresh note
    source = (
        InMemoryNotesSource(identity=IDENTITY)
        .with_note("session", "stale.md", "s", updated_at_ms=9, stale=True)
        .with_note("session", "fresh.md", "f", updated_at_ms=1)
    )
    # Then only the fresh one is a pocket candidate
    snapshot = load_notes_snapshot(source, clock()[1])
    assert [n.address for n in snapshot.home("session").recent] == ["fresh.md"]


# -- note files -----------------------------------------------------------------------------------


def test_r70_frontmatter_supplies_stale_and_updated_at() -> None:
    # Given a note written by pi-context (ISO timestamp with offset, CRLF line ends)
    raw = (
        "---\r\norigin: self\r\nstale: true\r\n"
        "updated_at: 2026-09-15T17:31:45.392+08:00\r\n---\r\n\r\nbody\r\nline"
    )
    # When it is parsed
    stale, updated, body = parse_note(raw, now_ms=0)
    # Then the fields are read and the body starts after the blank line
    assert stale is True
    assert updated == 1_789_464_705_392
    assert body == "body\nline"


@pytest.mark.parametrize(
    ("raw", "stale", "updated", "body"),
    [
        ("plain text\n", False, 42, "plain text\n"),
        ("---\nstale: true\nno close\n", False, 42, "---\nstale: true\nno close\n"),
        ('---\nstale: "true"\nupdated_at: nonsense\n---\nbody', False, 42, "body"),
        ("---\nstale: yes\nupdated_at: 1234.5\n---\n\n\nbody", False, 1234.5, "\nbody"),
        ("---\nupdated_at:\n  - 1\n---\nb", False, 42, "b"),
        ("\ufeff---\nupdated_at: 2026-01-01\n---\nb", False, 1_767_225_600_000, "b"),
    ],
)
def test_r70_note_parsing_edge_cases(raw: str, stale: bool, updated: float, body: str) -> None:
    # Given a note file shape
    # When it is parsed with a fallback time of 42
    # Then stale needs the JSON true, bad times fall back, and the body is what follows
    assert parse_note(raw, now_ms=42) == (stale, updated, body)


def test_r70_missing_updated_at_falls_back_to_the_opening_instant() -> None:
    # Given a note without frontmatter
    source = InMemoryNotesSource(identity=IDENTITY).with_file("session", "n.md", "hello")
    # When the snapshot is loaded
    snapshot = load_notes_snapshot(source, clock()[1])
    # Then its update time is the snapshot's opened_at
    assert snapshot.home("session").recent[0].updated_at_ms == OPENED_AT


# -- R71 failure isolation -------------------------------------------------------------------------


@pytest.mark.parametrize("code", [errno.EIO, errno.EACCES, errno.ENOTDIR, errno.EMFILE])
def test_r71_an_errno_failure_makes_that_home_empty_and_unavailable(code: int) -> None:
    # Given a project home whose listing fails with an errno
    source = at(5).failing("project", code)
    # When the snapshot is loaded
    snapshot = load_notes_snapshot(source, clock()[1])
    # Then only that home is empty and unavailable; the others are listed
    project = snapshot.home("project")
    assert (project.unavailable, project.recent, project.map_body) == (True, (), None)
    assert snapshot.unavailable_labels == ("@project",)
    assert all(len(snapshot.home(s).recent) == 1 for s in ("session", "human", "agent", "model"))


def test_r71_a_missing_home_directory_is_empty_but_available(tmp_path: Path) -> None:
    # Given an empty notes home (no home directory exists)
    source = FileNotesSource(home=tmp_path / "nowhere", identity=IDENTITY)
    # When the snapshot is loaded
    snapshot = load_notes_snapshot(source, clock()[1])
    # Then every home is empty and none is unavailable
    assert snapshot.unavailable == ()
    assert all(h.recent == () for h in snapshot.homes)


def test_r71_enoent_from_a_source_is_an_absent_home_not_an_unavailable_one() -> None:
    # Given a source whose human listing raises ENOENT
    source = at(5).failing("human", errno.ENOENT)
    # Then the home is empty and not reported
    snapshot = load_notes_snapshot(source, clock()[1])
    assert snapshot.home("human").recent == ()
    assert snapshot.unavailable == ()


def test_r71_a_home_path_that_is_a_file_is_unavailable_on_disk(tmp_path: Path) -> None:
    # Given a regular file where the @human home directory should be (ENOTDIR)
    (tmp_path / "human").write_text("not a directory", encoding="utf-8")
    (tmp_path / "pi" / "session" / "s-1234").mkdir(parents=True)
    (tmp_path / "pi" / "session" / "s-1234" / "a.md").write_text("a", encoding="utf-8")
    # When the snapshot is loaded
    snapshot = load_notes_snapshot(FileNotesSource(home=tmp_path, identity=IDENTITY), clock()[1])
    # Then @human is unavailable and the session note is still there
    assert snapshot.unavailable_labels == ("@human",)
    assert [n.address for n in snapshot.home("session").recent] == ["a.md"]


def test_r71_all_five_homes_can_fail_independently() -> None:
    # Given every home failing with EIO
    source = InMemoryNotesSource(identity=IDENTITY)
    for home in NOTES_HOMES:
        source = source.failing(home.scope, errno.EIO)
    # Then all five are unavailable, in boot order
    snapshot = load_notes_snapshot(source, clock()[1])
    assert snapshot.unavailable_labels == ("this session", "@project", "@human", "@self", "@model")


class CodedError(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(f"failure {code}")
        self.code = code


@pytest.mark.parametrize(
    "error",
    [TypeError("bad note data"), CodedError("ERR_INVALID_ARG_TYPE"), OSError("no errno")],
)
def test_r71_non_errno_failures_propagate(error: Exception) -> None:
    # Given a source failing with something that is not an errno-style error
    source = at(5).failing("agent", error)
    # When the snapshot is loaded
    # Then the error reaches the caller (a running reset reports it, R29)
    with pytest.raises(type(error)):
        load_notes_snapshot(source, clock()[1])


def test_r71_a_node_style_string_code_is_isolated_too() -> None:
    # Given an error carrying a Node-style errno code but no OSError errno
    source = at(5).failing("model", CodedError("EBUSY"))
    # Then the home is unavailable
    snapshot = load_notes_snapshot(source, clock()[1])
    assert snapshot.unavailable_labels == ("@model",)


@given(code=st.text(alphabet="EABZ09_R-a", min_size=1, max_size=8))
def test_r71_isolation_applies_exactly_to_errno_shaped_codes(code: str) -> None:
    # Given an error with any string code
    outcome = isolated_failure(CodedError(code))
    # Then it is isolated iff the code matches ^E[A-Z0-9_]+$ and is not ERR_*
    errno_shaped = (
        len(code) > 1
        and code[0] == "E"
        and all(c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_" for c in code[1:])
        and not code.startswith("ERR_")
    )
    assert (outcome is not None) == errno_shaped


# -- identity helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "slug"), [("Faye Valentine", "faye-valentine"), ("--", "root"), ("a__b", "a-b")]
)
def test_slugify_makes_lowercase_dash_separated_names(value: str, slug: str) -> None:
    assert slugify(value) == slug


def test_agent_and_model_names_default_to_root_and_default() -> None:
    # Given no configured agent and no model, and configured ones
    # Then the fallbacks and the last model-id segment are used
    assert agent_slug(None) == "root"
    assert agent_slug("Spike") == "spike"
    assert model_slug(None) == "default"
    assert model_slug("openrouter/anthropic/Claude-3.5") == "claude-3-5"


def test_default_notes_home_honours_pi_notes_home(tmp_path: Path) -> None:
    assert default_notes_home({}, tmp_path) == tmp_path / ".agents" / "notes"
    assert default_notes_home({"PI_NOTES_HOME": "/n"}, tmp_path) == Path("/n")


def test_project_key_names_the_git_root_and_is_shared_by_worktrees(tmp_path: Path) -> None:
    # Given a repository with a subdirectory and a linked worktree pointing at it
    repo = tmp_path / "repo"
    (repo / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (repo / "src").mkdir()
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {repo / '.git' / 'worktrees' / 'wt'}\n")
    # When keys are computed from the subdirectory and from the worktree
    key = project_key(repo / "src")
    # Then both name the main checkout; a directory outside git names itself
    assert key.startswith("repo-") and len(key) == len("repo-") + 8
    assert project_key(worktree) == key
    assert project_key(tmp_path).startswith(f"{tmp_path.name}-")
