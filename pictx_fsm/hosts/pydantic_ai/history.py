"""pydantic-ai message history ↔ Pi session entries (a linear branch).

Each request part becomes one entry (a ``message`` for system, user and tool parts; a
``custom`` entry ``pydantic-ai/part`` for bookkeeping parts Pi has no message for) and each
response one ``assistant`` message entry. What the Pi fields do not reproduce is kept on the
entry as ``pydanticAi`` residuals (:mod:`~pictx_fsm.hosts.pydantic_ai.residual`): ``part`` /
``response`` for the message itself, ``request`` on the first entry of each request (its
envelope, and the mark that a new request starts there).

The lifecycle's own entries travel inside the history as text with metadata: a
``custom_message`` (boot, continuation, guidance, warning) is a :class:`UserPromptPart` with one
:class:`TextContent` whose ``metadata["pictx_fsm"]`` holds the entry (a *stub*); entries with no
part of their own (the reset marker, metadata entries) ride in the stub of what follows them —
a text part, a tool return or a response, each of which has ``metadata`` — (``before``), or of
the last of them (``after``). pydantic-ai never sends metadata to a model.

A request's envelope (its ``timestamp``, ``run_id``, ``conversation_id``, ``instructions``) is
the ``request`` residual of its first entry. pydantic-ai completes the envelope of a request
after the session wrote its first entries (the tool results a turn ends with are written
before the next request is prepared, as in Pi); the final envelope is then a ``custom`` entry
``pydantic-ai/request`` right after what the request holds so far (:data:`ENVELOPE_TYPE`).

``entries_to_messages(messages_to_entries(m)) == m`` exactly; the other way round every field
the lifecycle reads survives, and the lifecycle's entries keep their ids and timestamps (a
conversation message's entry id is minted again: pydantic-ai has nowhere to keep it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, TypeAlias

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart

from pictx_fsm.hosts.pydantic_ai.residual import patch, residual
from pictx_fsm.hosts.pydantic_ai.serial import message_json, messages_from_json, messages_json
from pictx_fsm.hosts.pydantic_ai.views import (
    METADATA_KEY,
    epoch_ms,
    part_json,
    part_message,
    response_json,
    response_message,
)
from pictx_fsm.session.entries import CustomEntry, Entry
from pictx_fsm.session.writer import iso

__all__ = [
    "ENVELOPE_TYPE",
    "JSON",
    "PART_ENTRY_TYPE",
    "RESIDUAL_KEY",
    "HistoryConversionError",
    "Unit",
    "carried_ids",
    "chain",
    "entries_to_messages",
    "envelope_entry",
    "envelope_residual",
    "is_envelope",
    "lifecycle_stub",
    "messages_to_entries",
    "recorded_envelopes",
    "restamp",
    "split_stub",
    "with_stub",
]

JSON: TypeAlias = Any
RESIDUAL_KEY: Final = "pydanticAi"
PART_ENTRY_TYPE: Final = "pydantic-ai/part"
"""``customType`` of a bookkeeping part (instruction or tool-availability delta)."""
ENVELOPE_TYPE: Final = "pydantic-ai/request"
"""``customType`` of a request's final envelope, written once pydantic-ai completed it."""
_REQUEST_ENVELOPE: Final = {
    k: v for k, v in message_json(ModelRequest(parts=[])).items() if k != "parts"
}


class HistoryConversionError(ValueError):
    """Session entries that cannot become a pydantic-ai history (named by entry id)."""


# -- messages → entries --------------------------------------------------------------------


def messages_to_entries(
    messages: Iterable[ModelMessage], *, parent_id: str | None, mint: Callable[[], str]
) -> list[dict[str, JSON]]:
    """The entries of ``messages`` as a chain below ``parent_id``; ``mint`` gives the ids of
    entries whose id pydantic-ai does not keep."""
    out: list[dict[str, JSON]] = []
    for message in messages_json(messages):
        if message.get("kind") == "response":
            out.extend(_response_entries(message, mint))
        else:
            out.extend(_request_entries(message, mint))
    return chain(out, parent_id)


def chain(entries: list[dict[str, JSON]], parent_id: str | None) -> list[dict[str, JSON]]:
    """Link ``entries`` into one branch below ``parent_id`` (``parentId`` as Pi appends)."""
    for entry in entries:
        entry["parentId"] = parent_id
        parent_id = entry["id"]
    return entries


def _response_entries(
    response: Mapping[str, JSON], mint: Callable[[], str]
) -> list[dict[str, JSON]]:
    stub, bare = split_stub(response)
    message = response_message(bare)
    own = _message_entry(message, mint(), {"response": residual(bare, response_json(message))})
    return [*map(_carried, stub.get("before", ())), own, *map(_carried, stub.get("after", ()))]


def _message_entry(
    message: Mapping[str, JSON], entry_id: str, residuals: Mapping[str, JSON]
) -> dict[str, JSON]:
    entry: dict[str, JSON] = {
        "type": "message",
        "id": entry_id,
        "parentId": None,
        "timestamp": iso(int(message.get("timestamp", 0))),
        "message": dict(message),
    }
    kept = {key: value for key, value in residuals.items() if value is not None or key == "request"}
    if kept:
        entry[RESIDUAL_KEY] = kept
    return entry


def _request_entries(request: Mapping[str, JSON], mint: Callable[[], str]) -> list[dict[str, JSON]]:
    envelope = {k: v for k, v in request.items() if k != "parts"}
    out: list[dict[str, JSON]] = []
    for index, part in enumerate(request.get("parts") or []):
        stub, bare = split_stub(part)
        own = _part_entry(bare, stub.get("entry"), mint)
        if index == 0:
            own.setdefault(RESIDUAL_KEY, {})["request"] = residual(envelope, _REQUEST_ENVELOPE)
        out += [*map(_carried, stub.get("before", ())), own, *map(_carried, stub.get("after", ()))]
    return out


def _carried(entry: Mapping[str, JSON]) -> dict[str, JSON]:
    return {**entry, "parentId": None}


def _part_entry(
    part: Mapping[str, JSON], lifecycle: Mapping[str, JSON] | None, mint: Callable[[], str]
) -> dict[str, JSON]:
    if lifecycle is not None:
        entry = _custom_message_entry(part, lifecycle)
        derived = _custom_message_part(entry)
    else:
        message = part_message(part)
        if message is None:
            return _bookkeeping_entry(part, mint())
        entry = _message_entry(message, mint(), {})
        derived = part_json(message)
    delta = residual(part, derived)
    if delta is not None:
        entry.setdefault(RESIDUAL_KEY, {})["part"] = delta
    return entry


def _bookkeeping_entry(part: Mapping[str, JSON], entry_id: str) -> dict[str, JSON]:
    stamp = iso(epoch_ms(part.get("timestamp")))
    return {
        "type": "custom",
        "customType": PART_ENTRY_TYPE,
        "data": dict(part),
        "id": entry_id,
        "parentId": None,
        "timestamp": stamp,
    }


def _custom_message_entry(part: Mapping[str, JSON], stub: Mapping[str, JSON]) -> dict[str, JSON]:
    entry = {"type": "custom_message", **stub, "parentId": None}
    if "content" not in stub:
        entry["content"] = _stub_text(part)
    return entry


def _stub_text(part: Mapping[str, JSON]) -> str:
    content = part.get("content")
    items = [content] if isinstance(content, str) else list(content or ())
    for item in items:
        if isinstance(item, Mapping) and item.get("kind") == "text-content":
            return str(item.get("content", ""))
        if isinstance(item, str):
            return item
    return ""


# -- stubs: the lifecycle's entries inside a text part -------------------------------------


def split_stub(unit: Mapping[str, JSON]) -> tuple[Mapping[str, JSON], dict[str, JSON]]:
    """The stub a request part or a response carries, and the part or response without it."""
    if unit.get("part_kind") == "user-prompt":
        return _split_text_stub(unit)
    if not _has_metadata(unit):
        return {}, dict(unit)
    metadata = unit.get("metadata")
    own = metadata.get(METADATA_KEY) if isinstance(metadata, Mapping) else None
    if not isinstance(metadata, Mapping) or not isinstance(own, Mapping):
        return {}, dict(unit)
    stub = {key: own[key] for key in _CARRIED if key in own}
    if not stub:
        return {}, dict(unit)
    kept = {key: value for key, value in own.items() if key not in _CARRIED}
    rest = {key: value for key, value in metadata.items() if key != METADATA_KEY}
    if kept:
        rest[METADATA_KEY] = kept
    return stub, {**unit, "metadata": rest or None}


_CARRIED: Final = ("before", "after")


def _has_metadata(unit: Mapping[str, JSON]) -> bool:
    """A response or a tool return: ``metadata`` pydantic-ai keeps and never sends."""
    return unit.get("kind") == "response" or unit.get("part_kind") == "tool-return"


def _split_text_stub(part: Mapping[str, JSON]) -> tuple[Mapping[str, JSON], dict[str, JSON]]:
    content = part.get("content")
    if not isinstance(content, list):
        return {}, dict(part)
    for index, item in enumerate(content):
        metadata = item.get("metadata") if isinstance(item, Mapping) else None
        if isinstance(metadata, Mapping) and METADATA_KEY in metadata:
            rest = {k: v for k, v in metadata.items() if k != METADATA_KEY}
            bare_item = {**item, "metadata": rest or None}
            bare = {**part, "content": [*content[:index], bare_item, *content[index + 1 :]]}
            stub: Mapping[str, JSON] = metadata[METADATA_KEY]
            return stub, bare
    return {}, dict(part)


def with_stub(unit: Mapping[str, JSON], stub: Mapping[str, JSON]) -> dict[str, JSON] | None:
    """``unit`` (a request part or a response) carrying ``stub``: in the first text item of a
    user prompt (a string prompt becomes one text item), in the ``metadata`` of a response or
    tool return; ``None`` when it has nowhere to carry it."""
    if not stub:
        return dict(unit)
    if _has_metadata(unit):
        metadata = unit.get("metadata")
        if metadata is None:
            return {**unit, "metadata": {METADATA_KEY: dict(stub)}}
        if not isinstance(metadata, Mapping) or not metadata:
            return None  # a value of the tool's own, or {} (which None would not restore)
        own = metadata.get(METADATA_KEY)
        merged = {**(own if isinstance(own, Mapping) else {}), **stub}
        return {**unit, "metadata": {**metadata, METADATA_KEY: merged}}
    if unit.get("part_kind") != "user-prompt":
        return None
    content = unit.get("content")
    items = [_text_item(content)] if isinstance(content, str) else list(content or ())
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and item.get("kind") == "text-content":
            metadata = {**(item.get("metadata") or {}), METADATA_KEY: dict(stub)}
            items[index] = {**item, "metadata": metadata}
            return {**unit, "content": items}
    return None


def _text_item(text: str) -> dict[str, JSON]:
    return {"content": text, "metadata": None, "kind": "text-content"}


def _custom_message_part(entry: Mapping[str, JSON]) -> dict[str, JSON]:
    """The user prompt part a ``custom_message`` entry derives (stub not included)."""
    content = entry.get("content")
    text = content if isinstance(content, str) else _joined_text(content)
    derived = part_json({"role": "user", "content": text, "timestamp": _entry_ms(entry)})
    derived["content"] = [_text_item(text)]
    return derived


def _joined_text(content: JSON) -> str:
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )


def _entry_ms(entry: Mapping[str, JSON]) -> int:
    return epoch_ms(entry.get("timestamp"))


def lifecycle_stub(entry: Mapping[str, JSON]) -> dict[str, JSON]:
    """The stub of a ``custom_message`` entry: the entry without its chain link (and without
    its content when that is the plain text the part already shows)."""
    stub = {k: v for k, v in entry.items() if k not in ("type", "parentId")}
    if isinstance(stub.get("content"), str):
        del stub["content"]
    return stub


def restamp(messages: Iterable[ModelMessage], renamed: Mapping[str, str]) -> None:
    """Give the lifecycle entries carried in ``messages`` their new ids (in place)."""
    for entry in _carried_entries(messages):
        old = entry.get("id")
        if isinstance(old, str) and old in renamed:
            entry["id"] = renamed[old]


def carried_ids(messages: Iterable[ModelMessage]) -> set[str]:
    """The ids of the lifecycle entries ``messages`` carry."""
    return {str(entry.get("id")) for entry in _carried_entries(messages)}


def _carried_entries(messages: Iterable[ModelMessage]) -> Iterator[dict[str, JSON]]:
    for message in messages:
        if isinstance(message, ModelResponse):
            yield from _stub_entries(_own(message.metadata))
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                yield from _stub_entries(_own(part.metadata))
            content = getattr(part, "content", None)
            for item in content if isinstance(content, list) else ():
                yield from _stub_entries(_own(getattr(item, "metadata", None)))


def _own(metadata: JSON) -> JSON:
    return metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None


def _stub_entries(stub: JSON) -> list[dict[str, JSON]]:
    if not isinstance(stub, dict):
        return []
    entries = [*stub.get("before", ()), *stub.get("after", ())]
    if isinstance(stub.get("entry"), dict):
        entries.append(stub["entry"])
    return [e for e in entries if isinstance(e, dict)]


# -- entries → messages --------------------------------------------------------------------


def entries_to_messages(entries: Iterable[Entry | Mapping[str, JSON]]) -> list[ModelMessage]:
    """The pydantic-ai history of a branch (root → leaf)."""
    return messages_from_json(_messages(_units(_json(entries))))


def _json(entries: Iterable[Entry | Mapping[str, JSON]]) -> Iterator[dict[str, JSON]]:
    for entry in entries:
        yield dict(entry) if isinstance(entry, Mapping) else entry.to_json()


Unit: TypeAlias = tuple[str, dict[str, JSON], JSON, str]
"""``(kind, json, request residual, entry id)``: kind ``part``, ``response`` or
``envelope``."""


def _units(entries: Iterable[dict[str, JSON]]) -> list[Unit]:
    """One unit per part, response or envelope, with each entry that has no part of its own
    carried by the next part or response that can carry it (``before``), else by the last
    one (``after``)."""
    units: list[Unit] = []
    pending: list[dict[str, JSON]] = []
    for entry in entries:
        unit = _unit(entry)
        if unit is None:
            pending.append(_without_link(entry))
            continue
        kind, obj, request, entry_id = unit
        if pending and kind != "envelope":
            carried = with_stub(obj, _add(obj, "before", pending))
            if carried is not None:
                unit, pending = (kind, carried, request, entry_id), []
        units.append(unit)
    if pending:
        _place_after(units, pending)
    return units


def _without_link(entry: Mapping[str, JSON]) -> dict[str, JSON]:
    return {k: v for k, v in entry.items() if k != "parentId"}


def _add(part: Mapping[str, JSON], key: str, entries: list[dict[str, JSON]]) -> dict[str, JSON]:
    stub = dict(split_stub(part)[0])
    stub[key] = [*stub.get(key, ()), *entries]
    return stub


def _place_after(units: list[Unit], pending: list[dict[str, JSON]]) -> None:
    for index in range(len(units) - 1, -1, -1):
        kind, obj, request, entry_id = units[index]
        if kind != "envelope" and (
            carried := with_stub(split_stub(obj)[1], _add(obj, "after", pending))
        ):
            units[index] = (kind, carried, request, entry_id)
            return
    first = pending[0].get("id")
    raise HistoryConversionError(f"entry {first!r} has nothing in the history to travel with")


def _unit(entry: Mapping[str, JSON]) -> Unit | None:
    own = entry.get(RESIDUAL_KEY)
    residuals: Mapping[str, JSON] = own if isinstance(own, Mapping) else {}
    request = residuals.get("request", _NO_REQUEST)
    kind, entry_id = entry.get("type"), str(entry.get("id"))
    if kind == "custom" and entry.get("customType") == PART_ENTRY_TYPE:
        return "part", dict(entry.get("data") or {}), request, entry_id
    if is_envelope(entry):
        return "envelope", {"residual": entry.get("data")}, _NO_REQUEST, entry_id
    if kind == "custom_message":
        return "part", _lifecycle_part(entry, residuals.get("part")), request, entry_id
    if kind != "message":
        return None
    message = entry.get("message") or {}
    if message.get("role") == "assistant":
        derived = patch(response_json(message), residuals.get("response"))
        return "response", derived, request, entry_id
    return "part", patch(part_json(message), residuals.get("part")), request, entry_id


def _lifecycle_part(entry: Mapping[str, JSON], delta: JSON) -> dict[str, JSON]:
    bare = patch(_custom_message_part(entry), delta)
    carried = with_stub(bare, {"entry": lifecycle_stub(_without_residual(entry))})
    if carried is None:
        raise HistoryConversionError(
            f"custom_message {entry.get('id')!r} has no text to carry its entry"
        )
    return carried


def _without_residual(entry: Mapping[str, JSON]) -> dict[str, JSON]:
    return {k: v for k, v in entry.items() if k != RESIDUAL_KEY}


_NO_REQUEST: Final = object()


def _messages(units: Sequence[Unit]) -> list[dict[str, JSON]]:
    out: list[dict[str, JSON]] = []
    for start, envelope, parts in _requests(units):
        if start is None:
            out.append(parts[0])  # a response
        else:
            out.append({**patch(_REQUEST_ENVELOPE, envelope), "parts": parts})
    return out


def _requests(
    units: Sequence[Unit],
) -> Iterator[tuple[str | None, JSON, list[dict[str, JSON]]]]:
    """``(id of the request's first entry, its envelope residual, its parts)`` per request,
    ``(None, None, [response])`` per response, in order. A request starts at a part whose
    entry carries a ``request`` residual, or after a response; a ``pydantic-ai/request``
    entry gives the envelope of the request it follows (one after a response is of a
    request no longer on the branch)."""
    current: list[Any] | None = None  # [first entry id, envelope, parts]
    for kind, obj, envelope, entry_id in units:
        if kind == "response":
            if current is not None:
                yield current[0], current[1], current[2]
            current = None
            yield None, None, [obj]
        elif kind == "envelope":
            if current is not None:
                current[1] = obj["residual"]
        else:
            if current is None or envelope is not _NO_REQUEST:
                if current is not None:
                    yield current[0], current[1], current[2]
                current = [entry_id, envelope if envelope is not _NO_REQUEST else None, []]
            current[2].append(obj)
    if current is not None:
        yield current[0], current[1], current[2]


def recorded_envelopes(entries: Iterable[Entry | Mapping[str, JSON]]) -> dict[str, JSON]:
    """The envelope residual each request of a branch has, by the id of its first entry."""
    units = _units(_json(entries))
    return {start: envelope for start, envelope, _ in _requests(units) if start is not None}


# -- envelopes -----------------------------------------------------------------------------


def is_envelope(entry: Mapping[str, JSON] | Entry) -> bool:
    """A ``pydantic-ai/request`` entry: a request's final envelope."""
    if isinstance(entry, Mapping):
        return entry.get("type") == "custom" and entry.get("customType") == ENVELOPE_TYPE
    return isinstance(entry, CustomEntry) and entry.custom_type == ENVELOPE_TYPE


def envelope_residual(request: ModelRequest) -> JSON:
    """What a request's envelope holds beyond the default (``None``: nothing)."""
    envelope = {k: v for k, v in message_json(request).items() if k != "parts"}
    return residual(envelope, _REQUEST_ENVELOPE)


def envelope_entry(request: ModelRequest) -> dict[str, JSON]:
    """The ``pydantic-ai/request`` entry recording ``request``'s envelope as it is now
    (``id`` and time are the caller's to give)."""
    return {
        "type": "custom",
        "customType": ENVELOPE_TYPE,
        "data": envelope_residual(request),
        "id": "",
        "parentId": None,
        "timestamp": iso(epoch_ms(message_json(request).get("timestamp"))),
    }
