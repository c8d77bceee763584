"""What a derived JSON value misses of the actual one, and how to put it back.

The session keeps each pydantic-ai message as Pi fields (what the lifecycle, ``inspect`` and
``audit`` read) plus the *residual*: only the part of the message's JSON those Pi fields do not
reproduce (a sub-millisecond timestamp, a provider id, an unknown part). ``patch(derived,
residual(actual, derived)) == actual`` for any JSON values, so the round trip is lossless by
construction while the file carries each fact once.

A residual is ``None`` (nothing missing) or one JSON object of one of three shapes:
``{"=": value}`` (replace), ``{"{}": {key: residual}, "-": [keys]}`` (patch an object, drop
keys), ``{"[]": {"index": residual}}`` (patch a list of the same length).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

__all__ = ["JSON", "patch", "residual"]

JSON: TypeAlias = Any
_MISSING = object()


def residual(actual: JSON, derived: JSON) -> JSON:
    """The smallest patch turning ``derived`` into ``actual`` (``None`` when equal)."""
    if _same(actual, derived):
        return None
    if isinstance(actual, Mapping) and isinstance(derived, Mapping):
        return _object_patch(actual, derived)
    if isinstance(actual, list) and isinstance(derived, list) and len(actual) == len(derived):
        pairs = enumerate(zip(actual, derived, strict=True))
        items = {str(i): residual(a, d) for i, (a, d) in pairs}
        return {"[]": {i: r for i, r in items.items() if r is not None}}
    return {"=": actual}


def _same(actual: JSON, derived: JSON) -> bool:
    """Equal as JSON: ``True`` is not ``1`` and ``1`` is not ``1.0`` (Python's ``==`` says
    they are, and the patch must keep them apart)."""
    if isinstance(actual, Mapping) and isinstance(derived, Mapping):
        return actual.keys() == derived.keys() and all(
            _same(value, derived[key]) for key, value in actual.items()
        )
    if isinstance(actual, list) and isinstance(derived, list):
        return len(actual) == len(derived) and all(map(_same, actual, derived))
    return type(actual) is type(derived) and bool(actual == derived)


def _object_patch(actual: Mapping[str, JSON], derived: Mapping[str, JSON]) -> JSON:
    changed = {}
    for key, value in actual.items():
        base = derived.get(key, _MISSING)
        if base is _MISSING:
            changed[key] = {"=": value}
        elif (patch := residual(value, base)) is not None:
            changed[key] = patch
    dropped = [key for key in derived if key not in actual]
    out: dict[str, JSON] = {"{}": changed}
    if dropped:
        out["-"] = dropped
    return out


def patch(derived: JSON, delta: JSON) -> JSON:
    """Apply a :func:`residual` to ``derived`` (a new value; ``derived`` is not changed)."""
    if delta is None:
        return derived
    if "=" in delta:
        return delta["="]
    if "[]" in delta:
        items = list(derived)
        for index, item in delta["[]"].items():
            items[int(index)] = patch(items[int(index)], item)
        return items
    out = dict(derived)
    for key, item in delta["{}"].items():
        out[key] = patch(out.get(key), item)
    for key in delta.get("-", ()):
        out.pop(key, None)
    return out
