"""pi-context's readings of its audit records: the family's
(:mod:`pictx_fsm.extensions.shared.kit.records`), with the markers read as pi-context's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictx_fsm.extensions.pi_context.texts import MARKER_TYPE
from pictx_fsm.extensions.shared.kit import records
from pictx_fsm.extensions.shared.kit.records import aborted_turn, model_of, own_drafts, result_of

__all__ = [
    "aborted_turn",
    "continues",
    "markers_written",
    "model_of",
    "own_drafts",
    "result_of",
]


def markers_written(record: Mapping[str, Any]) -> list[str]:
    return records.markers_written(record, MARKER_TYPE)


def continues(record: Mapping[str, Any]) -> bool:
    return records.continue_flag(record) is True
