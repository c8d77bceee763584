"""Transition coverage of the context-management family, with its documented exemptions
(``models/context_management/coverage-exemptions.toml``, the same format and rules as
pi-context's: an exempted transition that fires is a stale reason)."""

from __future__ import annotations

from collections.abc import Mapping

from pictx_fsm.extensions.context_management.machines import load_machines
from pictx_fsm.testing.coverage import Coverage, CoverageRow, load_exemptions

CmCoverage = Coverage


def cm_coverage(counts: Mapping[str, int]) -> Coverage:
    machines = load_machines()
    exemptions = load_exemptions(machines.directory)
    ids = machines.transition_ids()
    rows = tuple(
        CoverageRow(transition=t, fired=counts.get(t, 0), exemption=exemptions.get(t)) for t in ids
    )
    unknown = tuple(sorted(set(exemptions) - set(ids)))
    return Coverage(rows=rows, unknown_exemptions=unknown)
