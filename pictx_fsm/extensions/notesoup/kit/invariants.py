"""notesoup's invariants, checked after every action of a generated run.

Each names the rule it guards and is checked against what the world observably did — the
session files, the model session's log, the runtimes' decision logs — never against the
machines' own state. Safety properties say what must never happen; promised outcomes say what
must have happened by a point the rules name (a requested reset commits at its batch's
``turn_end``; an idle ``/clear-memory`` that settles cleanly commits). The migration
invariants hold for mixed histories: a world that resumed a pi-context 0.25 session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from attrs import field

from pictx_fsm.extensions.notesoup.audit import audit_tree
from pictx_fsm.extensions.notesoup.kit.world import LEGACY_NOTES, NotesoupWorld
from pictx_fsm.extensions.notesoup.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    LEGACY_MARKER_TYPE,
    MANUAL_WIPE_TYPE,
    MARKER_TYPE,
    NOTICE_CLEAR_QUEUED_BUSY,
    NOTICE_CLEAR_QUEUED_PROMPT,
    NOTICE_CLEAR_RECEIVED_IDLE,
    NOTICE_MEMORY_CLEARED,
    NOTICE_TOGGLE_STATUS,
    NOTICE_WARNING_RECORDED,
    STATUS_REQUESTED,
    WARNING_TYPE,
)
from pictx_fsm.extensions.notesoup.windows import (
    GUIDANCE_TYPES,
    SCHEME,
    WARNING_TYPES,
    NotesoupWindows,
    boundary_committed,
    is_checkpoint,
)
from pictx_fsm.extensions.shared.facts import missing_tool_results
from pictx_fsm.extensions.shared.kit import invariants as shared_invariants
from pictx_fsm.extensions.shared.kit.invariants import (
    AuditChains,
    NoLifecycleErrors,
    QueuedOnce,
    RunsSettle,
)
from pictx_fsm.extensions.shared.kit.notes_sandbox import NotesConfined
from pictx_fsm.extensions.shared.kit.records import (
    aborted_turn,
    continue_flag,
    markers_written,
    model_of,
    result_of,
    value_of,
)
from pictx_fsm.extensions.shared.kit.walks import (
    ChildWatch,
    Fresh,
    PerRecord,
    PerTree,
    RecordWalk,
    WalkedSuite,
)
from pictx_fsm.extensions.shared.kit.windowed import ErasedRequests, family_invariants
from pictx_fsm.extensions.shared.repair import TailKind, tail_kind
from pictx_fsm.extensions.shared.windows import Window
from pictx_fsm.host import overflow
from pictx_fsm.js import is_plain_object
from pictx_fsm.session.entries import CompactionEntry, CustomMessageEntry, MessageEntry
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.testing import invariants as testing_invariants
from pictx_fsm.testing.invariants import Violation, remembering

__all__ = ["FAMILY", "INVARIANT_TYPES", "InvariantSuite"]

World = NotesoupWorld
_CLEARED: Final = NOTICE_MEMORY_CLEARED.split("{", 1)[0]
_OFF_STATUS: Final = NOTICE_TOGGLE_STATUS.split("{state}")[0] + "off "
_ARMING: Final = (NOTICE_CLEAR_RECEIVED_IDLE, NOTICE_CLEAR_QUEUED_BUSY, NOTICE_CLEAR_QUEUED_PROMPT)


class _Entries(PerTree[World]):
    """A per-entry invariant of a notesoup world."""


class _Records(PerRecord[World]):
    """A per-record invariant of a notesoup world."""


def _windows(tree: SessionTree) -> NotesoupWindows:
    return NotesoupWindows.of(tree)  # type: ignore[return-value]


def _window(tree: SessionTree, node: TreeNode) -> Window:
    return _windows(tree).window_of(node)


# -- what a decision record says ---------------------------------------------------------------


def _markers(record: Mapping[str, Any]) -> list[str]:
    return markers_written(record, MARKER_TYPE)


def _notices(record: Mapping[str, Any]) -> list[str]:
    return [
        str(e.get("message"))
        for e in result_of(record).get("effects", ())
        if e.get("effect") == "notify"
    ]


def _tool_reply(record: Mapping[str, Any]) -> str:
    value = value_of(record)
    content = value.get("content") if value else None
    if isinstance(content, list) and content and is_plain_object(content[0]):
        return str(content[0].get("text", ""))
    return ""


def _overflow_turn(record: Mapping[str, Any]) -> bool:
    message = record.get("event", {}).get("message") or {}
    model = model_of((record.get("ctx") or {}).get("model"))
    return not aborted_turn(record) and overflow.is_overflow_like(message, model)


# -- the shape of a reset (S38–S42, FM19) -------------------------------------------------------


def _pending_tool_calls(node: TreeNode) -> bool:
    return missing_tool_results(a for a in node.ancestors() if a is not node) is not None


def _notesoup_boundary(entry: object) -> bool:
    """What notesoup writes at a boundary or a repair (the manual-wipe message is input that
    starts or steers a turn, like a prompt: not a boundary entry)."""
    if isinstance(entry, CompactionEntry):
        return False
    if SCHEME.window_id_of_marker(entry) is not None:
        return getattr(entry, "custom_type", "") == MARKER_TYPE
    return (
        isinstance(entry, CustomMessageEntry)
        and entry.custom_type.startswith("notesoup/")
        and entry.custom_type != MANUAL_WIPE_TYPE
    )


@remembering
class ResetShape(_Entries):
    """every notesoup reset is an empty retain-none checkpoint → marker → hidden boot (same
    windowId) → hidden continuation, the checkpoint directly before its marker; only the
    recovery of a refused window (Q6) writes a marker without one; nothing of it sits between
    a tool call and its result"""

    name = "reset_shape"
    rule = "S38–S42, S47, FM19"

    _children: ChildWatch = field(init=False, factory=ChildWatch)
    _records: RecordWalk = field(init=False, factory=RecordWalk)
    _recovered: set[str] = field(init=False, factory=set)
    _born: set[tuple[int, str]] = field(init=False, factory=set)
    """(file, id) of every entry in the file it was first appended to: a boundary is
    judged there, not where a fork or reload copied part of it."""

    def copied(self, tree: SessionTree, node: TreeNode) -> None:
        self._children.copied(tree, node)

    def check_entries(self, world: World, fresh: Fresh) -> list[Violation]:
        for record, _, _ in self._records.advance(world.audits):
            if record["hook"] == "command":
                self._recovered.update(_markers(record))
        return super().check_entries(world, fresh)

    def check_node(self, world: World, tree: SessionTree, node: TreeNode) -> list[Violation]:
        found = []
        entry = node.entry
        if _notesoup_boundary(entry) and _pending_tool_calls(node):
            found.append(
                self.violation(f"{entry.type} {node.id} splits a tool call from its result")
            )
        window_id = SCHEME.window_id_of_marker(entry)
        if window_id is not None and getattr(entry, "custom_type", "") == MARKER_TYPE:
            parent = node.parent
            if window_id not in self._recovered and (parent is None or not is_checkpoint(parent)):
                found.append(self.violation(f"marker {node.id} ({window_id}) has no checkpoint"))
        self._born.add((id(tree), node.id))
        parent = node.parent
        if parent is None or not self._children.first_child(tree, node):
            return found  # a later child is another branch, not the commit
        if (id(tree), parent.id) not in self._born:
            return found  # a copied entry: its boundary was judged where it was written
        if is_checkpoint(parent) and not (
            SCHEME.window_id_of_marker(entry) is not None
            and getattr(entry, "custom_type", "") == MARKER_TYPE
        ):
            found.append(self.violation(f"checkpoint {parent.id} is followed by {entry.type}"))
        opened = SCHEME.window_id_of_marker(parent.entry)
        if opened is not None and getattr(parent.entry, "custom_type", "") == MARKER_TYPE:
            hidden = isinstance(entry, CustomMessageEntry) and entry.display is False
            if SCHEME.boot_window_id(entry) != opened or not hidden:
                found.append(self.violation(f"marker {parent.id} is followed by {entry.type}"))
        grand = parent.parent
        if (
            grand is not None
            and SCHEME.boot_window_id(parent.entry) is not None
            and getattr(grand.entry, "custom_type", "") == MARKER_TYPE
            and SCHEME.window_id_of_marker(grand.entry) == SCHEME.boot_window_id(parent.entry)
            and not (
                isinstance(entry, CustomMessageEntry) and entry.custom_type == CONTINUATION_TYPE
            )
        ):
            found.append(self.violation(f"boot {parent.id} is followed by {entry.type}"))
        return found

    def residual(self, world: World) -> object:
        """The markers a command's recovery wrote (read off the audit records, history):
        which entries have children, and where each was born, the files keep."""
        return frozenset(self._recovered)


def _is_continuation(entry: object) -> bool:
    return isinstance(entry, CustomMessageEntry) and entry.custom_type == CONTINUATION_TYPE


# -- erased history (S41, S77–S79) and its migration (S133, ours) --------------------------------


class _ErasedRequests(ErasedRequests):
    """No provider request in a window carries a message of an entry before the window's cut
    (its checkpoint, else its marker)."""

    legacy: ClassVar[bool] = False
    windows = NotesoupWindows

    def cut(self, tree: SessionTree, window: Window) -> TreeNode | None:
        if window.is_root or (window.marker_type == LEGACY_MARKER_TYPE) != self.legacy:
            return None
        marker = tree.node(str(window.marker_id))
        parent = marker.parent
        return parent if parent is not None and is_checkpoint(parent) else marker


class NoErasedHistory(_ErasedRequests):
    """after a notesoup marker, no provider request contains anything from before its checkpoint
    (or, for a marker-only window, before its marker) but the folded system head — on every
    path (send, reload, fork, tree, off)"""

    name = "no_erased_history"
    rule = "S41, S77–S79, S83, FM17–18"


class LegacyHistoryStaysErased(_ErasedRequests):
    """a resumed pi-context 0.25 session keeps its windows: no provider request carries a
    message from behind a 0.25 marker"""

    name = "legacy_history_stays_erased"
    rule = "migration (ours; notesoup 0.38 leaks here, S133–S135)"
    legacy = True


@remembering
class SessionFileAudits(testing_invariants.Invariant[World]):
    """the session-file audit (pictx-fsm audit --extension notesoup) of the world's file, mixed
    0.25 → notesoup ones included, finds no error and no erased history in the next request,
    whenever the session is idle"""

    name = "session_file_audits"
    rule = "migration (ours), S38–S40, S77–S80"

    _seen: tuple[int, str | None] | None = field(init=False, default=None)

    def check(self, world: World) -> list[Violation]:
        session = world.session
        tree = session.tree
        stamp = (len(tree.entries), tree.leaf_id)
        if not session.is_idle or stamp == self._seen:
            return []
        self._seen = stamp
        result = audit_tree(tree)
        found = [
            self.violation(f"{f.kind} at {f.entry_id}: {f.message}")
            for f in result.findings
            if f.severity == "error"
        ]
        return found

    def residual(self, world: World) -> object:
        """Nothing: the stamp only spares auditing an unchanged file again."""
        return None


@remembering
class LegacyBootsCarryOver(testing_invariants.Invariant[World]):
    """resuming a 0.25 session whose current window has its complete 0.25 tail (or a 0.25 root
    boot) appends nothing: its 0.25 boot counts as the window's boot"""

    name = "legacy_boots_carry_over"
    rule = "migration (ours; S71–S74 over 0.25's types)"

    _done: bool = field(init=False, default=False)

    def check(self, world: World) -> list[Violation]:
        legacy = world.config.legacy
        if self._done or legacy is None or not world.audits:
            return []
        self._done = True
        first = world.audits[0].records
        if not first or first[0]["hook"] != "session_start":
            return []
        if legacy.windows and legacy.tail != "complete":
            return []
        sends = [
            e
            for e in result_of(first[0]).get("effects", ())
            if e.get("effect") in ("send_message", "append_entry")
        ]
        if sends:
            kinds = ", ".join(str(e.get("customType")) for e in sends)
            return [self.violation(f"resuming the 0.25 session appended {kinds}")]
        return []

    def residual(self, world: World) -> object:
        """Whether the resume was judged (it is judged once)."""
        return self._done


class LegacyNotesMigrated(_Entries):
    """0.25 notes are read in their own format: a closed (stale) 0.25 note stays out of every
    boot, a 0.25 note keeps its update time, and the 0.25 @self home stays @self"""

    name = "legacy_notes_migrated"
    rule = "migration (ours; S96, S138, S139)"

    def check_node(self, world: World, tree: SessionTree, node: TreeNode) -> list[Violation]:
        entry = node.entry
        if world.config.legacy is None or not isinstance(entry, CustomMessageEntry):
            return []
        if entry.custom_type != BOOT_TYPE or not isinstance(entry.content, str):
            return []
        content = entry.content
        found = []
        for path in LEGACY_NOTES.stale:
            if f"{path}.md" in content and _untouched(world, path):
                found.append(self.violation(f"boot {node.id} lists the closed 0.25 note {path}"))
        for path in LEGACY_NOTES.fresh:
            line = next((ln for ln in content.splitlines() if f"{path}.md ·" in ln), None)
            if line is not None and line.endswith("just now") and _untouched(world, path):
                found.append(self.violation(f"boot {node.id} shows 0.25 note {path} as new"))
        if "Agent name: root (" not in content:
            found.append(self.violation(f"boot {node.id} lost the 0.25 @self home (agent root)"))
        return found


def _untouched(world: World, path: str) -> bool:
    """The planted 0.25 note is still as 0.25 wrote it (no notesoup write stamped it)."""
    file = world.notes.root / "pi" / "session" / str(world.legacy_session) / f"{path}.md"
    try:
        return "updatedAt:" not in file.read_text(encoding="utf-8")
    except OSError:
        return False


# -- per hook: one reset, nothing after an abort -----------------------------------------------


FAMILY = family_invariants(
    __name__,
    {
        "one_reset_per_batch": (
            "S33, FM14–16",
            "duplicate clear_memory calls in one batch give one reset: at most one marker per hook",
        ),
        "nothing_after_abort": (
            "S19, S25.1, S26.1, S29",
            "an aborted turn or run commits nothing and continues nothing",
        ),
        "reminders_once_per_window": (
            "S54, S62",
            "guidance and the final warning each persist at most once per window per branch (a "
            "migrated 0.25 one counts)",
        ),
        "narrow_repair": (
            "S73–S76, D4, FM20",
            "a boot or continuation only ever completes a bare tail (never after later work, "
            "never twice) — a migrated 0.25 tail too",
        ),
    },
    marker_type=MARKER_TYPE,
    windows=NotesoupWindows,
    reminders={GUIDANCE_TYPE: GUIDANCE_TYPES, WARNING_TYPE: WARNING_TYPES},
)
"""The family's invariants with notesoup's rules, marker and window index, by name."""


class _RunState:
    """What a runtime's records promised so far in the current run."""

    def __init__(self) -> None:
        self.manual = False
        self.overflow = False
        self.latched = False
        self.requested = False
        self.recoveries = 0

    def end_run(self) -> None:
        self.__init__()  # type: ignore[misc]


_ENDS_RUN: Final = frozenset({"agent_settled", "session_start", "session_tree", "session_shutdown"})


def _off(record: Mapping[str, Any]) -> bool:
    event = record.get("event", {})
    return (
        record["hook"] == "command"
        and event.get("name") == "notesoup"
        and str(event.get("args", "")).strip().lower() == "off"
    )


@remembering
class SettleResetsOnlyWhenPromised(_Records):
    """a settlement resets only for a manual close-out, an overflow chain (once per chain) or a
    latched stop's retry — a budget close-out and ordinary errors never reset"""

    name = "settle_resets_only_when_promised"
    rule = "S26, S58, S65, S67, Q3"

    _runs: dict[int, _RunState] = field(init=False, factory=dict)

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        run = self._runs.setdefault(runtime, _RunState())
        hook = record["hook"]
        if (
            hook in _ENDS_RUN
            or _off(record)
            or (hook == "agent_end" and (record.get("ctx") or {}).get("signal_aborted"))
        ):
            run.end_run()
            return []
        if hook == "command" and any(n in _ARMING for n in _notices(record)):
            run.manual = True
        if hook == "turn_end":
            if _overflow_turn(record):
                run.overflow = True
            elif aborted_turn(record) or record.get("event", {}).get("outcome") != "error":
                run.overflow = False  # a success (or an abort) ends the chain (S66, S69)
                run.recoveries = 0
            if _markers(record):
                run.latched = continue_flag(record) is False
        if hook != "agent_before_settle" or not _markers(record):
            return []
        if run.manual or run.latched:
            run.manual = run.latched = False
            return []
        if not run.overflow:
            return [self.violation(f"agent_before_settle #{record['seq']} reset unprompted")]
        run.recoveries += 1
        if run.recoveries > 1:
            return [self.violation(f"agent_before_settle #{record['seq']} recovered twice")]
        return []

    def residual(self, world: World) -> object:
        """What the live runtime's run promised so far (the older ones never decide again)."""
        run = self._runs.get(len(world.audits) - 1)
        if run is None:
            return None
        return (run.manual, run.overflow, run.latched, run.requested, run.recoveries)


@remembering
class RequestedResetCommits(_Records):
    """promised: a clear_memory answered rollover_requested commits at its batch's turn_end
    unless that turn aborted, failed or overflowed, or a /clear-memory took it over"""

    name = "requested_reset_commits"
    kind = "outcome"
    rule = "S25.6, S30, S33"

    _pending: dict[int, bool] = field(init=False, factory=dict)

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        hook = record["hook"]
        if hook == "tool" and f'"status":"{STATUS_REQUESTED}"' in _tool_reply(record):
            self._pending[runtime] = True
            return []
        if hook == "command" or hook in _ENDS_RUN:
            self._pending[runtime] = False
            return []
        if hook != "turn_end" or not self._pending.get(runtime):
            return []
        self._pending[runtime] = False
        event = record.get("event", {})
        if aborted_turn(record) or event.get("outcome") == "error" or _overflow_turn(record):
            return []
        if not _markers(record):
            return [self.violation(f"turn_end #{record['seq']} dropped a requested reset")]
        return []

    def finish(self, world: World) -> list[Violation]:
        """At rest, the live runtime's request met its batch's ``turn_end``: a run that
        settled without one left the promise unjudged, and unkept."""
        live = len(world.audits) - 1
        if not world.session.is_idle or not self._pending.get(live):
            return []
        return [self.violation("the run settled with a requested reset and no turn_end")]

    def residual(self, world: World) -> object:
        """Whether the live runtime owes a requested reset (the older ones never decide again)."""
        return self._pending.get(len(world.audits) - 1, False)


@remembering
class ManualCloseOutCommits(_Records):
    """promised: a /clear-memory whose run settles cleanly (completed, nothing queued, no
    aborted or failed turn since) has committed its reset by then — at that settlement, or on
    the hard reserve before it"""

    name = "manual_close_out_commits"
    kind = "outcome"
    rule = "S17–S19, S22, S26.6, S33"

    _armed: dict[int, bool] = field(init=False, factory=dict)
    _committing: dict[int, bool] = field(init=False, factory=dict)
    """A reset decided at a boundary whose entries Pi is still appending: a close-out
    asked for now belongs to the window that reset ends (S21)."""

    def check_record(self, record: Mapping[str, Any], runtime: int) -> list[Violation]:
        hook = record["hook"]
        if hook in ("turn_end", "agent_before_settle"):
            self._committing[runtime] = bool(_markers(record))
        elif hook != "command":
            self._committing[runtime] = False
        if hook == "command":
            notices = _notices(record)
            if any(n in _ARMING for n in notices) and not self._committing.get(runtime):
                self._armed[runtime] = True
            elif _off(record) or any(n.startswith(_CLEARED) for n in notices):
                self._armed[runtime] = False
            return []
        if hook in _ENDS_RUN or (
            hook == "agent_end" and (record.get("ctx") or {}).get("signal_aborted")
        ):
            self._armed[runtime] = False
            return []
        if not self._armed.get(runtime):
            return []
        if hook == "turn_end":
            failed = record.get("event", {}).get("outcome") == "error"
            # An abort or an ordinary error drops the close-out (S19, S25); a commit keeps it.
            if _markers(record) or aborted_turn(record) or (failed and not _overflow_turn(record)):
                self._armed[runtime] = False
            return []
        if hook != "agent_before_settle":
            return []
        event = record.get("event", {})
        ctx = record.get("ctx") or {}
        if aborted_turn(record) or event.get("outcome") == "error":
            self._armed[runtime] = False
            return []
        if event.get("pending_messages") or ctx.get("has_pending_messages"):
            return []
        self._armed[runtime] = False
        if _markers(record) or continue_flag(record) is False:
            return []
        return [self.violation(f"agent_before_settle #{record['seq']} dropped a /clear-memory")]

    def residual(self, world: World) -> object:
        """The live runtime's armed close-out and committing boundary (the older ones never
        decide again)."""
        live = len(world.audits) - 1
        return (self._armed.get(live, False), self._committing.get(live, False))


# -- the stop latch (S34–S36) -------------------------------------------------------------------


@remembering
class BareStopHolds(_Entries):
    """a reset committed to stop (a bare /clear-memory, at settlement or on the hard reserve)
    runs no model turn in the fresh window until new input arrives: Pi's tool-batch follow-up
    is cancelled"""

    name = "bare_stop_holds"
    rule = "S31, S34–S36"

    _records: RecordWalk = field(init=False, factory=RecordWalk)
    _stops: dict[str, int] = field(init=False, factory=dict)
    """Stop windows → how many inputs (prompts, queued messages, accepted /clear-memory
    commands) the user had given when the stop was decided."""
    _inputs: int = field(init=False, default=0)
    _run_starts: set[str] = field(init=False, factory=set)
    """Entries delivered as the prompt of a run (a custom message that triggered one)."""

    def check_entries(self, world: World, fresh: Fresh) -> list[Violation]:
        log = world.session.log
        inputs = sum(1 for event in log.events if event.name == "input")
        inputs += sum(1 for notice in log.notices if notice.message in _ARMING)
        # /notesoup off forgets the latch with the request (S14): the user's word too.
        inputs += sum(1 for notice in log.notices if notice.message.startswith(_OFF_STATUS))
        self._run_starts = {d.entry_id for d in log.deliveries if d.kind == "prompt"}
        for record, _, _ in self._records.advance(world.audits):
            if continue_flag(record) is False:
                for window_id in _markers(record):
                    self._stops.setdefault(window_id, self._inputs)
        self._inputs = inputs
        return super().check_entries(world, fresh)

    def check_node(self, world: World, tree: SessionTree, node: TreeNode) -> list[Violation]:
        entry = node.entry
        if not isinstance(entry, MessageEntry) or entry.message.role != "assistant":
            return []
        if entry.message.raw.get("stopReason") in ("aborted", "error"):
            return []
        window = _window(tree, node)
        given = self._stops.get(window.window_id)
        if given is None or self._inputs > given:
            return []  # no stop here, or the user has said something since (queued input)
        for earlier in _windows(tree).tail_since_marker(node)[:-1]:
            item = earlier.entry
            if isinstance(item, MessageEntry) and item.message.role == "user":
                return []
            if isinstance(item, CustomMessageEntry) and (
                item.custom_type not in (BOOT_TYPE, CONTINUATION_TYPE, MANUAL_WIPE_TYPE)
                or earlier.id in self._run_starts
            ):
                return []  # input: a message of its own, or a close-out that started a run
        return [self.violation(f"assistant {node.id} ran on after the stop of {window.window_id}")]

    def residual(self, world: World) -> object:
        """The stop windows with the inputs given when each was decided, and the inputs
        given so far (the deliveries that started runs are read off the log again)."""
        return (frozenset(self._stops.items()), self._inputs)


# -- notices, reminders, repair, native compaction -----------------------------------------------


class HonestNotices(shared_invariants.HonestNotices[World]):
    """'memory cleared' only once the reset's whole boundary is on the branch, once per window;
    the warning notice only when a final warning is on the branch"""

    rule = "S46–S48, S57"
    cleared_prefix = _CLEARED

    def committed(self, world: World, tree: SessionTree, leaf: TreeNode, window_id: str) -> bool:
        return _committed(tree, leaf, window_id)

    def check_other(
        self, world: World, message: str, leaf: TreeNode | None, tree: SessionTree
    ) -> list[Violation]:
        if message == NOTICE_WARNING_RECORDED and (
            leaf is None or not any(_is_warning(n.entry) for n in leaf.path())
        ):
            return [self.violation("the warning was announced but is not on the branch")]
        return []


def _is_warning(entry: object) -> bool:
    return isinstance(entry, CustomMessageEntry) and entry.custom_type == WARNING_TYPE


def _committed(tree: SessionTree, leaf: TreeNode, window_id: str) -> bool:
    """S47's commit — or, for the recovery of a refused window (Q6), its marker, hidden boot
    and continuation on the branch."""
    for window in _windows(tree).window_of(leaf).chain():
        if window.window_id != window_id or window.is_root:
            continue
        if boundary_committed(tree, window, leaf):
            return True
        kinds = [tail_kind(n.entry, window_id, SCHEME) for n in _tail(tree, window, leaf)]
        return kinds[:2] == [TailKind.BOOT, TailKind.CONTINUATION]
    return False


def _tail(tree: SessionTree, window: Window, leaf: TreeNode) -> list[TreeNode]:
    nodes: list[TreeNode] = []
    for node in leaf.ancestors():
        if node.id == window.marker_id:
            break
        nodes.append(node)
    return list(reversed(nodes))


class NoNativeCompactionOnMarkedBranch(_Entries):
    """no native compaction is written on a branch with a marker — only notesoup's own empty
    retain-none checkpoints, each right before its marker"""

    name = "no_native_compaction_on_marked_branch"
    rule = "S20, S45, S64, S83"

    def check_node(self, world: World, tree: SessionTree, node: TreeNode) -> list[Violation]:
        if not isinstance(node.entry, CompactionEntry):
            return []
        window = _window(tree, node)
        if window.is_root or is_checkpoint(node):
            return []
        return [self.violation(f"compaction {node.id} written after marker {window.marker_id}")]


class NotesoupErrors(NoLifecycleErrors):
    extension = "notesoup"


INVARIANT_TYPES: Final[Sequence[type[testing_invariants.Invariant[Any]]]] = (
    ResetShape,
    LegacyHistoryStaysErased,
    NoErasedHistory,
    LegacyBootsCarryOver,
    LegacyNotesMigrated,
    SessionFileAudits,
    FAMILY["one_reset_per_batch"],
    FAMILY["nothing_after_abort"],
    SettleResetsOnlyWhenPromised,
    RequestedResetCommits,
    ManualCloseOutCommits,
    BareStopHolds,
    HonestNotices,
    FAMILY["reminders_once_per_window"],
    FAMILY["narrow_repair"],
    NoNativeCompactionOnMarkedBranch,
    QueuedOnce,
    AuditChains,
    NotesoupErrors,
    RunsSettle,
    NotesConfined,
)
MIGRATION_INVARIANTS: Final = (
    LegacyHistoryStaysErased.name,
    LegacyBootsCarryOver.name,
    LegacyNotesMigrated.name,
    SessionFileAudits.name,
)


class InvariantSuite(WalkedSuite[World]):
    """Fresh instances of every invariant for one world; the per-entry and per-record ones
    share one walk each."""

    every_action = True  # some count inputs as they come

    def __init__(self) -> None:
        super().__init__(INVARIANT_TYPES)
