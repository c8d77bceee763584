"""Canonical JSON and the digests made of it: of one message, of a message list, of a text.

A digest must not depend on how a value was built: the canonical serialisation has sorted
keys, compact separators and ASCII escapes (``json.dumps(obj, sort_keys=True,
separators=(",", ":"), ensure_ascii=True, default=default)``, with the encoder built once).
The decision audit log hashes its records with it, and a provider message list is digested
as a hash list — the sha256 of the concatenated sha256 of each message's canonical JSON — so
per-message digests compose: a :class:`~pictx_fsm.session.transcript.Transcript` keeps them
per entry and knows its list digest, and recording a 100k-message request costs O(1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from pictx_fsm.fastjson import dumper

__all__ = [
    "PLAIN_ATTRS",
    "attrs_fields",
    "canonical",
    "default",
    "digest",
    "message_digest",
    "message_list_digest",
]


def canonical(obj: Any) -> str:
    """The one serialisation a digested value may have: sorted keys, compact separators,
    ASCII — exactly ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
    default=default)``, with the encoder built once."""
    return _encode(obj)


def default(value: Any) -> Any:
    """``json.dumps``'s ``default``: attrs values, mappings, enums and sets as JSON."""
    names = PLAIN_ATTRS.get(type(value))
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
    names = attrs_fields(type(value))
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
PLAIN_ATTRS: dict[type, tuple[str, ...]] = {}
"""attrs classes that take the attrs branch of :func:`default` whatever the instance: no
``to_json``, not a mapping, no ``value``/``name`` attribute and not a set."""


def attrs_fields(cls: type) -> tuple[str, ...] | None:
    """The field names of an attrs class (``attrs.asdict(recurse=False)``'s keys), cached."""
    if cls not in _FIELDS:
        names = tuple(a.name for a in attrs.fields(cls)) if attrs.has(cls) else None
        _FIELDS[cls] = names
        plain = not any(hasattr(cls, n) for n in ("to_json", "value", "name"))
        if names is not None and plain and not issubclass(cls, Mapping | frozenset | set):
            PLAIN_ATTRS[cls] = names
    return _FIELDS[cls]


_encode: Final = dumper(
    sort_keys=True, separators=(",", ":"), default=default, check_circular=False
)
""":func:`canonical`'s encoder, built once (a record is never circular: not checked)."""


def digest(text: str) -> str:
    """The hex sha256 of a canonical text."""
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def message_digest(message: Any) -> bytes:
    """The 32-byte sha256 of one message's canonical JSON: the unit of a list digest."""
    return hashlib.sha256(_encode(message).encode("ascii")).digest()


def message_list_digest(messages: Sequence[Any]) -> dict[str, Any]:
    """A provider message list by its length and hash list, not its text.

    ``sha256`` is the sha256 of the concatenated :func:`message_digest` of every message. A
    list that knows its digest (a :class:`~pictx_fsm.session.transcript.Transcript`, kept per
    entry as the session grows) answers in O(1); any other list is digested here. ``context``
    hooks carry the whole conversation on every request: digesting it again each time would
    make an audit record cost O(session)."""
    known = getattr(messages, "list_digest", None)
    if callable(known):
        return {"count": len(messages), "sha256": known()}
    state = hashlib.sha256()
    for message in messages:
        state.update(message_digest(message))
    return {"count": len(messages), "sha256": state.hexdigest()}
