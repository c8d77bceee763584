"""The family's kit invariants: what any lifecycle extension of
the family on the model session must keep, whichever it is (pi-context, notesoup).

Each invariant is incremental: it keeps a cursor into what it reads (the session files, the
model session's log, the runtimes' decision logs) and judges only what is new.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, TypeVar

from attrs import field, frozen

from pictx_fsm.audit.log import GENESIS
from pictx_fsm.extensions.shared.kit.records import (
    aborted_turn,
    continue_flag,
    markers_written,
    own_drafts,
)
from pictx_fsm.extensions.shared.kit.view import SessionInvariant, SessionWorld
from pictx_fsm.extensions.shared.kit.walks import PerRecord, Records
from pictx_fsm.fastjson import dumper
from pictx_fsm.hosts.model import ExtensionErrorRecord
from pictx_fsm.session.entries import CustomMessageEntry
from pictx_fsm.session.projection import context_messages, convert_message
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.testing import invariants as testing_invariants
from pictx_fsm.testing.invariants import PerItem, Violation, remembering

__all__ = [
    "AuditChains",
    "Erased",
    "HonestNotices",
    "NoLifecycleErrors",
    "NothingAfterAbort",
    "OneResetPerBatch",
    "QueuedOnce",
    "RunsSettle",
    "erased_messages",
    "message_key",
    "message_shape",
]

SW = TypeVar("SW", bound=SessionWorld)
"""A world the shared invariants can read (a kit's own, with more to offer its subclasses)."""

_keyed: Final = dumper(sort_keys=True, default=str)
"""``json.dumps(value, sort_keys=True, default=str)``, built once."""


def message_key(message: Any) -> str:
    return _keyed(message)


def message_shape(message: Mapping[str, Any]) -> str:
    """A part of :func:`message_key`, cheap to make: equal keys have equal shapes, so a
    message whose shape no erased message has is not one (most are not, and most are long)."""
    return _keyed([message.get("role"), message.get("timestamp")])


@frozen
class Erased:
    """The provider messages of the entries before a marker: their keys, and their shapes."""

    keys: frozenset[str]
    shapes: frozenset[str]

    def holds(self, message: Mapping[str, Any]) -> bool:
        return message_shape(message) in self.shapes and message_key(message) in self.keys


def erased_messages(marker: TreeNode) -> Erased:
    """The provider messages of the entries before ``marker`` (system messages excepted)."""
    before = marker.path()[:-1]
    erased = []
    for message in context_messages([n.entry for n in before]):
        if message.get("role") == "system":
            continue
        converted = convert_message(message)
        if converted is not None:
            erased.append(converted)
    return Erased(
        keys=frozenset(map(message_key, erased)), shapes=frozenset(map(message_shape, erased))
    )


_BEHAVIOUR = {"steer": "steer", "followUp": "follow_up"}
"""Pi's ``streamingBehavior`` of a queued input → the delivery kind it becomes."""


def _per_kind() -> dict[str, list[str]]:
    """An empty list per delivery kind."""
    return {kind: [] for kind in _BEHAVIOUR.values()}


@remembering
class QueuedOnce(SessionInvariant):
    """(e) every queued steer/follow-up message is delivered exactly once, in order (an
    extension's own steered custom messages are not the user's queue)"""

    name = "queued_once_in_order"
    rule = "FM10–13 (rank 2), R32"

    _events: int = field(init=False, default=0)
    _deliveries: int = field(init=False, default=0)
    _queued: dict[str, list[str]] = field(init=False, factory=_per_kind)
    _delivered: dict[str, list[str]] = field(init=False, factory=_per_kind)

    def check(self, world: SessionWorld) -> list[Violation]:
        log = world.session.log
        for event in log.events[self._events :]:
            kind = _BEHAVIOUR.get(str(event.detail.get("streamingBehavior")))
            if event.name == "input" and kind is not None:
                self._queued[kind].append(str(event.detail.get("text")))
        self._events = len(log.events)
        tree = world.session.tree
        found = [
            self._delivery(d.kind, d.text)
            for d in log.deliveries[self._deliveries :]
            if not isinstance(tree.get(d.entry_id), CustomMessageEntry)
        ]
        self._deliveries = len(log.deliveries)
        # Idle with nothing left in Pi's queue (an abort keeps it for the next run): every
        # queued message must have been delivered by now.
        if world.session.is_idle and world.session.pending_messages == 0:
            for kind, queued in self._queued.items():
                lost = len(queued) - len(self._delivered[kind])
                if lost > 0:
                    found.append(self.violation(f"{lost} {kind} message(s) lost"))
        return [v for v in found if v is not None]

    def _delivery(self, kind: str, text: str) -> Violation | None:
        delivered = self._delivered.get(kind)
        if delivered is None:
            return None
        delivered.append(text)
        if delivered.count(text) > 1:
            return self.violation(f"{kind} {text[:24]!r} delivered {delivered.count(text)} times")
        queued = self._queued[kind]
        if len(queued) < len(delivered) or queued[len(delivered) - 1] != text:
            return self.violation(f"{kind} messages delivered out of order or unqueued")
        return None

    def residual(self, world: SessionWorld) -> object:
        """The queued messages not delivered yet, per kind, and those of them already
        delivered once (a later delivery would be a duplicate)."""
        pending = {
            kind: queued[len(self._delivered[kind]) :] for kind, queued in self._queued.items()
        }
        return tuple(
            (kind, tuple(texts), frozenset(t for t in texts if t in self._delivered[kind]))
            for kind, texts in sorted(pending.items())
        )


@remembering
class AuditChains(PerRecord[SessionWorld]):
    """(j) every runtime's audit chain verifies: each record once, when it is appended"""

    name = "audit_chains"
    rule = "audit log (issue 3 item 4)"

    _heads: dict[int, tuple[int, str | None]] = field(init=False, factory=dict)
    """Per runtime: records verified so far and the last hash (``None`` once broken)."""

    def check_records(self, world: SessionWorld, fresh: Records) -> list[Violation]:
        found: list[Violation] = []
        for record, runtime, line in fresh:
            count, previous = self._heads.get(runtime, (0, GENESIS))
            if previous is None:
                continue  # reported at the first broken record
            problem = _chain_problem(line, record, previous, count + 1)
            self._heads[runtime] = (count + 1, None if problem else record["hash"])
            if problem is not None:
                found.append(self.violation(f"runtime {runtime}: record {count + 1}: {problem}"))
        return found

    def residual(self, world: SessionWorld) -> object:
        """Nothing: a chain that broke was reported; an unbroken one's head is the log's own."""
        return None


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _chain_problem(line: str, record: Mapping[str, Any], previous: str, seq: int) -> str | None:
    """What breaks the chain at this record (the checks of :func:`~pictx_fsm.audit.log.verify_lines`
    that a record written in memory can fail), or ``None``. The hash is checked on the line as
    written: it covers the line without its own ``"hash"`` member, the canonical text of
    everything else (that :func:`~pictx_fsm.audit.log.record_line` writes canonical text is its
    tests' to prove, not every generated action's to encode again)."""
    digest = record.get("hash")
    member = f',"hash":"{digest}"'
    at = line.find(member) if isinstance(digest, str) else -1
    if at < 0 or _sha256_text(line[:at] + line[at + len(member) :]) != digest:
        return "record hash does not match its content"
    if record.get("prev") != previous:
        return "record does not chain to the previous hash"
    if record.get("seq") != seq:
        return f"sequence number {record.get('seq')} != {seq}"
    return None


class NoLifecycleErrors(PerItem[SessionWorld, ExtensionErrorRecord]):
    """the lifecycle never raises in a host (an illegal event would surface here)"""

    name = "no_lifecycle_errors"
    rule = "strict machines (issue 3 item 1)"

    extension: ClassVar[str] = "pi-context"
    """The extension whose errors count (a subclass names its own)."""

    def items(self, world: SessionWorld) -> Sequence[ExtensionErrorRecord]:
        return world.session.log.errors

    def judge(self, world: SessionWorld, error: ExtensionErrorRecord) -> list[Violation]:
        if error.extension == self.extension or "continuation without runnable" in error.error:
            return [self.violation(f"{error.event}: {error.error}")]
        return []


class RunsSettle(PerItem[SessionWorld, int]):
    """(k) every run ends: no action leaves Pi stepping for ever (turns, retries, resets)"""

    name = "runs_settle"
    rule = "liveness: FM6–9 (rank 6)"

    def items(self, world: SessionWorld) -> Sequence[int]:
        # A world that does not record endless runs (the context-management world lets
        # EndlessRun surface as a crash) has none to report.
        endless: list[int] = getattr(world, "endless_runs", [])
        return endless

    def judge(self, world: SessionWorld, serial: int) -> list[Violation]:
        return [
            self.violation(f"the run of action {serial} never settled (a host step bound ran out)")
        ]


class OneResetPerBatch(PerRecord[SessionWorld]):
    """Repeated reset requests in one tool batch give one reset: at most one marker per
    hook. A subclass names its extension's marker type and its rules."""

    name = "one_reset_per_batch"
    marker_type: ClassVar[str]

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        markers = markers_written(record, self.marker_type)
        if len(markers) <= 1:
            return []
        return [self.violation(f"{record['hook']} #{record['seq']} wrote {len(markers)} markers")]


class NothingAfterAbort(PerRecord[SessionWorld]):
    """An aborted turn or run commits nothing and continues nothing (a subclass names its
    extension's rules)."""

    name = "nothing_after_abort"

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        if record["hook"] not in ("turn_end", "agent_before_settle") or not aborted_turn(record):
            return []
        drafts = own_drafts(record)
        continues = continue_flag(record) is True
        if not drafts and not continues:
            return []
        return [
            self.violation(
                f"{record['hook']} #{record['seq']} of an aborted run added "
                f"{len(drafts)} draft(s), continue={continues}"
            )
        ]


@remembering
class HonestNotices(testing_invariants.Invariant[SW]):
    """Each notice the extension shows, judged once against the branch it was shown on: the
    reset notice (``cleared_prefix`` and the window id) once per reset, and only once the reset
    is committed (:meth:`committed`); every other notice by :meth:`check_other`. A subclass
    names its rules, its notice and what committed means."""

    name = "honest_notices"
    cleared_prefix: ClassVar[str]

    _seen: int = field(init=False, default=0)
    _announced: set[str] = field(init=False, factory=set)

    def check(self, world: SW) -> list[Violation]:
        session = world.session
        notices = session.log.notices
        found: list[Violation] = []
        for notice in notices[self._seen :]:
            leaf = session.tree.find(notice.leaf_id) if notice.leaf_id else None
            found.extend(self._check_notice(world, notice.message, leaf, session.tree))
        self._seen = len(notices)
        return found

    def _check_notice(
        self, world: SW, message: str, leaf: TreeNode | None, tree: SessionTree
    ) -> list[Violation]:
        if not message.startswith(self.cleared_prefix):
            return self.check_other(world, message, leaf, tree)
        window_id = message[len(self.cleared_prefix) :]
        problems = []
        if window_id in self._announced:
            problems.append(self.violation(f"reset {window_id} announced twice"))
        self._announced.add(window_id)
        if leaf is None or not self.committed(world, tree, leaf, window_id):
            problems.append(self.violation(f"reset {window_id} announced before it was committed"))
        return problems

    def committed(self, world: SW, tree: SessionTree, leaf: TreeNode, window_id: str) -> bool:
        raise NotImplementedError

    def check_other(
        self, world: SW, message: str, leaf: TreeNode | None, tree: SessionTree
    ) -> list[Violation]:
        raise NotImplementedError

    def residual(self, world: SW) -> object:
        """The resets already announced (announcing one again is a violation)."""
        return frozenset(self._announced)
