"""Audit logs under crashes and misuse (issue 14): resume never glues or fails, a torn tail is
sealed off into a new linked segment, segments end with seals so a cut is detectable, blank
lines are damage, an unusable place keeps the lifecycle working, and ``pictx-fsm log verify``
reports it all from the shell."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lifecycle_kit import Kit

from pictx_fsm.audit.log import AuditLog, verify_chain, verify_records
from pictx_fsm.audit.store import AuditFile, check_log
from pictx_fsm.cli import main
from pictx_fsm.errors import AuditChainError
from pictx_fsm.host.events import TurnStart
from pictx_fsm.hosts.pi.server import audit_from_environment, runtime_from_environment

TESTS = Path(__file__).resolve().parent


def _session(kit: Kit) -> None:
    """A start, then a turn whose model wipes its memory, through to settle."""
    for step in (kit.start, kit.turn_start, kit.context):
        step()
    kit.tool_turn("wipe_memory")
    kit.before_settle()
    kit.settled()


def _closed_log(tmp_path: Path, name: str = "audit.jsonl") -> Path:
    path = tmp_path / name
    kit = Kit.create(audit_path=path)
    _session(kit)
    kit.audit.close()
    return path


def _verify(*paths: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["log", "verify", *map(str, paths)])
    return code, capsys.readouterr().out


# -- resume ----------------------------------------------------------------------------------


def test_resuming_a_log_whose_last_record_lost_its_newline_appends_on_a_new_line(
    tmp_path: Path,
) -> None:
    # Given a log whose last record is whole but has no final newline (a crash just before it)
    path = _closed_log(tmp_path)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    # When a second runtime resumes it and records a hook
    again = Kit.create(audit_path=path)
    again.start()
    again.audit.close()
    # Then nothing was glued: every line is a record, the chain verifies across both writers
    report = verify_chain(path)
    assert report.damage == ()
    assert report.records == len(path.read_text().splitlines())
    assert again.audit.notice is not None and "no final newline" in again.audit.notice


def test_a_torn_last_record_is_sealed_off_and_the_session_keeps_recording(
    tmp_path: Path,
) -> None:
    # Given a log whose last record was torn by a crash
    path = _closed_log(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-2]) + lines[-2][: len(lines[-2]) // 2])
    torn_line = len(lines) - 1
    # When a runtime resumes it, and handles more hooks
    again = Kit.create(audit_path=path)
    again.start()
    again.turn_start()
    again.audit.close()
    # Then it said once what happened, every hook was recorded, and the damage is declared
    assert again.audit.notice is not None and f"line {torn_line}" in again.audit.notice
    assert len(again.audit.records) == 2
    report = verify_chain(path)
    assert [(d.first_line, d.last_line, d.declared_at) for d in report.damage] == [
        (torn_line, torn_line, torn_line + 1)
    ]
    assert "torn or edited" in report.damage[0].reason
    assert report.sealed and not report.intact


def test_an_unusable_audit_directory_keeps_the_lifecycle_working_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given PICTX_FSM_AUDIT_DIR naming a regular file
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("PICTX_FSM_AUDIT_DIR", str(blocker))
    kit = Kit.create()
    # When the bridge builds the runtime for a session and the session handles hooks
    audit = audit_from_environment(kit.tree.session_id)
    runtime = runtime_from_environment(kit.tree, {"cwd": str(tmp_path)}, audit)
    for index in range(3):
        runtime.handle(TurnStart(turn_index=index), kit.ctx)
    # Then every hook was handled and recorded in memory, and the problem was said once
    assert runtime.audit is not None
    assert len(runtime.audit.records) == 3
    assert runtime.audit.notice is not None and "kept in memory" in runtime.audit.notice
    assert capsys.readouterr().err.count("pictx-fsm: audit log") == 1


# -- seals, truncation, blank lines ----------------------------------------------------------


def test_a_log_cut_at_a_record_boundary_is_detected_by_its_missing_seal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a closed log, and a copy without its last line (the seal)
    path = _closed_log(tmp_path)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
    # When both are verified from the shell
    code, out = _verify(path, cut, capsys=capsys)
    # Then the whole log is intact and the cut one is broken: no seal
    assert code == 1
    assert f"{path}: intact:" in out
    assert f"{cut}: BROKEN:" in out and "not sealed" in out and "cut after record" in out


def test_a_blank_line_in_a_log_is_damage_named_by_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a closed log with a blank line inserted after its second record
    path = _closed_log(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines[:2], "\n", *lines[2:]]))
    # When it is verified
    with pytest.raises(AuditChainError) as caught:
        verify_chain(path)
    code, out = _verify(path, capsys=capsys)
    # Then line 3 is named, through the API and the shell
    assert caught.value.line == 3
    assert code == 1
    assert f"{path}:3: blank line" in out


def test_log_verify_exit_codes_intact_broken_unreadable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    intact = _closed_log(tmp_path)
    assert _verify(intact, capsys=capsys)[0] == 0
    assert _verify(tmp_path / "missing.jsonl", capsys=capsys)[0] == 2
    assert _verify(tmp_path, capsys=capsys)[0] == 2
    edited = tmp_path / "edited.jsonl"
    edited.write_text(intact.read_text().replace('"seq":3', '"seq":4', 1))
    code, out = _verify(edited, intact, capsys=capsys)
    assert code == 1
    assert f"{edited}:3: record hash does not match its content" in out
    assert "not declared by any segment record" in out


# -- the crash -------------------------------------------------------------------------------

_WRITER = """
import sys, time
sys.path.insert(0, {tests!r})
from lifecycle_kit import Kit
from pictx_fsm.audit import store as audit_store
kit = Kit.create(audit_path={path!r})
kit.start()
kit.build.user("task")
kit.turn_start()
real_write = audit_store.AuditFile._write

def torn_write(self, line):
    self._fp.write(line[: len(line) // 2])
    self._fp.flush()
    print("HALF", flush=True)
    time.sleep(60)

audit_store.AuditFile._write = torn_write
kit.context()
"""


def test_killing_the_writer_mid_record_then_restarting_keeps_the_session_working(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a writer process killed while it was writing a record
    path = tmp_path / "session.audit.jsonl"
    script = _WRITER.format(tests=str(TESTS), path=str(path))
    writer = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=TESTS.parent
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "HALF"
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    before = path.read_bytes()
    assert not before.endswith(b"\n")
    torn_line = before.count(b"\n") + 1
    # When the session restarts on the same log and goes on
    kit = Kit.create(audit_path=path)
    _session(kit)
    kit.audit.close()
    # Then every hook of the restarted session is recorded ...
    assert len(kit.audit.records) > 5
    # ... and `log verify` reports the torn segment and verifies the rest
    code, out = _verify(path, capsys=capsys)
    assert code == 1
    assert f"{path}:{torn_line}: record is not valid JSON" in out
    assert f"sealed off by the segment record at line {torn_line + 1}" in out
    report = check_log(path)
    assert report.records == len(path.read_text().splitlines()) - 1
    assert report.sealed


# -- arbitrary bytes -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def whole_log(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    return _closed_log(tmp_path_factory.mktemp("whole")).read_bytes().splitlines(keepends=True)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(junk=st.binary(max_size=400), keep=st.integers(min_value=0, max_value=20))
def test_any_bytes_before_a_resume_end_declared_and_the_new_records_verify(
    tmp_path_factory: pytest.TempPathFactory, whole_log: list[bytes], junk: bytes, keep: int
) -> None:
    # Given a log made of some intact records followed by arbitrary bytes
    intact = whole_log
    path = tmp_path_factory.mktemp("junk") / "audit.jsonl"
    path.write_bytes(b"".join(intact[:keep]) + junk)
    # When a log resumes it and records two hooks, then closes
    log = AuditLog(path)
    kit = Kit.create()
    kit.runtime.audit = log
    kit.start()
    kit.turn_start()
    log.close()
    # Then the file verifies: all damage is declared and the new records chain and are sealed
    report = verify_chain(path)
    assert report.sealed
    assert all(damage.declared_at is not None for damage in report.damage)
    tail = [json.loads(line) for line in path.read_bytes().splitlines()[-3:]]
    assert [record.get("hook") for record in tail[:2]] == ["session_start", "turn_start"]


def test_a_log_file_that_cannot_be_written_later_falls_back_to_memory(tmp_path: Path) -> None:
    # Given an open log whose file stops accepting writes (a full disk: Linux's /dev/full)
    log = AuditFile(tmp_path / "audit.jsonl", warn=io.StringIO())
    assert log._fp is not None
    log._fp.close()
    log._fp = open("/dev/full", "a", encoding="ascii")  # noqa: SIM115 - the log closes it
    # When a record is appended / Then it is kept going in memory and the notice says why
    log.append({"hash": "0" * 64, "seq": 1})
    assert not log.writable
    assert log.notice is not None and "No space left" in log.notice


def test_a_second_writer_waits_for_the_first_then_keeps_records_in_memory(
    tmp_path: Path,
) -> None:
    # Given a log held open by one writer (the previous process has not sealed and exited)
    path = tmp_path / "audit.jsonl"
    first = AuditFile(path)
    # When a second writer opens it and the first does not let go in time
    second = AuditFile(path, lock_wait=0.1, warn=io.StringIO())
    # Then the second keeps its records in memory and says why; the first goes on and seals
    assert not second.writable
    assert second.notice is not None and "another process is writing this log" in second.notice
    first.close()
    assert verify_chain(path).sealed


# -- memory of a file log ----------------------------------------------------------------------


def test_a_file_log_keeps_no_record_lines_in_memory_and_reads_its_own_records_back(
    tmp_path: Path,
) -> None:
    # Given a log file that already holds an earlier process's sealed session
    path = _closed_log(tmp_path)
    # When a new process's log resumes it and records a session
    kit = Kit.create(audit_path=path)
    _session(kit)
    log = kit.audit
    # Then nothing per record is held in memory (a long-running host stays flat) …
    assert log._lines == [] and log._records == []
    # … and its records are exactly the ones it wrote, read back from the file, in order
    records = log.records
    assert len(records) == len(log) > 0
    assert [r["seq"] for r in records] == list(range(records[0]["seq"], records[-1]["seq"] + 1))
    assert records[0]["hook"] == "session_start"
    assert all("kind" not in record for record in records)
    assert [json.loads(line) for line in log.lines] == records
    # … and a reader following the log takes lines and records together, from any record on
    assert log.written() == list(zip(log.lines, records, strict=True))
    assert log.written(2) == log.written()[2:]
    # And after the seal the same records are still read back, the seal not among them
    log.close()
    assert log.records == records
    assert verify_chain(path).sealed


def test_a_file_log_that_stops_accepting_writes_keeps_the_rest_in_memory(
    tmp_path: Path,
) -> None:
    # Given a file log that has written some records
    kit = Kit.create(audit_path=tmp_path / "audit.jsonl")
    for step in (kit.start, kit.turn_start):
        step()
    log = kit.audit
    written = len(log)
    # When its file starts failing (a full disk) and the session goes on
    assert log._file is not None and log._file._fp is not None
    log._file._fp.close()
    log._file._fp = open("/dev/full", "a", encoding="ascii")  # noqa: SIM115 - the log closes it
    kit.context()
    # Then the records before the failure come from the file, the later ones from memory,
    # and together they still form one chain in order
    records = log.records
    assert len(records) == len(log) > written
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    assert verify_records(records).records == len(records)
