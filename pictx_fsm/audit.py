"""The audit log: one hash-chained JSONL record per handled hook event.

A record says what the host raised (hook and payload), what every machine did with it
(event, configuration before and after, each fired transition with the guard values it
evaluated, the facts it used and their digest), what the hook returned and did (effects),
under which profile and which model documents (sha256 fingerprint). Each record carries the
hash of the previous one, so a log is a chain: :func:`verify_chain` recomputes it and names
the first broken record.

Tamper evidence is byte-exact: a line must be the canonical serialisation of its own content
(sorted keys, compact separators, ASCII), so even a change of whitespace is detected, and the
hash covers everything but itself. How the log lives in a file — resuming after a crash,
segments, seals, an unusable directory, verification — is :mod:`pictx_fsm.audit_store`'s.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from pictx_fsm.audit_store import (
    AUDIT_FORMAT,
    GENESIS,
    AuditFile,
    ChainReport,
    canonical,
    hook_records,
    iter_records,
    verify_chain,
    verify_lines,
)
from pictx_fsm.audit_store import default as json_default
from pictx_fsm.audit_store import digest as _digest

if TYPE_CHECKING:
    from pictx_fsm.effects import HookResult
    from pictx_fsm.machines import Configuration, Fired, Step


def configuration_json(configuration: Configuration) -> dict[str, str]:
    """A machine configuration in a record: ``{region: state}``."""
    return dict(configuration.states)


def fired_json(fired: Fired) -> dict[str, Any]:
    """A fired transition in a record: its id, region, source, target and guard values."""
    return {
        "id": fired.transition,
        "region": fired.region,
        "source": fired.source,
        "target": fired.target,
        "guards": [[name, value] for name, value in fired.guards],
    }


def step_json(step: Step[Any]) -> dict[str, Any]:
    """One machine event of a hook: what it saw (configuration, facts) and what it did."""
    facts = json.loads(canonical(dict(step.facts)))
    return {
        "machine": step.machine,
        "event": step.event,
        "before": configuration_json(step.before),
        "after": configuration_json(step.after),
        "transitions": [fired_json(f) for f in step.fired],
        "facts": facts,
        "facts_digest": _digest(canonical(facts)),
    }


def message_list_digest(messages: Sequence[Any]) -> dict[str, Any]:
    """A provider message list in an audit record: its length and sha256, not its text.

    ``context`` hooks carry the whole conversation on every request; writing it again each
    time would make a record cost O(session) and the log grow quadratically."""
    return {"count": len(messages), "sha256": _digest(canonical(list(messages)))}


def json_digest(value: Any) -> dict[str, Any]:
    """A value in a record by its size and sha256, not its content: a tool call's arguments
    (a note of up to 1 MB) or its result text (up to 32 KiB on the wire). Both are of the
    canonical JSON in UTF-8 (not ASCII-escaped: a third of the bytes to hash for non-Latin
    text), a lone surrogate encoded as itself."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=json_default
    ).encode("utf-8", "surrogatepass")
    return {"bytes": len(text), "sha256": hashlib.sha256(text).hexdigest()}


def event_json(event: Any) -> dict[str, Any]:
    """A hook event as JSON (attrs fields; drafts as Pi writes them; message lists and tool
    arguments digested)."""
    out: dict[str, Any] = {"hook": type(event).HOOK}
    for attribute in attrs.fields(type(event)):
        value = getattr(event, attribute.name)
        if attribute.name == "messages":
            out["messages"] = message_list_digest(value)
        elif attribute.name == "arguments":
            out["arguments"] = json_digest(value)
        else:
            out[attribute.name] = json.loads(canonical(value))
    return out


def result_json(result: Any) -> Any:
    """A hook result as JSON, with a returned message list digested like the event's and a
    notes or history tool's outcome as its status and the digest of its text."""
    from pictx_fsm.tools.outcome import ToolOutcome

    value = getattr(result, "value", None)
    if isinstance(value, ToolOutcome):
        outcome = {"status": value.status, "text": json_digest(value.text)}
        return {**json.loads(canonical(attrs.evolve(result, value=None))), "value": outcome}
    out = json.loads(canonical(result))
    value = out.get("value") if isinstance(out, dict) else None
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value["messages"] = message_list_digest(value["messages"])
    return out


class AuditLog:
    """An append-only audit log. ``path=None`` keeps records in memory only (tests, verify).

    A file log resumes whatever it finds and never raises on it (:class:`AuditFile`): a
    damaged tail is sealed off into a new segment, an unusable place keeps records in
    memory, and :attr:`notice` says what happened, once."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, fsync: bool = False) -> None:
        self.path = None if path is None else Path(path)
        self.records: list[dict[str, Any]] = []
        self._file = None if path is None else AuditFile(path, fsync=fsync)
        self._last_hash = GENESIS if self._file is None else self._file.last_hash
        self._seq = 0 if self._file is None else self._file.seq

    @property
    def notice(self) -> str | None:
        """What happened to the file when it was opened or written, if anything did."""
        return None if self._file is None else self._file.notice

    def record(
        self,
        *,
        event: Any,
        ctx: Any = None,
        result: HookResult,
        profile: str,
        fingerprint: str,
    ) -> dict[str, Any]:
        """Append the record of one handled hook: its result carries the machine steps."""
        self._seq += 1
        body: dict[str, Any] = {
            "format": AUDIT_FORMAT,
            "seq": self._seq,
            "hook": result.hook,
            "event": event_json(event),
            "ctx": json.loads(canonical(ctx)),
            "steps": [step_json(s) for s in result.steps],
            "result": result_json(result),
            "profile": profile,
            "models": fingerprint,
            "prev": self._last_hash,
        }
        body["hash"] = _digest(canonical(body))
        self._last_hash = body["hash"]
        self.records.append(body)
        if self._file is not None:
            self._file.append(body)
        return body

    def close(self) -> None:
        """Seal the file's segment (a clean shutdown; a later resume opens a new one)."""
        if self._file is not None:
            self._file.close()

    def transition_counts(self) -> dict[str, int]:
        return transition_counts(self.records)


def transition_counts(
    records: Iterator[Mapping[str, Any]] | Sequence[Mapping[str, Any]],
) -> dict[str, int]:
    """How often each declared transition fired in these records."""
    counts: dict[str, int] = {}
    for record in records:
        for step in record.get("steps", ()):
            for transition in step.get("transitions", ()):
                counts[transition["id"]] = counts.get(transition["id"], 0) + 1
    return counts


def verify_records(records: Sequence[Mapping[str, Any]]) -> ChainReport:
    """Verify in-memory records (as :class:`AuditLog` keeps them)."""
    return verify_lines([canonical(r) for r in records])


__all__ = [
    "AUDIT_FORMAT",
    "GENESIS",
    "AuditLog",
    "ChainReport",
    "canonical",
    "configuration_json",
    "event_json",
    "fired_json",
    "hook_records",
    "iter_records",
    "json_digest",
    "message_list_digest",
    "result_json",
    "step_json",
    "transition_counts",
    "verify_chain",
    "verify_lines",
    "verify_records",
]
