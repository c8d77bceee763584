"""``/ctx-memory session export`` (M68–M70): one local report from the diagnostics logs.

Scope: the current session's log files (primary, ``.1``, ``.2``) and the verified direct
parent's records up to the handoff capture — never further ancestors, never other projects.
Operations are deduplicated by id; local paths are left out (sessions are named by role);
corrupt lines are counted. Metrics follow M70: a cancel is not a failure, an internal
timeout is, an operation without an end is unfinished, native summaries are excluded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from pictx_fsm.extensions.context_management.diaglog import (
    REPORT_SUFFIX,
    LogFiles,
    backups,
    log_path,
    read_records,
)
from pictx_fsm.extensions.context_management.effects import LogScope
from pictx_fsm.extensions.context_management.policy import (
    AUTO_COOLDOWN_MS,
    AUTO_FORECAST_FLOOR,
    AUTO_FORECAST_TARGET,
    AUTO_MAX_PER_HOUR,
    AUTO_THRESHOLD,
    GEN_TIMEOUT_MS,
    VERSION,
)

__all__ = [
    "CANCELLED",
    "EXTRA_TYPES",
    "JSON",
    "build_report",
    "metrics",
    "panel_diagnostics",
    "report_path",
    "write_report",
]

JSON: TypeAlias = Any
EXTRA_TYPES = frozenset({"background", "compaction", "handoff_manual", "handoff_auto"})
CANCELLED = frozenset({"aborted"})


def report_path(session_file: str) -> str:
    return session_file + REPORT_SUFFIX


def _session_records(
    files: LogFiles, session_file: str, role: str
) -> tuple[list[dict[str, JSON]], int, list[str]]:
    """Oldest first: ``.2``, ``.1``, primary (M67); ``missing`` names the absent primary."""
    primary = log_path(session_file)
    records: list[dict[str, JSON]] = []
    corrupt = 0
    for path in (*reversed(backups(primary)), primary):
        found, bad = read_records(files, path)
        records.extend(found)
        corrupt += bad
    missing = [] if files.read(primary) is not None else [role]
    return records, corrupt, missing


def _dedupe(records: Iterable[Mapping[str, JSON]]) -> list[dict[str, JSON]]:
    seen: set[tuple[JSON, ...]] = set()
    out: list[dict[str, JSON]] = []
    for record in records:
        key = (record.get("kind"), record.get("id"), record.get("time"), record.get("phase"))
        if record.get("id") is not None and key in seen:
            continue
        seen.add(key)
        out.append(dict(record))
    return out


def metrics(records: Sequence[Mapping[str, JSON]]) -> dict[str, JSON]:
    """M70 over deduplicated records."""
    ends = [r for r in records if r.get("kind") == "operation_end"]
    started = {r.get("id") for r in records if r.get("kind") == "operation_start"}
    ended = {r.get("id") for r in ends}
    returned = extra = unknown = 0
    cost = extra_cost = 0.0
    failures = cancels = 0
    for record in ends:
        is_extra = record.get("type") in EXTRA_TYPES
        tokens = _returned(record)
        if tokens is None:
            unknown += 1
        else:
            returned += tokens
            extra += tokens if is_extra else 0
        value = float(record.get("cost") or 0.0)
        cost += value
        extra_cost += value if is_extra else 0.0
        result = record.get("result")
        cancels += result in CANCELLED
        failures += result not in CANCELLED and result != "ok"
    observable = len(ends) - cancels
    return {
        "calls": len(ends),
        "failures": failures,
        "returnedTokens": returned,
        "extraTokens": extra,
        "usageUnknown": unknown,
        "reportedCost": cost,
        "extraReportedCost": extra_cost,
        "failureRate": (failures / observable) if observable else 0.0,
        "cancelled": cancels,
        "unfinished": len(started - ended),
        "nativeCompactions": sum(1 for r in records if r.get("kind") == "native_compaction"),
        "suspectedRepeatedTools": _repeats(records),
    }


def _returned(record: Mapping[str, JSON]) -> int | None:
    """M70: the input and output tokens a call returned; ``None`` when its usage is unknown —
    not reported, or all zero on a failed or cancelled call (a success keeps its zero)."""
    usage = record.get("usage")
    if not isinstance(usage, Mapping):
        return None
    tokens = int(usage.get("input") or 0) + int(usage.get("output") or 0)
    if tokens == 0 and record.get("result") != "ok":
        return None
    return tokens


def _repeats(records: Sequence[Mapping[str, JSON]]) -> int:
    """M70: repeats of a successful call with identical arguments in one instance (the
    fingerprint key is per instance, so equal fingerprints are the same instance)."""
    seen: dict[JSON, int] = {}
    for record in records:
        if record.get("kind") == "tool_call" and record.get("result") == "ok":
            key = record.get("fingerprint")
            seen[key] = seen.get(key, 0) + 1
    return sum(count - 1 for count in seen.values() if count > 1)


def _scope_records(files: LogFiles, logs: LogScope) -> tuple[list[dict[str, JSON]], JSON]:
    """The deduplicated records of ``logs`` and what reading them found (M67–M69)."""
    records, corrupt, missing = _session_records(files, logs.session_file, "current")
    unavailable = list(missing)
    if logs.parent_file is not None:
        parent, bad, gone = _session_records(files, logs.parent_file, "parent")
        corrupt += bad
        missing += gone
        unavailable += gone
        limit = logs.captured_at if logs.captured_at is not None else 0
        records = [r for r in parent if int(r.get("time") or 0) <= limit] + records
    found = {
        "corruptLines": corrupt,
        "missingPrimaryFiles": missing,
        "unavailableFiles": unavailable,
    }
    return _dedupe(records), found


def panel_diagnostics(files: LogFiles, logs: LogScope) -> dict[str, JSON]:
    """M62: the panel's statistics — the report's metrics and file findings."""
    events, found = _scope_records(files, logs)
    return {**metrics(events), **found}


def build_report(files: LogFiles, logs: LogScope) -> dict[str, JSON]:
    events, found = _scope_records(files, logs)
    return {
        "version": VERSION,
        "policy": {
            "generationTimeoutMs": GEN_TIMEOUT_MS,
            "autoThreshold": AUTO_THRESHOLD,
            "autoForecastFloor": AUTO_FORECAST_FLOOR,
            "autoForecastTarget": AUTO_FORECAST_TARGET,
            "autoCooldownMs": AUTO_COOLDOWN_MS,
            "autoMaxPerHour": AUTO_MAX_PER_HOUR,
        },
        "metrics": metrics(events),
        "events": events,
        **found,
    }


def write_report(files: LogFiles, logs: LogScope) -> str:
    """Write (or overwrite) the report beside the session; returns its path."""
    report = build_report(files, logs)
    path = report_path(logs.session_file)
    files.write(path, (json.dumps(report, indent=2, sort_keys=True) + "\n").encode())
    return path
