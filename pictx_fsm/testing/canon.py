"""Canonical states: a world's state as plain data, equal for states that differ only in the
names the run minted and in when it ran.

The exhaustive check (:mod:`pictx_fsm.testing.check`) deduplicates on this value. Two states
are merged only when their canonical values are equal, and the value keeps *everything* the
future of a world depends on except two things a run chooses arbitrarily:

- **names** — entry ids, session ids, window ids, tool call ids and the labels generated
  texts carry (``prompt-3``): every match of the kit's name pattern is replaced by the order
  in which it first occurs in the value, and its length (a label's length is text a token
  counter sees);
- **the clock** — an epoch-millisecond integer or ISO timestamp becomes its distance from
  the world's clock.

Merging is sound because the worlds are *data independent* in both: nothing compares a name
except for equality, and nothing reads an absolute time, only distances (``docs/check.md``
argues it; ``tests/test_check_abstraction.py`` checks it against concrete runs). A renaming
is a bijection, so equal canonical values mean equal states up to renaming. A value this
module cannot canonicalize raises :class:`Unmergeable`: the check then keeps that state
apart (sound, never merged).
"""

from __future__ import annotations

import enum
import hashlib
import inspect
import re
import types
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Mapping
from datetime import datetime
from typing import Any

import attrs

__all__ = ["HOST_NAMES", "Canon", "Unmergeable", "digest", "generator_stack"]

HOST_NAMES = (
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
    r"\b[0-9a-f]{8}\b",
    r"\b(?:prompt|reply|calls|steer|follow_up|turn|foreign|done)-\d+\b",
    r"\bt\d+-\d+\b",
    r"\bcall_\d+\b",
    r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d[.-]\d{3}Z",
)
"""What the model session and the generic host actions mint: uuids (session ids), 8-hex
entry ids, the labels of generated texts (``prompt-<serial>``, the echo tool's
``t<serial>-<i>``), the scripted provider's call ids and the timestamps in file names."""

_ISO = re.compile(r"(\d{4}-\d\d-\d\dT\d\d):(\d\d):(\d\d)\.(\d{3})Z\Z")
_EPOCH_MS = range(1_000_000_000_000, 10_000_000_000_000)
"""Integers read as epoch milliseconds (2001 to 2286): the worlds' clocks start in 2026."""
_SPLITS: dict[str, list[str]] = {}
_SPLITS_LIMIT = 200_000


class Unmergeable(Exception):
    """A value the canonical form cannot describe (the state stays apart)."""


class Canon:
    """One renaming, for one state: call it on every part of the state, in a fixed order."""

    def __init__(
        self,
        names: re.Pattern[str],
        *,
        now: int | None = None,
        atoms: Mapping[int, Hashable] | None = None,
    ) -> None:
        self._names = names
        self._index: dict[str, int] = {}
        self._now = now
        self._atoms = dict(atoms or {})
        self._open: set[int] = set()

    @staticmethod
    def pattern(*alternatives: str) -> re.Pattern[str]:
        """One pattern of name alternatives (a capturing group, for :meth:`re.Pattern.split`)."""
        return re.compile("(" + "|".join(alternatives) + ")")

    def atom(self, value: object, name: Hashable) -> None:
        """``value`` (by identity) stands for ``name`` wherever it occurs (the host, a file)."""
        self._atoms[id(value)] = name

    def name(self, text: str) -> tuple[int, int]:
        """The canonical name of ``text``: (order of first occurrence, length)."""
        index = self._index.get(text)
        if index is None:
            index = self._index[text] = len(self._index)
        return index, len(text)

    def text(self, text: str) -> Hashable:
        parts = _SPLITS.get(text)
        if parts is None:
            parts = self._names.split(text)
            if len(_SPLITS) >= _SPLITS_LIMIT:
                _SPLITS.clear()
            _SPLITS[text] = parts
        if len(parts) == 1:
            return text
        return tuple(self._part(part) if odd else part for odd, part in _alternate(parts))

    def _part(self, part: str) -> Hashable:
        moment = self._iso(part)
        return ("t", moment) if moment is not None else self.name(part)

    def _iso(self, text: str) -> int | None:
        if self._now is None:
            return None
        found = _ISO.match(text)
        if found is None:
            return None
        stamp = datetime.fromisoformat(f"{found[1]}:{found[2]}:{found[3]}.{found[4]}+00:00")
        return int(stamp.timestamp() * 1000) - self._now

    def __call__(self, value: Any) -> Hashable:
        kind = type(value)
        if kind is str:
            return self.text(value)
        if kind is int:
            if self._now is not None and value in _EPOCH_MS:
                return ("t", value - self._now)
            number: int = value
            return number
        if value is None or kind is bool or kind is float:
            plain: Hashable = value
            return plain
        if kind is bytes:
            return ("bytes", self.text(value.decode("utf-8", "surrogateescape")))
        atom = self._atoms.get(id(value))
        if atom is not None:
            return atom
        return self._compound(value, kind)

    def _compound(self, value: Any, kind: type) -> Hashable:
        if isinstance(value, Mapping):
            return ("map", tuple((self(k), self(v)) for k, v in value.items()))
        if isinstance(value, list | tuple | deque):
            return tuple(self(item) for item in value)
        if isinstance(value, set | frozenset):
            return ("set", tuple(self(item) for item in sorted(value, key=_masked(self._names))))
        if isinstance(value, enum.Enum):
            return (kind.__name__, self(value.value))
        if kind is types.FunctionType:
            cells = tuple(self(cell.cell_contents) for cell in value.__closure__ or ())
            return ("function", value.__qualname__, cells)
        if attrs.has(kind):
            return self._attrs(value, kind)
        raise Unmergeable(f"{kind.__module__}.{kind.__qualname__}")

    def _attrs(self, value: Any, kind: type) -> Hashable:
        if id(value) in self._open:
            raise Unmergeable(f"a cycle through {kind.__qualname__}")
        self._open.add(id(value))
        try:
            fields = attrs.fields(kind)
            return (kind.__qualname__, tuple(self(getattr(value, f.name)) for f in fields))
        finally:
            self._open.discard(id(value))


def _alternate(parts: list[str]) -> Iterator[tuple[bool, str]]:
    for index, part in enumerate(parts):
        yield bool(index % 2), part


def _masked(names: re.Pattern[str]) -> Callable[[Any], str]:
    """A set's order: its members with the names masked (then as they are, for ties)."""

    def key(item: Any) -> str:
        text = repr(item)
        return names.sub("#", text) + "\0" + text

    return key


def generator_stack(steps: object, canon: Canon) -> Hashable:
    """Where a suspended generator (and every generator it delegates to with ``yield from``)
    stands: each frame's function, the bytecode offset it waits at and its local variables.
    A host procedure's future is a function of that and the host's state; read with the
    documented introspection of generators (:func:`inspect.getgeneratorlocals`,
    ``gi_frame.f_lasti``, ``gi_yieldfrom``)."""
    frames = []
    current = steps
    while isinstance(current, types.GeneratorType):
        frame = current.gi_frame
        if frame is None:
            break
        local = inspect.getgeneratorlocals(current)
        frames.append(
            (
                current.gi_code.co_qualname,
                frame.f_lasti,
                tuple((name, canon(value)) for name, value in local.items()),
            )
        )
        current = current.gi_yieldfrom
    if current is not None and not isinstance(current, types.GeneratorType):
        raise Unmergeable(f"a delegated {type(current).__qualname__}")
    return tuple(frames)


def digest(value: Hashable) -> bytes:
    """A stable 16-byte digest of a canonical value (the same in every process, unlike
    :func:`hash`): what the check's seen set holds and its shards are chosen by."""
    return hashlib.blake2b(repr(value).encode("utf-8", "surrogatepass"), digest_size=16).digest()
