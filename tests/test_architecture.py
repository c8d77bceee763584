"""docs/architecture.md tells the truth about the path of one hook."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_documented_path_of_one_hook_is_the_traced_one() -> None:
    # Given the numbered path in docs/architecture.md
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("<!-- hook-path -->", 1)[1].split("<!-- /hook-path -->", 1)[0]
    documented = re.findall(r"^\d+\. `([\w.]+)`", section, re.MULTILINE)
    # When one turn_end is traced through the bridge server
    traced = runpy.run_path(str(ROOT / "scripts" / "hook_path.py"))["hook_path"]()
    # Then the document lists every module it crosses, in order
    assert documented == traced


def test_every_path_the_architecture_map_names_exists() -> None:
    # Given every repository path docs/architecture.md names
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    paths = re.findall(r"`((?:pictx_fsm|models|tests|scripts|docs|bench)/[\w./-]+)`", text)
    # Then each is there (a map that names moved files misleads)
    assert [p for p in paths if not (ROOT / p).exists()] == []
