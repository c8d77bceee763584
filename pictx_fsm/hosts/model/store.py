"""One session file of the model host: the entry tree plus Pi's ``append*`` operations.

Every append mints an 8-hex id that is unused in the session (from the injected random
source), stamps it with the injected clock, makes it a child of the leaf and moves the leaf
(pi-host §8.3). The store also answers ``getContextUsage().tokens`` through an incremental
:class:`~pictx_fsm.session.usage.UsageIndex` over the same tree.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, TypeVar

from pictx_fsm.hosts.model.messages import Clock, iso
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
    SessionHeader,
    ThinkingLevelChangeEntry,
)
from pictx_fsm.session.estimate import TokenCounter
from pictx_fsm.session.jsonl import dumps_session
from pictx_fsm.session.projection import Message, context_messages
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import UsageIndex

JSON: TypeAlias = Any
E = TypeVar("E", bound=Entry)
Builder = Callable[[str, "str | None", str], E]


class SessionStore:
    """A session tree with Pi's append operations, a file path, and the host's usage."""

    def __init__(
        self,
        tree: SessionTree,
        *,
        path: str,
        ids: random.Random,
        clock: Clock,
        counter: TokenCounter,
        on_append: Callable[[Entry], None],
    ) -> None:
        self.tree = tree
        self.path = path
        self._ids = ids
        self._clock = clock
        self._on_append = on_append
        self._usage = UsageIndex(tree, counter)

    # -- reading ------------------------------------------------------------------------------

    @property
    def header(self) -> SessionHeader:
        return self.tree.header

    @property
    def leaf_id(self) -> str | None:
        return self.tree.leaf_id

    def branch(self) -> list[Entry]:
        return self.tree.branch()

    def context_messages(self) -> list[Message]:
        """``buildSessionContext().messages`` at the leaf (the agent's message state)."""
        return context_messages(self.tree.branch())

    def context_tokens(self) -> int | None:
        """``getContextUsage().tokens``: ``None`` after a compaction until a settled reply."""
        return self._usage.branch_tokens()

    def jsonl(self) -> str:
        """The session file as Pi writes it (header line, then entries in file order)."""
        return dumps_session(self.tree.header, self.tree.entries)

    def navigate(self, entry_id: str | None) -> None:
        self.tree.navigate(entry_id)

    # -- appending ----------------------------------------------------------------------------

    def now(self) -> int:
        return self._clock()

    def mint_id(self) -> str:
        return self.tree.mint_entry_id(self._ids)

    def add(self, build: Builder[E], entry_id: str | None = None) -> E:
        """Append the entry ``build(id, parentId, timestamp)`` as a child of the leaf."""
        entry = build(entry_id or self.mint_id(), self.tree.leaf_id, iso(self._clock()))
        self.tree.append(entry)
        self._on_append(entry)
        return entry

    def message(self, message: Mapping[str, JSON]) -> Entry:
        """Persist an agent message; a role-``custom`` one becomes a ``custom_message`` entry."""
        if message.get("role") == "custom":
            return self.custom_message(
                str(message.get("customType", "")),
                message.get("content", ""),
                message.get("display", ABSENT),
                message.get("details", ABSENT),
            )
        raw = dict(message)
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
