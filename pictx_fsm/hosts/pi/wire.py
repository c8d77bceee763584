"""Message lists on the wire: only what the lifecycle reads goes to Python, only an edit
comes back.

``context`` and ``context_with_system`` carry the whole conversation on every provider
request. The lifecycle reads only two kinds of message in it — system messages (folded into
the head a reset window keeps, R67) and boots (where a window starts, R14, R67–R69) — and
returns the list cut, reordered or extended. So the extension sends those messages with their
indexes plus the length (:func:`expand_messages` turns each run of other messages into one
*elided* placeholder), and the server answers with slices of the extension's own list and
the few new messages (:func:`encode_messages`): the cost of a request no longer grows with
the session, and no message text makes a round trip.

A plain list is accepted too (``pictx-fsm pi serve`` for hosts of one's own); its reply
is encoded the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

from attrs import frozen

from pictx_fsm.errors import PictxError

__all__ = [
    "ELIDED_ROLE",
    "MESSAGE_HOOKS",
    "PIPELINED_HOOKS",
    "PROTOCOL",
    "SAME",
    "ExpandedMessages",
    "Piece",
    "WireError",
    "encode_messages",
    "expand_messages",
]

PROTOCOL: Final = 4
"""Wire protocol version: the handshake refuses an extension that speaks another."""
MESSAGE_HOOKS: Final = ("context", "context_with_system")
"""The hooks whose payload is a provider request's message list (sent elided)."""
PIPELINED_HOOKS: Final = ("turn_start", "agent_end", "agent_settled", "model_select")
"""Observational hooks: their handlers return nothing and their effects are notices only
(lifecycle spec §6, R54, R55, R63), so the extension sends them without waiting
(``"pipelined": true``) and applies the notices when the reply comes. ``session_shutdown``
is not one: the server must have answered everything before its input is closed."""
SAME: Final = "pictx-fsm/same"
"""Key of a kept message sent by reference: ``{SAME: k}`` is the ``k``-th kept message of the
previous request of the same hook (the extension sends an unchanged system prompt once)."""
ELIDED_ROLE: Final = "pictx-fsm/elided"
"""Role of the placeholder standing for a run of messages the lifecycle does not read."""

Piece: TypeAlias = list[int] | dict[str, Any]
"""``[start, end]`` (a slice of the host's list) or ``{"message": ...}`` (a new message)."""


class WireError(PictxError):
    """A message list the server cannot use; the message names the field."""


@frozen(kw_only=True)
class ExpandedMessages:
    """The list the runtime sees, and the host indexes each of its items stands for."""

    messages: tuple[Mapping[str, Any], ...]
    spans: tuple[tuple[int, int], ...]
    kept: tuple[Mapping[str, Any], ...] = ()
    """The kept messages in order, references resolved: what the next request may refer to."""


def expand_messages(
    value: Any, field: str = "event.messages", previous: Sequence[Mapping[str, Any]] = ()
) -> ExpandedMessages:
    """``{"count": n, "kept": [[index, message], ...]}`` (or a plain list) → the runtime's
    list, with one placeholder per run of elided messages; a ``{SAME: k}`` message is
    ``previous[k]`` (the previous request's kept messages), a copy of it."""
    if isinstance(value, list):
        return ExpandedMessages(
            messages=tuple(_message(m, field) for m in value),
            spans=tuple((i, i + 1) for i in range(len(value))),
        )
    if not isinstance(value, Mapping):
        raise WireError(f"field {field!r} must be a list or {{count, kept}}")
    count = value.get("count")
    kept = value.get("kept") or []
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise WireError(f"field '{field}.count' must be a non-negative integer")
    messages: list[Mapping[str, Any]] = []
    spans: list[tuple[int, int]] = []
    resolved: list[Mapping[str, Any]] = []
    position = 0
    for item in kept:
        index, message = _kept(item, field, position, count)
        message = _resolved(message, previous, f"{field}.kept[{index}]")
        resolved.append(message)
        if index > position:
            messages.append({"role": ELIDED_ROLE, "count": index - position})
            spans.append((position, index))
        messages.append(message)
        spans.append((index, index + 1))
        position = index + 1
    if count > position:
        messages.append({"role": ELIDED_ROLE, "count": count - position})
        spans.append((position, count))
    return ExpandedMessages(messages=tuple(messages), spans=tuple(spans), kept=tuple(resolved))


def _resolved(
    message: Mapping[str, Any], previous: Sequence[Mapping[str, Any]], field: str
) -> Mapping[str, Any]:
    if SAME not in message:
        return message
    which = message[SAME]
    if not (isinstance(which, int) and not isinstance(which, bool) and 0 <= which < len(previous)):
        raise WireError(f"field {field!r} refers to kept message {which!r}, which is not held")
    return dict(previous[which])  # a copy: identity marks where an item came from


def _kept(item: Any, field: str, position: int, count: int) -> tuple[int, Mapping[str, Any]]:
    if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int)):
        raise WireError(f"field '{field}.kept' holds [index, message] pairs")
    index = item[0]
    if not position <= index < count:
        raise WireError(f"field '{field}.kept': index {index} out of order or out of range")
    return index, _message(item[1], f"{field}.kept[{index}]")


def _message(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise WireError(f"field {field!r} must hold message objects")
    return value


def encode_messages(result: Sequence[Mapping[str, Any]], expanded: ExpandedMessages) -> list[Piece]:
    """The runtime's output list as slices of the host's list plus new messages.

    An output item that *is* (by identity) an input item becomes that item's span; adjacent
    spans merge. A placeholder never leaves the server: one that is not an input item (a
    copy) is a lifecycle bug, refused rather than sent to the provider."""
    pairs = zip(expanded.messages, expanded.spans, strict=True)
    where = {id(message): span for message, span in pairs}
    pieces: list[Piece] = []
    for message in result:
        span = where.get(id(message))
        if span is None:
            if message.get("role") == ELIDED_ROLE:
                raise WireError("the lifecycle returned a copy of an elided placeholder")
            pieces.append({"message": message})
        elif pieces and isinstance(pieces[-1], list) and pieces[-1][1] == span[0]:
            pieces[-1][1] = span[1]
        else:
            pieces.append([span[0], span[1]])
    return pieces
