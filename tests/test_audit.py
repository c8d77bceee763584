"""The audit log (issue 3 item 4): one hash-chained record per handled hook event, written as
append-only JSONL; verification names the first broken record; any edited byte is detected."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lifecycle_kit import Kit, audits_verify  # noqa: F401

from pictx_fsm.audit.log import (
    GENESIS,
    AuditLog,
    canonical,
    result_json,
    verify_chain,
    verify_records,
)
from pictx_fsm.errors import AuditChainError, PictxError


def _session(kit: Kit) -> None:
    """A short session touching every machine."""
    kit.start()
    kit.build.user("task")
    kit.turn_start()
    kit.context()
    kit.tool_turn("wipe_memory")
    kit.turn_start()
    kit.project()
    kit.compact("manual")
    kit.toggle("off")
    kit.toggle("on")
    kit.overflow_turn()
    kit.before_settle()
    kit.settled()


def _written(tmp_path: Path) -> tuple[Kit, Path]:
    path = tmp_path / "audit.jsonl"
    kit = Kit.create(audit_path=path, tokens=200_000 - 35_000)
    _session(kit)
    kit.audit.close()
    return kit, path


# -- content ---------------------------------------------------------------------------------


def test_one_record_per_handled_hook_with_everything_a_reviewer_needs() -> None:
    # Given a session
    kit = Kit.create(tokens=200_000 - 35_000)
    _session(kit)
    records = kit.audit.records
    # Then there is one record per hook, numbered, chained, with profile and model fingerprint
    assert len(records) == len(kit.results)
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    assert records[0]["prev"] == GENESIS
    assert all(b["prev"] == a["hash"] for a, b in itertools.pairwise(records))
    assert {r["profile"] for r in records} == {"0.25.1"}
    assert {r["models"] for r in records} == {kit.runtime.lifecycle.fingerprint}
    assert [r["hook"] for r in records] == [res.hook for res in kit.results]
    assert [r["result"] for r in records] == [result_json(res) for res in kit.results]


def test_message_lists_are_recorded_as_count_and_digest_not_text() -> None:
    # Given a session whose requests carry the conversation
    kit = Kit.create(tokens=200_000 - 35_000)
    _session(kit)
    projected = [r for r in kit.audit.records if r["hook"] == "context_with_system"]
    assert projected
    for record in projected:
        # Then the event's and the result's message lists are a count and a sha256 only, so
        # a record costs the same on the thousandth request as on the first
        assert set(record["event"]["messages"]) == {"count", "sha256"}
        assert set(record["result"]["value"]["messages"]) == {"count", "sha256"}


def test_each_machine_step_records_event_states_guards_and_a_digest_of_the_facts() -> None:
    # Given a turn_end that committed a requested reset
    kit = Kit.create()
    kit.start()
    kit.build.user("x")
    kit.tool_turn("wipe_memory")
    record = kit.audit.records[-1]
    (step,) = [
        s for s in record["steps"] if s["machine"] == "reset_control" and s["event"] == "turn_end"
    ]
    # Then the step names source and target per region, the guards evaluated and the facts
    assert step["before"]["request"] == "explicit" and step["after"]["request"] == "none"
    request = next(t for t in step["transitions"] if t["region"] == "request")
    assert request["source"] == "explicit" and request["target"] == "none"
    assert ["active", True] in request["guards"]
    assert step["facts"]["active"] is True
    digest = hashlib.sha256(canonical(step["facts"]).encode("ascii")).hexdigest()
    assert step["facts_digest"] == digest


# -- files -----------------------------------------------------------------------------------


def test_a_file_log_is_canonical_jsonl_ends_with_its_seal_and_verifies(tmp_path: Path) -> None:
    # Given a closed file log
    kit, path = _written(tmp_path)
    lines = path.read_text(encoding="ascii").splitlines()
    # Then it holds every record, then one seal naming their count and the last hash
    assert [json.loads(line) for line in lines[:-1]] == kit.audit.records
    seal = json.loads(lines[-1])
    assert seal["kind"] == "seal"
    assert seal["records"] == len(kit.audit.records)
    assert seal["head"] == seal["prev"] == kit.audit.records[-1]["hash"]
    report = verify_chain(path)
    assert (report.records, report.sealed, report.intact) == (len(lines), True, True)
    assert report.last_hash == seal["hash"]


def test_reopening_a_log_continues_its_chain(tmp_path: Path) -> None:
    # Given a written log
    kit, path = _written(tmp_path)
    count = len(kit.audit.records)
    # When a second runtime appends to the same file
    again = Kit.create(audit_path=path)
    again.start()
    again.audit.close()
    # Then the chain continues after the first segment's seal, in a second sealed segment
    report = verify_chain(path)
    seal = json.loads(path.read_text().splitlines()[count])
    assert (report.records, report.segments, report.intact) == (count + 3, 2, True)
    assert again.audit.records[0]["seq"] == count + 2
    assert again.audit.records[0]["prev"] == seal["hash"]


def test_reopening_a_tampered_log_seals_the_damage_off_and_keeps_recording(
    tmp_path: Path,
) -> None:
    # Given a closed log whose second record was edited
    _, path = _written(tmp_path)
    copy = tmp_path / "copy.jsonl"
    copy.write_text(path.read_text().replace('"seq":2', '"seq":3', 1))
    total = len(copy.read_text().splitlines())
    # When a runtime opens it again
    log = AuditLog(copy)
    # Then it says once what it found, and the damage stays declared in the file
    assert log.notice is not None and "line 2" in log.notice
    log.close()
    report = verify_chain(copy)
    assert [(d.first_line, d.last_line, d.declared_at) for d in report.damage] == [
        (2, total, total + 1)
    ]
    assert not report.intact


# -- tampering -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def written_log(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    directory = tmp_path_factory.mktemp("audit")
    path = directory / "audit.jsonl"
    kit = Kit.create(audit_path=path, tokens=200_000 - 35_000)
    _session(kit)
    kit.audit.close()
    verify_chain(path)
    return path.read_bytes()


def _line_of(data: bytes, position: int) -> int:
    return data.count(b"\n", 0, position) + 1


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    position=st.integers(min_value=0),
    replacement=st.integers(min_value=0, max_value=255),
    data=st.data(),
)
def test_changing_any_single_byte_of_a_record_is_detected_at_its_line(
    written_log: bytes, tmp_path_factory: pytest.TempPathFactory, position: int,
    replacement: int, data: Any,
) -> None:  # fmt: skip
    # Given the written log with one byte changed (any position, any other value)
    position %= len(written_log)
    if written_log[position] == replacement:
        replacement = (replacement + 1) % 256
    tampered = bytearray(written_log)
    tampered[position] = replacement
    path = tmp_path_factory.mktemp("tampered") / "audit.jsonl"
    path.write_bytes(bytes(tampered))
    # When it is verified
    with pytest.raises(PictxError) as caught:
        verify_chain(path)
    # Then the error names the record holding the changed byte
    error = caught.value
    assert isinstance(error, AuditChainError)
    assert error.line == _line_of(written_log, position)


def test_dropping_or_swapping_records_is_detected(tmp_path: Path) -> None:
    _, path = _written(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    dropped = tmp_path / "dropped.jsonl"
    dropped.write_text("".join(lines[:2] + lines[3:]))
    with pytest.raises(AuditChainError) as caught:
        verify_chain(dropped)
    assert caught.value.line == 3
    swapped = tmp_path / "swapped.jsonl"
    swapped.write_text("".join([lines[1], lines[0], *lines[2:]]))
    with pytest.raises(AuditChainError) as caught:
        verify_chain(swapped)
    assert caught.value.line == 1


def test_in_memory_records_verify_and_an_edit_is_detected() -> None:
    kit = Kit.create()
    _session(kit)
    assert verify_records(kit.audit.records).records == len(kit.audit.records)
    edited = [dict(r) for r in kit.audit.records]
    edited[1]["profile"] = "0.25.0"
    with pytest.raises(AuditChainError):
        verify_records(edited)
