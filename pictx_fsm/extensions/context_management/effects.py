"""What the pure step returns: intents (how actions change the state), effects (what the
host must do), and the hook's value — all data.

Actions of the declared machines return :data:`Intent` values: :class:`Update` replaces
fields of the state, :class:`Raise` queues another machine event, :class:`Emit` asks the
host for an effect, :class:`Answer` sets the hook's return value. Host effects reuse the
shared value types of :mod:`pictx_fsm.host.effects` where they fit (notices, appended entries,
tool results, cancel) and add this extension's own (status bar, generator requests, handoff
operations, diagnostics records).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from attrs import frozen

from pictx_fsm.extensions.context_management.generation import GenerationRequest
from pictx_fsm.host.effects import AppendEntry, CancelResult, Notify, ToolResult

__all__ = [
    "JSON",
    "AbortGeneration",
    "Answer",
    "CheckpointCompaction",
    "CmResult",
    "CompactNow",
    "CreateSession",
    "Emit",
    "ExportReport",
    "HostEffect",
    "Intent",
    "LogRecord",
    "LogScope",
    "PanelRefresh",
    "Raise",
    "RequestGeneration",
    "ScheduleHandoff",
    "SendTakeover",
    "SetStatus",
    "SwitchSession",
    "Update",
    "Value",
    "update",
]

JSON: TypeAlias = Any


@frozen(kw_only=True)
class SetStatus:
    """The status-bar item (M4)."""

    text: str


@frozen(kw_only=True)
class RequestGeneration:
    """Send one request to the model through the injected generator (M25, M40, M46)."""

    request: GenerationRequest


@frozen(kw_only=True)
class AbortGeneration:
    """Abort the outstanding request of a job (cancel, revocation, branch switch)."""

    job: int


@frozen(kw_only=True)
class ScheduleHandoff:
    """M57: dispatch the handoff command and ``waitForIdle()``; the host answers with
    :class:`~pictx_fsm.extensions.context_management.events.IdleReached`."""


@frozen(kw_only=True)
class CreateSession:
    """M46 step 4: create the new session file exclusively (parent = this session), write
    the receipt into it and read it back."""

    receipt: Mapping[str, JSON]


@frozen(kw_only=True)
class SwitchSession:
    """M46 step 5, M49: replace the session with the file at ``path``."""

    path: str
    returning: bool = False


@frozen(kw_only=True)
class SendTakeover:
    """M46 step 7: the takeover prompt, a user turn of the new session."""

    text: str


@frozen(kw_only=True)
class CompactNow:
    """``/ctx-memory compact``: ask Pi to compact (M25)."""


@frozen(kw_only=True)
class LogScope:
    """Whose diagnostics a report or the panel reads (M68): this session's log files and
    the verified direct parent's records up to its capture."""

    session_file: str
    parent_file: str | None = None
    captured_at: int | None = None


@frozen(kw_only=True)
class ExportReport:
    """``/ctx-memory session export`` (M68): the shell reads the logs and writes the report."""

    logs: LogScope


@frozen(kw_only=True)
class PanelRefresh:
    """M62–M63: the open panel shows this snapshot (one per event: refreshes coalesce) with
    the statistics the shell reads from ``logs`` (``None``: an unsaved session has none);
    no snapshot closes it."""

    snapshot: Mapping[str, JSON] | None
    logs: LogScope | None = None


@frozen(kw_only=True)
class LogRecord:
    """One diagnostics record (M64–M66): a kind and whitelisted enum/number/id fields."""

    kind: str
    fields: tuple[tuple[str, JSON], ...] = ()

    def to_json(self) -> dict[str, JSON]:
        return {"kind": self.kind, **dict(self.fields)}


@frozen(kw_only=True)
class CheckpointCompaction:
    """``{compaction: {summary, firstKeptEntryId, details}}`` for ``session_before_compact``
    (M32): the checkpoint with its complete boundary."""

    summary: str
    first_kept_entry_id: str
    details: Mapping[str, JSON]


HostEffect: TypeAlias = (
    Notify
    | AppendEntry
    | SetStatus
    | RequestGeneration
    | AbortGeneration
    | ScheduleHandoff
    | CreateSession
    | SwitchSession
    | SendTakeover
    | CompactNow
    | ExportReport
    | PanelRefresh
    | LogRecord
)
Value: TypeAlias = ToolResult | CheckpointCompaction | CancelResult | None


@frozen(kw_only=True)
class Update:
    """Replace fields of the state (``evolve``)."""

    changes: tuple[tuple[str, JSON], ...]


@frozen(kw_only=True)
class Raise:
    """Queue ``event`` for ``machine``, handled before anything queued earlier.

    A raised event reaches the machine only when its current state declares it (feedback
    between machines: "tell the owner", "cancel if running"); ``strict`` delivery — host
    events to the schedulers — raises :class:`~pictx_fsm.errors.IllegalEventError` instead.
    """

    machine: str
    event: str
    strict: bool = False


@frozen(kw_only=True)
class Emit:
    effect: HostEffect


@frozen(kw_only=True)
class Answer:
    value: Value


Intent: TypeAlias = Update | Raise | Emit | Answer


def update(**changes: JSON) -> Update:
    return Update(changes=tuple(changes.items()))


@frozen(kw_only=True)
class CmResult:
    """One step's outcome besides the next state: the hook's value and the host effects in
    order, plus the fired transitions for the audit record and coverage."""

    value: Value = None
    answered: bool = False
    """Whether the step decided the hook's value (``None`` included: Pi's default)."""
    effects: tuple[HostEffect, ...] = ()
    fired: tuple[str, ...] = ()
