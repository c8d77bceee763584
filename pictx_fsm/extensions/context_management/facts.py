"""Facts: what one machine event's guards and actions read.

A :class:`CmFacts` is built per machine event from the state *before* that event, the host
event, the ``ctx`` observations and the read-only services. Derived observations (the
branch, its sources, the background selection) are computed on first use and memoised for
the event, so a guard that is not reached costs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from attrs import field, frozen

from pictx_fsm.extensions.context_management.events import (
    CmContext,
    CmEvent,
    CmServices,
    GenerationReplied,
    ToolCalled,
)
from pictx_fsm.extensions.context_management.generation import Candidate, GenRun, validate
from pictx_fsm.extensions.context_management.policy import (
    AUTO_MAX_PER_HOUR,
    BG_SELECT_BYTES,
    GENERATION_POLICY,
    HOUR_MS,
    Budgets,
)
from pictx_fsm.extensions.context_management.records import (
    BranchMemory,
    Receipt,
    branch_digest,
    inherited_notes,
    read_branch,
    read_session,
)
from pictx_fsm.extensions.context_management.sizes import digest
from pictx_fsm.extensions.context_management.sources import (
    Source,
    after,
    branch_sources,
    closed_prefix,
)
from pictx_fsm.extensions.context_management.state import CmState
from pictx_fsm.session.entries import Entry

__all__ = ["DEFAULT_WINDOW", "JSON", "CmFacts"]

JSON: TypeAlias = Any
DEFAULT_WINDOW = 200_000
"""The window assumed for budgets before any model reported one."""


@frozen(kw_only=True)
class CmFacts:
    """One machine event's inputs; ``memo`` caches derived observations for this event."""

    state: CmState
    event: CmEvent
    ctx: CmContext
    services: CmServices
    memo: dict[str, Any] = field(factory=dict, eq=False, repr=False)

    def _cached(self, name: str, compute: Any) -> Any:
        if name not in self.memo:
            self.memo[name] = compute()
        return self.memo[name]

    @property
    def now(self) -> int:
        return self.ctx.now

    @property
    def budgets(self) -> Budgets:
        return Budgets(context_window=self.ctx.context_window or DEFAULT_WINDOW)

    @property
    def branch(self) -> Sequence[Entry]:
        result: Sequence[Entry] = self._cached("branch", self.services.tree.branch)
        return result

    @property
    def branch_ids(self) -> frozenset[str]:
        ids: frozenset[str] = self._cached(
            "branch_ids", lambda: frozenset(e.id for e in self.branch if e.id is not None)
        )
        return ids

    @property
    def sources(self) -> list[Source]:
        result: list[Source] = self._cached("sources", lambda: branch_sources(self.branch))
        return result

    @property
    def uncovered(self) -> list[Source]:
        """Sources after the coverage position ``notesThroughEntryId`` (M33)."""
        result: list[Source] = self._cached(
            "uncovered",
            lambda: branch_sources(after(self.branch, self.state.branch.notes_through)),
        )
        return result

    @property
    def background_prefix(self) -> list[Source]:
        """M39: the closed ≈64 KiB prefix a background job would process."""
        result: list[Source] = self._cached(
            "prefix", lambda: closed_prefix(self.uncovered, BG_SELECT_BYTES)
        )
        return result

    @property
    def background_key(self) -> str:
        """M43: (source prefix, note state, model, generation policy incl. its budget)."""
        prefix = self.background_prefix
        parts = [
            prefix[0].id if prefix else "",
            prefix[-1].id if prefix else "",
            str(self.state.branch.state_version),
            self.ctx.model or "",
            GENERATION_POLICY,
            str(self.budgets.note_max_bytes),
        ]
        return digest("\x1f".join(parts), 16)

    @property
    def generation(self) -> GenRun:
        run = self.state.generation
        if run is None:
            raise LookupError("no generation run in this state")
        return run

    @property
    def tool_arguments(self) -> Mapping[str, JSON]:
        event = self.event
        return event.arguments if isinstance(event, ToolCalled) else {}

    @property
    def receipt(self) -> Receipt | None:
        result: Receipt | None = self._cached(
            "receipt", lambda: read_session(self.services.tree.entries).receipt
        )
        return result

    def captured_parent(self) -> Sequence[Entry] | None:
        """M24: the direct parent's branch as captured at handoff — ``None`` without a
        receipt, or when the parent file is missing or its captured branch was rewritten."""

        def compute() -> Sequence[Entry] | None:
            receipt = self.receipt
            if receipt is None:
                return None
            branch = self.services.parents.parent_branch(receipt.parent_file, receipt.captured_leaf)
            if branch is None:
                return None
            ids = (e.id for e in branch if e.id is not None)
            return branch if branch_digest(ids) == receipt.digest else None

        result: Sequence[Entry] | None = self._cached("captured_parent", compute)
        return result

    def attempts_in_hour(self) -> int:
        """``attemptsInHour`` (Q5): automatic preparations started in the rolling hour."""
        return sum(1 for t in self.state.auto.attempts if self.now - t < HOUR_MS)

    def cooling(self) -> bool:
        auto = self.state.auto
        if auto.next_eligible_at is not None and self.now < auto.next_eligible_at:
            return True
        return self.attempts_in_hour() >= AUTO_MAX_PER_HOUR

    def takeover_recorded(self) -> bool:
        result: bool = self._cached(
            "takeover", lambda: read_session(self.services.tree.entries).takeover_sent
        )
        return result

    def memo_branch_memory(self) -> BranchMemory:
        """M15: the branch replayed (a handoff target starts from its inherited notes)."""

        def compute() -> BranchMemory:
            receipt = self.receipt
            inherited = inherited_notes(receipt.package) if receipt is not None else None
            return read_branch(self.branch, inherited) if inherited else read_branch(self.branch)

        result: BranchMemory = self._cached("branch_memory", compute)
        return result

    def candidate(self) -> Candidate:
        """The current reply validated against this batch (M31)."""

        def compute() -> Candidate:
            run = self.generation
            event = self.event
            text = event.reply.text if isinstance(event, GenerationReplied) else ""
            cited = {s.id for s in self.sources}
            for note in run.notes.notes:
                cited.update(note.sources)
            return validate(run, text, frozenset(cited), self.state.branch.files, self.budgets)

        result: Candidate = self._cached("candidate", compute)
        return result

    def growth(self) -> int | None:
        """M54–M55: growth since a valid baseline (same session, model, no compaction)."""
        base, tokens = self.state.baseline, self.ctx.tokens
        if base is None or tokens is None:
            return None
        valid = (base.session_id, base.model, base.compactions) == (
            self.state.session_id,
            self.ctx.model,
            self.state.compactions,
        )
        return tokens - base.tokens if valid else None

    def leaf_descends_from(self, entry_id: str | None) -> bool:
        """``entry_id`` is the leaf or one of its ancestors (plain appends keep it so)."""
        return entry_id is None or entry_id in self.branch_ids
