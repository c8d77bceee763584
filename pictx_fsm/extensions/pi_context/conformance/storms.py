"""Overflow storms (failure modes 1 and 5): overflows and recoveries that make no progress.

Definitions and thresholds (decided here; the spec asks for "no loop without progress" and
"≤ 1 recovery per overflow episode", R36):

- an **overflow** is an assistant message with ``stopReason: "error"`` whose ``errorMessage``
  matches R33's overflow patterns (Pi 0.87 list; the model's context window is not in the file,
  so silent and length overflows are not detected);
- a **recovery** is a boundary — a compaction or a valid reset marker — right after an
  overflow (only metadata such as Pi's ``context_edit`` between them): Pi's overflow
  compaction and pi-context's overflow reset are appended there, while a manual ``/compact``
  or ``/wipe-memory`` comes after other entries and is not counted;
- an **episode** starts at an overflow and collects the following overflows and boundaries on
  the branch until **progress** (an assistant message that is neither an error nor aborted) or
  until :data:`EPISODE_GAP_SECONDS` pass between two members (compaction summaries of large
  contexts take minutes; an hour-later overflow is a new episode);
- an episode with at least two recoveries and two overflows is a **storm** (error, FM1);
- the second and later recovery episodes on one branch are **repeated recoveries** (info,
  FM5): progress separates them, so each recovery did its job (one compact-and-retry per
  overflow, R36) — worth knowing (the session keeps reaching the limit before the threshold
  compaction or reset), not a defect;
- a recovery compaction whose ``tokensBefore`` is below :data:`TINY_TOKENS_BEFORE`, or not
  below the previous compaction's in the same episode, is **ineffective** (warning): compacting
  that little cannot cure the overflow — the irreducible floor fills the window (FM5);
- a compaction whose summary is empty or a template of placeholders ("(none)") is reported for
  every compaction, recovery or not (warning): history was dropped and nothing kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Final

import attrs
from attrs import frozen

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import Finding
from pictx_fsm.conformance.walk import NO_FINDINGS, Step
from pictx_fsm.extensions.pi_context.conformance import kinds as K
from pictx_fsm.extensions.pi_context.conformance.roles import (
    MARKER,
    METADATA,
    is_native_compaction,
    role_of,
)
from pictx_fsm.host.overflow import PI_0_87, OverflowPatterns
from pictx_fsm.session.entries import CompactionEntry, Entry, MessageEntry
from pictx_fsm.session.tree import TreeNode

__all__ = [
    "EMPTY_TEMPLATE_RATIO",
    "EPISODE_GAP_SECONDS",
    "TINY_TOKENS_BEFORE",
    "EmptySummaryCheck",
    "Episode",
    "StormCheck",
    "StormState",
    "is_empty_summary",
]

EPISODE_GAP_SECONDS: Final = 600.0
TINY_TOKENS_BEFORE: Final = 1000
EMPTY_TEMPLATE_RATIO: Final = 0.8
"""A summary is an empty template when at least this share of its content lines are
placeholders such as ``(none)``."""
_NOT_PROGRESS: Final = frozenset({"error", "aborted"})


@frozen(kw_only=True)
class Episode:
    members: tuple[TreeNode, ...]
    overflows: int
    boundaries: tuple[TreeNode, ...]
    last_time: datetime | None
    armed: bool = True
    """The last entry that was not metadata is an overflow: a boundary now is its recovery."""


@frozen(kw_only=True)
class StormState:
    episode: Episode | None = None
    last_recovery: TreeNode | None = None
    recoveries: int = 0


class StormCheck:
    """Storms, repeated recoveries and ineffective recovery compactions (module docstring)."""

    def __init__(self, patterns: OverflowPatterns = PI_0_87) -> None:
        self.patterns = patterns

    def start(self, ctx: AuditContext) -> StormState:
        return StormState()

    def step(self, state: StormState, node: TreeNode, ctx: AuditContext) -> Step:
        overflow = _is_overflow(node, self.patterns)
        if state.episode is None and not overflow:
            return state, NO_FINDINGS  # the common case: no timestamp parsing
        found: list[Finding] = []
        when = _time(node)
        if state.episode is not None and _too_late(state.episode, when):
            state, found = _close(state, ctx)
        if overflow:
            if state.episode is None:
                started = Episode(members=(node,), overflows=1, boundaries=(), last_time=when)
                return attrs.evolve(state, episode=started), found
            return attrs.evolve(state, episode=_join(state.episode, node, when, 1)), found
        episode = state.episode
        if episode is None:
            return state, found
        if episode.armed and _is_boundary(node, ctx):
            found += _ineffective(episode, node, ctx)
            episode = _join(episode, node, when, 0)
            episode = attrs.evolve(episode, boundaries=(*episode.boundaries, node), armed=False)
            return attrs.evolve(state, episode=episode), found
        if _is_progress(node):
            state, closing = _close(state, ctx)
            return state, found + closing
        if episode.armed and role_of(node, ctx) is not METADATA:
            return attrs.evolve(state, episode=attrs.evolve(episode, armed=False)), found
        return state, found

    def end(self, state: StormState, leaf: TreeNode, ctx: AuditContext) -> list[Finding]:
        return _close(state, ctx)[1]


def _join(episode: Episode, node: TreeNode, when: datetime | None, overflow: int) -> Episode:
    return attrs.evolve(
        episode,
        members=(*episode.members, node),
        overflows=episode.overflows + overflow,
        last_time=when or episode.last_time,
        armed=bool(overflow),
    )


def _close(state: StormState, ctx: AuditContext) -> tuple[StormState, list[Finding]]:
    episode = state.episode
    if episode is None:
        return state, []
    found = []
    if len(episode.boundaries) >= 2 and episode.overflows >= 2:
        found.append(_storm(episode, ctx))
    if not episode.boundaries:
        return StormState(last_recovery=state.last_recovery, recoveries=state.recoveries), found
    first = episode.boundaries[0]
    if state.last_recovery is not None:
        found.append(_repeated(first, state.last_recovery, state.recoveries + 1, ctx))
    return StormState(last_recovery=first, recoveries=state.recoveries + 1), found


def _storm(episode: Episode, ctx: AuditContext) -> Finding:
    members = episode.members
    span = _span(members)
    tokens = [_tokens_before(node) for node in episode.boundaries]
    shown = " → ".join("?" if t is None else str(t) for t in tokens)
    message = (
        f"{episode.overflows} overflow errors and {len(episode.boundaries)} recoveries"
        f"{span} without a successful reply (tokensBefore {shown})"
    )
    return ctx.finding(K.OVERFLOW_STORM, message, members)


def _repeated(first: TreeNode, previous: TreeNode, count: int, ctx: AuditContext) -> Finding:
    before, now = _tokens_before(previous), _tokens_before(first)
    tokens = "" if before is None or now is None else f"; tokensBefore {before} → {now}"
    message = (
        f"overflow recovery #{count} on this branch (previous at {ctx.ref(previous).text()}"
        f"{tokens}): the context keeps overflowing"
    )
    return ctx.finding(K.REPEATED_OVERFLOW_RECOVERY, message, [first, previous])


def _ineffective(episode: Episode, node: TreeNode, ctx: AuditContext) -> list[Finding]:
    tokens = _tokens_before(node)
    if tokens is None:
        return []
    earlier = [t for t in map(_tokens_before, episode.boundaries) if t is not None]
    previous = earlier[-1] if earlier else None
    if tokens < TINY_TOKENS_BEFORE:
        why = f"tokensBefore {tokens} < {TINY_TOKENS_BEFORE}: too little to compact"
    elif previous is not None and tokens >= previous:
        why = f"tokensBefore {tokens} did not fall below the previous recovery's {previous}"
    else:
        return []
    message = f"overflow recovery compaction cannot cure the overflow ({why})"
    return [ctx.finding(K.INEFFECTIVE_COMPACTION, message, [node, episode.members[0]])]


# --------------------------------------------------------------------------------------------
# Entry predicates


def _is_overflow(node: TreeNode, patterns: OverflowPatterns) -> bool:
    entry = node.entry
    if not isinstance(entry, MessageEntry) or entry.message.role != "assistant":
        return False
    message = entry.message
    if message.stop_reason != "error" or message.error_message is None:
        return False
    return patterns.is_overflow_error(message.error_message, message.provider)


def _is_boundary(node: TreeNode, ctx: AuditContext) -> bool:
    return isinstance(node.entry, CompactionEntry) or role_of(node, ctx) is MARKER


def _is_progress(node: TreeNode) -> bool:
    entry = node.entry
    if not isinstance(entry, MessageEntry) or entry.message.role != "assistant":
        return False
    return entry.message.stop_reason not in _NOT_PROGRESS


def _tokens_before(node: TreeNode) -> int | None:
    entry = node.entry
    if not isinstance(entry, CompactionEntry):
        return None
    value = entry.tokens_before
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _time(node: TreeNode) -> datetime | None:
    try:
        return datetime.fromisoformat(node.entry.timestamp)
    except (ValueError, TypeError):
        return None


def _too_late(episode: Episode, when: datetime | None) -> bool:
    if when is None or episode.last_time is None:
        return False
    try:
        return (when - episode.last_time).total_seconds() > EPISODE_GAP_SECONDS
    except TypeError:  # naive and aware timestamps mixed
        return False


def _span(members: Sequence[TreeNode]) -> str:
    first, last = _time(members[0]), _time(members[-1])
    if first is None or last is None:
        return ""
    try:
        return f" within {(last - first).total_seconds():.0f} s"
    except TypeError:
        return ""


# --------------------------------------------------------------------------------------------
# Empty summaries

_HEADING: Final = re.compile(r"^\s*#")
_LIST_MARK: Final = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*")
_PLACEHOLDER: Final = re.compile(r"^\(?\s*(?:none|n/?a|nothing|empty|-+)\s*\)?\.?$", re.I)


def is_empty_summary(summary: str) -> bool:
    """Empty, or a template whose content lines are (nearly) all placeholders."""
    content = [
        _LIST_MARK.sub("", line).strip()
        for line in summary.splitlines()
        if line.strip() and not _HEADING.match(line)
    ]
    if not content:
        return True
    placeholders = sum(1 for line in content if _PLACEHOLDER.match(line))
    return placeholders >= EMPTY_TEMPLATE_RATIO * len(content)


class EmptySummaryCheck:
    """Every native compaction keeps a real summary (module docstring)."""

    entry_types: Final = frozenset({CompactionEntry.TYPE})

    def check(self, entry: Entry, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        if not is_native_compaction(entry) or not isinstance(entry, CompactionEntry):
            return []
        if not is_empty_summary(entry.summary):
            return []
        what = "empty" if not entry.summary.strip() else "an empty template ('(none)' sections)"
        message = f"compaction summary is {what}: the compacted history is lost"
        return [ctx.finding(K.EMPTY_COMPACTION_SUMMARY, message, [node])]
