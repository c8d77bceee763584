"""Diagnostics, panel and export (spec §8, M62–M70)."""

from __future__ import annotations

import json

import pytest
from cm_kit import (
    C,
    P,
    S,
    T,
    cm,
    fill,
    log_records,
    notices,
    play,
    shared,
    state,
    tool,
    world,
)
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.extensions.context_management.diaglog import (
    DiagnosticsLog,
    OsLogFiles,
    RecordError,
    check_record,
    log_path,
)
from pictx_fsm.extensions.context_management.export import metrics, report_path, write_report
from pictx_fsm.extensions.context_management.policy import LOG_MAX_BYTES
from pictx_fsm.extensions.context_management.texts import STATUS_LOG_FAILED
from pictx_fsm.hosts.model.memfiles import MemoryFiles


def test_m62_the_panel_opens_closes_and_is_per_instance() -> None:
    w = play(world(), P(chars=300), S, C(args="session"))
    panel = json.loads(w.extension.panel or "{}")
    assert set(panel) >= {"session", "usage", "autoHandoff", "goals", "constraints", "openItems"}
    play(w, C(args="session close"))
    assert w.extension.panel is None and not state(w).panel_open
    play(w, C(args="session"), shared.Reload())
    assert not state(w).panel_open


def test_m63_the_panel_refreshes_on_commits_and_never_reopens_after_close() -> None:
    w = play(world(), C(args="session"))
    opened = w.extension.panel
    play(w, T(chars=12_000))
    assert w.extension.panel != opened  # a note commit refreshed it
    play(w, C(args="session close"), cm.CtxMemory(args="auto off"))
    assert w.extension.panel is None


def test_m64_every_operation_has_start_and_end_records() -> None:
    w = play(world(), T(chars=12_000))
    records = log_records(w)
    kinds = {(r["kind"], r["type"]) for r in records if r["kind"].startswith("operation")}
    assert {("operation_start", "background"), ("operation_end", "background")} <= kinds
    assert {("operation_start", "reply"), ("operation_end", "reply")} <= kinds
    end = next(r for r in records if r["kind"] == "operation_end" and r["type"] == "background")
    start = next(r for r in records if r["kind"] == "operation_start" and r["type"] == "background")
    assert start["generationTimeoutMs"] == 300_000 and end["result"] == "ok"


def test_m64_no_log_for_an_unsaved_session() -> None:
    w = play(world(saved=False), T(chars=12_000))
    assert not w.extension.files.data


def test_m65_the_trigger_is_enums_and_numbers() -> None:
    w = play(world(), *fill(2), T(chars=100_000))
    trigger = next(
        r
        for r in log_records(w, w.journal.switches[0].source)
        if r["kind"] == "handoff_phase" and "trigger" in r
    )["trigger"]
    assert trigger["mode"] == "automatic" and trigger["reason"] == "threshold"
    assert isinstance(trigger["tokens"], int) and isinstance(trigger["contextWindow"], int)


@given(
    st.builds(
        lambda a, c, b: a + c + b,
        st.text(max_size=20),
        st.sampled_from(" \n\"'"),
        st.text(max_size=20),
    )
)
def test_m66_text_never_reaches_the_log(text: str) -> None:
    with pytest.raises(RecordError):
        check_record({"kind": "note_write", "result": text})


def test_m66_tool_calls_leave_only_keyed_fingerprints() -> None:
    w = play(world(), P(chars=200), S, *tool(tool="notes_update"), *tool(tool="notes_update"))
    calls = [r for r in log_records(w) if r["kind"] == "tool_call"]
    assert len(calls) == 2 and calls[0]["fingerprint"] == calls[1]["fingerprint"]
    raw = b"".join(w.extension.files.data.values())
    assert b"note-0" not in raw and state(w).tool_key.encode() not in raw


def test_m67_rotation_keeps_two_backups_under_2_mib(tmp_path: object) -> None:
    files = MemoryFiles()
    log = DiagnosticsLog(files, "/s.jsonl")
    record = {"kind": "operation_end", "id": "x" * 100, "time": 1, "result": "ok"}
    for _ in range(int(LOG_MAX_BYTES * 3.5) // 150):
        log.write(record)
    assert sorted(files.data) == [
        "/s.jsonl.ctxlog.jsonl",
        "/s.jsonl.ctxlog.jsonl.1",
        "/s.jsonl.ctxlog.jsonl.2",
    ]
    assert all(len(data) <= LOG_MAX_BYTES for data in files.data.values())


def test_m67_a_log_failure_never_blocks_the_task() -> None:
    w = play(world(), P(chars=200), S)
    w.extension.files.fail_writes = True
    play(w, T(chars=12_000))
    assert w.extension.status == STATUS_LOG_FAILED and state(w).branch.notes


def test_m67_rotation_on_the_real_file_system(tmp_path: object) -> None:
    import pathlib

    path = str(pathlib.Path(str(tmp_path)) / "s.jsonl")
    log = DiagnosticsLog(OsLogFiles(), path)
    log.write({"kind": "note_write", "time": 1, "result": "ok"})
    log.rotate()
    log.write({"kind": "note_write", "time": 2, "result": "ok"})
    assert pathlib.Path(log_path(path) + ".1").exists() and pathlib.Path(log_path(path)).exists()


def test_m68_export_is_local_deduplicated_and_names_no_paths() -> None:
    w = play(world(), T(chars=12_000), C(args="session export"), C(args="session export"))
    path = report_path(w.session.session_file)
    report = json.loads(w.extension.files.read(path) or b"{}")
    assert any(n == f"Context memory report written to {path}" for n in notices(w))
    assert report["policy"]["generationTimeoutMs"] == 300_000
    ids = [(e["kind"], e.get("id"), e.get("time")) for e in report["events"] if e.get("id")]
    assert len(ids) == len(set(ids)) and "/workspace" not in json.dumps(report)


def test_m68_a_handoff_target_exports_its_verified_parent_before_capture() -> None:
    w = play(
        world(),
        T(chars=12_000),
        C(args="handoff"),
        cm.Drain(),
        S,
        T(chars=200),
        C(args="session export"),
    )
    report = json.loads(w.extension.files.read(report_path(w.session.session_file)) or b"{}")
    assert any(e.get("type") == "background" for e in report["events"])  # the parent's job


def test_m69_a_missing_primary_log_is_reported_not_assumed_deleted() -> None:
    files = MemoryFiles()
    write_report(files, "/a.jsonl", None, None)
    report = json.loads(files.read("/a.jsonl.ctx-report.json") or b"{}")
    assert report["missingPrimaryFiles"] == ["current"] and report["unavailableFiles"] == [
        "current"
    ]


def test_m70_metrics_separate_cancels_timeouts_and_unknown_usage() -> None:
    records = [
        {"kind": "operation_start", "id": "a"},
        {
            "kind": "operation_end",
            "id": "a",
            "type": "reply",
            "result": "ok",
            "usage": {"input": 10, "output": 5},
            "cost": 0.5,
        },
        {"kind": "operation_start", "id": "b"},
        {
            "kind": "operation_end",
            "id": "b",
            "type": "background",
            "result": "checkpoint_timeout",
            "usage": None,
            "cost": 0,
        },
        {"kind": "operation_start", "id": "c"},
        {
            "kind": "operation_end",
            "id": "c",
            "type": "compaction",
            "result": "aborted",
            "usage": {"input": 3, "output": 1},
            "cost": 0.25,
        },
        {"kind": "operation_start", "id": "d"},
        {"kind": "tool_call", "fingerprint": "f1", "result": "ok"},
        {"kind": "tool_call", "fingerprint": "f1", "result": "ok"},
    ]
    m = metrics(records)
    assert m["returnedTokens"] == 6 and m["extraTokens"] == 4 and m["usageUnknown"] == 1
    assert m["reportedCost"] == 0.75 and m["extraReportedCost"] == 0.25
    assert m["failureRate"] == 0.5 and m["cancelled"] == 1 and m["unfinished"] == 1
    assert m["suspectedRepeatedTools"] == 1
