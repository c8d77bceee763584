"""Reading a tool call's arguments as pi-context's ``execute`` reads its ``params``.

Pi validates arguments against the tool's schema before ``execute`` (N5); the anchor's own
guards still run without it and are reproduced here (``origin``, ``query``, ``pattern``,
edit items). Where the anchor has no guard and a schema violation would only make the JS
misbehave (a non-integer cursor, non-string content), the call fails as a thrown error
naming the argument, never with a Python traceback.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pictx_fsm import js
from pictx_fsm.session.entries import ABSENT

__all__ = [
    "QUERY_EMPTY",
    "QUERY_NOT_LIST",
    "QUERY_NOT_STRINGS",
    "Arguments",
    "ToolArgumentError",
    "search_queries",
]

QUERY_NOT_LIST: Final = "query must be a string or a non-empty array of strings"
QUERY_NOT_STRINGS: Final = "query array elements must be strings"
QUERY_EMPTY: Final = "query strings must be non-empty: an empty query matches everything"


class ToolArgumentError(ValueError):
    """An argument the tool cannot use: a thrown error (error result), never a refusal."""


class Arguments:
    """The ``params`` object of one call."""

    def __init__(self, raw: object) -> None:
        if not isinstance(raw, Mapping):
            raise ToolArgumentError("arguments must be an object")
        self._raw = raw

    def get(self, name: str) -> Any:
        """The value, or ``ABSENT`` when the key is missing (JSON ``null`` is ``None``)."""
        return self._raw.get(name, ABSENT)

    def given(self, name: str) -> Any:
        """``params.x ?? undefined``: ``None`` for a missing key or ``null``."""
        value = self._raw.get(name)
        return value

    def string(self, name: str) -> str | None:
        """``typeof params.x === "string" ? params.x : undefined``."""
        value = self._raw.get(name)
        return value if isinstance(value, str) else None

    def integer(self, name: str, *, minimum: int | None = None) -> int | None:
        """An optional integer (an integral JSON float counts); ``None`` when omitted."""
        value = self._raw.get(name)
        if value is None:
            return None
        if js.is_number(value) and math.isfinite(value) and float(value).is_integer():
            number = int(value)
            if minimum is None or number >= minimum:
                return number
            raise ToolArgumentError(f"{name} must be an integer >= {minimum}")
        raise ToolArgumentError(f"{name} must be an integer")

    def text(self, name: str) -> str:
        value = self._raw.get(name)
        if not isinstance(value, str):
            raise ToolArgumentError(f"{name} must be a string")
        return value

    def array(self, name: str) -> Sequence[Any]:
        """An optional array (``[]`` when omitted or ``null``)."""
        value = self._raw.get(name)
        if value is None:
            return []
        if not isinstance(value, list):
            raise ToolArgumentError(f"{name} must be an array")
        return value

    def not_false(self, name: str) -> bool:
        """``params.x !== false`` (only an explicit false counts)."""
        return self._raw.get(name, ABSENT) is not False

    def truthy(self, name: str) -> bool:
        return js.truthy(self._raw.get(name))


def search_queries(query: object) -> list[str]:
    """``searchQueries``: one literal or a non-empty array of non-empty literals (thrown)."""
    candidates = [query] if isinstance(query, str) else query
    if not isinstance(candidates, list) or not candidates:
        raise ToolArgumentError(QUERY_NOT_LIST)
    if not all(isinstance(candidate, str) for candidate in candidates):
        raise ToolArgumentError(QUERY_NOT_STRINGS)
    if any(candidate == "" for candidate in candidates):
        raise ToolArgumentError(QUERY_EMPTY)
    return list(candidates)
