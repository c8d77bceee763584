"""pi-context's promised outcomes: what must happen by the point a rule names, judged there.

The safety invariants (:mod:`.invariants`) say what must never happen; a lifecycle that
quietly does less — a requested reset that never commits, a warning line crossed in silence,
an overflow left without its recovery, a repair that never comes — passes them all. Each
invariant here follows every runtime's audit records with the oracle's own account
(:mod:`.oracle`, :mod:`.account`) and, at the hook where the rule says the outcome is due,
demands exactly what the rule demands: the outcome when it is due, nothing when it is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import define, field

from pictx_fsm.extensions.pi_context.kit.account import Account, Following, command_of, place_of
from pictx_fsm.extensions.pi_context.kit.oracle import (
    Place,
    boot_message_for,
    lines_of,
    remaining_of,
    repair_needs,
    stage_of,
    tool_pair_open,
    usage_at,
)
from pictx_fsm.extensions.pi_context.kit.records import (
    aborted_turn,
    continues,
    markers_written,
    model_of,
    own_drafts,
    result_of,
)
from pictx_fsm.extensions.pi_context.kit.view import WorldView
from pictx_fsm.extensions.pi_context.kit.walks import PerRecord
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    NOTICE_MEMORY_CLEARED,
    NOTICE_RESET_BUILD_FAILED,
    PI_CONTEXT_COMMAND,
    WARNING_CONTENT,
    WARNING_TYPE,
    guidance_content,
)
from pictx_fsm.host.overflow import is_overflow_like
from pictx_fsm.js import is_plain_object
from pictx_fsm.session.projection import project_branch
from pictx_fsm.testing.invariants import Violation, remembering

__all__ = [
    "OUTCOME_INVARIANTS",
    "OverflowRecovered",
    "RemindersWhenDue",
    "RepairWhenDue",
    "ResetsCommit",
]

Record = Mapping[str, Any]
_BUILD_FAILED = NOTICE_RESET_BUILD_FAILED.split("{", 1)[0]
_CLEARED = NOTICE_MEMORY_CLEARED.split("{", 1)[0]


def _build_failed(record: Record) -> bool:
    """R29: the reset could not be built (the warning says so; nothing is committed)."""
    return any(str(m).startswith(_BUILD_FAILED) for m in _notices(record))


def _notices(record: Record) -> list[str]:
    return [
        str(e.get("message"))
        for e in result_of(record).get("effects", ())
        if e.get("effect") == "notify"
    ]


def _queued(record: Record) -> bool:
    """R24/R35: the host already holds the next message."""
    event, ctx = record.get("event") or {}, record.get("ctx") or {}
    return int(event.get("pending_messages") or 0) > 0 or bool(ctx.get("has_pending_messages"))


def _overflow_like(record: Record) -> bool:
    """R33, by the host's classifier (pi-ai's, as Pi 0.87 ships it)."""
    message = (record.get("event") or {}).get("message") or {}
    return is_overflow_like(message, model_of((record.get("ctx") or {}).get("model")))


def _reset_tail_problem(record: Record) -> str | None:
    """D1: the drafts end in one marker, its boot and a continuation, and the hook continues."""
    drafts = own_drafts(record)[-3:]
    types = [d.get("customType") for d in drafts]
    if types != [MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE]:
        return f"drafts end {types}, not marker → boot → continuation"
    window_id = (drafts[0].get("data") or {}).get("windowId")
    if (drafts[1].get("details") or {}).get("windowId") != window_id:
        return f"the boot is not for window {window_id}"
    if not continues(record):
        return "no continue"
    return None


def _describe(record: Record) -> str:
    return f"{record.get('hook')} #{record.get('seq')}"


class ResetsCommit(Following):
    """a reset requested by wipe_memory in a batch that is not aborted, or due at the reserve,
    commits at that batch's turn_end — one marker → boot → continuation, and continue — and
    no other turn_end resets"""

    name = "resets_commit"
    rule = "R20–R30, R50, D1"
    kind = "outcome"

    def judge(
        self, world: WorldView, record: Record, runtime: int, account: Account
    ) -> list[Violation]:
        if record.get("hook") != "turn_end" or not account.active:
            return []  # R19: an inactive lifecycle consumes nothing
        requested = account.requested  # R20: every turn_end consumes it (Account.follow)
        place = place_of(world, runtime, record)
        if place is None:
            return []
        why = self._why(world, record, account, place, requested)
        built = bool(markers_written(record))
        if why is not None and not built and not _build_failed(record):
            return [self.violation(f"{_describe(record)}: a reset {why} was not committed")]
        if why is None and built:
            return [self.violation(f"{_describe(record)} reset although none was requested or due")]
        problem = _reset_tail_problem(record) if built else None
        return [self.violation(f"{_describe(record)}: {problem}")] if problem else []

    @staticmethod
    def _why(
        world: WorldView, record: Record, account: Account, place: Place, requested: bool
    ) -> str | None:
        """R21–R27: why this turn_end must reset (``None``: it must not)."""
        outcome = (record.get("event") or {}).get("outcome")
        if aborted_turn(record) or _overflow_like(record) or outcome == "error":
            return None
        if not account.enabled:
            return None
        if requested:
            return "requested by wipe_memory"
        budget = world.budget
        usage = usage_at(record.get("ctx") or {}, place, world.counter)
        if not budget.automatic or usage is None:
            return None
        tokens, window = usage
        if window - tokens <= budget.reserve:  # R50, unclamped
            return f"due ({window} − {tokens} ≤ reserve {budget.reserve})"
        return None


@define
class _Staged:
    """R51/R53: a reminder staged at a provider request, for one window."""

    kind: str
    window_id: str
    content: str


@remembering
class RemindersWhenDue(Following):
    """guidance and the final warning appear when their line is crossed: the warning joins the
    very request (R51.2), each staged reminder is committed at that turn's turn_end with its
    exact text (the guidance's count frozen at staging) unless the turn was aborted,
    pi-context switched off or the window changed — and never otherwise"""

    name = "reminders_when_due"
    rule = "R51–R53, R22, R31, R55"
    kind = "outcome"

    _staged: dict[int, dict[str, _Staged]] = field(init=False, factory=dict)

    def judge(
        self, world: WorldView, record: Record, runtime: int, account: Account
    ) -> list[Violation]:
        hook = record.get("hook")
        staged = self._staged.setdefault(runtime, {})
        if hook in ("agent_settled", "model_select") or Account.clears(record):
            staged.clear()  # R55
            return []
        if hook == "context":
            return self._context(world, record, runtime, account, staged)
        if hook == "turn_end" and account.active:
            return self._turn_end(world, record, runtime, account, staged)
        return []

    def _context(
        self,
        world: WorldView,
        record: Record,
        runtime: int,
        account: Account,
        staged: dict[str, _Staged],
    ) -> list[Violation]:
        place = place_of(world, runtime, record)
        if place is None:
            return []
        warning = self._stage(world, record, account, place, staged)
        value = result_of(record).get("value")
        sent = (value or {}).get("messages") if is_plain_object(value) else None
        given = ((record.get("event") or {}).get("messages") or {}).get("count")
        appended = is_plain_object(sent) and sent.get("count") == (given or 0) + 1
        if warning == appended:
            return []
        said = "crossed, but the warning was not added to" if warning else "added a warning to"
        return [self.violation(f"{_describe(record)} {said} the request")]

    @staticmethod
    def _stage(
        world: WorldView,
        record: Record,
        account: Account,
        place: Place,
        staged: dict[str, _Staged],
    ) -> bool:
        """R51: stage what the line demands; whether the warning joins this request."""
        if not account.enabled:
            return False
        remaining = remaining_of(usage_at(record.get("ctx") or {}, place, world.counter))
        if remaining is None:
            return False
        lines = lines_of(world.budget.reserve, world.budget.margin)
        window = place.window_id
        here = {kind: s.window_id == window for kind, s in staged.items()}
        if place.has_window_message(WARNING_TYPE) or here.get(WARNING_TYPE):
            return False
        stage = stage_of(remaining, lines)
        if stage == "warning":
            staged.pop(GUIDANCE_TYPE, None)
            staged[WARNING_TYPE] = _Staged(
                kind=WARNING_TYPE, window_id=window, content=WARNING_CONTENT
            )
            return True
        if place.has_window_message(GUIDANCE_TYPE) or here.get(GUIDANCE_TYPE):
            return False
        if stage == "guidance":
            content = guidance_content(max(0, remaining - lines.warning))  # R51.4
            staged[GUIDANCE_TYPE] = _Staged(kind=GUIDANCE_TYPE, window_id=window, content=content)
        return False

    def _turn_end(
        self,
        world: WorldView,
        record: Record,
        runtime: int,
        account: Account,
        staged: dict[str, _Staged],
    ) -> list[Violation]:
        taken = [staged.pop(kind) for kind in (GUIDANCE_TYPE, WARNING_TYPE) if kind in staged]
        place = place_of(world, runtime, record)
        if place is None:
            return []
        keep = account.enabled and not aborted_turn(record)  # R22
        expected = [(s.kind, s.content) for s in taken if keep and s.window_id == place.window_id]
        drafted = [
            (d.get("customType"), d.get("content"))
            for d in own_drafts(record)
            if d.get("customType") in (GUIDANCE_TYPE, WARNING_TYPE)
        ]
        if drafted == expected:
            return []
        wanted = ", ".join(f"{kind} ({len(text)} chars)" for kind, text in expected) or "none"
        return [
            self.violation(
                f"{_describe(record)} committed {[k for k, _ in drafted] or 'no reminder'}, "
                f"expected {wanted}"
            )
        ]


@remembering
class OverflowRecovered(Following):
    """each overflow chain armed with nothing queued and automatic resets on gets its one
    recovery at agent_before_settle (marker → boot → continuation, continue) unless aborted
    or switched off — and no before_settle recovers otherwise"""

    name = "overflow_recovered"
    rule = "R24, R25, R35–R39"
    kind = "outcome"

    _chains: dict[int, tuple[bool, bool]] = field(init=False, factory=dict)
    """Per runtime: (overflowPending, overflowRecoveryUsed)."""

    def judge(
        self, world: WorldView, record: Record, runtime: int, account: Account
    ) -> list[Violation]:
        hook = record.get("hook")
        ctx = record.get("ctx") or {}
        pending, used = self._chains.get(runtime, (False, False))
        cleared = Account.clears(record) or Account.wiped(record)
        if (
            cleared
            or hook == "agent_settled"
            or (hook == "agent_end" and ctx.get("signal_aborted"))
        ):
            self._chains[runtime] = (False, False)  # R37
            return []
        if not account.active or hook not in ("turn_end", "agent_before_settle"):
            return []
        automatic = world.budget.automatic
        if hook == "turn_end":
            outcome = (record.get("event") or {}).get("outcome")
            if aborted_turn(record):
                pending = used = False  # R23
            elif _overflow_like(record):
                pending = not _queued(record) and account.enabled and automatic  # R24
            elif outcome != "error":
                pending = used = False  # R25; an ordinary error leaves the chain (R26)
            self._chains[runtime] = (pending, used)
            return []
        due = False
        if pending and not _queued(record):
            pending = False
            if account.enabled and automatic and not aborted_turn(record) and not used:
                used = due = True
        self._chains[runtime] = (pending, used)
        recovered = bool(markers_written(record))
        if due and not recovered and not _build_failed(record):
            return [self.violation(f"{_describe(record)}: the chain's recovery did not happen")]
        if recovered and not due:
            return [self.violation(f"{_describe(record)} recovered though no recovery was due")]
        problem = _reset_tail_problem(record) if recovered else None
        return [self.violation(f"{_describe(record)}: {problem}")] if problem else []


@define
class _Drafted:
    """Per runtime: the windows whose reset it built and has not yet seen settle (R63) —
    theirs to complete, not a repair's."""

    windows: set[str] = field(factory=set)


@remembering
class RepairWhenDue(Following):
    """a boot repair that is due happens: at session_start, session_tree (when on) and
    /pi-context on, a root window without its boot gets one and a reset window's bare tail
    gets exactly what it misses (boot, then continuation) — nothing otherwise; one asked for
    while a run is under way is owed to that turn's turn_end (Pi would hold what it sends to
    the turn's end) and happens there unless the turn was aborted (still owed) or committed a
    reset (the new window has its boot)"""

    name = "repair_when_due"
    rule = "R64–R66, D4, FM19"
    kind = "outcome"

    _drafted: dict[int, _Drafted] = field(init=False, factory=dict)
    _owed: set[int] = field(init=False, factory=set)
    """Runtimes owing a repair asked for mid-run, until a turn of theirs ends."""

    def judge(
        self, world: WorldView, record: Record, runtime: int, account: Account
    ) -> list[Violation]:
        hook = record.get("hook")
        drafted = self._drafted.setdefault(runtime, _Drafted())
        turned_on = command_of(record) == (PI_CONTEXT_COMMAND, "on")
        asked = turned_on or (hook in ("session_start", "session_tree") and account.enabled)
        if hook == "session_tree" or (hook == "session_start" and asked):
            drafted.windows.clear()  # R63: forgotten before the repair runs
        held = asked and hook != "session_tree" and not (record.get("ctx") or {}).get("idle", True)
        due = hook == "turn_end" and runtime in self._owed and not aborted_turn(record)
        if due or (asked and not held):
            self._owed.discard(runtime)
        found: list[Violation] = []
        if held:
            self._owed.add(runtime)
            found = self._judge_repair(record, [], "owed until the turn's end")
        elif due and markers_written(record):
            found = []  # the turn committed a reset: the new window has its boot
        elif asked or (due and account.enabled):
            place = place_of(world, runtime, record)
            if place is not None:
                expected = self._expected(world, place, drafted)
                found = self._judge_repair(record, expected, f"in window {place.window_id}")
        self._follow(record, drafted)
        return found

    def _judge_repair(
        self, record: Record, expected: list[tuple[str, str | None]], where: str
    ) -> list[Violation]:
        sent = [
            (e.get("customType"), (e.get("details") or {}).get("windowId"))
            for e in result_of(record).get("effects", ())
            if e.get("effect") == "send_message"
            and e.get("customType") in (BOOT_TYPE, CONTINUATION_TYPE)
        ]
        if sent == expected:
            return []
        return [
            self.violation(
                f"{_describe(record)} {where} sent {sent or 'nothing'}, "
                f"the tail needs {expected or 'nothing'}"
            )
        ]

    @staticmethod
    def _expected(
        world: WorldView, place: Place, drafted: _Drafted
    ) -> list[tuple[str, str | None]]:
        if tool_pair_open(place.branch):
            return []  # FM19: nothing between a tool call and its result
        window = place.window_id
        if place.is_root:
            messages = project_branch(place.branch).messages
            if any(boot_message_for(m, window) for m in messages):
                return []
            return [(BOOT_TYPE, window)]
        if window in drafted.windows:
            return []  # its own commit completes it
        needs = repair_needs(place, world.profile)
        return [(BOOT_TYPE, window)] * needs.boot + [(CONTINUATION_TYPE, None)] * needs.continuation

    @staticmethod
    def _follow(record: Record, drafted: _Drafted) -> None:
        drafted.windows.update(markers_written(record))
        for notice in _notices(record):
            if notice.startswith(_CLEARED):
                drafted.windows.discard(notice[len(_CLEARED) :])
        if record.get("hook") == "agent_settled":
            drafted.windows.clear()


OUTCOME_INVARIANTS: tuple[type[PerRecord], ...] = (
    ResetsCommit,
    RemindersWhenDue,
    OverflowRecovered,
    RepairWhenDue,
)
