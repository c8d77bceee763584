"""What this host raises to its caller (typed, with the reason in the message)."""

from __future__ import annotations

from pydantic_ai.exceptions import UserError


class SessionBusyError(UserError):
    """A session runs one agent run at a time (its tree has one leaf)."""


class RequestCancelledError(UserError):
    """The lifecycle cancelled a model request rather than send erased history (R68): the
    active window has no visible boot. ``/wipe-memory`` (``PiContext.wipe_memory()``) starts
    a fresh window."""
