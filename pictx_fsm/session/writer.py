"""Appending entries as Pi's session manager does: fresh ids, timestamps, the leaf as parent.

A host that keeps its own :class:`~pictx_fsm.session.tree.SessionTree` appends through a
:class:`SessionWriter`: every append mints an 8-hex id unused in the session (from the
injected random source), stamps it with the injected clock (ISO on the entry, milliseconds on
a message), makes it a child of the leaf and moves the leaf (pi-host §8.3). No hand-made ids
or timestamps, and a replay with the same random source and clock writes the same session.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, TypeVar

from pictx_fsm.js_date import iso_string
from pictx_fsm.session.entries import (
    ABSENT,
    AgentMessage,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
)
from pictx_fsm.session.tree import SessionTree

__all__ = ["Clock", "SessionWriter", "iso", "wall_clock"]

JSON: TypeAlias = Any
E = TypeVar("E", bound=Entry)
Builder = Callable[[str, "str | None", str], E]

Clock = Callable[[], int]
"""Milliseconds since the epoch."""


def wall_clock() -> int:
    """The real time, in milliseconds since the epoch."""
    return int(time.time() * 1000)


def iso(ms: int) -> str:
    """``new Date(ms).toISOString()``."""
    if type(ms) is int and 0 <= ms < _YEAR_10000_MS:  # every entry: the plain arithmetic
        seconds, millis = divmod(ms, 1000)
        day, second = divmod(seconds, 86_400)  # UTC days have 86,400 seconds (no leap one)
        date = _DATES.get(day)
        if date is None:
            t = time.gmtime(day * 86_400)
            if len(_DATES) >= 1024:
                _DATES.clear()
            date = _DATES[day] = f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        hour, second = divmod(second, 3_600)
        minute, second = divmod(second, 60)
        return f"{date}{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"
    return iso_string(ms)


_YEAR_10000_MS = 253_402_300_800_000
_DATES: dict[int, str] = {}
"""``YYYY-MM-DDT`` of the days since the epoch seen lately (a session's entries share few)."""


class SessionWriter:
    """Pi's ``append*`` operations over a session tree."""

    def __init__(
        self,
        tree: SessionTree,
        *,
        ids: random.Random | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.tree = tree
        self._ids = ids if ids is not None else random.Random()
        self._clock = clock or wall_clock

    def now(self) -> int:
        return self._clock()

    def mint_id(self) -> str:
        return self.tree.mint_entry_id(self._ids)

    def add(self, build: Builder[E], entry_id: str | None = None) -> E:
        """Append the entry ``build(id, parentId, timestamp)`` as a child of the leaf."""
        entry = build(entry_id or self.mint_id(), self.tree.leaf_id, iso(self._clock()))
        self.tree.append(entry)
        return entry

    def message(self, message: Mapping[str, JSON]) -> Entry:
        """Persist an agent message (stamped now unless it has a ``timestamp``); a
        role-``custom`` one becomes a ``custom_message`` entry."""
        if message.get("role") == "custom":
            return self.custom_message(
                str(message.get("customType", "")),
                message.get("content", ""),
                message.get("display", ABSENT),
                message.get("details", ABSENT),
            )
        raw = dict(message)
        if "timestamp" not in raw:
            raw["timestamp"] = self._clock()
        role = str(raw.get("role"))
        return self.add(
            lambda i, p, t: MessageEntry(
                id=i, parent_id=p, timestamp=t, message=AgentMessage(role=role, raw=raw)
            )
        )

    def custom(self, custom_type: str, data: JSON = ABSENT) -> CustomEntry:
        return self.add(
            lambda i, p, t: CustomEntry(
                id=i, parent_id=p, timestamp=t, custom_type=custom_type, data=data
            )
        )

    def custom_message(
        self, custom_type: str, content: JSON, display: JSON, details: JSON = ABSENT
    ) -> CustomMessageEntry:
        return self.add(
            lambda i, p, t: CustomMessageEntry(
                id=i,
                parent_id=p,
                timestamp=t,
                custom_type=custom_type,
                content=content,
                display=display,
                details=details,
            )
        )

    def context_edit(self, target_id: str, replacement: JSON) -> ContextEditEntry:
        return self.add(
            lambda i, p, t: ContextEditEntry(
                id=i, parent_id=p, timestamp=t, target_id=target_id, replacement=replacement
            )
        )

    def compaction(self, fields: Mapping[str, JSON], first_kept: str | None) -> CompactionEntry:
        """A compaction; ``first_kept=None`` keeps nothing (its own id, retain-none)."""
        own = self.mint_id()
        kept = own if first_kept is None else first_kept

        def build(i: str, p: str | None, t: str) -> CompactionEntry:
            return CompactionEntry(
                id=i, parent_id=p, timestamp=t, first_kept_entry_id=kept, **fields
            )

        return self.add(build, own)

    def branch_summary(self, from_id: str, summary: str, fields: Mapping[str, JSON]) -> Entry:
        return self.add(
            lambda i, p, t: BranchSummaryEntry(
                id=i, parent_id=p, timestamp=t, from_id=from_id, summary=summary, **fields
            )
        )

    def label(self, target_id: str, label: str | None) -> LabelEntry:
        value: JSON = ABSENT if label is None else label
        return self.add(
            lambda i, p, t: LabelEntry(
                id=i, parent_id=p, timestamp=t, target_id=target_id, label=value
            )
        )

    def model_change(self, provider: str, model_id: str) -> ModelChangeEntry:
        return self.add(
            lambda i, p, t: ModelChangeEntry(
                id=i, parent_id=p, timestamp=t, provider=provider, model_id=model_id
            )
        )

    def thinking_level(self, level: str) -> ThinkingLevelChangeEntry:
        return self.add(
            lambda i, p, t: ThinkingLevelChangeEntry(
                id=i, parent_id=p, timestamp=t, thinking_level=level
            )
        )
