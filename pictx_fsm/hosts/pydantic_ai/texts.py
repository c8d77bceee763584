"""What this host itself says: its notices and the texts of the errors it raises (exact).

The lifecycle's own notices (R43–R68, lifecycle §16) come from the runtime; these are the
pydantic-ai host's, about how it is set up and how pydantic-ai is used around it.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BUSY",
    "CANCELLED_ADVICE",
    "COMPACTION_REFUSED",
    "HISTORY_PROCESSOR_REFUSED",
    "LOGGER_NAME",
    "NO_WINDOW",
    "OVERFLOW_CODE",
    "REQUEST_ABORTED",
    "RESET_LOOP",
    "SETTING_BOTH",
    "SETTING_CHOICE",
    "SETTING_NOT_BOOL",
    "SETTING_NOT_TOKENS",
    "SETTING_PATH",
    "SETTING_POSITIVE",
    "WINDOW_FIX",
]

LOGGER_NAME: Final = "pictx_fsm.hosts.pydantic_ai"
"""The :mod:`logging` logger every notice of a session goes to (besides ``session.notices``)."""

NO_WINDOW: Final = (
    "pi-context: PiContext has no context_window: the budget (get_context_remaining), the "
    "guidance, the final warning and the automatic reset are off; give "
    "PiContext(context_window=<the model's window in tokens>) to turn them on."
)
"""Said when a ``PiContext`` is made without a window (level ``warning``)."""

SETTING_NOT_TOKENS: Final = "{field} must be a whole number of tokens (an int), got {value!r}"
SETTING_POSITIVE: Final = "{field} must be positive, got {value!r}"
SETTING_NOT_BOOL: Final = "{field} must be True or False, got {value!r}"
SETTING_PATH: Final = "{field} must be a path (str or os.PathLike), got {value!r}"
SETTING_CHOICE: Final = "{field} must be one of {choices}, got {value!r}"
SETTING_BOTH: Final = "give {first} or {second}, not both"
WINDOW_FIX: Final = (
    "; give a reserve that fits the window (LifecycleSettings(reserve_tokens=...)), or the "
    "model's real window"
)
"""Appended to a refused window: what to change."""

BUSY: Final = (
    "this PiSession is already running an agent run: a session has one leaf, so it takes one "
    "run at a time (await the other run, or give this agent its own PiSession)"
)

CANCELLED_ADVICE: Final = (
    " Start a fresh window between runs with session.command('wipe-memory'), then run again."
)
"""Appended to R68's notice in :class:`~.errors.RequestCancelledError`."""

HISTORY_PROCESSOR_REFUSED: Final = (
    "PiContext cannot run with {capability}: a history processor rewrites the run's history "
    "(ctx.messages) before each request, and the session would record every rewrite as a "
    "move to another branch of its tree. pi-context already decides what each request "
    "carries (the current context window, R67); drop the history processor, or make a "
    "request-only change in a capability's prepare_model_request instead."
)

COMPACTION_REFUSED: Final = (
    "PiContext cannot run with {capability}: it compacts the history (a compact_history "
    "hook), and pi-context cancels native compaction while its context windows are active "
    "(R62), recovering from an overflow with a reset window instead (R33–R36). pydantic-ai can "
    "veto a compaction only from an event listener, which would make every request a streamed "
    "one, so PiContext refuses the handler: drop {capability}, or PiContext, from the agent."
)

OVERFLOW_CODE: Final = "model_context_window_exceeded"
"""Prefixed to the text of pydantic-ai's ``ModelContextWindowExceededError`` when the text
has none of Pi's overflow phrases: it is one of them (R33), and names pydantic-ai's class."""

RESET_LOOP: Final = (
    "pi-context: a fresh window was at the reserve after its first reply ({tokens} tokens of "
    "PiContext.context_window {window}, {reserve} reserved): every window would reset at once "
    "again, so the run stops after two automatic resets in a row. Lower the reserve "
    "(LifecycleSettings(reserve_tokens=...)) or give the model's real window."
)
"""Raised (a :class:`~.errors.WindowTooSmallError`) instead of resetting a third time."""

REQUEST_ABORTED: Final = "Request was aborted"
"""The ``errorMessage`` of Pi's reply to a request the caller aborted (pi-host §5, ``d``)."""
