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

Message lists (``context`` and ``context_with_system`` carry the whole conversation) are
recorded as ``{"count", "sha256"}``, never as text. Since format ``pictx-fsm/audit/2`` the
``sha256`` is a hash list: the sha256 of the concatenated 32-byte sha256 digests of each
message's canonical JSON (:func:`message_digest`, :func:`message_list_digest`). It proves the
list exactly as before (a different list needs a sha256 collision), but per-message digests
compose: a :class:`~pictx_fsm.session.transcript.Transcript` built by the session layer keeps
them per entry and carries its list digest, so recording a 100k-message request costs O(1)
and a projected window O(window). Format 1 hashed ``canonical(list)`` whole; both formats
verify with :func:`verify_chain`, which checks every record's bytes and hash, not digests.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

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
from pictx_fsm.audit_store import canonical as _encode
from pictx_fsm.audit_store import default as json_default
from pictx_fsm.audit_store import digest as _digest
from pictx_fsm.effects import HookResult, MessagesResult

if TYPE_CHECKING:
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
    result: dict[str, Any] = json.loads(_step_text(step))
    return result


def _step_text(step: Step[Any]) -> str:
    """:func:`step_json` as canonical text; the facts are encoded once, for the record and
    their digest, and the few configurations and transitions a lifecycle has are cached."""
    facts = _encode(dict(step.facts)) if step.facts else "{}"
    transitions = ",".join(_fired_text(fired) for fired in step.fired)
    return (
        f'{{"after":{_configuration_text(step.after)},'
        f'"before":{_configuration_text(step.before)},"event":{_text(step.event)},'
        f'"facts":{facts},"facts_digest":"{_facts_digest(facts)}",'
        f'"machine":{_text(step.machine)},"transitions":[{transitions}]}}'
    )


def _facts_digest(text: str) -> str:
    """The digest of a facts text; the same few facts recur hook after hook (cached)."""
    return _cached(("facts", text), lambda: _digest(text))


def _text(value: Any) -> str:
    """Canonical text of a value, a plain string without the encoder's call."""
    if type(value) is str:
        return str(json.encoder.encode_basestring_ascii(value))
    return _encode(value)


_TEXTS: dict[tuple[Any, ...], str] = {}


def _cached(key: tuple[Any, ...], make: Callable[[], str]) -> str:
    text = _TEXTS.get(key)
    if text is None:
        if len(_TEXTS) >= 4096:
            _TEXTS.clear()
        text = _TEXTS[key] = make()
    return text


_CONFIGURATIONS: dict[int, tuple[Configuration, str]] = {}


def _configuration_text(configuration: Configuration) -> str:
    """A configuration's text, by identity first: a state keeps its configuration objects."""
    known = _CONFIGURATIONS.get(id(configuration))
    if known is not None and known[0] is configuration:
        return known[1]
    text = _cached(
        ("configuration", configuration.states),
        lambda: _encode(configuration_json(configuration)),
    )
    if len(_CONFIGURATIONS) >= 1024:
        _CONFIGURATIONS.clear()
    _CONFIGURATIONS[id(configuration)] = (configuration, text)
    return text


_UNGUARDED: dict[int, tuple[Fired, str]] = {}


def _fired_text(fired: Fired) -> str:
    """A fired transition's text: by identity for an unguarded one (the engine reuses it), by
    value for one with guard values (all ``bool``: ``1 == True`` but ``"1" != "true"``)."""
    if not fired.guards:
        known = _UNGUARDED.get(id(fired))
        if known is not None and known[0] is fired:
            return known[1]
        text = _encode(fired_json(fired))
        if len(_UNGUARDED) >= 1024:
            _UNGUARDED.clear()
        _UNGUARDED[id(fired)] = (fired, text)
        return text
    if not all(type(value) is bool for _, value in fired.guards):
        return _encode(fired_json(fired))
    key = ("fired", fired.transition, fired.region, fired.source, fired.target, fired.guards)
    return _cached(key, lambda: _encode(fired_json(fired)))


def message_digest(message: Any) -> bytes:
    """The 32-byte sha256 of one message's canonical JSON: the unit of a list digest."""
    return hashlib.sha256(_encode(message).encode("ascii")).digest()


def message_list_digest(messages: Sequence[Any]) -> dict[str, Any]:
    """A provider message list in an audit record: its length and hash list, not its text.

    ``sha256`` is the sha256 of the concatenated :func:`message_digest` of every message. A
    list that knows its digest (a session :class:`~pictx_fsm.session.transcript.Transcript`,
    kept per entry as the session grows) answers in O(1); any other list is digested here.
    ``context`` hooks carry the whole conversation on every request; writing it again each
    time would make a record cost O(session) and the log grow quadratically."""
    known = getattr(messages, "list_digest", None)
    if callable(known):
        return {"count": len(messages), "sha256": known()}
    state = hashlib.sha256()
    for message in messages:
        state.update(message_digest(message))
    return {"count": len(messages), "sha256": state.hexdigest()}


def json_digest(value: Any) -> dict[str, Any]:
    """A value in a record by its size and sha256, not its content: a tool call's arguments
    (a note of up to 1 MB) or its result text (up to 32 KiB on the wire). Both are of the
    canonical JSON in UTF-8 (not ASCII-escaped: a third of the bytes to hash for non-Latin
    text), a lone surrogate encoded as itself."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=json_default
    ).encode("utf-8", "surrogatepass")
    return {"bytes": len(text), "sha256": hashlib.sha256(text).hexdigest()}


_EVENT_FIELDS: dict[type, tuple[str, ...]] = {}


def _event_raw(event: Any) -> dict[str, Any]:
    """A hook event for the encoder: attrs fields as they are, message lists digested."""
    cls = type(event)
    names = _EVENT_FIELDS.get(cls)
    if names is None:
        names = _EVENT_FIELDS[cls] = tuple(a.name for a in attrs.fields(cls))
    out: dict[str, Any] = {"hook": cls.HOOK}
    for name in names:
        value = getattr(event, name)
        if name == "messages":
            value = message_list_digest(value)
        elif name == "arguments":  # a tool call's: digested (a note may hold a megabyte)
            value = json_digest(value)
        out[name] = value
    return out


def event_json(event: Any) -> dict[str, Any]:
    """A hook event as JSON (attrs fields; drafts as Pi writes them; message lists and tool
    arguments digested)."""
    result: dict[str, Any] = json.loads(_encode(_event_raw(event)))
    return result


def _result_raw(result: Any) -> Any:
    """A hook result for the encoder, a returned message list digested (never encoded)."""
    if not isinstance(result, HookResult):
        return json.loads(_encode(result))
    from pictx_fsm.tools.outcome import ToolOutcome

    value: Any = result.value
    if isinstance(value, MessagesResult):
        value = {"messages": message_list_digest(value.messages)}
    elif isinstance(value, ToolOutcome):  # a notes or history tool: its status, text digested
        value = {"status": value.status, "text": json_digest(value.text)}
    return {"hook": result.hook, "value": value, "effects": list(result.effects)}


def _result_text(result: HookResult) -> str:
    if result.value is None and not result.effects:  # most hooks: cached per hook name
        return _cached(("result", result.hook), lambda: _encode(_result_raw(result)))
    return _encode(_result_raw(result))


def result_json(result: Any) -> Any:
    """A hook result as JSON, with a returned message list digested like the event's and a
    notes or history tool's outcome as its status and the digest of its text."""
    out = json.loads(_encode(_result_raw(result)))
    value = out.get("value") if isinstance(out, dict) else None
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value["messages"] = message_list_digest(value["messages"])
    return out


@frozen(kw_only=True)
class RecordLine:
    """One record's canonical line and hash (the hash covers the line without itself)."""

    line: str
    hash: str


def record_line(
    *,
    seq: int,
    prev: str,
    event: Any,
    ctx: Any,
    result: HookResult,
    profile: str,
    fingerprint: str,
) -> RecordLine:
    """The canonical line of one record, its content encoded once.

    The members are encoded one by one and joined in sorted key order (the keys are plain
    identifiers), so the hashed body and the line — the same with ``hash`` at its sorted
    place between ``format`` and ``hook`` — are the bytes ``canonical`` gives for the whole
    record, without encoding anything twice or searching the text."""
    steps = ",".join(_step_text(step) for step in result.steps)
    head = (
        f'{{"ctx":{_ctx_text(ctx)},"event":{_encode(_event_raw(event))},'
        f'"format":{_text(AUDIT_FORMAT)}'
    )
    tail = (
        f'"hook":{_text(result.hook)},"models":{_text(fingerprint)},"prev":{_text(prev)},'
        f'"profile":{_text(profile)},"result":{_result_text(result)},'
        f'"seq":{_encode(seq)},"steps":[{steps}]}}'
    )
    state = hashlib.sha256(head.encode("ascii"))
    state.update(b",")
    state.update(tail.encode("ascii"))
    digest = state.hexdigest()
    return RecordLine(line=f'{head},"hash":"{digest}",{tail}', hash=digest)


_CTX_TEXT: dict[int, tuple[Any, str]] = {}


def _ctx_text(ctx: Any) -> str:
    """A host context's canonical text, cached by identity: a host hands the same context
    object to every hook of a run (an equal one is not enough: ``1 == 1.0`` encode apart)."""
    known = _CTX_TEXT.get(id(ctx))
    if known is not None and known[0] is ctx:
        return known[1]
    text = _encode(ctx)
    if len(_CTX_TEXT) >= 64:
        _CTX_TEXT.clear()
    _CTX_TEXT[id(ctx)] = (ctx, text)
    return text


class AuditLog:
    """An append-only audit log. ``path=None`` keeps records in memory only (tests, verify).

    A file log resumes whatever it finds and never raises on it (:class:`AuditFile`): a
    damaged tail is sealed off into a new segment, an unusable place keeps records in
    memory, and :attr:`notice` says what happened, once."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, fsync: bool = False) -> None:
        self.path = None if path is None else Path(path)
        self._records: list[dict[str, Any]] = []
        self._unread: list[str] = []
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
    ) -> RecordLine:
        """Append the record of one handled hook: its result carries the machine steps."""
        written = record_line(
            seq=self._seq + 1,
            prev=self._last_hash,
            event=event,
            ctx=ctx,
            result=result,
            profile=profile,
            fingerprint=fingerprint,
        )
        self._seq += 1  # only once the record exists: a record that cannot be built is not one
        self._last_hash = written.hash
        self._unread.append(written.line)
        if self._file is not None:
            self._file.append_line(written.line, written.hash, self._seq)
        return written

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every record written through this log, as JSON objects (parsed when first read:
        writing a record never parses it back)."""
        if self._unread:
            self._records.extend(json.loads(line) for line in self._unread)
            self._unread.clear()
        return self._records

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
    "RecordLine",
    "canonical",
    "configuration_json",
    "event_json",
    "fired_json",
    "hook_records",
    "iter_records",
    "json_digest",
    "message_digest",
    "message_list_digest",
    "record_line",
    "result_json",
    "step_json",
    "transition_counts",
    "verify_chain",
    "verify_lines",
    "verify_records",
]
