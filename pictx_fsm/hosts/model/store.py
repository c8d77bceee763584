"""One session file of the model host: the entry tree plus Pi's ``append*`` operations.

Every append mints an 8-hex id that is unused in the session (from the injected random
source), stamps it with the injected clock, makes it a child of the leaf and moves the leaf
(pi-host §8.3). The store also answers ``getContextUsage().tokens`` through an incremental
:class:`~pictx_fsm.session.usage.ContextUsageIndex` over the same tree.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TypeVar

from pictx_fsm.session.entries import Entry, SessionHeader
from pictx_fsm.session.estimate import TokenCounter
from pictx_fsm.session.jsonl import dumps_session
from pictx_fsm.session.projection import Message, context_messages
from pictx_fsm.session.transcript import Transcript
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import ContextUsageIndex
from pictx_fsm.session.writer import Builder, Clock, SessionWriter

__all__ = ["E", "SessionStore"]

E = TypeVar("E", bound=Entry)


class SessionStore(SessionWriter):
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
        super().__init__(tree, ids=ids, clock=clock)
        self.path = path
        self._on_append = on_append
        self._usage = ContextUsageIndex(tree, counter)

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

    def transcript(self) -> Transcript:
        """:meth:`context_messages` as the session layer keeps it for the leaf (the same
        messages): a request's hooks and their audit records then cost what changed since
        the last request, not the whole branch again."""
        return self.tree.transcripts.transcript()

    def conversation(self) -> Transcript:
        """:meth:`transcript` without its system messages (what ``context`` carries)."""
        return self.tree.transcripts.conversation()

    def context_tokens(self) -> int | None:
        """``getContextUsage().tokens``: ``None`` after a compaction until a settled reply."""
        return self._usage.branch_tokens()

    def jsonl(self) -> str:
        """The session file as Pi writes it (header line, then entries in file order)."""
        return dumps_session(self.tree.header, self.tree.entries)

    def navigate(self, entry_id: str | None) -> None:
        self.tree.navigate(entry_id)

    # -- appending ----------------------------------------------------------------------------

    def add(self, build: Builder[E], entry_id: str | None = None) -> E:
        """Append as :class:`SessionWriter` does, then tell the host (persistence, usage)."""
        entry = super().add(build, entry_id)
        self._on_append(entry)
        return entry
