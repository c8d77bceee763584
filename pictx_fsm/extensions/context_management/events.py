"""What reaches the pure step: one host event, the ``ctx`` facts, and read-only services.

Events are what a Pi 0.87 host reports (mapped from its hooks by an adapter, spec M6 and
Q3: the reply end RE is ``agent_settled``) plus the answers to effects the step asked for
(a generator reply, idle reached, a created session, a failed write). The context carries
the observations guards read (time, usage, model, pending input); services give read-only
access to session data. Nothing here performs I/O by itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeAlias

from attrs import field, frozen

from pictx_fsm.extensions.context_management.generation import GenerationReply
from pictx_fsm.extensions.context_management.notes import FileRecord
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.tree import SessionTree

__all__ = [
    "JSON",
    "BranchMoved",
    "CmContext",
    "CmEvent",
    "CmServices",
    "CommandIssued",
    "CompactionStarting",
    "DeadlineReached",
    "GenerationReplied",
    "HandoffReplied",
    "IdleReached",
    "ModelSelected",
    "NoParents",
    "ParentFiles",
    "ReplyEnded",
    "SessionEnding",
    "SessionStarted",
    "StorageFailed",
    "ToolCalled",
    "TurnEnded",
    "TurnStarted",
]

JSON: TypeAlias = Any


def _frozen_args(value: Mapping[str, JSON]) -> Mapping[str, JSON]:
    return dict(value)


@frozen(kw_only=True)
class SessionStarted:
    reason: str = "startup"


@frozen(kw_only=True)
class ReplyEnded:
    """RE (M6): a complete reply and its tool loop ended (``agent_settled``)."""


@frozen(kw_only=True)
class TurnStarted:
    """A turn began: a new assistant turn's recall quota (M23); user input arrived while an
    automatic handoff waited or prepared (M57, M59)."""


@frozen(kw_only=True)
class TurnEnded:
    """A foreground reply ended (``turn_end``): its usage for the diagnostics (M64, M70);
    ``None`` fields are usage the provider did not report."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float = 0.0
    stop_reason: str = "stop"
    aborted: bool = False
    """The foreground run was aborted (its signal fired, M41)."""


@frozen(kw_only=True)
class BranchMoved:
    """Tree navigation moved the leaf (``session_tree``)."""


@frozen(kw_only=True)
class ModelSelected:
    model: str | None


@frozen(kw_only=True)
class CompactionStarting:
    """``session_before_compact`` with Pi's preparation (its kept boundary, its file
    tracking) and whether custom instructions were given (M26)."""

    reason: str
    first_kept: str | None
    files: FileRecord = field(factory=FileRecord)
    custom_instructions: bool = False
    signal_aborted: bool = False


@frozen(kw_only=True)
class SessionEnding:
    reason: str = "quit"


@frozen(kw_only=True)
class ToolCalled:
    name: str
    arguments: Mapping[str, JSON] = field(factory=dict, converter=_frozen_args)


@frozen(kw_only=True)
class CommandIssued:
    args: str = ""


@frozen(kw_only=True)
class GenerationReplied:
    job: int
    reply: GenerationReply


@frozen(kw_only=True)
class DeadlineReached:
    """The run's 300 s deadline passed while its request was outstanding (M28)."""

    job: int


@frozen(kw_only=True)
class IdleReached:
    """``waitForIdle()`` resolved for a scheduled automatic handoff (M57)."""


@frozen(kw_only=True)
class StorageFailed:
    """Appending this step's entries failed (M44); ``during`` names what was written."""

    during: str


@frozen(kw_only=True)
class HandoffReplied:
    """The host's answer to a handoff effect: ``created``, ``create_failed``,
    ``switch_cancelled``, ``takeover_sent``, ``takeover_failed`` or ``return_cancelled``."""

    outcome: str
    target: str | None = None


CmEvent: TypeAlias = (
    SessionStarted
    | ReplyEnded
    | TurnStarted
    | TurnEnded
    | BranchMoved
    | ModelSelected
    | CompactionStarting
    | SessionEnding
    | ToolCalled
    | CommandIssued
    | GenerationReplied
    | DeadlineReached
    | IdleReached
    | StorageFailed
    | HandoffReplied
)


@frozen(kw_only=True)
class CmContext:
    """The ``ctx`` observations of one event."""

    now: int
    tokens: int | None = None
    context_window: int | None = None
    model: str | None = None
    pending_input: bool = False
    idle: bool = True
    """No run is active (a session switch needs an idle session)."""
    session_file: str | None = None
    cwd: str = ""


class ParentFiles(Protocol):
    """Read-only access to a parent session file (M24: ≤ 32 MiB, never other paths)."""

    def parent_branch(self, path: str, leaf: str) -> Sequence[Entry] | None:
        """The branch ending at ``leaf`` in the file at ``path``; ``None`` when the file is
        missing, unreadable, larger than the cap, or has no such entry."""


class NoParents:
    def parent_branch(self, path: str, leaf: str) -> Sequence[Entry] | None:
        return None


@frozen(kw_only=True)
class CmServices:
    """Read-only services: the current session tree and the parent-session reader."""

    tree: SessionTree
    parents: ParentFiles = field(factory=NoParents)
