"""``pictx-fsm notes``: auditing a notes home from the shell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tools_kit import PROJECT, SESSION, Notes

from pictx_fsm.cli import main


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A notes home written by the tools: a session note, a human note, a stale agent note."""
    notes = Notes(root=tmp_path / "notes")
    notes.ok("notes_write", address="plan.md", content="goal: ship\nnext: tests")
    notes.ok("notes_write", address="@human/prefs.md", content="likes tea")
    notes.ok("notes_write", address="@self/old.md", content="obsolete plan", stale=True)
    (tmp_path / "notes" / "project" / PROJECT).mkdir(parents=True)
    return notes.root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["notes", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_shows_newest_first_with_state_and_size_and_skips_sessions_by_default(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "list", "--home", str(home))
    assert code == 0
    lines = out.splitlines()
    assert [line.split("  ")[2] for line in lines] == ["@agents/root/old.md", "@human/prefs.md"]
    assert lines[0].split("  ")[1] == "stale" and lines[1].endswith("(1 lines, 9 UTF-8 bytes)")
    code, out, _ = run(capsys, "list", "--home", str(home), "--session", SESSION, "--json")
    assert [row["address"] for row in json.loads(out)] == [
        "@agents/root/old.md",
        "@human/prefs.md",
        "plan.md",
    ]


def test_list_takes_a_pattern_like_notes_list(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "list", "@human/**", "--home", str(home))
    assert code == 0 and "@human/prefs.md" in out and "old.md" not in out


def test_read_prints_the_file_unchanged_without_an_access_bump(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / "human" / "prefs.md"
    before = path.read_text(encoding="utf-8")
    code, out, _ = run(capsys, "read", "@human/prefs", "--home", str(home))
    assert (code, out) == (0, before)
    assert path.read_text(encoding="utf-8") == before
    code, out, _ = run(capsys, "read", "plan.md", "--home", str(home), "--session", SESSION)
    assert code == 0 and out.endswith("goal: ship\nnext: tests")


def test_search_prints_address_line_and_text(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "search", "plan", "tea", "--home", str(home))
    assert code == 0
    assert out.splitlines() == [
        "@agents/root/old.md:1: obsolete plan",
        "@human/prefs.md:1: likes tea",
    ]
    code, out, _ = run(capsys, "search", "plan", "--home", str(home), "--json")
    assert json.loads(out)[0]["matches"][0]["line"] == 1


def test_nothing_found_exits_1(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "search", "absent", "--home", str(home))[0] == 1
    code, out, _ = run(capsys, "read", "@human/missing", "--home", str(home))
    assert code == 1 and "note not found" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["read", "../x"], "path contains an unsupported component"),
        (["read", "@glboal/x"], "invalid note address"),
        (["read", "plan.md"], "a bare address needs --session"),
        (["list", "@agents/../**"], "who must be a canonical lowercase slug"),
        (["search", ""], "query strings must be non-empty"),
    ],
)
def test_unusable_input_exits_2_with_one_line(
    home: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, *argv, "--home", str(home))
    assert code == 2 and message in err and "Traceback" not in err


def test_a_missing_notes_home_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "list", "--home", str(tmp_path / "none"))
    assert code == 2 and "no notes home there" in err
