"""The canonical text of a record's small parts, written member by member.

:func:`~pictx_fsm.audit.store.canonical` is the one serialisation a record may have; it runs
the C encoder, which sorts every object's keys again and calls back into Python for every
attrs value (``default`` builds a dict for it, the encoder sorts and writes that). A hook's
facts, its context and its event are small objects of a few known shapes, recorded on every
hook: here each shape's keys are sorted once (a *layout*: the text before each member's value),
and the values most members hold — strings, booleans, integers, ``None``, attrs values of those
— are written directly. Anything else goes to the encoder. The text is the encoder's, byte for
byte (``tests/test_audit_records.py`` holds both to it on arbitrary values).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, Final

from pictx_fsm.fastjson import ascii_string as _ascii
from pictx_fsm.session.digest import PLAIN_ATTRS, attrs_fields
from pictx_fsm.session.digest import canonical as _encode

__all__ = ["Layout", "layout", "members_text", "value_text"]

_NATIVE: Final = (str, int, float, list, tuple, dict)
"""What the encoder writes itself: a subclass of these never reaches ``default``."""

Layout = tuple[tuple[tuple[str, str], ...], str]
"""An object's shape: ``(attribute name, text before its value)`` for each member read from
the object, in sorted key order with the constant members folded in, and the text after the
last one."""


def layout(members: dict[str, tuple[bool, str]]) -> Layout:
    """The layout of an object whose keys map to ``(True, attribute name)`` or to
    ``(False, constant value text)``."""
    members_read: list[tuple[str, str]] = []
    pending, first = "{", True
    for key in sorted(members):
        is_attribute, source = members[key]
        piece = f"{'' if first else ','}{_ascii(key)}:"
        first = False
        if is_attribute:
            members_read.append((source, pending + piece))
            pending = ""
        else:
            pending += piece + source
    return tuple(members_read), pending + "}"


def value_text(value: Any) -> str:
    """``canonical(value)``; scalars and plain attrs values without the encoder."""
    scalar = _SCALARS.get(type(value))
    if scalar is not None:
        return scalar(value)
    shape = _ATTRS_LAYOUTS.get(type(value))
    if shape is None and (
        type(value) in _NOT_ATTRS or (shape := _attrs_layout(type(value))) is None
    ):
        return _encode(value)
    read, end = shape
    get = _SCALARS.get
    return (
        "".join([p + get(type(v := getattr(value, name)), value_text)(v) for name, p in read]) + end
    )


_SCALARS: Final[dict[type, Callable[[Any], str]]] = {
    str: _ascii,
    bool: {True: "true", False: "false"}.__getitem__,
    int: int.__repr__,
    type(None): {None: "null"}.__getitem__,
}
"""The text of a value of exactly these types, by a call into C: what ``canonical`` writes."""


_ATTRS_LAYOUTS: dict[type, Layout] = {}
_NOT_ATTRS: set[type] = set()


def _attrs_layout(cls: type) -> Layout | None:
    """The layout of a class ``default`` writes as ``{"__type__": name, **fields}``."""
    if attrs_fields(cls) is None or cls not in PLAIN_ATTRS or issubclass(cls, _NATIVE):
        _NOT_ATTRS.add(cls)
        return None
    members = {"__type__": (False, str(_ascii(cls.__name__)))}
    members.update((name, (True, name)) for name in PLAIN_ATTRS[cls])
    _ATTRS_LAYOUTS[cls] = shape = layout(members)
    return shape


def members_text(pairs: Sequence[tuple[str, Any]]) -> str:
    """``canonical(dict(pairs))`` for string names (a step's facts): the last value of a
    repeated name, in sorted name order."""
    names = tuple(map(_first, pairs))
    shape = _MEMBER_LAYOUTS.get(names)
    if shape is None:
        if not all(type(name) is str for name in names):
            return _encode(dict(pairs))
        shape = _members_layout(names)
    read, end = shape
    get = _SCALARS.get
    return "".join([p + get(type(v := pairs[i][1]), value_text)(v) for i, p in read]) + end


_first: Final = itemgetter(0)
_MEMBER_LAYOUTS: dict[tuple[str, ...], tuple[tuple[tuple[int, str], ...], str]] = {}


def _members_layout(names: tuple[str, ...]) -> tuple[tuple[tuple[int, str], ...], str]:
    last = {name: index for index, name in enumerate(names)}
    keys = sorted(last)
    read = tuple(
        (last[key], ("{" if n == 0 else ",") + f"{_ascii(key)}:") for n, key in enumerate(keys)
    )
    shape = (read, "}" if keys else "{}")
    if len(_MEMBER_LAYOUTS) >= 1024:
        _MEMBER_LAYOUTS.clear()
    _MEMBER_LAYOUTS[names] = shape
    return shape
