"""The audit reads each session file once: pi-context-management's session-chain check takes
each file's handoff receipt from the same pass as every other check (issue 28 item 4)."""

from __future__ import annotations

import pickle
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from pictx_fsm.cli import main
from pictx_fsm.session import jsonl, skeleton

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "audit"


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each file was opened for reading, by any of the session readers."""
    counts: Counter[str] = Counter()
    real = jsonl.open_regular

    def counting(path: Any) -> BinaryIO:
        counts[str(path)] += 1
        return real(path)

    monkeypatch.setattr(jsonl, "open_regular", counting)
    monkeypatch.setattr(skeleton, "open_regular", counting)
    return counts


def test_the_audit_opens_every_file_once_receipt_or_not(
    opened: Counter[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given session files with and without a handoff receipt
    files = [
        shutil.copy(FIXTURES / name, tmp_path / name)
        for name in ("clean.jsonl", "cm_handoff_hourly_limit.jsonl", "cm_handoff_cooldown.jsonl")
    ]
    # When the whole audit command runs on them
    main(["audit", *map(str, files)])
    capsys.readouterr()
    # Then each was read exactly once
    assert opened == Counter({str(f): 1 for f in files})


def test_a_directory_is_audited_recursively_in_path_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    shutil.copy(FIXTURES / "clean.jsonl", tmp_path / "a" / "b" / "one.jsonl")
    shutil.copy(FIXTURES / "duplicate_boot.jsonl", tmp_path / "a" / "two.jsonl")
    (tmp_path / "a" / "notes.txt").write_text("not a session")
    code = main(["audit", "--recursive", "--json", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.index("b/one.jsonl") < out.index("a/two.jsonl") and "notes.txt" not in out


def test_an_audit_sent_between_processes_keeps_its_findings_kinds(tmp_path: Path) -> None:
    # Given the audit of a file with a reader problem (a structure finding) and a receipt-less
    # pi-context-management state
    from pictx_fsm.cli.audit import session_checks
    from pictx_fsm.conformance import audit_file
    from pictx_fsm.extensions.context_management.conformance import CONTEXT_MEMORY

    path = shutil.copy(FIXTURES / "structure.jsonl", tmp_path / "structure.jsonl")
    audit = audit_file(path, session_checks())
    # When it is copied as a Ray worker sends it back (pickled)
    copy = pickle.loads(pickle.dumps(audit))
    # Then every finding keeps its kind (compared by identity) and name, and the chain check
    # still finds its file-order state
    assert [f.kind for f in copy.findings] == [f.kind for f in audit.findings]
    assert [f.name for f in copy.findings] == [f.name for f in audit.findings]
    assert any(name.startswith("structure/") for name in (f.name for f in copy.findings))
    assert copy.fold(CONTEXT_MEMORY) == audit.fold(CONTEXT_MEMORY) is not None
