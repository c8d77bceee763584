"""What this host raises to its caller (typed, with the reason in the message).

Each is a pydantic-ai :class:`~pydantic_ai.exceptions.UserError` (how pydantic-ai reports a
misuse) and a :class:`~pictx_fsm.errors.PictxError` (how this project does)."""

from __future__ import annotations

from pydantic_ai.exceptions import UserError

from pictx_fsm.errors import PictxError

__all__ = [
    "CapabilityConflictError",
    "RequestCancelledError",
    "SessionBusyError",
    "SettingsError",
    "WindowTooSmallError",
]


class SettingsError(UserError, PictxError):
    """A setting no session could run with, refused when it is given (before any request):
    the message names the field."""


class WindowTooSmallError(SettingsError):
    """The window leaves a fresh window no room above the reserve: the first reply after an
    automatic reset was at the reserve again (the run stops rather than reset in a loop)."""


class SessionBusyError(UserError, PictxError):
    """A session runs one agent run at a time (its tree has one leaf)."""


class CapabilityConflictError(UserError, PictxError):
    """Another capability of the agent would rewrite the history the session mirrors (a
    history processor, a compaction handler); refused before the run's first request."""


class RequestCancelledError(UserError, PictxError):
    """The lifecycle cancelled a model request rather than send erased history (R68): the
    active window has no visible boot. ``session.command('wipe-memory')`` between runs starts
    a fresh window."""
