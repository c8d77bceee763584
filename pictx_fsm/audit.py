"""The audit log: one hash-chained JSONL record per handled hook event.

A record says what the host raised (hook and payload), what every machine did with it
(event, configuration before and after, each fired transition with the guard values it
evaluated, the facts it used and their digest), what the hook returned and did (effects),
under which profile and which model documents (sha256 fingerprint). Each record carries the
hash of the previous one, so a log is a chain: :func:`verify_chain` recomputes it and names
the first broken record.

Tamper evidence is byte-exact: a line must be the canonical serialisation of its own content
(sorted keys, compact separators, ASCII), so even a change of whitespace is detected, and the
hash covers everything but itself.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from attrs import frozen

from pictx_fsm.errors import AuditChainError, UnreadableInputError

__all__ = [
    "AUDIT_FORMAT",
    "GENESIS",
    "AuditLog",
    "ChainReport",
    "canonical",
    "configuration_json",
    "event_json",
    "fired_json",
    "iter_records",
    "message_list_digest",
    "result_json",
    "step_json",
    "transition_counts",
    "verify_chain",
    "verify_lines",
    "verify_records",
]

if TYPE_CHECKING:
    from pictx_fsm.effects import HookResult
    from pictx_fsm.machines import Configuration, Fired, Step

GENESIS = "0" * 64
AUDIT_FORMAT = "pictx-fsm/audit/1"


def canonical(obj: Any) -> str:
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=_default
    )


def _default(value: Any) -> Any:
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    if isinstance(value, Mapping):
        return dict(value)
    enum_value = getattr(value, "value", None)
    if enum_value is not None and hasattr(value, "name"):
        return enum_value
    if isinstance(value, frozenset | set):
        return sorted(value, key=repr)
    import attrs

    if attrs.has(type(value)):
        return {"__type__": type(value).__name__, **attrs.asdict(value, recurse=False)}
    return repr(value)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


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


def event_json(event: Any) -> dict[str, Any]:
    """A hook event as JSON (attrs fields; drafts as Pi writes them; message lists digested)."""
    import attrs

    out: dict[str, Any] = {"hook": type(event).HOOK}
    for attribute in attrs.fields(type(event)):
        value = getattr(event, attribute.name)
        if attribute.name == "messages":
            out["messages"] = message_list_digest(value)
        else:
            out[attribute.name] = json.loads(canonical(value))
    return out


def result_json(result: Any) -> Any:
    """A hook result as JSON, with a returned message list digested like the event's."""
    out = json.loads(canonical(result))
    value = out.get("value") if isinstance(out, dict) else None
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value["messages"] = message_list_digest(value["messages"])
    return out


class AuditLog:
    """An append-only audit log. ``path=None`` keeps records in memory only (tests, verify)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, fsync: bool = False) -> None:
        self.path = None if path is None else Path(path)
        self.records: list[dict[str, Any]] = []
        self._fsync = fsync
        self._last_hash = GENESIS
        self._seq = 0
        self._fp: IO[str] | None = None
        if self.path is not None:
            self._resume()

    def _resume(self) -> None:
        assert self.path is not None
        if self.path.exists() and self.path.stat().st_size > 0:
            last: dict[str, Any] | None = None
            for record in iter_records(self.path):
                last = record
            verify_chain(self.path)
            if last is not None:
                self._last_hash = last["hash"]
                self._seq = int(last["seq"])
        self._fp = self.path.open("a", encoding="ascii")

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
        if self._fp is not None:
            self._fp.write(canonical(body) + "\n")
            self._fp.flush()
            if self._fsync:
                os.fsync(self._fp.fileno())
        return body

    def close(self) -> None:
        if self._fp is not None:
            self._fp.close()
            self._fp = None

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


def iter_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Records of an audit file (JSON objects); raises on unreadable files only."""
    try:
        with Path(path).open(encoding="ascii") as fp:
            for line in fp:
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError:
                        yield {"__invalid__": line}
    except (OSError, UnicodeDecodeError) as error:
        raise UnreadableInputError(str(path), str(error)) from error


@frozen(kw_only=True)
class ChainReport:
    records: int
    last_hash: str


def verify_lines(lines: Sequence[str], source: str = "<memory>") -> ChainReport:
    """Verify a chain given as text lines; raise :class:`AuditChainError` at the first break."""
    previous = GENESIS
    count = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        _verify_line(line, number, previous, count + 1, source)
        record = json.loads(line)
        previous = record["hash"]
        count += 1
    return ChainReport(records=count, last_hash=previous)


def _verify_line(line: str, number: int, previous: str, seq: int, source: str) -> None:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise AuditChainError(source, number, f"record is not valid JSON ({error.msg})") from None
    if not isinstance(record, dict) or "hash" not in record:
        raise AuditChainError(source, number, "record has no hash")
    if canonical(record) != line:
        raise AuditChainError(source, number, "record bytes are not canonical (edited)")
    claimed = record.pop("hash")
    if _digest(canonical(record)) != claimed:
        raise AuditChainError(source, number, "record hash does not match its content")
    if record.get("prev") != previous:
        raise AuditChainError(source, number, "record does not chain to the previous hash")
    if record.get("seq") != seq:
        raise AuditChainError(source, number, f"sequence number {record.get('seq')} != {seq}")


def verify_chain(path: str | os.PathLike[str]) -> ChainReport:
    """Verify an audit file; the error names the file and the first broken line.

    Records are split on ``\n`` only, as they were written: a ``\r`` (or any other character
    ``str.splitlines`` would treat as a break) inside a line is an edit of that record, and a
    byte that is not ASCII is an edit of the line holding it."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise UnreadableInputError(str(path), str(error)) from error
    return verify_lines(_ascii_lines(data, str(path)), str(path))


def _ascii_lines(data: bytes, source: str) -> list[str]:
    lines = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            lines.append(raw.decode("ascii"))
        except UnicodeDecodeError:
            raise AuditChainError(source, number, "record is not ASCII (edited)") from None
    return lines


def verify_records(records: Sequence[Mapping[str, Any]]) -> ChainReport:
    """Verify in-memory records (as :class:`AuditLog` keeps them)."""
    return verify_lines([canonical(r) for r in records])
