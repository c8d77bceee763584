"""Machine families: ``models/`` is pi-context's lifecycle, each subdirectory one more family."""

from __future__ import annotations

from pathlib import Path

import pytest

from pictx_fsm.cli import main
from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.machines.families import families, load_families

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models" / "pi_context"
TOGGLE = (MODELS / "toggle.yaml").read_text(encoding="utf-8")


def _family(tmp_path: Path, name: str, machine: str) -> Path:
    directory = tmp_path / name
    directory.mkdir(parents=True, exist_ok=True)
    text = TOGGLE.replace("name: toggle", f"name: {machine}")
    (directory / f"{machine}.yaml").write_text(text, encoding="utf-8")
    return directory


def test_a_root_holding_documents_and_each_subdirectory_holding_documents_are_families(
    tmp_path: Path,
) -> None:
    # Given a models directory with one machine at the top and one in a subdirectory
    _family(tmp_path, ".", "top")
    _family(tmp_path, "extra", "other")
    (tmp_path / "empty").mkdir()
    # When its families are listed
    found = families(tmp_path)
    # Then the root comes first (named after it), then each subdirectory with documents
    # (not the empty one)
    assert [name for name, _ in found] == [tmp_path.name, "extra"]
    loaded = load_families(tmp_path)
    assert [list(f.machines) for f in loaded] == [["top"], ["other"]]


def test_a_machine_name_declared_in_two_families_is_refused(tmp_path: Path) -> None:
    # Given the same machine name at the top and in a subdirectory
    _family(tmp_path, ".", "twice")
    _family(tmp_path, "extra", "twice")
    # When the families load / Then the second declaration is named
    with pytest.raises(ModelDocumentError, match="also declared"):
        load_families(tmp_path)


def test_machines_lists_every_family(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a models directory with a subdirectory family
    _family(tmp_path, ".", "top")
    _family(tmp_path, "extra", "other")
    # When `pictx-fsm machines` lists it
    code = main(["machines", "--models", str(tmp_path), "--json"])
    # Then both machines are listed
    assert code == 0
    out = capsys.readouterr().out
    assert '"name": "top"' in out and '"name": "other"' in out
