"""Typed errors. Each names the input at fault (file, line, field) so a user can act on it."""

from __future__ import annotations

__all__ = [
    "AuditChainError",
    "IllegalEventError",
    "ModelDocumentError",
    "PictxError",
    "SessionWriteError",
    "UnreadableInputError",
    "UsageError",
]


class PictxError(Exception):
    """Base of every error pictx_fsm raises on user input; ``exit_code`` is the CLI's."""

    exit_code: int = 2


class UsageError(PictxError):
    """A command line that cannot be carried out (missing file, bad option value)."""


class UnreadableInputError(PictxError):
    """An input file that cannot be read at all (missing, a directory, not UTF-8, no header)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ModelDocumentError(PictxError):
    """A machine declaration in ``models/`` that does not load: names document and element."""

    def __init__(self, document: str, where: str, reason: str) -> None:
        super().__init__(f"{document}: {where}: {reason}")
        self.document = document
        self.where = where
        self.reason = reason


class IllegalEventError(PictxError):
    """An event that no declared transition of a machine accepts in its current state."""

    def __init__(self, machine: str, state: str, event: str, detail: str = "") -> None:
        message = f"machine {machine!r} in state {state!r} has no transition for {event!r}"
        super().__init__(message + (f" ({detail})" if detail else ""))
        self.machine = machine
        self.state = state
        self.event = event


class AuditChainError(PictxError):
    """An audit log whose hash chain is broken; ``line`` is the first bad record."""

    exit_code = 1

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class SessionWriteError(PictxError):
    """A session file that cannot be written (exists already on create, missing on append,
    permission, disk full); names the file."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
