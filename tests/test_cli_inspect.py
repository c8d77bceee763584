"""``pictx-fsm inspect``: structure and problems of session files, exit codes 0/1/2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pictx_fsm.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
RESET = str(FIXTURES / "reset-window.jsonl")
DAMAGED = str(FIXTURES / "damaged.jsonl")
LEGACY = str(FIXTURES / "legacy-v1.jsonl")
HEADER = '{"type":"session","version":3,"id":"0b1e7c2a-x","timestamp":"t","cwd":"/"}\n'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["inspect", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, Any]]]:
    code, out, _ = run(capsys, "--json", *argv)
    return code, json.loads(out)


def test_clean_session_exits_0_and_shows_windows_markers_and_boots(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the clean fixture with a root boot, a reset marker and its boot
    # When it is inspected
    code, out, err = run(capsys, RESET)
    # Then it exits 0 and shows header, counts, both leaves and both windows with boots
    assert (code, err) == (0, "")
    assert "header: id 0b1e7c2a-5f3d-7a10-9c44-1d2e3f405162  version v3" in out
    assert "entries: 10  message 4  custom_message 3" in out
    assert "branches: 2 leaves" in out
    assert "leaf a0000009  depth 8  line 11  (active)" in out
    assert "  pcw:0b1e7c2a:root  root\n    boot a0000004 (line 5)" in out
    assert "pcw:0b1e7c2a:5d41402a  marker a0000006 (line 8)" in out
    assert "    boot a0000007 (line 9)" in out
    assert "problems: 0" in out


def test_damaged_session_exits_1_and_lists_every_problem_with_its_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the damaged fixture (one defect per line 4..12)
    # When it is inspected
    code, out, _ = run(capsys, DAMAGED)
    # Then it exits 1 and prints each problem as path:line: severity: kind
    assert code == 1
    for expected in (
        ":4: info: blank_line:",
        ":5: error: glued_objects:",
        ":6: error: torn_line:",
        ":7: error: duplicate_id:",
        ":8: warning: dangling_parent:",
        ":9: warning: entry_without_id:",
        ":10: error: not_an_object:",
        ":11: error: invalid_json:",
        ":12: warning: missing_final_newline:",
    ):
        assert f"{DAMAGED}{expected}" in out


def test_damaged_session_window_without_boot_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
    # Given the damaged fixture, whose marker (recovered from a torn line) has no boot
    # When it is inspected as JSON
    _, [report] = run_json(capsys, DAMAGED)
    # Then the marker's window is listed with no boot
    [root, reset] = report["windows"]
    assert root["root"] is True and reset["marker"] == {
        "id": "k1",
        "line": 6,
        "timestamp": "2026-05-04T10:06:00.000Z",
    }
    assert reset["boots"] == []


def test_migrated_v1_file_is_clean_with_an_info_note(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a v1 file / When it is inspected / Then it exits 0 and says it was migrated
    code, out, _ = run(capsys, LEGACY)
    assert code == 0
    assert "version v3 (file: v1, migrated in memory)" in out
    assert f"{LEGACY}:1: info: legacy_version:" in out


def test_json_output_is_one_document_with_one_object_per_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given a clean and a damaged file / When inspected with --json
    code, reports = run_json(capsys, RESET, DAMAGED)
    # Then there is one object per file carrying the same information as the text
    assert code == 1
    assert [(r["path"], r["exitCode"]) for r in reports] == [(RESET, 0), (DAMAGED, 1)]
    clean = reports[0]
    assert clean["header"]["id"] == "0b1e7c2a-5f3d-7a10-9c44-1d2e3f405162"
    assert clean["types"]["custom_message"] == 3
    assert clean["branches"]["leafCount"] == 2
    assert clean["branches"]["activeLeaf"] == "a0000009"
    assert [w["windowId"] for w in clean["windows"]] == [
        "pcw:0b1e7c2a:root",
        "pcw:0b1e7c2a:5d41402a",
    ]
    assert clean["windows"][1]["boots"] == [{"id": "a0000007", "line": 9}]
    torn = [p for p in reports[1]["problems"] if p["kind"] == "torn_line"]
    assert [(p["line"], p["severity"], p["raw"].startswith('{"type":"message"')) for p in torn] == [
        (6, "error", True)
    ]


def test_missing_file_exits_2_and_the_other_files_are_still_inspected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given a missing file between two real ones
    missing = str(tmp_path / "gone.jsonl")
    # When they are inspected
    code, out, _ = run(capsys, RESET, missing, DAMAGED)
    # Then the overall code is the highest (2) and all three are reported
    assert code == 2
    assert f"== {missing}\nunreadable: no such file" in out
    assert f"== {RESET}" in out and f"== {DAMAGED}" in out


def test_directory_exits_2_without_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given a directory / When inspected / Then it is unreadable input
    code, out, err = run(capsys, str(tmp_path))
    assert code == 2 and "unreadable: is a directory" in out and "Traceback" not in out + err


def test_empty_file_exits_1_as_not_a_session(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given an empty file / When inspected
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    code, out, _ = run(capsys, str(path))
    # Then it is not a session file, with the missing header reported
    assert code == 1
    assert "not a Pi session file" in out and "unreadable" not in out
    assert f"{path}: error: missing_header: file is empty" in out


def test_binary_file_exits_1_without_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given random binary data with NULs, bad UTF-8 and newlines
    path = tmp_path / "blob.jsonl"
    path.write_bytes(bytes(range(256)) * 8)
    # When inspected, as text and as JSON
    code, out, err = run(capsys, str(path))
    json_code, [report] = run_json(capsys, str(path))
    # Then it is not a session, problems are listed, and no traceback appears
    assert code == json_code == 1
    assert "invalid_encoding" in out and "Traceback" not in out + err
    assert report["note"].startswith("not a Pi session file")


def test_lock_file_is_not_a_session_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given a pretty-printed JSON lock file left next to a session
    path = tmp_path / "s.jsonl.lock"
    path.write_text('{\n  "pid": 2732,\n  "createdAt": "2026-03-04T15:35:52.631Z"\n}')
    # When inspected / Then it is reported as not a session file
    code, out, _ = run(capsys, str(path))
    assert code == 1 and "not a Pi session file" in out


def test_header_only_session_is_clean(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Given a session with a header and no entry yet
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER)
    # When inspected / Then it is clean, with no leaf and only the root window
    code, reports = run_json(capsys, str(path))
    assert code == 0
    assert reports[0]["branches"] == {"leafCount": 0, "activeLeaf": None, "leaves": []}
    assert [w["windowId"] for w in reports[0]["windows"]] == ["pcw:0b1e7c2a:root"]


def test_entries_without_a_header_exit_1_and_are_still_described(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given entries with no header line
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"custom","id":"c1","parentId":null,"timestamp":"t","customType":"x"}\n'
    )
    # When inspected
    code, out, _ = run(capsys, str(path))
    # Then the entries are counted and the missing header is an error
    assert code == 1
    assert "header: none" in out and "entries: 1  custom 1" in out
    assert f"{path}:1: error: not_session_header:" in out


def test_stray_boot_before_its_marker_is_shown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given a boot whose windowId names no window opened before it on the branch
    boot = {
        "type": "custom_message",
        "customType": "pi-context/boot",
        "content": "boot",
        "display": False,
        "details": {"windowId": "pcw:0b1e7c2a:ffffffff"},
        "id": "b1",
        "parentId": None,
        "timestamp": "t",
    }
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER + json.dumps(boot) + "\n")
    # When inspected / Then it is listed as a stray boot
    _, [report] = run_json(capsys, str(path))
    assert report["strayBoots"] == [{"windowId": "pcw:0b1e7c2a:ffffffff", "id": "b1", "line": 2}]
