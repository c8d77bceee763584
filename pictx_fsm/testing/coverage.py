"""Transition coverage: which declared transitions generated runs fired.

A declared transition that no run can fire is a defect of the model or of its guards — unless
the models directory documents why in ``coverage-exemptions.toml`` (one reason per transition
id). The table is what ``pictx-fsm verify`` prints and what ``pictx-fsm diagram --coverage``
overlays.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from attrs import frozen

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.lifecycle import Lifecycle

EXEMPTIONS_FILE = "coverage-exemptions.toml"


def load_exemptions(directory: Path) -> dict[str, str]:
    """``{transition id: reason}`` from the models directory (empty when there is no file)."""
    path = directory / EXEMPTIONS_FILE
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ModelDocumentError(str(path), "document", str(error)) from None
    table = data.get("exemptions", {})
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in table.items()
    ):
        raise ModelDocumentError(str(path), "exemptions", 'expected transition id = "reason"')
    return dict(table)


@frozen(kw_only=True)
class CoverageRow:
    transition: str
    fired: int
    exemption: str | None


@frozen(kw_only=True)
class Coverage:
    rows: tuple[CoverageRow, ...]
    unknown_exemptions: tuple[str, ...]

    @property
    def declared(self) -> int:
        return len(self.rows)

    @property
    def covered(self) -> int:
        return sum(1 for row in self.rows if row.fired > 0)

    @property
    def missing(self) -> tuple[CoverageRow, ...]:
        """Never fired and not exempted: what fails ``verify``."""
        return tuple(row for row in self.rows if row.fired == 0 and row.exemption is None)

    @property
    def exempted(self) -> tuple[CoverageRow, ...]:
        return tuple(row for row in self.rows if row.fired == 0 and row.exemption is not None)

    @property
    def stale_exemptions(self) -> tuple[CoverageRow, ...]:
        """Exempted as unreachable, yet fired: the documented reason is wrong."""
        return tuple(row for row in self.rows if row.fired > 0 and row.exemption is not None)

    @property
    def complete(self) -> bool:
        return not self.missing and not self.unknown_exemptions and not self.stale_exemptions

    def counts(self) -> dict[str, int]:
        return {row.transition: row.fired for row in self.rows}

    def by_machine(self) -> dict[str, tuple[int, int]]:
        table: dict[str, tuple[int, int]] = {}
        for row in self.rows:
            machine = row.transition.split(":", 1)[0]
            covered, declared = table.get(machine, (0, 0))
            table[machine] = (covered + (row.fired > 0), declared + 1)
        return table


def coverage_of(lifecycle: Lifecycle, counts: Mapping[str, int]) -> Coverage:
    exemptions = load_exemptions(lifecycle.directory)
    ids = lifecycle.transition_ids()
    rows = tuple(
        CoverageRow(transition=t, fired=counts.get(t, 0), exemption=exemptions.get(t)) for t in ids
    )
    unknown = tuple(sorted(set(exemptions) - set(ids)))
    return Coverage(rows=rows, unknown_exemptions=unknown)
