"""Transition coverage: which declared transitions generated runs fired.

A declared transition that no run can fire is a defect of the model or of its guards — unless
the family's models directory documents why in ``coverage-exemptions.toml`` (one reason per
transition id; a transition that one variant of the extension — a profile — can never fire
is listed under that variant). The table is what ``pictx-fsm verify`` prints and what
``pictx-fsm diagram --coverage`` overlays; it is the same for every extension.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from attrs import frozen

from pictx_fsm.errors import ModelDocumentError

__all__ = [
    "EXEMPTIONS_FILE",
    "Coverage",
    "CoverageRow",
    "Declared",
    "coverage_of",
    "load_exemptions",
    "load_profile_exemptions",
    "summed_counts",
]

EXEMPTIONS_FILE = "coverage-exemptions.toml"
PROFILE_TABLE = "profile_exemptions"
"""``[profile_exemptions."<variant>"]``: transitions that cannot fire under one variant."""


def load_exemptions(
    directory: Path,
    profiles: Sequence[str] | None = None,
    known: Sequence[str] | None = None,
) -> dict[str, str]:
    """``{transition id: reason}`` from the models directory (empty when there is no file):
    the ``[exemptions]`` of every profile, plus, when ``profiles`` are given, the profile
    exemptions that every one of them shares (a transition another explored profile can fire
    is not exempt). ``known``: the variants a profile table may name (any, when not given)."""
    exemptions, by_profile = _load(directory, known)
    if profiles:
        shared = set.intersection(*(set(by_profile.get(p, {})) for p in profiles))
        first = by_profile.get(profiles[0], {})
        exemptions.update({t: f"{', '.join(profiles)} only: {first[t]}" for t in sorted(shared)})
    return exemptions


def load_profile_exemptions(
    directory: Path, known: Sequence[str] | None = None
) -> dict[str, dict[str, str]]:
    """``{profile: {transition id: reason}}``: the ``[profile_exemptions.*]`` tables."""
    return _load(directory, known)[1]


def _load(
    directory: Path, known: Sequence[str] | None = None
) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    path = directory / EXEMPTIONS_FILE
    if not path.exists():
        return {}, {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ModelDocumentError(str(path), "document", str(error)) from None
    exemptions = _reasons(path, "exemptions", data.get("exemptions", {}))
    return exemptions, _profile_tables(path, data.get(PROFILE_TABLE, {}), known)


def _reasons(path: Path, field: str, table: Any) -> dict[str, str]:
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in table.items()
    ):
        raise ModelDocumentError(str(path), field, 'expected transition id = "reason"')
    return dict(table)


def _profile_tables(
    path: Path, tables: Any, known: Sequence[str] | None
) -> dict[str, dict[str, str]]:
    if not isinstance(tables, dict):
        raise ModelDocumentError(str(path), PROFILE_TABLE, "expected one table per profile")
    unknown = sorted(set(tables) - set(known)) if known is not None else []
    if unknown:
        raise ModelDocumentError(
            str(path),
            PROFILE_TABLE,
            f"unknown profile {unknown[0]!r}; known: {sorted(known or ())}",
        )
    return {
        profile: _reasons(path, f"{PROFILE_TABLE}.{profile}", table)
        for profile, table in tables.items()
    }


class Declared(Protocol):
    """Machines loaded from one family's directory: what a coverage table is of."""

    @property
    def directory(self) -> Path: ...

    def transition_ids(self) -> tuple[str, ...]: ...


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


def coverage_of(
    machines: Declared,
    counts: Mapping[str, int],
    profiles: Sequence[str] | None = None,
    known: Sequence[str] | None = None,
) -> Coverage:
    """The coverage table of ``machines``' declared transitions over runs in ``profiles``
    (every variant when not given); ``known``: the variants its exemptions may name."""
    directory = machines.directory
    exemptions = load_exemptions(directory, profiles, known)
    ids = machines.transition_ids()
    rows = tuple(
        CoverageRow(transition=t, fired=counts.get(t, 0), exemption=exemptions.get(t)) for t in ids
    )
    always, by_profile = _load(directory, known)
    named = set(always).union(*(set(table) for table in by_profile.values()))
    unknown = tuple(sorted(named - set(ids)))
    return Coverage(rows=rows, unknown_exemptions=unknown)


def summed_counts(tables: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Transition counts of several audit logs (or companions) added up, key by key."""
    counts: dict[str, int] = {}
    for table in tables:
        for key, value in table.items():
            counts[key] = counts.get(key, 0) + value
    return counts
