"""The committed ``diagrams/`` are what the declarations in ``models/`` generate (issue 5),
for every machine family (``models/`` and each of its subdirectories)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pictx_fsm.diagrams import render
from pictx_fsm.machines.families import load_families

ROOT = Path(__file__).resolve().parents[1]
DIAGRAMS = ROOT / "diagrams"
SPECS = {name: spec for f in load_families(ROOT / "models") for name, spec in f.machines.items()}


@pytest.mark.parametrize("machine", sorted(SPECS))
def test_committed_mermaid_diagram_is_current(machine: str) -> None:
    # Given the declaration of a machine / When its Mermaid diagram is generated
    generated = render(SPECS[machine], "mermaid")
    # Then it equals the committed file byte for byte (regenerate with
    # `pictx-fsm diagram --format mermaid --out diagrams`)
    assert (DIAGRAMS / f"{machine}.mmd").read_bytes() == generated


def _graphviz_version() -> str | None:
    dot = shutil.which("dot")
    if dot is None:
        return None
    out = subprocess.run([dot, "-V"], capture_output=True, text=True, check=False)
    match = re.search(r"version (\S+)", out.stderr + out.stdout)
    return match.group(1) if match else None


@pytest.mark.parametrize("machine", sorted(SPECS))
def test_committed_svg_diagram_is_current(machine: str) -> None:
    # Given the committed SVG and the Graphviz version that drew it
    committed = (DIAGRAMS / f"{machine}.svg").read_bytes()
    drawn_by = re.search(rb"graphviz version (\S+)", committed)
    assert drawn_by is not None, "the committed SVG names no Graphviz version"
    installed = _graphviz_version()
    if installed is None:
        pytest.skip("Graphviz is not installed (Debian package graphviz)")
    if installed != drawn_by.group(1).decode():
        pytest.skip(f"SVG was drawn by Graphviz {drawn_by.group(1).decode()}, this is {installed}")
    # When it is drawn again / Then the bytes are the same
    assert render(SPECS[machine], "svg") == committed


def test_the_readme_shows_the_generated_toggle_diagram() -> None:
    # Given the README's Mermaid block / Then it is the committed generated diagram itself
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block == (DIAGRAMS / "toggle.mmd").read_text(encoding="utf-8")
