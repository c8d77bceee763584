"""The invariants checked after every step of a generated run (issue 4, item 3).

Each invariant names the lifecycle rule or failure mode it guards and is checked against what
the world *observably* did — the session files, the model session's log (provider requests,
notices, deliveries, extension errors) and the runtimes' audit logs — never against the
machines' own state, so a wrong transition cannot excuse itself. Checks are incremental:
each keeps a cursor into the logs it reads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from attrs import frozen

from pictx_fsm.audit.log import GENESIS
from pictx_fsm.extensions.pi_context.kit.actions import is_boundary_entry
from pictx_fsm.extensions.pi_context.kit.contents import CONTENT_INVARIANTS
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import NotesConfined
from pictx_fsm.extensions.pi_context.kit.outcomes import OUTCOME_INVARIANTS
from pictx_fsm.extensions.pi_context.kit.records import (
    aborted_turn,
    continues,
    markers_written,
    model_of,
    own_drafts,
)
from pictx_fsm.extensions.pi_context.kit.view import Invariant, WorldView
from pictx_fsm.extensions.pi_context.kit.walks import (
    EntryWalk,
    PerRecord,
    PerTree,
    Records,
    RecordWalk,
)
from pictx_fsm.extensions.pi_context.repair import TailKind, tail_kind
from pictx_fsm.extensions.pi_context.texts import (
    GUIDANCE_TYPE,
    NOTICE_GUIDANCE_RECORDED,
    NOTICE_MEMORY_CLEARED,
    NOTICE_WARNING_RECORDED,
    PI_CONTEXT_COMMAND,
    WARNING_TYPE,
    WIPE_MEMORY_COMMAND,
    Profile,
)
from pictx_fsm.extensions.pi_context.windows import (
    WindowIndex,
    boot_window_id,
    is_continuation,
    window_id_of_marker,
)
from pictx_fsm.fastjson import dumper
from pictx_fsm.host.overflow import is_overflow_like
from pictx_fsm.session.entries import CompactionEntry, CustomMessageEntry, MessageEntry
from pictx_fsm.session.projection import context_messages, convert_message
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.testing.invariants import Violation

_PREFIX = NOTICE_MEMORY_CLEARED.split("{", 1)[0]


def _pending_tool_calls(node: TreeNode) -> tuple[str, int] | None:
    """The nearest assistant ancestor with tool calls whose results are not all on the path
    between it and ``node`` (exclusive), as (entry id, missing count)."""
    results = 0
    for ancestor in node.ancestors():
        if ancestor is node:
            continue
        entry = ancestor.entry
        if isinstance(entry, MessageEntry):
            role = entry.message.role
            if role == "toolResult":
                results += 1
            elif role == "assistant":
                calls = len(entry.message.tool_calls())
                missing = calls - results
                return (ancestor.id, missing) if missing > 0 else None
            else:
                return None
    return None


class ResetTail(PerTree):
    name = "reset_tail"
    rule = "R28, R35, R59, D1, D2, FM19 (rank 5)"
    doc = (
        "(a) every committed reset is exactly marker → boot (same windowId, hidden) → "
        "continuation, and no marker, boot, continuation or reminder sits between a tool "
        "call and its result"
    )

    def __init__(self) -> None:
        super().__init__()
        self._parents: set[tuple[int, str]] = set()
        """(tree, parent id) of every entry that already has a child in that tree."""

    def copied(self, tree: SessionTree, node: TreeNode) -> None:
        if node.parent is not None:
            self._parents.add((id(tree), node.parent.id))

    def check_node(self, world: WorldView, tree: SessionTree, node: TreeNode) -> list[Violation]:
        found: list[Violation] = []
        entry = node.entry
        if is_boundary_entry(entry):
            pending = _pending_tool_calls(node)
            if pending is not None:
                found.append(
                    self.violation(
                        f"{entry.type} {node.id} appended while {pending[1]} result(s) of "
                        f"the tool calls in {pending[0]} were still missing"
                    )
                )
        parent = node.parent
        if parent is None or (id(tree), parent.id) in self._parents:
            return found  # a later child is another branch (navigation), not the commit
        self._parents.add((id(tree), parent.id))
        if world.lifecycle_down:
            return found  # nothing can complete a tail the host branched while it is down
        window_id = window_id_of_marker(parent.entry)
        if window_id is not None and not (boot_window_id(entry) == window_id and entry.hidden):  # type: ignore[union-attr]
            found.append(
                self.violation(
                    f"marker {parent.id} is followed by {entry.type} {node.id}, not its boot"
                )
            )
        grand = parent.parent
        wants_continuation = world.profile is not Profile.V0_25_0
        if (
            wants_continuation
            and boot_window_id(parent.entry) is not None
            and grand is not None
            and window_id_of_marker(grand.entry) == boot_window_id(parent.entry)
            and not is_continuation(entry)
        ):
            found.append(
                self.violation(
                    f"boot {parent.id} is followed by {entry.type} {node.id}, not the continuation"
                )
            )
        return found


class OneResetPerBatch(PerRecord):
    name = "one_reset_per_batch"
    rule = "R30, FM14–16 (rank 3)"
    doc = "(b) repeated wipe_memory in one tool batch gives one reset: at most one marker per hook"

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        markers = markers_written(record)
        if len(markers) <= 1:
            return []
        return [self.violation(f"{record['hook']} #{record['seq']} wrote {len(markers)} markers")]


class NothingAfterAbort(PerRecord):
    name = "nothing_after_abort"
    rule = "R21–R23, R35"
    doc = "(c) an aborted turn commits nothing and continues nothing; no settle boundary after it"

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        if record["hook"] not in ("turn_end", "agent_before_settle"):
            return []
        if not aborted_turn(record) or not (own_drafts(record) or continues(record)):
            return []
        return [
            self.violation(
                f"{record['hook']} #{record['seq']} of an aborted run added "
                f"{len(own_drafts(record))} draft(s), continue={continues(record)}"
            )
        ]


_keyed: Final = dumper(sort_keys=True, default=str)
"""``json.dumps(value, sort_keys=True, default=str)``, built once."""


def _message_key(message: Any) -> str:
    return _keyed(message)


def _message_shape(message: Mapping[str, Any]) -> str:
    """A part of :func:`_message_key`, cheap to make: equal keys have equal shapes, so a
    message whose shape no erased message has is not one (most are not, and most are long)."""
    return _keyed([message.get("role"), message.get("timestamp")])


class NoErasedHistory(Invariant):
    name = "no_erased_history"
    rule = "R67, R68, R61, FM17–18 (rank 4)"
    doc = (
        "(d) after a marker, no provider request contains an entry from before it other than "
        "the folded system prefix — on every path (send, reload, fork, tree, off)"
    )

    def __init__(self) -> None:
        self._seen = 0
        self._erased: dict[int, tuple[TreeNode, Erased]] = {}
        """Per marker node: the messages before it (its ancestors never change)."""

    def check(self, world: WorldView) -> list[Violation]:
        session = world.session
        requests = session.log.requests
        found = []
        for index, request in enumerate(requests[self._seen :], start=self._seen):
            leaf = session.tree.find(request.leaf_id) if request.leaf_id else None
            window = None if leaf is None else WindowIndex.of(session.tree).window_of(leaf)
            if window is None or window.marker_id is None:
                continue
            erased = self._erased_before(session.tree.node(window.marker_id))
            for message in request.messages:
                if message.get("role") != "system" and erased.holds(message):
                    found.append(
                        self.violation(
                            f"request {index} in window {window.window_id} carries erased "
                            f"{message.get('role')} message from before marker "
                            f"{window.marker_id}"
                        )
                    )
                    break
        self._seen = len(requests)
        return found

    def _erased_before(self, marker: TreeNode) -> Erased:
        known = self._erased.get(id(marker))
        if known is None or known[0] is not marker:
            known = self._erased[id(marker)] = (marker, _erased_messages(marker))
        return known[1]

    def residual(self, world: WorldView) -> object:
        """Nothing: a cursor into the requests, and a cache of what the files hold."""
        return None


@frozen
class Erased:
    """The provider messages of the entries before a marker: their keys, and their shapes."""

    keys: frozenset[str]
    shapes: frozenset[str]

    def holds(self, message: Mapping[str, Any]) -> bool:
        return _message_shape(message) in self.shapes and _message_key(message) in self.keys


def _erased_messages(marker: TreeNode) -> Erased:
    before = marker.path()[:-1]
    erased = []
    for message in context_messages([n.entry for n in before]):
        if message.get("role") == "system":
            continue
        converted = convert_message(message)
        if converted is not None:
            erased.append(converted)
    return Erased(
        keys=frozenset(map(_message_key, erased)), shapes=frozenset(map(_message_shape, erased))
    )


_BEHAVIOUR = {"steer": "steer", "followUp": "follow_up"}
"""Pi's ``streamingBehavior`` of a queued input → the delivery kind it becomes."""


class QueuedOnce(Invariant):
    name = "queued_once_in_order"
    rule = "FM10–13 (rank 2), R32"
    doc = "(e) every queued steer/follow-up message is delivered exactly once, in order"

    def __init__(self) -> None:
        self._events = 0
        self._deliveries = 0
        self._queued: dict[str, list[str]] = {"steer": [], "follow_up": []}
        self._delivered: dict[str, list[str]] = {"steer": [], "follow_up": []}

    def check(self, world: WorldView) -> list[Violation]:
        log = world.session.log
        for event in log.events[self._events :]:
            kind = _BEHAVIOUR.get(str(event.detail.get("streamingBehavior")))
            if event.name == "input" and kind is not None:
                self._queued[kind].append(str(event.detail.get("text")))
        self._events = len(log.events)
        found = [self._delivery(d.kind, d.text) for d in log.deliveries[self._deliveries :]]
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

    def residual(self, world: WorldView) -> object:
        """The queued messages not delivered yet, per kind, and those of them already
        delivered once (a later delivery would be a duplicate)."""
        pending = {
            kind: queued[len(self._delivered[kind]) :] for kind, queued in self._queued.items()
        }
        return tuple(
            (kind, tuple(texts), frozenset(t for t in texts if t in self._delivered[kind]))
            for kind, texts in sorted(pending.items())
        )


class OverflowBounded(PerRecord):
    name = "overflow_bounded"
    rule = "R33–R38, FM1–5 (rank 1), FM6"
    doc = "(f) at most one overflow recovery per failure chain; ordinary errors never reset"

    def __init__(self) -> None:
        super().__init__()
        self._chain: dict[int, tuple[bool, int]] = {}

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        armed, recoveries = self._chain.get(runtime, (False, 0))
        armed, recoveries, problem = _overflow_step(record, armed, recoveries)
        self._chain[runtime] = (armed, recoveries)
        return [self.violation(problem)] if problem else []

    def residual(self, world: WorldView) -> object:
        """The failure chain of the live runtime (the older ones never decide again)."""
        return self._chain.get(len(world.audits) - 1, (False, 0))


def _overflow_step(
    record: Mapping[str, Any], armed: bool, recoveries: int
) -> tuple[bool, int, str]:
    hook = record["hook"]
    event = record.get("event", {})
    if hook == "turn_end":
        message = event.get("message") or {}
        model = (record.get("ctx") or {}).get("model")
        if aborted_turn(record):
            return False, 0, ""
        if markers_written(record) and event.get("outcome") == "error":
            return armed, recoveries, f"turn_end #{record['seq']} reset on an error turn"
        if is_overflow_like(message, model_of(model)):
            return True, recoveries, ""
        if event.get("outcome") != "error":
            return False, 0, ""
        return armed, recoveries, ""
    if hook == "agent_before_settle" and markers_written(record):
        if not armed:
            return (
                armed,
                recoveries,
                f"before_settle #{record['seq']} recovered without an overflow",
            )
        if recoveries >= 1:
            return (
                armed,
                recoveries + 1,
                f"before_settle #{record['seq']} recovered twice in one chain",
            )
        return armed, recoveries + 1, ""
    if hook in ("agent_settled", "session_start", "session_tree", "session_shutdown"):
        return False, 0, ""
    if hook == "agent_end" and (record.get("ctx") or {}).get("signal_aborted"):
        return False, 0, ""
    if hook == "command" and _clears_chain(event):
        return False, 0, ""
    return armed, recoveries, ""


def _clears_chain(command: Mapping[str, Any]) -> bool:
    """R37: ``/pi-context off`` and ``/wipe-memory`` clear the failure chain, so a recovery
    after ``off`` then ``on`` belongs to a new chain."""
    name, args = command.get("name"), str(command.get("args") or "").strip()
    return name == WIPE_MEMORY_COMMAND or (name == PI_CONTEXT_COMMAND and args == "off")


class HonestNotices(Invariant):
    name = "honest_notices"
    rule = "R54, R56, R63, D3"
    doc = (
        "(g) the reset notice only after the tail is committed, once; guidance and warning at "
        "most once per window per branch, never announced for an uncommitted request"
    )

    def __init__(self) -> None:
        self._seen = 0
        self._announced: set[str] = set()

    def check(self, world: WorldView) -> list[Violation]:
        session = world.session
        notices = session.log.notices
        found: list[Violation] = []
        for notice in notices[self._seen :]:
            leaf = session.tree.find(notice.leaf_id) if notice.leaf_id else None
            found.extend(self._check_notice(world, notice.message, leaf, session.tree))
        self._seen = len(notices)
        return found

    def _check_notice(
        self, world: WorldView, message: str, leaf: TreeNode | None, tree: SessionTree
    ) -> list[Violation]:
        windows = WindowIndex.of(tree)
        if message.startswith(_PREFIX):
            window_id = message[len(_PREFIX) :]
            problems = []
            if window_id in self._announced:
                problems.append(self.violation(f"reset {window_id} announced twice"))
            self._announced.add(window_id)
            if leaf is None or not _tail_committed(windows, leaf, window_id, world.profile):
                problems.append(
                    self.violation(f"reset {window_id} announced before its tail was committed")
                )
            return problems
        kinds = {NOTICE_GUIDANCE_RECORDED: GUIDANCE_TYPE, NOTICE_WARNING_RECORDED: WARNING_TYPE}
        kind = kinds.get(message)
        if kind is not None and (leaf is None or kind not in windows.at(leaf).message_types):
            return [self.violation(f"{kind} announced but not in the current window")]
        return []

    def residual(self, world: WorldView) -> object:
        """The resets already announced (announcing one again is a violation)."""
        return frozenset(self._announced)


def _tail_committed(windows: WindowIndex, leaf: TreeNode, window_id: str, profile: Profile) -> bool:
    for window in windows.window_of(leaf).chain():
        if window.window_id == window_id and not window.is_root:
            node = leaf
            while windows.window_of(node) is not window and node.parent is not None:
                node = node.parent
            facts = windows.at(node)
            if facts.window is not window or facts.boot_id is None:
                return False
            return facts.continued or not profile.notice_needs_continuation
    return False


class RemindersOncePerWindow(PerTree):
    name = "reminders_once_per_window"
    rule = "R56"
    doc = "(g) guidance and warning each persist at most once per window per branch"

    def check_node(self, world: WorldView, tree: SessionTree, node: TreeNode) -> list[Violation]:
        entry = node.entry
        if not isinstance(entry, CustomMessageEntry):
            return []
        if entry.custom_type not in (GUIDANCE_TYPE, WARNING_TYPE):
            return []
        parent = node.parent
        windows = WindowIndex.of(tree)
        if parent is None or windows.window_of(parent) is not windows.window_of(node):
            return []
        if entry.custom_type in windows.at(parent).message_types:
            window_id = windows.window_of(node).window_id
            return [self.violation(f"second {entry.custom_type} {node.id} in window {window_id}")]
        return []


class NarrowRepair(PerTree):
    name = "narrow_repair"
    rule = "R65, D4, FM20 (rank 7)"
    doc = (
        "(h) repair is idempotent and narrow: a boot or continuation only ever completes a "
        "bare tail (never after later work, never twice)"
    )

    def check_node(self, world: WorldView, tree: SessionTree, node: TreeNode) -> list[Violation]:
        windows = WindowIndex.of(tree)
        window = windows.window_of(node)
        if window.marker_id is None or node.id == window.marker_id:
            return []
        entry = node.entry
        kind = tail_kind(entry, window.window_id)
        if kind not in (TailKind.BOOT, TailKind.CONTINUATION):
            return []
        tail = windows.tail_since_marker(node)[:-1]
        earlier = [tail_kind(n.entry, window.window_id) for n in tail]
        allowed = {TailKind.METADATA} | (
            {TailKind.BOOT} if kind is TailKind.CONTINUATION else set()
        )
        extra = [k.value for k in earlier if k not in allowed]
        if extra:
            return [
                self.violation(
                    f"{kind.value} {node.id} appended after {', '.join(extra)} "
                    f"in window {window.window_id}"
                )
            ]
        return []


class OffKeepsBoundary(PerTree):
    name = "off_keeps_boundary"
    rule = "R61, R62"
    doc = (
        "(i) off never removes a boundary: no native compaction is ever written on a marked branch"
    )

    def check_node(self, world: WorldView, tree: SessionTree, node: TreeNode) -> list[Violation]:
        if not isinstance(node.entry, CompactionEntry):
            return []
        marker_id = WindowIndex.of(tree).window_of(node).marker_id
        if marker_id is not None:
            return [self.violation(f"compaction {node.id} written after marker {marker_id}")]
        return []


class AuditChains(PerRecord):
    name = "audit_chains"
    rule = "audit log (issue 3 item 4)"
    doc = "(j) every runtime's audit chain verifies: each record once, when it is appended"

    def __init__(self) -> None:
        super().__init__()
        self._heads: dict[int, tuple[int, str | None]] = {}
        """Per runtime: records verified so far and the last hash (``None`` once broken)."""

    def check_records(self, world: WorldView, fresh: Records) -> list[Violation]:
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

    def residual(self, world: WorldView) -> object:
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


class NoLifecycleErrors(Invariant):
    name = "no_lifecycle_errors"
    rule = "strict machines (issue 3 item 1)"
    doc = "the lifecycle never raises in a host (an illegal event would surface here)"

    def __init__(self) -> None:
        self._seen = 0

    def check(self, world: WorldView) -> list[Violation]:
        errors = world.session.log.errors
        found = [
            self.violation(f"{e.event}: {e.error}")
            for e in errors[self._seen :]
            if e.extension == "pi-context" or "continuation without runnable" in e.error
        ]
        self._seen = len(errors)
        return found

    def residual(self, world: WorldView) -> object:
        """Nothing: a cursor into what the world logs."""
        return None


class RunsSettle(Invariant):
    name = "runs_settle"
    rule = "liveness: FM6–9 (rank 6)"
    doc = "(k) every run ends: no action leaves Pi stepping for ever (turns, retries, resets)"

    def __init__(self) -> None:
        self._seen = 0

    def check(self, world: WorldView) -> list[Violation]:
        # A world that does not record endless runs (the context-management world lets
        # EndlessRun surface as a crash) has none to report.
        endless: list[int] = getattr(world, "endless_runs", [])
        found = [
            self.violation(f"the run of action {serial} never settled (a host step bound ran out)")
            for serial in endless[self._seen :]
        ]
        self._seen = len(endless)
        return found

    def residual(self, world: WorldView) -> object:
        """Nothing: a cursor into what the world logs."""
        return None


class LeasesAgree(Invariant):
    name = "leases_agree"
    rule = "the bridge's lease on quiet hooks (issue 8 item 7)"
    doc = (
        "a hook the bridge answered under a lease is what the lifecycle decided: no value, no "
        "effect, nothing staged or requested, the same projection (pictx_fsm.hosts.pi.lease)"
    )

    def __init__(self) -> None:
        self._seen = 0

    def check(self, world: WorldView) -> list[Violation]:
        # A world without the bridge twin (the context-management world) leases nothing.
        found: list[str] = getattr(getattr(world, "extension", None), "disagreements", [])
        fresh = [self.violation(detail) for detail in found[self._seen :]]
        self._seen = len(found)
        return fresh

    def residual(self, world: WorldView) -> object:
        """Nothing: a cursor into what the world logs."""
        return None


INVARIANT_TYPES: Sequence[type[Invariant]] = (
    ResetTail,
    OneResetPerBatch,
    NothingAfterAbort,
    NoErasedHistory,
    QueuedOnce,
    OverflowBounded,
    HonestNotices,
    RemindersOncePerWindow,
    NarrowRepair,
    OffKeepsBoundary,
    AuditChains,
    NoLifecycleErrors,
    RunsSettle,
    NotesConfined,
    LeasesAgree,
    *OUTCOME_INVARIANTS,
    *CONTENT_INVARIANTS,
)


class InvariantSuite:
    """Fresh instances of every invariant for one world. The per-entry and per-record
    invariants share one walk of the new entries and one of the new records."""

    def __init__(self) -> None:
        self.invariants = [cls() for cls in INVARIANT_TYPES]
        self._entries = EntryWalk()
        self._records = RecordWalk()
        self._per_tree = [i for i in self.invariants if isinstance(i, PerTree)]
        self._per_record = [i for i in self.invariants if isinstance(i, PerRecord)]
        self._others = [i for i in self.invariants if not isinstance(i, PerTree | PerRecord)]

    def check(self, world: WorldView) -> list[Violation]:
        """Every invariant, in :data:`INVARIANT_TYPES` order when any is violated (the
        first violation is the one reported); the per-entry and per-record ones only when
        something new was appended."""
        entries = self._entries.advance(world.session)
        records = self._records.advance(world.audits)
        found: list[Violation] = []
        for invariant in self._others:
            found.extend(invariant.check(world))
        for tree_invariant in self._per_tree if entries else ():
            found.extend(tree_invariant.check_entries(world, entries))
        for record_invariant in self._per_record if records else ():
            found.extend(record_invariant.check_records(world, records))
        return self._ordered(found)

    def finish(self, world: WorldView) -> list[Violation]:
        """What the promised outcomes still find owed once the world is at rest."""
        return self._ordered([v for invariant in self.invariants for v in invariant.finish(world)])

    def _ordered(self, found: list[Violation]) -> list[Violation]:
        if found:
            order = {invariant.name: index for index, invariant in enumerate(self.invariants)}
            found.sort(key=lambda violation: order[violation.invariant])
        return found

    def residual(self, world: WorldView) -> tuple[object, ...]:
        """What each invariant remembers beyond the world (the shared walks are cursors)."""
        return tuple(invariant.residual(world) for invariant in self.invariants)
