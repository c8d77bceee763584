"""The invariants checked after every step of a generated run (issue 4, item 3).

Each invariant names the lifecycle rule or failure mode it guards and is checked against what
the world *observably* did — the session files, the model session's log (provider requests,
notices, deliveries, extension errors) and the runtimes' audit logs — never against the
machines' own state, so a wrong transition cannot excuse itself. Checks are incremental:
each keeps a cursor into the logs it reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import field

from pictx_fsm.extensions.pi_context.kit.actions import is_boundary_entry
from pictx_fsm.extensions.pi_context.kit.contents import CONTENT_INVARIANTS
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import NotesConfined
from pictx_fsm.extensions.pi_context.kit.outcomes import OUTCOME_INVARIANTS
from pictx_fsm.extensions.pi_context.kit.records import (
    aborted_turn,
    markers_written,
    model_of,
)
from pictx_fsm.extensions.pi_context.kit.view import WorldView
from pictx_fsm.extensions.pi_context.kit.walks import PerRecord, PerTree
from pictx_fsm.extensions.pi_context.texts import (
    GUIDANCE_TYPE,
    MARKER_TYPE,
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
from pictx_fsm.extensions.shared.facts import missing_tool_results
from pictx_fsm.extensions.shared.kit import invariants as shared_invariants
from pictx_fsm.extensions.shared.kit.invariants import (
    AuditChains,
    NoLifecycleErrors,
    QueuedOnce,
    RunsSettle,
)
from pictx_fsm.extensions.shared.kit.walks import ChildWatch, WalkedSuite
from pictx_fsm.extensions.shared.kit.windowed import ErasedRequests, family_invariants
from pictx_fsm.host.overflow import is_overflow_like
from pictx_fsm.session.entries import CompactionEntry
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.testing import invariants as testing_invariants
from pictx_fsm.testing.invariants import PerItem, Violation, remembering

__all__ = [
    "FAMILY",
    "INVARIANT_TYPES",
    "HonestNotices",
    "InvariantSuite",
    "LeasesAgree",
    "NoErasedHistory",
    "OffKeepsBoundary",
    "OverflowBounded",
    "ResetTail",
]

_PREFIX = NOTICE_MEMORY_CLEARED.split("{", 1)[0]


def _pending_tool_calls(node: TreeNode) -> tuple[str, int] | None:
    """The nearest assistant ancestor with tool calls whose results are not all on the path
    between it and ``node`` (exclusive), as (entry id, missing count)."""
    return missing_tool_results(a for a in node.ancestors() if a is not node)


@remembering
class ResetTail(PerTree):
    """(a) every committed reset is exactly marker → boot (same windowId, hidden) →
    continuation, and no marker, boot, continuation or reminder sits between a tool call and
    its result"""

    name = "reset_tail"
    rule = "R28, R35, R59, D1, D2, FM19 (rank 5)"

    _children: ChildWatch = field(init=False, factory=ChildWatch)

    def copied(self, tree: SessionTree, node: TreeNode) -> None:
        self._children.copied(tree, node)

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
        if parent is None or not self._children.first_child(tree, node):
            return found  # a later child is another branch (navigation), not the commit
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


FAMILY = family_invariants(
    __name__,
    {
        "one_reset_per_batch": (
            "R30, FM14–16 (rank 3)",
            "(b) repeated wipe_memory in one tool batch gives one reset: at most one marker "
            "per hook",
        ),
        "nothing_after_abort": (
            "R21–R23, R35",
            "(c) an aborted turn commits nothing and continues nothing; no settle boundary "
            "after it",
        ),
        "reminders_once_per_window": (
            "R56",
            "(g) guidance and warning each persist at most once per window per branch",
        ),
        "narrow_repair": (
            "R65, D4, FM20 (rank 7)",
            "(h) repair is idempotent and narrow: a boot or continuation only ever completes a "
            "bare tail (never after later work, never twice)",
        ),
    },
    marker_type=MARKER_TYPE,
    windows=WindowIndex,
    reminders={GUIDANCE_TYPE: (GUIDANCE_TYPE,), WARNING_TYPE: (WARNING_TYPE,)},
)
"""The family's invariants with pi-context's rules, marker and window index, by name."""


class NoErasedHistory(ErasedRequests):
    """(d) after a marker, no provider request contains an entry from before it other than the
    folded system prefix — on every path (send, reload, fork, tree, off)"""

    name = "no_erased_history"
    rule = "R67, R68, R61, FM17–18 (rank 4)"
    windows = WindowIndex


@remembering
class OverflowBounded(PerRecord):
    """(f) at most one overflow recovery per failure chain; ordinary errors never reset"""

    name = "overflow_bounded"
    rule = "R33–R38, FM1–5 (rank 1), FM6"

    _chain: dict[int, tuple[bool, int]] = field(init=False, factory=dict)

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


class HonestNotices(shared_invariants.HonestNotices[WorldView]):
    """(g) the reset notice only after the tail is committed, once; guidance and warning at most
    once per window per branch, never announced for an uncommitted request"""

    rule = "R54, R56, R63, D3"
    cleared_prefix = _PREFIX

    def committed(
        self, world: WorldView, tree: SessionTree, leaf: TreeNode, window_id: str
    ) -> bool:
        return _tail_committed(WindowIndex.of(tree), leaf, window_id, world.profile)

    def check_other(
        self, world: WorldView, message: str, leaf: TreeNode | None, tree: SessionTree
    ) -> list[Violation]:
        kinds = {NOTICE_GUIDANCE_RECORDED: GUIDANCE_TYPE, NOTICE_WARNING_RECORDED: WARNING_TYPE}
        kind = kinds.get(message)
        if kind is not None and (
            leaf is None or kind not in WindowIndex.of(tree).at(leaf).message_types
        ):
            return [self.violation(f"{kind} announced but not in the current window")]
        return []


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


class OffKeepsBoundary(PerTree):
    """(i) off never removes a boundary: no native compaction is ever written on a marked branch"""

    name = "off_keeps_boundary"
    rule = "R61, R62"

    def check_node(self, world: WorldView, tree: SessionTree, node: TreeNode) -> list[Violation]:
        if not isinstance(node.entry, CompactionEntry):
            return []
        marker_id = WindowIndex.of(tree).window_of(node).marker_id
        if marker_id is not None:
            return [self.violation(f"compaction {node.id} written after marker {marker_id}")]
        return []


class LeasesAgree(PerItem[WorldView, str]):
    """a hook the bridge answered under a lease is what the lifecycle decided: no value, no
    effect, nothing staged or requested, the same projection (pictx_fsm.hosts.pi.lease)"""

    name = "leases_agree"
    rule = "the bridge's lease on quiet hooks (issue 8 item 7)"

    def items(self, world: WorldView) -> Sequence[str]:
        # A world without the bridge twin (the context-management world) leases nothing.
        found: list[str] = getattr(getattr(world, "extension", None), "disagreements", [])
        return found

    def judge(self, world: WorldView, disagreement: str) -> list[Violation]:
        return [self.violation(disagreement)]


INVARIANT_TYPES: Sequence[type[testing_invariants.Invariant[Any]]] = (
    ResetTail,
    FAMILY["one_reset_per_batch"],
    FAMILY["nothing_after_abort"],
    NoErasedHistory,
    QueuedOnce,
    OverflowBounded,
    HonestNotices,
    FAMILY["reminders_once_per_window"],
    FAMILY["narrow_repair"],
    OffKeepsBoundary,
    AuditChains,
    NoLifecycleErrors,
    RunsSettle,
    NotesConfined,
    LeasesAgree,
    *OUTCOME_INVARIANTS,
    *CONTENT_INVARIANTS,
)


class InvariantSuite(WalkedSuite[WorldView]):
    """Fresh instances of every invariant for one world. The per-entry and per-record
    invariants share one walk of the new entries and one of the new records."""

    def __init__(self) -> None:
        super().__init__(INVARIANT_TYPES)
