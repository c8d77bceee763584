"""``/ctx-memory`` (M71): each subcommand as intents over the current facts."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Final

from pictx_fsm.extensions.context_management.effects import (
    CompactNow,
    Emit,
    ExportReport,
    Intent,
    PanelRefresh,
    Raise,
    update,
)
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.state import HandoffRun
from pictx_fsm.extensions.context_management.status import log_scope, panel_snapshot, status_fields
from pictx_fsm.extensions.context_management.texts import (
    NOTES_EMPTY,
    NOTICE_CANCELLED,
    NOTICE_EXPORT_UNSAVED,
    NOTICE_NOTHING_TO_CANCEL,
    NOTICE_PANEL_CLOSED,
    USAGE,
)
from pictx_fsm.host.effects import Notify

__all__ = ["BUSY", "SUBCOMMANDS", "command_intents"]

BUSY: Final = "Context memory: a handoff or checkpoint is already running."


def _say(text: str, level: str = "info") -> Emit:
    return Emit(effect=Notify(message=text, level=level))  # type: ignore[arg-type]


def command_intents(f: CmFacts, args: str) -> tuple[Intent, ...]:
    words = args.split()
    handler = _COMMANDS.get(" ".join(words) if words else "status")
    if handler is None:
        return (_say(USAGE, "warning"),)
    return handler(f)


def _status(f: CmFacts) -> tuple[Intent, ...]:
    return (_say(json.dumps(status_fields(f), indent=2, ensure_ascii=False)),)


def _notes(f: CmFacts) -> tuple[Intent, ...]:
    """M71: the notes, or explanatory text only when there are none."""
    notes = f.state.branch.notes
    if not notes:
        return (_say(NOTES_EMPTY),)
    lines = [
        f"{n.key} [{n.kind}/{n.status}] {n.text} (sources: {', '.join(n.sources)})"
        for n in notes.notes
    ]
    return (_say("\n".join(lines)),)


def _compact(f: CmFacts) -> tuple[Intent, ...]:
    return (Emit(effect=CompactNow()),)


def _cancel(f: CmFacts) -> tuple[Intent, ...]:
    """M41, M48, M71: a background job or a handoff preparation; saved notes stay."""
    state = f.state
    if state.state_of("background_notes") == "running":
        return (
            Raise(machine="background_notes", event="cancel", strict=True),
            _say(NOTICE_CANCELLED.format(what="background notes")),
        )
    if state.state_of("auto_handoff") in ("pending", "preparing"):
        return (
            Raise(machine="auto_handoff", event="cancel", strict=True),
            _say(NOTICE_CANCELLED.format(what="handoff preparation")),
        )
    if state.state_of("handoff") == "filling_notes":
        return (
            Raise(machine="handoff", event="cancel", strict=True),
            _say(NOTICE_CANCELLED.format(what="handoff preparation")),
        )
    return (_say(NOTICE_NOTHING_TO_CANCEL),)


def _handoff(f: CmFacts) -> tuple[Intent, ...]:
    state = f.state
    if state.handoff is not None or state.generation is not None or state.trigger is not None:
        return (_say(BUSY, "warning"),)
    run = HandoffRun(
        mode="manual",
        started_at=f.now,
        model=f.ctx.model,
        leaf=f.services.tree.leaf_id,
        compactions=state.compactions,
        turns=state.turns,
    )
    return (update(handoff=run), Raise(machine="handoff", event="begin", strict=True))


def _auto(on: bool) -> Callable[[CmFacts], tuple[Intent, ...]]:
    def run(f: CmFacts) -> tuple[Intent, ...]:
        return (Raise(machine="auto_handoff", event="auto_on" if on else "auto_off", strict=True),)

    return run


def _session(f: CmFacts) -> tuple[Intent, ...]:
    """M62: the panel, per instance, shown now (opened, or drawn again when open)."""
    shown = PanelRefresh(snapshot=panel_snapshot(f), logs=log_scope(f))
    return (update(panel_open=True), Emit(effect=shown), *_status(f))


def _session_close(f: CmFacts) -> tuple[Intent, ...]:
    closed = Emit(effect=PanelRefresh(snapshot=None))
    return (update(panel_open=False), closed, _say(NOTICE_PANEL_CLOSED))


def _export(f: CmFacts) -> tuple[Intent, ...]:
    """M68: only saved sessions; the verified direct parent's diagnostics up to capture."""
    logs = log_scope(f)
    if logs is None:
        return (_say(NOTICE_EXPORT_UNSAVED, "warning"),)
    return (Emit(effect=ExportReport(logs=logs)),)


_COMMANDS: Mapping[str, Callable[[CmFacts], tuple[Intent, ...]]] = {
    "status": _status,
    "notes": _notes,
    "compact": _compact,
    "cancel": _cancel,
    "handoff": _handoff,
    "auto on": _auto(True),
    "auto off": _auto(False),
    "session": _session,
    "session close": _session_close,
    "session export": _export,
}
SUBCOMMANDS: Final[tuple[str, ...]] = tuple(_COMMANDS)
"""Every ``/ctx-memory`` subcommand, as a host offers them for completion."""
