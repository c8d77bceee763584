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
part of their own (the reset marker, metadata entries) ride in the stub of the next text part
(``before``), or of the last one (``after``). pydantic-ai never sends metadata to a model.

``entries_to_messages(messages_to_entries(m)) == m`` exactly; the other way round every field
the lifecycle reads survives, and the lifecycle's entries keep their ids and timestamps (a
conversation message's entry id is minted again: pydantic-ai has nowhere to keep it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, TypeAlias

from pydantic_ai.messages import ModelMessage, ModelRequest

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
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.writer import iso

JSON: TypeAlias = Any
RESIDUAL_KEY: Final = "pydanticAi"
PART_ENTRY_TYPE: Final = "pydantic-ai/part"
"""``customType`` of a bookkeeping part (instruction or tool-availability delta)."""
_REQUEST_ENVELOPE: Final = {
    k: v for k, v in message_json(ModelRequest(parts=[])).items() if k != "parts"
}


class HistoryError(ValueError):
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
            out.append(_response_entry(message, mint))
        else:
            out.extend(_request_entries(message, mint))
    return chain(out, parent_id)


def chain(entries: list[dict[str, JSON]], parent_id: str | None) -> list[dict[str, JSON]]:
    """Link ``entries`` into one branch below ``parent_id`` (``parentId`` as Pi appends)."""
    for entry in entries:
        entry["parentId"] = parent_id
        parent_id = entry["id"]
    return entries


def _response_entry(response: Mapping[str, JSON], mint: Callable[[], str]) -> dict[str, JSON]:
    message = response_message(response)
    return _message_entry(message, mint(), {"response": residual(response, response_json(message))})


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


def split_stub(part: Mapping[str, JSON]) -> tuple[Mapping[str, JSON], dict[str, JSON]]:
    """The stub a user prompt part carries, and the part without it."""
    content = part.get("content")
    if part.get("part_kind") != "user-prompt" or not isinstance(content, list):
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


def with_stub(part: Mapping[str, JSON], stub: Mapping[str, JSON]) -> dict[str, JSON] | None:
    """``part`` carrying ``stub`` in its first text item (a string prompt becomes one text
    item); ``None`` when the part has no text to carry it."""
    if part.get("part_kind") != "user-prompt" or not stub:
        return None if stub else dict(part)
    content = part.get("content")
    items = [_text_item(content)] if isinstance(content, str) else list(content or ())
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and item.get("kind") == "text-content":
            metadata = {**(item.get("metadata") or {}), METADATA_KEY: dict(stub)}
            items[index] = {**item, "metadata": metadata}
            return {**part, "content": items}
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
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            content = getattr(part, "content", None)
            for item in content if isinstance(content, list) else ():
                stub = getattr(item, "metadata", None) or {}
                yield from _stub_entries(stub.get(METADATA_KEY))


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


def _units(entries: Iterable[dict[str, JSON]]) -> list[tuple[str, dict[str, JSON], JSON]]:
    """``(kind, json, request residual)`` per part or response, with carried entries placed
    in the stubs of text parts."""
    units: list[tuple[str, dict[str, JSON], JSON]] = []
    pending: list[dict[str, JSON]] = []
    for entry in entries:
        unit = _unit(entry)
        if unit is None:
            pending.append(_without_link(entry))
            continue
        if (
            pending
            and unit[0] == "part"
            and (carried := with_stub(unit[1], _add(unit[1], "before", pending)))
        ):
            units.append((unit[0], carried, unit[2]))
            pending = []
        else:
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


def _place_after(
    units: list[tuple[str, dict[str, JSON], JSON]], pending: list[dict[str, JSON]]
) -> None:
    for index in range(len(units) - 1, -1, -1):
        kind, part, request = units[index]
        if kind == "part" and (
            carried := with_stub(split_stub(part)[1], _add(part, "after", pending))
        ):
            units[index] = (kind, carried, request)
            return
    first = pending[0].get("id")
    raise HistoryError(f"entry {first!r} has no text part of the history to travel with")


def _unit(entry: Mapping[str, JSON]) -> tuple[str, dict[str, JSON], JSON] | None:
    own = entry.get(RESIDUAL_KEY)
    residuals: Mapping[str, JSON] = own if isinstance(own, Mapping) else {}
    request = residuals.get("request", _NO_REQUEST)
    kind = entry.get("type")
    if kind == "custom" and entry.get("customType") == PART_ENTRY_TYPE:
        return "part", dict(entry.get("data") or {}), request
    if kind == "custom_message":
        return "part", _lifecycle_part(entry, residuals.get("part")), request
    if kind != "message":
        return None
    message = entry.get("message") or {}
    if message.get("role") == "assistant":
        return "response", patch(response_json(message), residuals.get("response")), request
    return "part", patch(part_json(message), residuals.get("part")), request


def _lifecycle_part(entry: Mapping[str, JSON], delta: JSON) -> dict[str, JSON]:
    bare = patch(_custom_message_part(entry), delta)
    carried = with_stub(bare, {"entry": lifecycle_stub(_without_residual(entry))})
    if carried is None:
        raise HistoryError(f"custom_message {entry.get('id')!r} has no text to carry its entry")
    return carried


def _without_residual(entry: Mapping[str, JSON]) -> dict[str, JSON]:
    return {k: v for k, v in entry.items() if k != RESIDUAL_KEY}


_NO_REQUEST: Final = object()


def _messages(units: Sequence[tuple[str, dict[str, JSON], JSON]]) -> list[dict[str, JSON]]:
    out: list[dict[str, JSON]] = []
    request: dict[str, JSON] | None = None
    for kind, obj, envelope in units:
        if kind == "response":
            out.append(obj)
            request = None
            continue
        if request is None or envelope is not _NO_REQUEST:
            base = envelope if envelope is not _NO_REQUEST else None
            request = {**patch(_REQUEST_ENVELOPE, base), "parts": []}
            out.append(request)
        request["parts"].append(obj)
    return out
