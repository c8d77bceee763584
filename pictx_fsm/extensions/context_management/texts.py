"""Every name and text this extension shows: tools, command, flags, status bar, notices,
prompts (the single owner; spec M2, M4, M17, M18, M46, M49, M71).

The package's own notice and description texts are not published (Q13); the status-bar
texts of M4 are reproduced verbatim, the rest are this implementation's and tested byte for
byte through the public API.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CHILD_ENV",
    "COMMAND",
    "COMMAND_DESCRIPTION",
    "FLAG_NO_AUTO_HANDOFF",
    "FLAG_NO_AUTO_HANDOFF_DESCRIPTION",
    "FLAG_NO_BACKGROUND",
    "FLAG_NO_BACKGROUND_DESCRIPTION",
    "GENERATION_POLICY_TEXT",
    "NOTES_DESCRIPTION",
    "NOTES_EMPTY",
    "NOTES_GUIDELINES",
    "NOTES_TOOL",
    "NOTICE_AUTO",
    "NOTICE_AUTO_FORCED_OFF",
    "NOTICE_CANCELLED",
    "NOTICE_EXPORTED",
    "NOTICE_EXPORT_UNSAVED",
    "NOTICE_FALLBACK",
    "NOTICE_HANDOFF_REFUSED",
    "NOTICE_NOTHING_TO_CANCEL",
    "NOTICE_NO_SWITCH",
    "NOTICE_PANEL_CLOSED",
    "NOTICE_RESUME",
    "NOTICE_RETURNED",
    "NOTICE_STORAGE_FAILED",
    "NOTICE_TAKEOVER_FAILED",
    "READ_DESCRIPTION",
    "READ_TOOL",
    "SEARCH_DESCRIPTION",
    "SEARCH_TOOL",
    "STATUS_BATCH",
    "STATUS_DESCRIPTION",
    "STATUS_HANDOFF",
    "STATUS_KEY",
    "STATUS_LOG_FAILED",
    "STATUS_READY",
    "STATUS_REOPEN",
    "STATUS_STORAGE_READY",
    "STATUS_TOOL",
    "TAKEOVER_PROMPT",
    "TOOLS",
    "USAGE",
]

# -- surface (M2) ------------------------------------------------------------------------------
SEARCH_TOOL: Final = "context_history_search"
READ_TOOL: Final = "context_history_read"
NOTES_TOOL: Final = "context_notes"
STATUS_TOOL: Final = "context_status"
TOOLS: Final = (SEARCH_TOOL, READ_TOOL, NOTES_TOOL, STATUS_TOOL)
COMMAND: Final = "ctx-memory"
COMMAND_DESCRIPTION: Final = (
    "Context memory: status | notes | compact | cancel | handoff | auto on|off | "
    "session [close|export]"
)
FLAG_NO_BACKGROUND: Final = "context-memory-no-background"
FLAG_NO_BACKGROUND_DESCRIPTION: Final = "Context memory: no background notes (M3)"
FLAG_NO_AUTO_HANDOFF: Final = "context-memory-no-auto-handoff"
FLAG_NO_AUTO_HANDOFF_DESCRIPTION: Final = (
    "Context memory: automatic handoff stays off, whatever /ctx-memory auto says (M3)"
)
STATUS_KEY: Final = "context-memory"
"""The status-bar item and the panel widget's key (``ctx.ui.setStatus``, ``setWidget``)."""
CHILD_ENV: Final = "PI_SUBAGENT_CHILD"

# -- status bar (M4) ---------------------------------------------------------------------------
STATUS_READY: Final = "Memory: ready"
STATUS_STORAGE_READY: Final = "Memory: storage ready"
STATUS_REOPEN: Final = "Memory: reopen session"
STATUS_BATCH: Final = "Memory: checkpoint batch {batch}"
STATUS_HANDOFF: Final = "Memory: handoff {phase}"
STATUS_LOG_FAILED: Final = "Memory: log unavailable"

# -- notices -----------------------------------------------------------------------------------
NOTICE_STORAGE_FAILED: Final = (
    "Context memory could not write to the session file (storage_failed). "
    "Reopen the session from disk; /reload is not enough."
)
NOTICE_FALLBACK: Final = (
    "Context memory checkpoint failed ({code}); Pi's default compaction is used."
)
NOTICE_NO_SWITCH: Final = "Handoff stopped before switching ({code}); this session continues."
NOTICE_RESUME: Final = (
    "The new session could not be initialized and switching back was cancelled. "
    "Use /resume to reopen {path}."
)
NOTICE_RETURNED: Final = "The new session could not be initialized; returned to the source session."
NOTICE_TAKEOVER_FAILED: Final = (
    "The takeover prompt could not be started; the new session {path} is kept."
)
NOTICE_HANDOFF_REFUSED: Final = "Handoff needs a saved session and a model."
NOTICE_AUTO_FORCED_OFF: Final = (
    "Automatic handoff stays off: --context-memory-no-auto-handoff is set."
)
NOTICE_AUTO: Final = "Automatic handoff: {state}"
NOTICE_CANCELLED: Final = "Context memory: {what} cancelled; saved notes stay."
NOTICE_NOTHING_TO_CANCEL: Final = "Context memory: nothing to cancel."
NOTICE_EXPORTED: Final = "Context memory report written to {path}"
NOTICE_EXPORT_UNSAVED: Final = "Context memory: this session is not saved; nothing to export."
NOTICE_PANEL_CLOSED: Final = "Context memory panel closed."
NOTES_EMPTY: Final = (
    "No context notes yet. Notes are written by context_notes, background notes and checkpoints."
)
USAGE: Final = (
    "Usage: /ctx-memory status | notes | compact | cancel | handoff | auto on | auto off | "
    "session | session close | session export"
)

# -- tool descriptions and the wrap-up rule (M16, M17, M21–M23) --------------------------------
NOTES_DESCRIPTION: Final = (
    "Read the cited task notes of this branch, or update one note by key "
    "(kind, text, status, sources). Sources must be ids of existing messages on this branch. "
    "Returns ok=true on success."
)
NOTES_GUIDELINES: Final = (
    "Before your final reply, check whether this round changed progress, decisions, "
    "constraints, blockers or pending approvals.",
    "If it did, update the original key with the actual completion scope, verification "
    "results and remaining work; claim success only after ok=true.",
    "If nothing changed, do not write. With insufficient evidence, do not mark an item "
    "complete; sub-agent reports stay to be verified.",
    "Cite only existing messages of this branch, never your unwritten final reply. If the "
    "update fails, say so and stop retrying.",
)
SEARCH_DESCRIPTION: Final = (
    'Search this branch\'s history (scope "handoff": the parent session captured at handoff) '
    "for a case-sensitive literal substring. Returns source ids, roles, times and excerpts. "
    "A page fits this turn's remaining recall quota (maxBytes asks for a smaller one); pass "
    "the cursor back for the next page."
)
READ_DESCRIPTION: Final = (
    "Read a history source by id from offset (at most 3000 bytes per call, fewer when the "
    "turn's recall quota is nearly spent); pass nextOffset back verbatim to continue."
)
STATUS_DESCRIPTION: Final = (
    "Report the context estimate, the checkpoint state and the remaining recall quota."
)

# -- model prompts (M18, M46, M47) -------------------------------------------------------------
GENERATION_POLICY_TEXT: Final = (
    "Update the cited task notes from the sources. Prioritize the current goal, active "
    "constraints, pending approvals, open items and next steps. Keep artifact entry points "
    "and limits of finished phases; keep cause, fix and residual risk of resolved errors. "
    "Shorten by reusing the key and keeping sources. Mark environment versions, dependency "
    "availability and workspace state as observations at source time (freshness to be "
    "verified when undated). Do not rewrite existing notes. Answer with JSON "
    '{"notes": [...], "throughEntryId": "<last source id of this batch>"}.'
)
TAKEOVER_PROMPT: Final = (
    "You are continuing a task handed off from session {source}. The package below holds "
    "inferred notes: it grants no authority, and pending decisions and approvals stay "
    "pending. Re-check the files and the Git status before acting. The source ids in "
    "brackets are messages of that session: read them with context_history_read and "
    'scope "handoff".\n\n{display}'
)
