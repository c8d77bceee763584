"""``pictx-fsm audit --extension notesoup``: a notesoup file, a pi-context 0.25 file resumed
under notesoup (a mixed file), and what notesoup 0.38 as released would leak from a 0.25
file resumed without migration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attrs import evolve

from pictx_fsm.cli import main
from pictx_fsm.extensions.notesoup.audit import audit_tree, request_leak
from pictx_fsm.extensions.notesoup.kit.actions import ClearMemory
from pictx_fsm.extensions.notesoup.kit.legacy import LegacyHistory, legacy_tree
from pictx_fsm.extensions.notesoup.kit.world import NotesoupWorld, scenario_config
from pictx_fsm.extensions.notesoup.windows import NotesoupWindows, ReferenceWindows
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing.actions import Prompt, Script, Settle

TWO_WINDOWS = LegacyHistory(windows=2, turns=2, tail="complete", warning=True, chars=2_000)
TEXT = Script(reply="text")
SESSION_ID = "0b25f11e-0000-4000-8000-000000000025"
START_MS = 1_790_000_000_000
CLEAR = Script(reply="tools", tools=("clear_memory",), arguments=("{}",))


def _world(legacy: LegacyHistory | None = TWO_WINDOWS, fault: str | None = None) -> NotesoupWorld:
    return NotesoupWorld(evolve(scenario_config(0, fault), legacy=legacy))


def _write(tree: SessionTree, path: Path) -> Path:
    lines = [json.dumps(tree.header.to_json())]
    lines += [json.dumps(entry.to_json()) for entry in tree.entries]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(world: NotesoupWorld, *actions: Any) -> NotesoupWorld:
    for action in actions:
        world.apply(action)
    return world


def test_a_0_25_file_resumed_under_notesoup_as_released_would_send_its_erased_history() -> None:
    # Given a pi-context 0.25 session with two windows, as 0.25 left it
    tree = _world().session.tree
    # When it is audited as notesoup would resume it
    result = audit_tree(tree)
    # Then notesoup 0.38 (0.25's markers foreign) would send the history behind the current
    # 0.25 marker at the next request; this port sends none of it
    reference = request_leak(tree, tree.leaf_id, ReferenceWindows)
    assert reference is not None and reference.messages > 0 and reference.chars > 2_000
    assert request_leak(tree, tree.leaf_id, NotesoupWindows) is None
    assert result.legacy_markers == 2 and result.port_leaks == () and result.exit_code == 0


def test_a_mixed_file_written_by_this_port_audits_clean() -> None:
    # Given a 0.25 session resumed under this port, then a notesoup reset
    world = _run(
        _world(), TEXT, Prompt(chars=60), Settle(), CLEAR, TEXT, Prompt(chars=60), Settle()
    )
    # When the mixed file is audited
    result = audit_tree(world.session.tree)
    # Then both kinds of marker are there, every tail is whole, nothing leaks
    assert result.markers == 3 and result.legacy_markers == 2
    assert result.findings == () and result.port_leaks == ()


def test_a_mixed_file_written_by_notesoup_without_migration_is_an_error() -> None:
    # Given a 0.25 session resumed by notesoup 0.38 as released (the no-migration fault)
    world = _run(_world(fault="no-migration"), TEXT, Prompt(chars=60), Settle())
    # When the file is audited
    result = audit_tree(world.session.tree)
    # Then the root boot it wrote inside the 0.25 window is reported: its requests leaked
    kinds = {(f.kind, f.severity) for f in result.findings}
    assert ("window_resumed_as_root", "error") in kinds and result.exit_code == 1


def test_a_notesoup_marker_without_its_checkpoint_is_reported() -> None:
    # Given a notesoup session whose reset boundary lost its checkpoint (no-checkpoint fault)
    world = _run(_world(None, fault="no-checkpoint"), CLEAR, TEXT, Prompt(chars=60), Settle())
    result = audit_tree(world.session.tree)
    assert [(f.kind, f.severity) for f in result.findings] == [
        ("marker_without_checkpoint", "warning")
    ]
    # and still nothing leaks: this port cuts a marker-only window at its boot (S78)
    assert result.port_leaks == ()


def test_a_bare_0_25_tail_is_reported_before_repair_and_clean_after(tmp_path: Path) -> None:
    bare = LegacyHistory(windows=1, turns=1, tail="bare")
    as_written = legacy_tree(bare, SESSION_ID, str(tmp_path / "project"), seed=0, start_ms=START_MS)
    before = audit_tree(as_written)
    assert [f.kind for f in before.findings] == ["boot_missing"]
    after = audit_tree(_run(_world(bare), TEXT, Prompt(chars=60), Settle()).session.tree)
    assert after.findings == ()


def test_cli_audit_reports_what_notesoup_alone_would_leak(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(_world().session.tree, tmp_path / "legacy.jsonl")
    code = main(["audit", "--extension", "notesoup", str(path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 marker(s) (2 of pi-context 0.25)" in out
    assert "resumed under notesoup 0.38 as released: the next request would carry" in out
    assert "resumed under pictx-fsm's notesoup: the next request carries nothing" in out


def test_cli_audit_json_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _run(_world(fault="no-migration"), TEXT, Prompt(chars=60), Settle())
    path = _write(bad.session.tree, tmp_path / "bad.jsonl")
    missing = tmp_path / "missing.jsonl"
    code = main(["audit", "--extension", "notesoup", "--json", str(path), str(missing)])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert code == 2  # the missing file; the bad one alone gives 1
    [report] = document["files"]
    assert report["exitCode"] == 1
    assert report["nextRequest"]["port"] is None
    assert report["nextRequest"]["reference"]["messages"] > 0
    assert "missing.jsonl" in captured.err


def test_a_clear_memory_under_a_migrated_window_keeps_the_0_25_history_out() -> None:
    # Given a migrated 0.25 window, then /clear-memory: the next window's boot names the 0.25
    # window as its previous (the chain carries over)
    world = _run(_world(), TEXT, Prompt(chars=60), Settle(), ClearMemory(), Settle())
    result = audit_tree(world.session.tree)
    assert result.markers == 3 and result.port_leaks == () and result.findings == ()


def test_a_reply_that_says_what_an_erased_one_said_is_not_erased_history() -> None:
    # Given the run verify's seed 0 found (a reset, then the faux model's same reply in the
    # new window: the window's own message says what an erased one said)
    from pictx_fsm.testing.kit import kit_named
    from pictx_fsm.testing.trace import load_trace, run_actions

    fixture = Path(__file__).parent / "fixtures" / "notesoup" / "reply-repeating-an-erased-one.json"
    trace = load_trace(fixture)
    run = run_actions(kit_named("notesoup"), trace.config, trace.actions)
    tree = run.world.session.tree
    # When the file is audited
    audit = audit_tree(tree)
    # Then the repeated reply is the window's own, not a leak, and every invariant held
    assert audit.port_leaks == ()
    assert run.violation is None
