"""``pictx-fsm audit``: exit codes 0/1/2, the text report, one JSON document, ``--profile``,
``--stats``, and no traceback on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pictx_fsm.cli import main
from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import audit_file

FIXTURES = Path(__file__).parent / "fixtures" / "audit"
CLEAN = str(FIXTURES / "clean.jsonl")
STORM = str(FIXTURES / "overflow_storm.jsonl")
TAIL_INCOMPLETE = str(FIXTURES / "tail_incomplete.jsonl")
LEGACY = str(FIXTURES / "legacy_reset_compaction.jsonl")
HEADER = '{"type":"session","version":3,"id":"0b1e7c2a-x","timestamp":"t","cwd":"/"}\n'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, "--json", *argv)
    return code, json.loads(out)


def test_a_clean_session_exits_0_with_its_summary(capsys: pytest.CaptureFixture[str]) -> None:
    # Given the clean fixture (two resets, two branches)
    # When it is audited
    code, out, err = run(capsys, CLEAN)
    # Then it exits 0 and prints the summary and no finding
    assert (code, err) == (0, "")
    assert "entries 31  branches 2  windows 3  markers 2  boots 3" in out
    assert "findings: 0 (0 error, 0 warning, 0 info)" in out


def test_findings_exit_1_and_print_path_line_severity_kind_rule_and_entries(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given the storm fixture
    # When it is audited
    code, out, _ = run(capsys, STORM)
    # Then it exits 1 with one line per finding
    assert code == 1
    assert f"{STORM}:10: error: overflow_storm [FM1]: 2 overflow errors and 2 recoveries" in out
    assert "(entries: a0000009 (line 10), a000000a (line 11)," in out


def test_info_only_findings_audit_clean(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a legacy reset-v2 compaction (an info finding)
    # When it is audited
    code, out, _ = run(capsys, LEGACY)
    # Then it is listed and the exit code is still 0
    assert code == 0
    assert "info: legacy_reset_compaction [R6]" in out


def test_profile_0_25_0_relaxes_the_continuation(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a branch ending after the boot, without the continuation
    # When it is audited in both profiles
    strict, _, _ = run(capsys, TAIL_INCOMPLETE)
    relaxed, out, _ = run(capsys, "--profile", "0.25.0", TAIL_INCOMPLETE)
    # Then only 0.25.1 reports it
    assert (strict, relaxed) == (1, 0)
    assert "findings: 0" in out


def test_an_unknown_profile_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--profile", "0.24", CLEAN])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_json_is_one_document_for_all_files(capsys: pytest.CaptureFixture[str]) -> None:
    # Given a clean file and a file with a storm
    # When both are audited as JSON
    code, document = run_json(capsys, CLEAN, STORM)
    # Then one document holds the profile, the overall code, totals and every file
    assert code == 1
    assert (document["profile"], document["exitCode"]) == ("0.25.1", 1)
    assert document["findings"] == {"error": 1, "warning": 0, "info": 0}
    clean, storm = document["files"]
    assert clean == {
        "path": CLEAN,
        "exitCode": 0,
        "summary": {
            "entries": 31,
            "branches": 2,
            "windows": 3,
            "markers": 2,
            "boots": 3,
            "findings": {"error": 0, "warning": 0, "info": 0},
        },
        "kinds": {},
        "findings": [],
    }
    [finding] = storm["findings"]
    assert set(finding) == {"kind", "severity", "rule", "line", "entries", "message"}
    assert (finding["kind"], finding["severity"], finding["rule"]) == (
        "overflow_storm",
        "error",
        "FM1",
    )
    assert finding["entries"][0] == {"id": "a0000009", "line": 10}
    assert storm["kinds"] == {"overflow_storm": 1}
    assert "stats" not in storm


def test_stats_report_throughput_per_file_and_in_total(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given two files
    # When they are audited with --stats, as text and as JSON
    _, out, _ = run(capsys, "--stats", CLEAN, STORM)
    _, document = run_json(capsys, "--stats", CLEAN, STORM)
    # Then each file and the run report bytes, entries, seconds and rates
    assert out.count("\nstats: ") == 2 and "\n\ntotal: " in out
    size = Path(CLEAN).stat().st_size
    stats = document["files"][0]["stats"]
    assert (stats["bytes"], stats["entries"]) == (size, 31)
    assert set(stats) == {"bytes", "entries", "seconds", "bytesPerSecond", "entriesPerSecond"}
    assert document["stats"]["bytes"] == size + Path(STORM).stat().st_size


def test_stats_use_the_injected_clock() -> None:
    # Given a clock that advances two seconds per reading
    ticks = iter([10.0, 12.0])
    # When a file is audited with it
    report = audit_file(CLEAN, session_checks(), clock=lambda: next(ticks))
    # Then the elapsed time and rates come from that clock
    assert report.stats is not None
    assert report.stats.seconds == 2.0
    assert report.stats.rate(report.stats.entries) == 15.5


def test_a_missing_file_exits_2_and_the_other_files_are_still_audited(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = str(tmp_path / "nope.jsonl")
    code, document = run_json(capsys, missing, STORM)
    assert code == 2
    first, second = document["files"]
    assert (first["exitCode"], first["error"]) == (2, "no such file")
    assert second["exitCode"] == 1


def test_a_directory_exits_2_without_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, str(tmp_path))
    assert (code, err) == (2, "")
    assert "unreadable: is a directory, not a session file" in out


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("empty.jsonl", b""),
        ("binary.jsonl", bytes(range(256)) * 4),
        ("lock.jsonl.lock", b'{\n  "pid": 2732,\n  "createdAt": "2026-03-04T15:35:52.631Z"\n}'),
        ("blank.jsonl", b"\n\n"),
    ],
)
def test_a_readable_file_with_no_session_is_a_finding_without_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, data: bytes
) -> None:
    # Given a readable file with no session in it
    path = tmp_path / name
    path.write_bytes(data)
    # When it is audited
    code, out, err = run(capsys, str(path))
    # Then its problems are findings (exit 1), not unreadable input (exit 2 is for files
    # that cannot be read at all)
    assert (code, err) == (1, "")
    assert "not a session: no session header and no entry" in out
    assert "structure/missing_header" in out


def test_a_header_only_session_is_clean(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "header.jsonl"
    path.write_text(HEADER)
    code, out, _ = run(capsys, str(path))
    assert code == 0
    assert "entries 0  branches 0  windows 1" in out


def test_entries_without_a_header_are_still_audited(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Given a marker with no boot and no header line
    path = tmp_path / "headless.jsonl"
    marker = {
        "type": "custom",
        "customType": "pi-context/reset-marker",
        "data": {"windowId": "pcw:x:1"},
        "id": "a1",
        "parentId": None,
        "timestamp": "2026-05-04T10:00:00.000Z",
    }
    path.write_text(json.dumps(marker) + "\n")
    # When it is audited
    code, document = run_json(capsys, str(path))
    # Then the missing header is a structural error and the tail is still checked
    assert code == 1
    assert document["files"][0]["kinds"] == {
        "structure/not_session_header": 1,
        "tail_incomplete": 1,
    }


def test_the_exit_code_is_the_highest_of_all_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, CLEAN, LEGACY)[0] == 0
    assert run(capsys, CLEAN, STORM)[0] == 1
    assert run(capsys, STORM, "/nonexistent/file.jsonl")[0] == 2
