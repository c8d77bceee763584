"""docs/verification.md lists every invariant of every kit as a safety property or a promised
outcome, with its rules (issue 27): generated from the code by
``python scripts/invariant_table.py`` and checked current here."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from invariant_table import COMMAND, END, OUTPUT, START, render, section  # noqa: E402

from pictx_fsm.testing.kit import kit_named, kit_names  # noqa: E402


def test_the_invariant_table_is_generated_from_the_current_kits() -> None:
    text = (ROOT / OUTPUT).read_text(encoding="utf-8")
    assert section(text, render()) == text, f"{OUTPUT} is stale: run `{COMMAND}`"


def test_every_invariant_has_a_row_with_its_kind_and_rules() -> None:
    rows = render()
    for name in kit_names():
        for cls in kit_named(name).invariant_types:
            (row,) = [r for r in rows if r.startswith(f"| {name} | `{cls.name}` |")]
            kind = "promised outcome" if cls.kind == "outcome" else "safety"
            assert f"| {kind} | {cls.rule} |" in row
            assert cls.rule, cls.name


def test_a_kit_lists_its_invariant_classes_in_the_order_it_checks_them() -> None:
    for name in kit_names():
        kit = kit_named(name)
        assert tuple(t.name for t in kit.invariant_types) == kit.invariant_names


def test_the_section_replaces_only_what_lies_between_its_markers() -> None:
    text = f"before\n{START}\nold\n{END}\nafter\n"
    assert section(text, ["new"]) == f"before\n{START}\nnew\n{END}\nafter\n"
