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
segments, seals, an unusable directory, verification — is :mod:`pictx_fsm.audit.store`'s.

Message lists (``context`` and ``context_with_system`` carry the whole conversation) are
recorded as ``{"count", "sha256"}``, never as text. Since format ``pictx-fsm/audit/2`` the
``sha256`` is a hash list: the sha256 of the concatenated 32-byte sha256 digests of each
message's canonical JSON (:mod:`pictx_fsm.session.digest`). It proves the
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
from enum import Enum
from functools import partial
from operator import attrgetter, itemgetter
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import attrs
from attrs import frozen

from pictx_fsm.audit.store import (
    AUDIT_FORMAT,
    GENESIS,
    AuditFile,
    ChainReport,
    hook_records,
    iter_records,
    verify_chain,
    verify_lines,
)
from pictx_fsm.audit.text import Layout, layout, members_text, value_text
from pictx_fsm.fastjson import ascii_string as _ascii
from pictx_fsm.fastjson import dumper, loads
from pictx_fsm.host.effects import HookResult, MessagesResult
from pictx_fsm.host.tool_outcome import ToolOutcome
from pictx_fsm.session.digest import PLAIN_ATTRS, attrs_fields, canonical, message_list_digest
from pictx_fsm.session.digest import canonical as _encode
from pictx_fsm.session.digest import default as json_default
from pictx_fsm.session.digest import digest as _digest
from pictx_fsm.session.slots import slot_setters

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
    """:func:`step_json` as canonical text. The frame around the facts (configurations, event,
    machine) is cached by value, a step without facts whole (with its unguarded transitions,
    which the engine reuses, by identity); only facts (:func:`_facts_text`) and guard values
    (:func:`_fired_text`) are written anew."""
    fired, facts = step.fired, step.facts
    frame_key: tuple[Any, ...]
    if facts:
        frame_key = (step.before.states, step.after.states, step.event, step.machine)
    else:
        key = (step.before.states, step.after.states, step.event, step.machine, *map(id, fired))
        known = _PLAIN_STEPS.get(key)
        if known is not None:
            return known[1]
        frame_key = key[:4]
    frame = _FRAMES.get(frame_key)
    if frame is None:
        frame = _frame(step, frame_key)
    text = f"{frame[0]}{_facts_text(facts)},{frame[1]}{','.join(map(_fired_text, fired))}]}}"
    if not facts and all(not f.guards for f in fired) and _str_names(step):
        if len(_PLAIN_STEPS) >= 1024:
            _PLAIN_STEPS.clear()
        _PLAIN_STEPS[key] = (fired, text)  # keeps the transitions whose ids are in the key
    return text


_PLAIN_STEPS: dict[tuple[Any, ...], tuple[tuple[Fired, ...], str]] = {}
"""Whole texts of steps without facts. An entry keeps the transitions whose ids are in its
key alive, so no other object can take those ids."""
_FRAMES: dict[tuple[Any, ...], tuple[str, str]] = {}


def _frame(step: Step[Any], key: tuple[Any, ...]) -> tuple[str, str]:
    """A step's text before its facts, and between its facts digest and its transitions."""
    frame = (
        f'{{"after":{_configuration_text(step.after)},'
        f'"before":{_configuration_text(step.before)},"event":{_text(step.event)},"facts":',
        f'"machine":{_text(step.machine)},"transitions":[',
    )
    if _str_names(step):
        if len(_FRAMES) >= 1024:
            _FRAMES.clear()
        _FRAMES[key] = frame
    return frame


def _str_names(step: Step[Any]) -> bool:
    """The step's event and machine are strings, equal in a key only when their texts are."""
    return type(step.event) is str and type(step.machine) is str


def _facts_text(facts: tuple[tuple[str, Any], ...]) -> str:
    """``"<facts>,"facts_digest":"<sha256 of them>"``. Facts of plain scalars recur hook after
    hook: they are cached by value and by the type of each value (``1 == True``, but their
    texts differ); other facts are encoded, their digest cached by their text."""
    if not facts:
        return _NO_FACTS
    key = _facts_key(facts)
    if key is not None:
        known = _SCALAR_FACTS.get(key)
        if known is not None:
            return known
    text = members_text(facts)
    digest = _FACTS_DIGESTS.get(text)
    if digest is None:
        digest = _facts_digest(text)
    result = f'{text},"facts_digest":"{digest}"'
    if key is not None:
        if len(_SCALAR_FACTS) >= 4096:
            _SCALAR_FACTS.clear()
        _SCALAR_FACTS[key] = result
    return result


_first: Final = itemgetter(0)
_second: Final = itemgetter(1)
_EXACT_TYPES: Final = frozenset({str, bool, int, type(None)})
"""Types whose equal values have equal texts (with the type in the key: ``1`` is not ``True``)."""

Plan = tuple[tuple[int, Callable[[Any], Any]], ...]
"""For facts of given value types, the values a key holds by a stand-in: ``(index, read)``."""


def _facts_key(facts: tuple[tuple[str, Any], ...]) -> tuple[Any, ...] | None:
    """A cache key for facts: their names, their values' types and their values, where an
    enum member stands as its identity (its class is in the key) and a plain attrs value of
    exact scalars (a usage, thresholds) as its fields with their types; ``None`` when a value
    is neither (its text is computed every time). Which values stand in is planned once per
    tuple of types, so a key costs a few C calls, not a loop over the facts."""
    values = tuple(map(_second, facts))
    types = tuple(map(type, values))
    plan = _PLANS.get(types, _NO_PLAN)
    if plan is _NO_PLAN:
        plan = _plan(types)
    if plan is None:
        return None
    if plan:
        stand_ins = list(values)
        for index, read in plan:
            stand_in = read(values[index])
            if stand_in is None:
                return None
            stand_ins[index] = stand_in
        values = tuple(stand_ins)
    return (tuple(map(_first, facts)), types, values)


_NO_PLAN: Final[Any] = object()
_PLANS: dict[tuple[type, ...], Plan | None] = {}


def _plan(types: tuple[type, ...]) -> Plan | None:
    """The plan for facts of these value types (``None``: a type the cache cannot key)."""
    steps = [
        (index, id if issubclass(kind, Enum) else _fields_key(kind))  # a member: one per value
        for index, kind in enumerate(types)
        if kind not in _EXACT_TYPES
    ]
    plan = None if any(read is None for _, read in steps) else tuple(steps)
    if len(_PLANS) >= 1024:
        _PLANS.clear()
    _PLANS[types] = plan  # type: ignore[assignment]  # no read is None in a plan
    return plan  # type: ignore[return-value]


def _fields_key(kind: type) -> Callable[[Any], Any] | None:
    """A plain attrs class's stand-in: its fields and their types, ``None`` for a value whose
    fields are not all exact scalars (``None`` for the class when it is not plain attrs)."""
    names = PLAIN_ATTRS.get(kind)
    if names is None and (attrs_fields(kind) is None or (names := PLAIN_ATTRS.get(kind)) is None):
        return None
    # attrgetter of one name returns the value, not a tuple; of none, raises
    read = attrgetter(*names) if len(names) > 1 else partial(_fields_of, names)

    def stand_in(value: Any) -> tuple[Any, ...] | None:
        fields = read(value)
        field_types = tuple(map(type, fields))
        return (fields, field_types) if _EXACT_TYPES.issuperset(field_types) else None

    return stand_in


def _fields_of(names: tuple[str, ...], value: Any) -> tuple[Any, ...]:
    return tuple(getattr(value, name) for name in names)


_SCALAR_FACTS: dict[tuple[Any, ...], str] = {}
_FACTS_DIGESTS: dict[str, str] = {}


def _facts_digest(text: str) -> str:
    """The digest of a facts text; the same few facts recur hook after hook (cached)."""
    if len(_FACTS_DIGESTS) >= 4096:
        _FACTS_DIGESTS.clear()
    digest = _FACTS_DIGESTS[text] = _digest(text)
    return digest


_NO_FACTS = f'{{}},"facts_digest":"{_digest("{}")}"'


def _text(value: Any) -> str:
    """Canonical text of a value, a plain string without the encoder's call."""
    if type(value) is str:
        text: str = _ascii(value)
        return text
    return _encode(value)


def _configuration_text(configuration: Configuration) -> str:
    """A configuration's text; a machine has few, cached by value (region and state names)."""
    text = _CONFIGURATIONS.get(configuration.states)
    if text is None:
        if len(_CONFIGURATIONS) >= 1024:
            _CONFIGURATIONS.clear()
        text = _CONFIGURATIONS[configuration.states] = _encode(configuration_json(configuration))
    return text


_CONFIGURATIONS: dict[tuple[tuple[str, str], ...], str] = {}


_UNGUARDED: dict[int, tuple[Fired, str]] = {}
_GUARDED: dict[tuple[Any, ...], str] = {}


def _fired_text(fired: Fired) -> str:
    """A fired transition's text: by identity for an unguarded one (the engine reuses it), by
    value for one with guard values (all ``bool``: ``1 == True`` but ``"1" != "true"``)."""
    guards = fired.guards
    if not guards:
        known = _UNGUARDED.get(id(fired))
        if known is not None and known[0] is fired:
            return known[1]
        text = _encode(fired_json(fired))
        if len(_UNGUARDED) >= 1024:
            _UNGUARDED.clear()
        _UNGUARDED[id(fired)] = (fired, text)
        return text
    for _, value in guards:
        if type(value) is not bool:
            return _encode(fired_json(fired))
    key = (fired.transition, fired.region, fired.source, fired.target, guards)
    known_text = _GUARDED.get(key)
    if known_text is None:
        if len(_GUARDED) >= 4096:
            _GUARDED.clear()
        known_text = _GUARDED[key] = _encode(fired_json(fired))
    return known_text


def _list_digest_text(messages: Sequence[Any]) -> str:
    """:func:`message_list_digest`'s canonical text."""
    known = getattr(messages, "list_digest", None)
    digest = known() if callable(known) else message_list_digest(messages)["sha256"]
    return f'{{"count":{len(messages)},"sha256":"{digest}"}}'


def json_digest(value: Any) -> dict[str, Any]:
    """A value in a record by its size and sha256, not its content: a tool call's arguments
    (a note of up to 1 MB) or its result text (up to 32 KiB on the wire). Both are of the
    canonical JSON in UTF-8 (not ASCII-escaped: a third of the bytes to hash for non-Latin
    text), a lone surrogate encoded as itself."""
    text = _encode_utf8(value).encode("utf-8", "surrogatepass")
    return {"bytes": len(text), "sha256": hashlib.sha256(text).hexdigest()}


def _json_digest_text(value: Any) -> str:
    """:func:`json_digest`'s canonical text; a tool called without arguments, as most are,
    by a constant (an empty dict, or the read-only view a hook keeps of its copy)."""
    if not value and type(value) in _MAPPINGS:
        return _EMPTY_OBJECT_DIGEST
    text = _encode_utf8(value).encode("utf-8", "surrogatepass")
    return f'{{"bytes":{len(text)},"sha256":"{hashlib.sha256(text).hexdigest()}"}}'


_encode_utf8: Final = dumper(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=json_default
)
""":func:`json_digest`'s encoder: canonical, but non-ASCII kept (built once)."""
_MAPPINGS: Final = frozenset({dict, MappingProxyType})
_EMPTY_OBJECT_DIGEST: Final = _encode(json_digest({}))
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


_EVENT_LAYOUTS: dict[type, Layout] = {}


def _event_text(event: Any) -> str:
    """``canonical(_event_raw(event))`` member by member (:mod:`pictx_fsm.audit.text`), the
    keys of each hook class sorted once."""
    shape = _EVENT_LAYOUTS.get(type(event))
    if shape is None:
        shape = _EVENT_LAYOUTS[type(event)] = _event_layout(type(event))
    read, end = shape
    parts = []
    for name, prefix in read:
        value = getattr(event, name)
        if name == "messages":
            parts.append(prefix + _list_digest_text(value))
        elif name == "arguments":
            parts.append(prefix + _json_digest_text(value))
        else:
            parts.append(prefix + value_text(value))
    parts.append(end)
    return "".join(parts)


def _event_layout(cls: Any) -> Layout:
    members = {"hook": (False, _text(cls.HOOK))}
    members.update((field.name, (True, field.name)) for field in attrs.fields(cls))
    return layout(members)


def event_json(event: Any) -> dict[str, Any]:
    """A hook event as JSON (attrs fields; drafts as Pi writes them; message lists and tool
    arguments digested)."""
    result: dict[str, Any] = json.loads(_encode(_event_raw(event)))
    return result


def _result_raw(result: Any) -> Any:
    """A hook result for the encoder, a returned message list digested (never encoded)."""
    if not isinstance(result, HookResult):
        return json.loads(_encode(result))
    value: Any = result.value
    if isinstance(value, MessagesResult):
        value = {"messages": message_list_digest(value.messages)}
    elif isinstance(value, ToolOutcome):  # a notes or history tool: status, text digested
        value = {"status": value.status, "text": json_digest(value.text)}
    return {"hook": result.hook, "value": value, "effects": list(result.effects)}


_PLAIN_RESULTS: dict[str, str] = {}


def _result_text(result: HookResult) -> str:
    """``canonical(_result_raw(result))`` member by member: the keys (``effects``, ``hook``,
    ``value``) are in sorted order here, the value's and effects' texts the encoder's."""
    effects = result.effects
    if result.value is None and not effects:  # most hooks: cached per hook name
        text = _PLAIN_RESULTS.get(result.hook)
        if text is None:
            text = _PLAIN_RESULTS[result.hook] = _encode(_result_raw(result))
        return text
    if type(result.hook) is not str:
        return _encode(_result_raw(result))
    value: Any = result.value
    if isinstance(value, MessagesResult):
        value_part = f'{{"messages":{_list_digest_text(value.messages)}}}'
    elif isinstance(value, ToolOutcome):
        value_part = f'{{"status":{_text(value.status)},"text":{_json_digest_text(value.text)}}}'
    else:
        value_part = _encode(value)
    effects_part = _encode(list(effects)) if effects else "[]"
    return f'{{"effects":{effects_part},"hook":{_ascii(result.hook)},"value":{value_part}}}'


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
    steps = ",".join(map(_step_text, result.steps))
    head = f'{{"ctx":{_ctx_text(ctx)},"event":{_event_text(event)},"format":{_FORMAT_TEXT}'
    tail = (
        f'"hook":{_text(result.hook)},"models":{_known_text(fingerprint)},"prev":{_text(prev)},'
        f'"profile":{_known_text(profile)},"result":{_result_text(result)},'
        f'"seq":{seq if type(seq) is int else value_text(seq)},"steps":[{steps}]}}'
    )
    state = sha256(head.encode("ascii"))
    state.update(b",")
    state.update(tail.encode("ascii"))
    digest = state.hexdigest()
    return _new_record_line(f'{head},"hash":"{digest}",{tail}', digest)


sha256: Final = hashlib.sha256
_NEW: Final = object.__new__
_set_line, _set_hash = slot_setters(RecordLine, "line", "hash")


def _new_record_line(line: str, digest: str) -> RecordLine:
    """``RecordLine(line=, hash=)`` slot by slot (:mod:`pictx_fsm.session.slots`)."""
    made: RecordLine = _NEW(RecordLine)
    _set_line(made, line)
    _set_hash(made, digest)
    return made


_FORMAT_TEXT = _text(AUDIT_FORMAT)
_KNOWN_TEXTS: dict[str, str] = {}


def _known_text(value: str) -> str:
    """The text of a string every record of a log repeats (its profile, its models'
    fingerprint), cached by value (a non-string is encoded as it is)."""
    if type(value) is not str:
        return _encode(value)
    text = _KNOWN_TEXTS.get(value)
    if text is None:
        if len(_KNOWN_TEXTS) >= 64:
            _KNOWN_TEXTS.clear()
        text = _KNOWN_TEXTS[value] = _text(value)
    return text


_CTX_TEXT: dict[int, tuple[Any, str]] = {}


def _ctx_text(ctx: Any) -> str:
    """A host context's canonical text, cached by identity: a host hands the same context
    object to every hook of a run (an equal one is not enough: ``1 == 1.0`` encode apart)."""
    known = _CTX_TEXT.get(id(ctx))
    if known is not None and known[0] is ctx:
        return known[1]
    text = value_text(ctx)
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
        self._lines: list[str] = []
        """The records this log keeps in memory, as written."""
        self._records: list[dict[str, Any]] = []
        """The first of them, parsed (when first read: writing never parses a record)."""
        self._file = None if path is None else AuditFile(path, fsync=fsync)
        self._last_hash = GENESIS if self._file is None else self._file.last_hash
        self._seq = 0 if self._file is None else self._file.seq
        # A file log keeps nothing per record in memory (a long-running host's memory stays
        # flat): its records are read back from where this log started writing.
        self._start = (self._seq + 1, _size(self.path)) if self._file is not None else None
        self._in_file = 0

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
        if self._file is not None and self._file.writable:
            self._file.append_line(written.line, written.hash, self._seq)
            if self._file.writable:
                self._in_file += 1
                return written
        self._lines.append(written.line)
        return written

    def __len__(self) -> int:
        """How many records were written through this log (none read back to count them)."""
        return self._in_file + len(self._lines)

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every record written through this log, as JSON objects (parsed when first read:
        writing a record never parses it back)."""
        if not self._in_file:
            return self._parsed()
        return [*(record for _, record in self._in_file_records()), *self._parsed()]

    @property
    def lines(self) -> Sequence[str]:
        """Every record written through this log as its line, the bytes :func:`verify_lines`
        checks (:attr:`records` are these lines parsed)."""
        if not self._in_file:
            return self._lines
        return [*(line for line, _ in self._in_file_records()), *self._lines]

    def written(self, start: int = 0) -> list[tuple[str, dict[str, Any]]]:
        """``(line, record)`` of every record from the ``start``-th on, a file read once: what
        a reader following the log takes in one step (in memory, O(the records it takes))."""
        if not self._in_file:
            return list(zip(self._lines[start:], self._parsed()[start:], strict=True))
        kept = zip(self._lines, self._parsed(), strict=True)
        return [*self._in_file_records(), *kept][start:]

    def _parsed(self) -> list[dict[str, Any]]:
        """The records kept in memory, parsed up to the last (each line once)."""
        parsed = len(self._records)
        if parsed < len(self._lines):
            self._records.extend(map(loads, self._lines[parsed:]))
        return self._records

    def _in_file_records(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """This log's records in its file: the ``seq`` range it wrote, after its offset."""
        assert self._start is not None and self.path is not None
        first, offset = self._start
        last = first + self._in_file - 1
        with self.path.open("rb") as fp:
            fp.seek(offset)
            for raw in fp:
                record = json.loads(raw)
                if first <= record.get("seq", 0) <= last and record.get("kind") is None:
                    yield raw.decode("utf-8", "surrogateescape").rstrip("\n"), record

    def close(self) -> None:
        """Seal the file's segment (a clean shutdown; a later resume opens a new one)."""
        if self._file is not None:
            self._file.close()

    def transition_counts(self) -> dict[str, int]:
        return transition_counts(self.records)


def _size(path: Path | None) -> int:
    try:
        return 0 if path is None else path.stat().st_size
    except OSError:
        return 0


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
    "record_line",
    "result_json",
    "step_json",
    "transition_counts",
    "verify_chain",
    "verify_lines",
    "verify_records",
]


def __getattr__(name: str) -> object:
    """``message_digest`` moved to :mod:`pictx_fsm.session.digest` (0.2)."""
    from pictx_fsm._moved import moved_attribute

    return moved_attribute(__name__, name)
