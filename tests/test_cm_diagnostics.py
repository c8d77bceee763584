"""Diagnostics, panel and export (spec §8, M62–M70)."""

from __future__ import annotations

import json
from typing import Any

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
from pictx_fsm.extensions.context_management.effects import LogScope
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


def test_m62_the_panel_shows_every_item_the_readme_lists() -> None:
    # Given two identical note writes, a background job, and a damaged line in the log
    w = play(world(), P(chars=200), S, *tool(tool="notes_update"), *tool(tool="notes_update"))
    play(w, T(chars=12_000))
    w.extension.files.append(w.session.session_file + ".ctxlog.jsonl", b"{cut\n")
    # When the panel opens
    play(w, C(args="session"))
    panel = json.loads(w.extension.panel or "{}")
    # Then it shows extra tokens, provider pricing, suspected repeated tools, call and
    # failure statistics, missing or unavailable files, corrupt lines, and source checks
    diagnostics = panel["diagnostics"]
    assert diagnostics["extraTokens"] > 0 and diagnostics["returnedTokens"] > 0
    assert diagnostics["reportedCost"] >= diagnostics["extraReportedCost"] >= 0
    assert diagnostics["suspectedRepeatedTools"] == 1
    assert diagnostics["calls"] >= 3 and diagnostics["failures"] == 0
    assert diagnostics["failureRate"] == 0 and diagnostics["cancelled"] == 0
    assert diagnostics["missingPrimaryFiles"] == diagnostics["unavailableFiles"] == []
    assert diagnostics["corruptLines"] == 1
    notes = state(w).branch.notes.notes
    cited = sum(len(n.sources) for n in notes)
    checks = {"cited": cited, "onBranch": cited, "inParent": 0, "unresolved": 0}
    assert panel["sourceChecks"] == checks


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


TRIGGER_FIELDS = {"mode", "reason", "tokens", "contextWindow", "growthTokens", "projectedTokens"}


def test_m65_operation_start_carries_its_trigger() -> None:
    # Given background jobs and an automatic handoff, then in the new session a manual
    # compaction and a manual handoff
    w = play(world(), *fill(2), T(chars=100_000), P(chars=20_000), S, shared.Compact())
    play(w, C(args="handoff"), cm.Drain())
    paths = [s.source for s in w.journal.switches] + [w.session.session_file]
    starts = [
        r
        for path in dict.fromkeys(paths)
        for r in log_records(w, path)
        if r["kind"] == "operation_start" and r["type"] != "reply"
    ]
    # Then every operation the extension started says why: enums and numbers only
    by_type = {r["type"]: r["trigger"] for r in starts}
    assert set(by_type) == {"background", "handoff_auto", "compaction", "handoff_manual"}
    for start in starts:
        trigger = start["trigger"]
        assert set(trigger) == TRIGGER_FIELDS
        assert trigger["mode"] in ("manual", "automatic")
        assert trigger["reason"] in ("manual", "threshold", "forecast")
        assert all(
            trigger[k] is None or isinstance(trigger[k], int)
            for k in TRIGGER_FIELDS - {"mode", "reason"}
        )
    auto = by_type["handoff_auto"]
    assert (auto["mode"], auto["reason"]) == ("automatic", "threshold")
    assert auto["tokens"] >= 0.8 * auto["contextWindow"]
    assert (by_type["background"]["mode"], by_type["background"]["reason"]) == (
        "automatic",
        "threshold",
    )
    for manual in ("compaction", "handoff_manual"):
        assert (by_type[manual]["mode"], by_type[manual]["reason"]) == ("manual", "manual")
        assert by_type[manual]["growthTokens"] is None


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
    write_report(files, LogScope(session_file="/a.jsonl"))
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
    assert m["returnedTokens"] == 19 and m["extraTokens"] == 4 and m["usageUnknown"] == 1
    assert m["reportedCost"] == 0.75 and m["extraReportedCost"] == 0.25
    assert m["failureRate"] == 0.5 and m["cancelled"] == 1 and m["unfinished"] == 1
    assert m["suspectedRepeatedTools"] == 1


_END = st.fixed_dictionaries(
    {
        "kind": st.just("operation_end"),
        "type": st.sampled_from(["reply", "background", "compaction", "handoff_manual"]),
        "result": st.sampled_from(["ok", "aborted", "checkpoint_timeout", "notes_budget"]),
        "usage": st.none()
        | st.fixed_dictionaries({"input": st.integers(0, 3), "output": st.integers(0, 3)}),
    }
)


@given(st.lists(_END, max_size=12))
def test_m70_returned_tokens_count_input_and_output_and_zero_failures_are_unknown(
    ends: list[dict[str, Any]],
) -> None:
    # Given any ended calls, some failed or cancelled with all-zero usage
    def known(end: dict[str, Any]) -> bool:
        usage = end["usage"]
        zero = usage is not None and usage["input"] == usage["output"] == 0
        return usage is not None and not (end["result"] != "ok" and zero)

    def tokens(end: dict[str, Any]) -> int:
        return int(end["usage"]["input"] + end["usage"]["output"])

    # When the metrics are computed
    m = metrics(ends)
    # Then returned and extra tokens both count input and output of the known usage, and a
    # failed or cancelled call whose usage is all zero is unknown usage (a success keeps 0)
    assert m["returnedTokens"] == sum(tokens(e) for e in ends if known(e))
    assert m["extraTokens"] == sum(tokens(e) for e in ends if known(e) and e["type"] != "reply")
    assert m["usageUnknown"] == sum(1 for e in ends if not known(e))
    assert m["returnedTokens"] >= m["extraTokens"]


def test_m70_an_export_reports_returned_tokens_at_least_the_extra_ones() -> None:
    # Given replies and a background job (the extension's extra calls)
    w = play(world(), T(chars=12_000), P(chars=300), S, C(args="session export"))
    report = json.loads(w.extension.files.read(report_path(w.session.session_file)) or b"{}")
    ends = [e for e in report["events"] if e["kind"] == "operation_end"]
    # Then returnedTokens is every call's input and output, extraTokens the extension's part
    total = sum(e["usage"]["input"] + e["usage"]["output"] for e in ends if e["usage"])
    assert report["metrics"]["returnedTokens"] == total > report["metrics"]["extraTokens"] > 0


def test_m62_a_handoff_targets_panel_checks_inherited_sources_in_its_parent() -> None:
    # Given a handoff target whose inherited notes cite the parent's messages
    w = play(world(), P(chars=300), S, *tool(tool="notes_update"), C(args="handoff"), cm.Drain())
    play(w, S, C(args="session"))
    checks = json.loads(w.extension.panel or "{}")["sourceChecks"]
    # Then they resolve in the parent's captured branch
    assert checks["cited"] > 0 and checks["inParent"] == checks["cited"]
    # When the parent file is moved away / Then they no longer resolve
    play(w, cm.HideParent(on=True), C(args="session"))
    assert json.loads(w.extension.panel or "{}")["sourceChecks"]["unresolved"] == checks["cited"]
