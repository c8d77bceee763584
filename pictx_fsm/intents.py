"""Intents: what a transition's actions ask the runtime to do, as data.

Actions are pure functions of the facts. Where a decision needs a service the machine must
not touch — minting a window id, rendering a boot from the notes snapshot, the runtime's
memory of staged reminders — the action returns an intent, and the runtime carries it out
after the step (its interpretation is in :mod:`pictx_fsm.runtime`). Host effects that need
nothing more (a notice, a cancel) are returned directly.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from attrs import frozen

from pictx_fsm.effects import HostEffect

ReminderKind: TypeAlias = Literal["pi-context/guidance", "pi-context/warning"]
ResetTrigger: TypeAlias = Literal["turn_end", "overflow"]


@frozen(kw_only=True)
class ToolReply:
    """The tool result a transition decided (R16, R17)."""

    payload: Any
    terminate: bool = False


@frozen(kw_only=True)
class BuildReset:
    """Mint a window and append marker → boot → continuation as boundary drafts (R28, R35)."""

    trigger: ResetTrigger


@frozen(kw_only=True)
class PersistWipe:
    """``/wipe-memory``: append the marker, send the boot (and the continuation) now (R59)."""


@frozen(kw_only=True)
class RememberResetNotice:
    window_id: str


@frozen(kw_only=True)
class AnnounceResets:
    window_ids: tuple[str, ...]


@frozen(kw_only=True)
class ForgetResetNotices:
    pass


@frozen(kw_only=True)
class StageReminder:
    """Stage a reminder for ``window_id`` (R51); a warning is also injected into the request."""

    kind: ReminderKind
    window_id: str
    content: str


@frozen(kw_only=True)
class DropReminder:
    kind: ReminderKind


@frozen(kw_only=True)
class CommitReminder:
    """Turn the staged reminder into a hidden ``custom_message`` draft (R53)."""

    kind: ReminderKind


@frozen(kw_only=True)
class ForgetReminderNotice:
    kind: ReminderKind


@frozen(kw_only=True)
class SendBoot:
    """Send a boot for ``window_id`` with ``triggerTurn:false`` (R64)."""

    window_id: str
    previous_window_id: str | None
    reset_boot: bool


@frozen(kw_only=True)
class SendContinuation:
    """Send the continuation with ``triggerTurn:false`` (D4 repair)."""


@frozen(kw_only=True)
class ProjectMessages:
    """Return the reset or root projection of the request's messages (R67, R69)."""

    reset_window: bool


@frozen(kw_only=True)
class CancelRequest:
    """Abort the request and send only the folded system head (R68)."""


@frozen(kw_only=True)
class RememberMissingBoot:
    window_id: str


@frozen(kw_only=True)
class InjectWarning:
    """Append the staged warning message to the current provider request (R51.2)."""

    content: str


@frozen(kw_only=True)
class Dispatch:
    """Raise an event on another machine (for example ``off`` clears the reminders)."""

    machine: str
    event: str


@frozen(kw_only=True)
class ReportStatus:
    """``pi-context: <on|off> · <build> · Pi <version>`` after the toggle moved (R60)."""


@frozen(kw_only=True)
class CancelCompaction:
    """Return ``{cancel: true}`` from ``session_before_compact`` (R62)."""


@frozen(kw_only=True)
class SkipBranchSummary:
    """Return ``{summary: {summary: ""}}`` from ``session_before_tree`` (R75)."""


Intent: TypeAlias = (
    ToolReply
    | BuildReset
    | PersistWipe
    | RememberResetNotice
    | AnnounceResets
    | ForgetResetNotices
    | StageReminder
    | DropReminder
    | CommitReminder
    | ForgetReminderNotice
    | SendBoot
    | SendContinuation
    | ProjectMessages
    | CancelRequest
    | RememberMissingBoot
    | InjectWarning
    | Dispatch
    | ReportStatus
    | CancelCompaction
    | SkipBranchSummary
)
Outcome: TypeAlias = Intent | HostEffect
