"""Actions of ``handoff`` (M45–M51): the source builds, saves and switches; the target
verifies, adopts the carried settings and sends the takeover prompt once."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

from attrs import evolve

from pictx_fsm.extensions.context_management.act_notes import Action, log, op_id
from pictx_fsm.extensions.context_management.effects import (
    CreateSession,
    Emit,
    Intent,
    Raise,
    SendTakeover,
    SwitchSession,
    update,
)
from pictx_fsm.extensions.context_management.events import HandoffReplied
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.notes import NoteSet
from pictx_fsm.extensions.context_management.policy import AUTO_COOLDOWN_MS, NOTE_STATE_VERSION
from pictx_fsm.extensions.context_management.records import (
    AUTO_TYPE,
    HANDOFF_TYPE,
    TAKEOVER_TYPE,
    Receipt,
    branch_digest,
)
from pictx_fsm.extensions.context_management.texts import (
    NOTICE_HANDOFF_REFUSED,
    NOTICE_NO_SWITCH,
    NOTICE_RESUME,
    NOTICE_RETURNED,
    NOTICE_TAKEOVER_FAILED,
    TAKEOVER_PROMPT,
)
from pictx_fsm.host.effects import AppendEntry, Notify

__all__ = [
    "CREATE_FAILED",
    "HANDOFF_ACTIONS",
    "JSON",
    "SWITCH_CANCELLED",
    "SWITCH_UNSAFE",
    "TOO_LARGE",
    "abort_handoff_generation",
    "adopt_receipt",
    "announce_no_switch",
    "build_package",
    "check_target",
    "close_handoff",
    "create_target",
    "mark_takeover_sent",
    "record_returned",
    "refuse_handoff",
    "report_no_switch",
    "report_takeover_failed",
    "restore_package",
    "return_to_source",
    "save_package",
    "send_takeover",
    "start_handoff_generation",
    "switch_to_target",
    "tell_resume",
]

JSON: TypeAlias = Any
TOO_LARGE: Final = "handoff_too_large"
SWITCH_UNSAFE: Final = "handoff_revoked"
CREATE_FAILED: Final = "handoff_create_failed"
SWITCH_CANCELLED: Final = "handoff_switch_cancelled"
_LABELS: Final = {
    "goal": "Goal",
    "constraint": "Constraint",
    "decision": "Decision",
    "failed_attempt": "Failed attempt",
    "open_item": "Open",
}


def _mode(f: CmFacts) -> str:
    run = f.state.handoff
    return run.mode if run is not None else "manual"


def start_handoff_generation(f: CmFacts) -> tuple[Intent, ...]:
    """M46 step 1 (M58 for automatic: ≤ 4 requests): one generation for uncovered sources;
    a running background job is cancelled first (it covers the same sources)."""
    kind = "handoff_auto" if _mode(f) == "automatic" else "handoff_manual"
    return (
        Raise(machine="background_notes", event="cancel"),
        update(gen_owner=kind),
        log("handoff_phase", time=f.now, phase="filling_notes", mode=_mode(f)),
        Raise(machine="checkpoint", event="start"),
    )


def refuse_handoff(f: CmFacts) -> tuple[Intent, ...]:
    """M45: no saved session or no model."""
    return (
        Emit(effect=Notify(message=NOTICE_HANDOFF_REFUSED, level="warning")),
        update(handoff=None),
        Raise(machine="auto_handoff", event="preparation_failed"),
    )


def _display(notes: NoteSet) -> str:
    """M24, M47: each note with its source ids, which ``scope: "handoff"`` reads back."""
    lines = [
        f"{_LABELS.get(n.kind, n.kind)} ({n.status}): {n.text} [sources: {', '.join(n.sources)}]"
        for n in notes.notes
    ]
    return "\n".join(lines) or "(no notes)"


def build_package(f: CmFacts) -> tuple[Intent, ...]:
    """M46 step 2, M47: cited notes (inherited notes are inferred), the source binding,
    capture time, cwd, files; and the display text."""
    run = f.generation
    handoff = f.state.handoff
    assert handoff is not None
    ids = [e.id for e in f.branch if e.id is not None]
    notes = NoteSet(notes=tuple(evolve(n, inferred=True) for n in run.notes.notes))
    package = {
        "version": NOTE_STATE_VERSION,
        "sourceSession": f.state.session_id,
        "capturedLeafId": ids[-1] if ids else None,
        "branchDigest": branch_digest(ids),
        "captureTime": f.now,
        "cwd": f.ctx.cwd,
        "gitStatus": None,
        "files": run.files.to_json(),
        "notes": notes.to_json(),
    }
    text = json.dumps(package, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    built = evolve(handoff, package=text, display=_display(notes))
    return (
        Raise(machine="notes_store", event="notes_committed"),
        update(handoff=built),
        Raise(machine="handoff", event="packaged"),
    )


def save_package(f: CmFacts) -> tuple[Intent, ...]:
    """M46 step 3: the package is saved in the source (its notes were just committed)."""
    handoff = f.state.handoff
    assert handoff is not None
    package = {
        "version": NOTE_STATE_VERSION,
        "mode": handoff.mode,
        "package": json.loads(handoff.package),
        "display": handoff.display,
    }
    memory = evolve(f.state.branch, handoff_saved=True)
    return (
        Emit(effect=AppendEntry(custom_type=HANDOFF_TYPE, data=package)),
        update(branch=memory),
        Raise(machine="handoff", event="saved"),
    )


def create_target(f: CmFacts) -> tuple[Intent, ...]:
    """M46 step 4, M51: the receipt carries the auto setting and its limits."""
    handoff = f.state.handoff
    assert handoff is not None and f.ctx.session_file is not None
    package = json.loads(handoff.package)
    receipt = Receipt(
        parent_session=f.state.session_id,
        parent_file=f.ctx.session_file,
        captured_leaf=str(package["capturedLeafId"]),
        digest=str(package["branchDigest"]),
        captured_at=int(package["captureTime"]),
        mode=handoff.mode,
        package=package,
        display=handoff.display,
        auto=f.state.auto,
    )
    phase = log("handoff_phase", time=f.now, phase="creating")
    return (Emit(effect=CreateSession(receipt=receipt.to_json())), phase)


def switch_to_target(f: CmFacts) -> tuple[Intent, ...]:
    """M46 step 5."""
    event = f.event
    target = event.target if isinstance(event, HandoffReplied) else None
    handoff = f.state.handoff
    assert handoff is not None and target is not None
    intents: list[Intent] = [update(handoff=evolve(handoff, target=target))]
    if handoff.mode == "automatic":
        intents.append(Raise(machine="auto_handoff", event="switch_started"))
    intents.append(
        log(
            "handoff_phase",
            time=f.now,
            phase="switching",
            flowDurationMs=f.now - handoff.started_at,
        )
    )
    intents.append(Emit(effect=SwitchSession(path=target)))
    return tuple(intents)


_REPLY_CODES: Final = {
    "created": SWITCH_UNSAFE,
    "create_failed": CREATE_FAILED,
    "switch_cancelled": SWITCH_CANCELLED,
}


def _failure_code(f: CmFacts) -> str:
    """Why this handoff stops before switching (M48)."""
    if f.state.state_of("handoff") == "packaging":
        return TOO_LARGE
    event = f.event
    if isinstance(event, HandoffReplied):
        return _REPLY_CODES.get(event.outcome, CREATE_FAILED)
    run = f.state.generation
    if run is not None and run.failure is not None:
        return run.failure
    return "attempt_incomplete"


def report_no_switch(f: CmFacts) -> tuple[Intent, ...]:
    """M48, invariant 18: no switch; this session continues; an automatic attempt pauses."""
    code = _failure_code(f)
    handoff = f.state.handoff
    failed = evolve(handoff, failure=code) if handoff is not None else None
    return (
        update(handoff=failed),
        log("handoff_phase", time=f.now, phase="failed_no_switch", result=code),
        Raise(machine="auto_handoff", event="preparation_failed"),
        Raise(machine="auto_handoff", event="switch_failed"),
        Raise(machine="handoff", event="settle"),
    )


def announce_no_switch(f: CmFacts) -> tuple[Intent, ...]:
    """M48, M61: the notice of a handoff that stopped before switching."""
    run = f.state.handoff
    code = (run.failure if run is not None else None) or "attempt_incomplete"
    return (Emit(effect=Notify(message=NOTICE_NO_SWITCH.format(code=code), level="warning")),)


def abort_handoff_generation(f: CmFacts) -> tuple[Intent, ...]:
    run = f.state.generation
    if run is None or not run.kind.startswith("handoff"):
        return ()
    return (Raise(machine="checkpoint", event="abort"),)


def close_handoff(f: CmFacts) -> tuple[Intent, ...]:
    return (update(handoff=None),)


# -- the target session --------------------------------------------------------------------------


def check_target(f: CmFacts) -> tuple[Intent, ...]:
    return (Raise(machine="handoff", event="init_checked"),)


def adopt_receipt(f: CmFacts) -> tuple[Intent, ...]:
    """M60, M51, Q6: the target clears the pause and inherits the counters; an automatic
    handoff's target is next eligible 5 minutes after this verification."""
    receipt = f.receipt
    assert receipt is not None
    carried = receipt.auto
    auto = evolve(carried, paused=False)
    if receipt.mode == "automatic":
        auto = evolve(auto, next_eligible_at=f.now + AUTO_COOLDOWN_MS)
    package = json.dumps(dict(receipt.package), sort_keys=True, separators=(",", ":"))
    return (
        update(auto=auto, receipt_package=package, receipt_verified=True),
        Emit(effect=AppendEntry(custom_type=AUTO_TYPE, data=auto.to_json())),
    )


def send_takeover(f: CmFacts) -> tuple[Intent, ...]:
    """M46 step 7, M50, invariant 20: marked as sent first, so a reopen never resends."""
    receipt = f.receipt
    assert receipt is not None
    text = TAKEOVER_PROMPT.format(source=receipt.parent_session, display=receipt.display)
    mark = {"version": NOTE_STATE_VERSION, "sentAt": f.now}
    return (
        Emit(effect=AppendEntry(custom_type=TAKEOVER_TYPE, data=mark)),
        update(takeover_sent=True),
        Emit(effect=SendTakeover(text=text)),
    )


def mark_takeover_sent(f: CmFacts) -> tuple[Intent, ...]:
    return (
        log("handoff_phase", time=f.now, phase="done", id=op_id(f, 0)),
        Raise(machine="handoff", event="settle"),
    )


def report_takeover_failed(f: CmFacts) -> tuple[Intent, ...]:
    """M50: the new session is kept; an automatic handoff pauses."""
    path = f.ctx.session_file or ""
    intents: list[Intent] = [
        Emit(effect=Notify(message=NOTICE_TAKEOVER_FAILED.format(path=path), level="error")),
        log("handoff_phase", time=f.now, phase="takeover_failed"),
    ]
    receipt = f.receipt
    if receipt is not None and receipt.mode == "automatic":
        intents.append(Raise(machine="auto_handoff", event="takeover_failed"))
    intents.append(Raise(machine="handoff", event="settle"))
    return tuple(intents)


def return_to_source(f: CmFacts) -> tuple[Intent, ...]:
    """M49: initialization failed: back to the source session."""
    receipt = f.receipt
    assert receipt is not None
    return (
        log("handoff_phase", time=f.now, phase="returning", result="init_failed"),
        Emit(effect=SwitchSession(path=receipt.parent_file, returning=True)),
    )


def record_returned(f: CmFacts) -> tuple[Intent, ...]:
    return (
        Emit(effect=Notify(message=NOTICE_RETURNED, level="error")),
        log("handoff_phase", time=f.now, phase="failed_returned", result="init_failed"),
    )


def tell_resume(f: CmFacts) -> tuple[Intent, ...]:
    receipt = f.receipt
    path = receipt.parent_file if receipt is not None else ""
    return (
        Emit(effect=Notify(message=NOTICE_RESUME.format(path=path), level="error")),
        log("handoff_phase", time=f.now, phase="needs_resume", result="init_failed"),
        Raise(machine="handoff", event="settle"),
    )


def restore_package(f: CmFacts) -> tuple[Intent, ...]:
    """M50: a reopened target restores the package; no takeover prompt again."""
    receipt = f.receipt
    assert receipt is not None
    package = json.dumps(dict(receipt.package), sort_keys=True, separators=(",", ":"))
    return (
        update(receipt_package=package, receipt_verified=True, takeover_sent=True),
        Raise(machine="handoff", event="settle"),
    )


HANDOFF_ACTIONS: Final[Mapping[str, Action]] = {
    "start_handoff_generation": start_handoff_generation,
    "refuse_handoff": refuse_handoff,
    "build_package": build_package,
    "save_package": save_package,
    "create_target": create_target,
    "switch_to_target": switch_to_target,
    "report_no_switch": report_no_switch,
    "announce_no_switch": announce_no_switch,
    "abort_handoff_generation": abort_handoff_generation,
    "close_handoff": close_handoff,
    "check_target": check_target,
    "adopt_receipt": adopt_receipt,
    "send_takeover": send_takeover,
    "mark_takeover_sent": mark_takeover_sent,
    "report_takeover_failed": report_takeover_failed,
    "return_to_source": return_to_source,
    "record_returned": record_returned,
    "tell_resume": tell_resume,
    "restore_package": restore_package,
}
