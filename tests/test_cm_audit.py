"""``pictx-fsm audit`` on pi-context-management's entries: persisted invariants of real
and generated session files (issue 13 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cm_kit import AUTO_TYPE, NOTES_TYPE, C, D, P, S, T, fill, play, tool, world
from shared_paths import CORPUS

from pictx_fsm.cli import main
from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import audit_file


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _cm_kinds(path: str) -> list[str]:
    return [f.name for f in audit_file(path, session_checks()).findings if f.name.startswith("cm_")]


def test_files_the_extension_wrote_audit_clean(tmp_path: Path) -> None:
    # Given a session chain with notes, a checkpoint and an automatic handoff
    w = play(world(), P(chars=200), S, *tool(tool="notes_update"), *fill(2), T(chars=100_000))
    paths = [
        _write(tmp_path, f"s{i}.jsonl", store.jsonl())
        for i, store in enumerate(w.session.files.values())
    ]
    # Then the audit finds nothing of this extension to report
    assert all(_cm_kinds(p) == [] for p in paths)


def _mutated(w: object, path: str, custom_type: str, change: object) -> str:
    lines = []
    for line in w.session.files[path].jsonl().splitlines():  # type: ignore[attr-defined]
        obj = json.loads(line)
        if obj.get("customType") == custom_type:
            change(obj["data"])  # type: ignore[operator]
        lines.append(json.dumps(obj))
    return "\n".join(lines) + "\n"


def test_notes_over_capacity_and_coverage_moved_by_a_write(tmp_path: Path) -> None:
    w = play(
        world(), P(chars=200), S, *tool(tool="notes_update"), *tool(tool="notes_update", key=2)
    )
    path = w.session.session_file

    seen: list[int] = []

    def grow(data: dict[str, object]) -> None:
        note = dict(data["notes"][0])  # type: ignore[index]
        data["notes"] = [dict(note, key=f"n{i}") for i in range(33)]
        if seen:
            data["notesThroughEntryId"] = "moved"
        seen.append(1)

    text = _mutated(w, path, NOTES_TYPE, grow)
    kinds = _cm_kinds(_write(tmp_path, "over.jsonl", text))
    assert "cm_notes_over_capacity" in kinds and "cm_coverage_moved_by_write" in kinds


def test_handoffs_inside_the_cooldown_or_past_three_an_hour(tmp_path: Path) -> None:
    w = play(world(), P(chars=200), S, C(args="auto off"), C(args="auto on"))
    path = w.session.session_file
    base = 1_796_007_840_000

    entries: list[int] = []

    def crowd(data: dict[str, object]) -> None:
        # the first entry: one verified handoff; the second: three more within minutes
        data["attempts"] = [base] if not entries else [base + i * 60_000 for i in range(4)]
        data["nextEligibleAt"] = base + 300_000
        entries.append(1)

    kinds = _cm_kinds(_write(tmp_path, "crowded.jsonl", _mutated(w, path, AUTO_TYPE, crowd)))
    assert "cm_handoff_hourly_limit" in kinds and "cm_handoff_cooldown" in kinds


def test_a_chain_of_files_over_the_hourly_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given four automatic handoffs whose receipts are within an hour (counters reset)
    w = play(
        world(),
        P(chars=300),
        S,
        C(args="handoff"),
        D,
        S,
        C(args="handoff"),
        D,
        S,
        C(args="handoff"),
        D,
        S,
        C(args="handoff"),
        D,
        S,
    )
    files = list(w.session.files.values())
    paths = []
    for i, store in enumerate(files):
        lines = []
        for line in store.jsonl().splitlines():
            obj = json.loads(line)
            if obj.get("type") == "session" and obj.get("parentSession"):
                obj["parentSession"] = str(tmp_path / f"c{i - 1}.jsonl")
            if obj.get("customType") == "context-memory/receipt":
                obj["data"]["mode"] = "automatic"
                obj["data"]["parentFile"] = str(tmp_path / f"c{i - 1}.jsonl")
            lines.append(json.dumps(obj))
        paths.append(_write(tmp_path, f"c{i}.jsonl", "\n".join(lines) + "\n"))
    # When the chain is audited together / Then the fourth handoff's file is reported
    code = main(["audit", *paths])
    out = capsys.readouterr().out
    assert code == 1 and "cm_handoff_hourly_limit" in out
    assert paths[-1] in out.split("cm_handoff_hourly_limit")[0].splitlines()[-1]


@pytest.mark.corpus
def test_real_sessions_have_no_findings_of_this_extension() -> None:
    real = CORPUS / "real"
    if not real.is_dir():
        pytest.skip("the shared corpora are not present")
    for path in sorted(real.glob("*.jsonl")):
        assert _cm_kinds(str(path)) == [], path
