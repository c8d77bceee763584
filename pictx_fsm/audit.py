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
from typing import IO, TYPE_CHECKING, Any

from attrs import frozen

from pictx_fsm.effects import HookResult, MessagesResult
from pictx_fsm.errors import AuditChainError, UnreadableInputError

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
    "iter_records",
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

if TYPE_CHECKING:
    from pictx_fsm.machines import Configuration, Fired, Step

GENESIS = "0" * 64
AUDIT_FORMAT = "pictx-fsm/audit/2"
"""2: message lists digested as hash lists (:func:`message_list_digest`); 1: whole-list sha256."""


def canonical(obj: Any) -> str:
    """The one serialisation of a record's content: sorted keys, compact separators, ASCII."""
    return _encode(obj)


def _default(value: Any) -> Any:
    names = _PLAIN_ATTRS.get(type(value))
    if names is not None:  # the common case, decided once per class
        return _attrs_json(value, names)
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
    names = _attrs_fields(type(value))
    if names is not None:
        return _attrs_json(value, names)
    return repr(value)


def _attrs_json(value: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """``{"__type__": class name, **attrs.asdict(value, recurse=False)}``."""
    out = {"__type__": type(value).__name__}
    for name in names:
        out[name] = getattr(value, name)
    return out


_FIELDS: dict[type, tuple[str, ...] | None] = {}
_PLAIN_ATTRS: dict[type, tuple[str, ...]] = {}
"""attrs classes that take the attrs branch of :func:`_default` whatever the instance: no
``to_json``, not a mapping, no ``value``/``name`` attribute and not a set."""


def _attrs_fields(cls: type) -> tuple[str, ...] | None:
    """The field names of an attrs class (``attrs.asdict(recurse=False)``'s keys), cached."""
    if cls not in _FIELDS:
        import attrs

        names = tuple(a.name for a in attrs.fields(cls)) if attrs.has(cls) else None
        _FIELDS[cls] = names
        plain = not any(hasattr(cls, n) for n in ("to_json", "value", "name"))
        if names is not None and plain and not issubclass(cls, Mapping | frozenset | set):
            _PLAIN_ATTRS[cls] = names
    return _FIELDS[cls]


def _make_encoder() -> Callable[[Any], str]:
    """``json.dumps`` with the canonical settings, built once: ``dumps`` with non-default
    arguments builds a new encoder on every call, which costs more than a small record."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython ships the C encoder
        encoder = json.JSONEncoder(
            sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=_default
        )
        return encoder.encode
    chunks = make(
        None, _default, json.encoder.encode_basestring_ascii, None, ":", ",", True, False, True
    )

    def encode(obj: Any) -> str:
        return "".join(chunks(obj, 0))

    return encode


_encode = _make_encoder()


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


_EVENT_FIELDS: dict[type, tuple[str, ...]] = {}


def _event_raw(event: Any) -> dict[str, Any]:
    """A hook event for the encoder: attrs fields as they are, message lists digested."""
    cls = type(event)
    names = _EVENT_FIELDS.get(cls)
    if names is None:
        import attrs

        names = _EVENT_FIELDS[cls] = tuple(a.name for a in attrs.fields(cls))
    out: dict[str, Any] = {"hook": cls.HOOK}
    for name in names:
        value = getattr(event, name)
        out[name] = message_list_digest(value) if name == "messages" else value
    return out


def event_json(event: Any) -> dict[str, Any]:
    """A hook event as JSON (attrs fields; drafts as Pi writes them; message lists digested)."""
    result: dict[str, Any] = json.loads(_encode(_event_raw(event)))
    return result


def _result_raw(result: Any) -> Any:
    """A hook result for the encoder, a returned message list digested (never encoded)."""
    if not isinstance(result, HookResult):
        return json.loads(_encode(result))
    value: Any = result.value
    if isinstance(value, MessagesResult):
        value = {"messages": message_list_digest(value.messages)}
    return {"hook": result.hook, "value": value, "effects": list(result.effects)}


def _result_text(result: HookResult) -> str:
    if result.value is None and not result.effects:  # most hooks: cached per hook name
        return _cached(("result", result.hook), lambda: _encode(_result_raw(result)))
    return _encode(_result_raw(result))


def result_json(result: Any) -> Any:
    """A hook result as JSON, with a returned message list digested like the event's."""
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
    """An append-only audit log. ``path=None`` keeps records in memory only (tests, verify)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, fsync: bool = False) -> None:
        self.path = None if path is None else Path(path)
        self._records: list[dict[str, Any]] = []
        self._unread: list[str] = []
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
        if self._fp is not None:
            self._fp.write(written.line + "\n")
            self._fp.flush()
            if self._fsync:
                os.fsync(self._fp.fileno())
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
