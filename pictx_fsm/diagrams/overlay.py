"""Firing counts per transition id, read from an audit log or a coverage file.

The overlay only needs ``{transition id: count}``; these readers produce it from the two
sources the CLI accepts. Both refuse malformed input with the file and line at fault.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pictx_fsm.errors import UnreadableInputError
from pictx_fsm.json_input import JsonInputError, parse_json, read_json_file
from pictx_fsm.machines.document import MachineSpec
from pictx_fsm.session.jsonl import open_regular, os_reason
from pictx_fsm.session.lines import iter_physical_lines

__all__ = ["counts_from_audit", "counts_from_coverage", "merge_counts", "undeclared"]


def counts_from_audit(
    path: str | os.PathLike[str], *, skip_damaged: bool = False
) -> dict[str, int]:
    """Count transition firings in an audit log (JSONL, one JSON object per line).

    Fired transitions are lists of objects carrying the transition's ``id`` (as in
    :attr:`pictx_fsm.machines.TransitionSpec.id`), found in either shape: per machine step, as
    :mod:`pictx_fsm.audit.log` writes them (``{"steps": [{"transitions": [{"id": ...}]}]}``), or
    directly on the record (``{"transitions": [{"id": ...}]}``). Other keys are ignored, blank
    lines skipped, and a record with neither fired nothing. A log in which *no* record has
    either shape is refused: it is probably not an audit log. ``skip_damaged`` passes over
    lines that are not JSON objects (a torn record) instead of refusing the log.
    """
    counts: Counter[str] = Counter()
    seen_transitions = False
    for line_number, record in _records(Path(path), skip_damaged):
        for fired in _fired_lists(path, line_number, record):
            seen_transitions = True
            counts.update(_ids(path, line_number, fired))
    if not seen_transitions:
        raise UnreadableInputError(
            str(path), "no record lists fired 'transitions'; is this an audit log?"
        )
    return dict(sorted(counts.items()))


def _fired_lists(
    path: str | os.PathLike[str], line_number: int, record: Mapping[str, Any]
) -> list[Any]:
    lists = [record["transitions"]] if "transitions" in record else []
    steps = record.get("steps", [])
    if not isinstance(steps, list):
        raise UnreadableInputError(str(path), f"line {line_number}: 'steps' must be a list")
    for step in steps:
        if not isinstance(step, dict):
            raise UnreadableInputError(str(path), f"line {line_number}: a step must be an object")
        if "transitions" in step:
            lists.append(step["transitions"])
    return lists


def _records(path: Path, skip_damaged: bool = False) -> Iterable[tuple[int, Mapping[str, Any]]]:
    """Each non-blank line's object, read in bounded memory from a regular file only."""
    try:
        handle = open_regular(path)
    except OSError as exc:
        raise UnreadableInputError(str(path), os_reason(exc)) from None
    with handle:
        for line in iter_physical_lines(handle):
            try:
                if line.undecodable is not None or line.oversized is not None:
                    why = "not UTF-8" if line.oversized is None else "longer than the limit"
                    raise UnreadableInputError(str(path), f"line {line.number}: {why}")
                if line.text.strip():
                    yield line.number, _record(path, line.number, line.text)
            except UnreadableInputError:
                if not skip_damaged:
                    raise


def _record(path: Path, line_number: int, line: str) -> Mapping[str, Any]:
    try:
        record = parse_json(line, str(path), line_number)
    except JsonInputError as exc:
        reason = str(exc).removeprefix(f"{path}:{line_number}: ")
        raise UnreadableInputError(str(path), f"line {line_number}: {reason}") from None
    if not isinstance(record, dict):
        raise UnreadableInputError(str(path), f"line {line_number}: a record must be an object")
    return record


def _ids(path: str | os.PathLike[str], line_number: int, transitions: Any) -> list[str]:
    where = f"line {line_number}: 'transitions'"
    if not isinstance(transitions, list):
        raise UnreadableInputError(str(path), f"{where} must be a list")
    ids = []
    for item in transitions:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise UnreadableInputError(str(path), f"{where}: each item needs a string 'id'")
        ids.append(item["id"])
    return ids


def counts_from_coverage(path: str | os.PathLike[str]) -> dict[str, int]:
    """Read a coverage file: one JSON object ``{transition_id: count}`` (counts >= 0)."""
    file = Path(path)
    try:
        data = read_json_file(file)
    except JsonInputError as exc:
        raise UnreadableInputError(str(file), f"not a JSON document ({exc})") from None
    if not isinstance(data, dict):
        raise UnreadableInputError(str(file), "coverage must be an object {transition_id: count}")
    for key, value in data.items():
        if type(value) is not int or value < 0:
            raise UnreadableInputError(
                str(file), f"count of {key!r} must be a non-negative integer, got {value!r}"
            )
    return dict(sorted(data.items()))


def merge_counts(*sources: Mapping[str, int]) -> dict[str, int]:
    """Sum several count mappings (a trace and a coverage file may both be given)."""
    total: Counter[str] = Counter()
    for source in sources:
        total.update(source)
    return dict(sorted(total.items()))


def undeclared(counts: Mapping[str, int], specs: Iterable[MachineSpec]) -> list[str]:
    """Counted ids that no declared transition has (the trace came from other models)."""
    declared = {t.id for spec in specs for t in spec.transitions}
    return sorted(set(counts) - declared)
