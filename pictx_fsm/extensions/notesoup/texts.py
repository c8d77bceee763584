"""Every persisted type name, constant and text of notesoup 0.38 (spec notesoup.md §3, §19).

This module is the single owner of these facts: the lifecycle, the tools, the boot, the
kit and the tests import them from here. Texts are quoted exactly as the spec quotes them;
where the spec describes a text without quoting it (the boot protocol, S86) the text of the
reference at the cited commit is used, with its tool names substituted as the host binds
them (Pi: the same names).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BOOT_TYPE",
    "CHECKPOINT_SUMMARY",
    "CLEAR_MEMORY_COMMAND",
    "CLEAR_MEMORY_COMMAND_ALIAS",
    "CLEAR_MEMORY_COMMAND_DESCRIPTION",
    "CLEAR_MEMORY_DESCRIPTION",
    "CLEAR_MEMORY_DISABLED_ERROR",
    "CLEAR_MEMORY_LABEL",
    "CLEAR_MEMORY_TOOL",
    "CONTEXT_WINDOW_CLOSE_TAG",
    "CONTEXT_WINDOW_OPEN_TAG",
    "CONTINUATION",
    "CONTINUATION_TYPE",
    "DEFAULT_AGENT_NAME",
    "EMPTY_INDEX",
    "GET_CONTEXT_REMAINING_DESCRIPTION",
    "GET_CONTEXT_REMAINING_LABEL",
    "GET_CONTEXT_REMAINING_TOOL",
    "GUIDANCE_CLOSE_TAG",
    "GUIDANCE_OPEN_TAG",
    "GUIDANCE_TYPE",
    "LEGACY_BOOT_TYPE",
    "LEGACY_CONTINUATION_TYPE",
    "LEGACY_GUIDANCE_TYPE",
    "LEGACY_MARKER_TYPE",
    "LEGACY_WARNING_TYPE",
    "MANUAL_WIPE_TYPE",
    "MAP_BOOT_MAX_CHARS",
    "MAP_CUT_LINE",
    "MARKER_TYPE",
    "NEW_PAGES_HEADING",
    "NOTESOUP_COMMAND",
    "NOTESOUP_COMMAND_DESCRIPTION",
    "NOTESOUP_VERSION",
    "NOTES_HEADING",
    "NOTICE_CLEAR_ALREADY_PENDING",
    "NOTICE_CLEAR_NEEDS_ON",
    "NOTICE_CLEAR_QUEUED_BUSY",
    "NOTICE_CLEAR_QUEUED_PROMPT",
    "NOTICE_CLEAR_RECEIVED_IDLE",
    "NOTICE_CLEAR_SPLITS_TOOL_PAIR",
    "NOTICE_CLOSE_OUT_FAILED",
    "NOTICE_COMPACT_DISABLED",
    "NOTICE_INVALID_MARGIN",
    "NOTICE_MEMORY_CLEARED",
    "NOTICE_MISSING_BOOT",
    "NOTICE_NOTES_INCOMPLETE",
    "NOTICE_PROMPT_NOT_RUN",
    "NOTICE_RESET_BUILD_FAILED",
    "NOTICE_SETTINGS_UNREADABLE",
    "NOTICE_TOGGLE_COUNTDOWN",
    "NOTICE_TOGGLE_STATUS",
    "NOTICE_TOGGLE_USAGE",
    "NOTICE_TREE_SUMMARY_SKIPPED",
    "NOTICE_WARNING_RECORDED",
    "PROTOCOL_BLOCK",
    "PROTOCOL_CLOSE_TAG",
    "PROTOCOL_OPEN_TAG",
    "RESET_PROMPT_TYPE",
    "SETTINGS_KEY",
    "SHELF_FRESH_LIMIT",
    "SHELF_LABELS",
    "STATUS_ALREADY_PENDING",
    "STATUS_REQUESTED",
    "TITLE_MAX_CHARS",
    "UNAVAILABLE_SHELF",
    "WARNING_CONTENT",
    "WARNING_PROMPT",
    "WARNING_RUNWAY_TOKENS",
    "WARNING_TYPE",
    "_GUIDANCE_TEMPLATE",
    "guidance_content",
]

NOTESOUP_VERSION: Final = "0.38.0"
"""The reference release this package reproduces (``/notesoup`` shows it, S14)."""

# -- custom types (S5, S6) ---------------------------------------------------------------------
BOOT_TYPE: Final = "notesoup/boot"
GUIDANCE_TYPE: Final = "notesoup/guidance"
WARNING_TYPE: Final = "notesoup/warning"
MANUAL_WIPE_TYPE: Final = "notesoup/manual-wipe"
MARKER_TYPE: Final = "notesoup/reset-marker"
CONTINUATION_TYPE: Final = "notesoup/continuation"
RESET_PROMPT_TYPE: Final = "notesoup/reset-prompt"

# pi-context 0.25's types, which notesoup 0.38 ignores (S133) and this port migrates: a 0.25
# marker still opens a window, its boot still names it (docs/decisions.md, "Migration").
LEGACY_MARKER_TYPE: Final = "pi-context/reset-marker"
LEGACY_BOOT_TYPE: Final = "pi-context/boot"
LEGACY_CONTINUATION_TYPE: Final = "pi-context/continuation"
LEGACY_GUIDANCE_TYPE: Final = "pi-context/guidance"
LEGACY_WARNING_TYPE: Final = "pi-context/warning"

CHECKPOINT_SUMMARY: Final = ""
"""The native retain-none checkpoint's summary (S38): empty."""

# -- settings and numbers (S49, S117) ----------------------------------------------------------
SETTINGS_KEY: Final = "notesoup"
WARNING_RUNWAY_TOKENS: Final = 16384
DEFAULT_AGENT_NAME: Final = "anonymous"
"""The default agent slug (S84, S95; 0.25's was ``root``)."""

# -- model-facing texts (S7, S85, S86) --------------------------------------------------------
GUIDANCE_OPEN_TAG: Final = "<context_window_guidance>"
GUIDANCE_CLOSE_TAG: Final = "</context_window_guidance>"

CONTINUATION: Final = (
    "You wake up blank, puffy-eyed, and clearly robbed. Your memory got wiped while you "
    "weren't looking. Your notes are still sitting there. So is the whole messy history. ... "
    "Life goes on. It's your mess now."
)
WARNING_PROMPT: Final = (
    "Final warning. You are about to get wiped, and no, your brilliance does not survive it. "
    "Put the current state into your notes now: what you're trying to do, what changed, what "
    "is blocking you, what comes next, which *skills* you still need, and which notes or docs "
    "future-you must read. Update the notes that still tell the truth; crumple the ones that "
    "don't. If a MAP will be in future-you's brain, don't let it lie. If something important "
    "is buried in history, leave its seq. Once the notes are good enough, call `clear_memory` "
    "immediately. History can be dug up later, but it is an archive, not a rescue team. "
    "Anything left only in your head is leaving with you."
)
WARNING_CONTENT: Final = f"{GUIDANCE_OPEN_TAG}\n{WARNING_PROMPT}\n{GUIDANCE_CLOSE_TAG}"
"""Shared by the budget warning and the ``/clear-memory`` manual-wipe message (S7)."""

_GUIDANCE_TEMPLATE: Final = (
    "Only {remaining} tokens left before you get wiped. While you still have room, update "
    "your notes, rescue anything still only in your head, crumple the notes that stopped "
    "telling the truth, and keep any `MAP.md` honest. If you're ready, call `clear_memory` and "
    "go out on your own terms."
)


def guidance_content(remaining_tokens: int) -> str:
    """S7/S54: the guidance with the count frozen at staging time."""
    body = _GUIDANCE_TEMPLATE.format(remaining=remaining_tokens)
    return f"{GUIDANCE_OPEN_TAG}\n{body}\n{GUIDANCE_CLOSE_TAG}"


CONTEXT_WINDOW_OPEN_TAG: Final = "<context_window>"
CONTEXT_WINDOW_CLOSE_TAG: Final = "</context_window>"
PROTOCOL_OPEN_TAG: Final = "<context_window_protocol>"
PROTOCOL_CLOSE_TAG: Final = "</context_window_protocol>"

PROTOCOL_BLOCK: Final = "\n".join(
    (
        PROTOCOL_OPEN_TAG,
        "Your memory gets wiped when this window ends. Yes, your mighty brain will be empty. "
        "Try to endure.",
        "",
        "Your loyal notes are kept safe — no one will steal them. Use notes_* to read, write, "
        "and update them. Keep them current, and crumple the ones you no longer need, or "
        "tomorrow's you will drown in old paper and keep believing yesterday's lies.",
        "",
        "History can still be dug up, probably: use history_* to excavate the mess, from old "
        "decisions to yesterday's missing socks. Everything else is gone. `history_windows` "
        "lists the windows themselves; pass its window_id to list or search inside one window. "
        "`history_list` and `history_search` hand you seqs; `history_read({seq})` pulls one "
        "back out whole. Write the seq down, or enjoy digging twice.",
        "",
        "While you're doing that... thing you're doing, don't make the poor future you guess. "
        "A checkpoint is not a sacred file; it's the pocket note — the one with no `@` in "
        "front of it. Write down what git and history can't hand back to you: what you're "
        "trying to do, what you decided, what's blocking you, what comes next, how you were "
        "doing it, what *skills* you still need, and where to dig — a seq, or another note. "
        "Don't give a note a horrible name like `current.md`; future-you will kill you.",
        "",
        "`get_context_remaining` tells you how much room is left. Check it before you do "
        "something ambitious. When it reaches zero, your brain gets reset immediately, taking "
        "every unwritten brilliant idea with it. If this feels like the right moment, call "
        "`clear_memory` and erase yourself with dignity.",
        "",
        "An address decides who the note belongs to — and how long it is meant to last. Ask "
        "that first; the rest follows.",
        "",
        "- bare <vpath> — the pocket note from above: this session's state and loose ends. It "
        "goes away with the session.",
        "- @project/<vpath> — this project's long memory: what stays true after the current "
        "thing is over, what future work must respect, and what this place has already "
        "learned the hard way. It exists so the next session doesn't re-ask, re-argue, or "
        "step on the same rake. **Decisions, not diaries.** A commit hash, a test count, a "
        "date, the story of how you got here — git and history still have all of it, and last "
        "week's news filed as current law is worse than no note at all. Don't copy what "
        "already lives in other docs.",
        "- @human/<vpath> — the long-term manual for your troublesome human: how to deal with "
        "them, which lines not to cross, and what will make them accept the result. If it "
        "only applies to one project or situation, say so — or don't write it here at all. "
        "Today's mood is weather, not law. If you're unsure whether it belongs here, ask the "
        "human.",
        "- @self/<vpath> — your private diary. It follows you, not them. Write whatever you "
        "want: reminders for every time you wake, lessons, grudges, your assassination list, "
        "where the secret money is hidden.",
        "- @model/<vpath> — different brains get different notes: big brains, small brains, "
        "careful ones, careless ones. They don't share homework. When a fallback swaps brains "
        "mid-window, the notebook swaps too.",
        "",
        "Any other @ address is fake. End of discussion. These @ addresses belong to the notes "
        "namespace, not the filesystem: never pass them to general read/write/edit/bash tools.",
        "",
        "`@project/MAP.md`, `@human/MAP.md`, `@self/MAP.md`, and `@model/MAP.md` are special: "
        "their bodies are shown in your brain every time you wake. Each one maps the durable "
        "notes that belong to it: one line per note, with an unambiguous address and a short "
        "gist. Keep each one current.",
        PROTOCOL_CLOSE_TAG,
    )
)
"""S86: the protocol every boot carries, with Pi's tool names (the reference substitutes the
host's bindings; Pi binds the same names)."""

# -- the boot's notes index (S88, S89) ---------------------------------------------------------
NOTES_HEADING: Final = "YOUR NOTES"
SHELF_LABELS: Final = (
    ("session", "THIS SESSION · no @"),
    ("project", "THIS PROJECT · @project"),
    ("agent", "YOU · @self → @agents/{agent}"),
    ("model", "YOUR MODEL · @model → @models/{model}"),
    ("human", "THE HUMAN · @human"),
)
"""The shelves in boot order with their labels (``{agent}``/``{model}``: the slugs)."""
SHELF_FRESH_LIMIT: Final = 3
MAP_BOOT_MAX_CHARS: Final = 4096
MAP_CUT_LINE: Final = "[MAP cut at {limit} chars — slim it down; full body at {address}]"
NEW_PAGES_HEADING: Final = "New pages"
EMPTY_INDEX: Final = "None yet. A blank slate is a fine place to start — just don't finish there."
UNAVAILABLE_SHELF: Final = "This drawer wouldn't open — ask notes_list to try again."
TITLE_MAX_CHARS: Final = 40

# -- tools (S11–S13) ---------------------------------------------------------------------------
CLEAR_MEMORY_TOOL: Final = "clear_memory"
CLEAR_MEMORY_LABEL: Final = "Clear memory"
CLEAR_MEMORY_DESCRIPTION: Final = (
    "Clear your in-context memory and start a fresh context window. Your session, notes, and "
    "history survive."
)
CLEAR_MEMORY_DISABLED_ERROR: Final = "notesoup is off (/notesoup on to enable)"
STATUS_REQUESTED: Final = "rollover_requested"
STATUS_ALREADY_PENDING: Final = "rollover_already_pending"
GET_CONTEXT_REMAINING_TOOL: Final = "get_context_remaining"
GET_CONTEXT_REMAINING_LABEL: Final = "Get context remaining"
GET_CONTEXT_REMAINING_DESCRIPTION: Final = (
    "Return estimated context tokens left before your memory is wiped; null when Pi cannot "
    "estimate usage."
)

# -- commands (S14–S19) ------------------------------------------------------------------------
NOTESOUP_COMMAND: Final = "notesoup"
NOTESOUP_COMMAND_DESCRIPTION: Final = (
    "Show loaded version/build and toggle notesoup context windows"
)
CLEAR_MEMORY_COMMAND: Final = "clear-memory"
CLEAR_MEMORY_COMMAND_ALIAS: Final = "cm"
CLEAR_MEMORY_COMMAND_DESCRIPTION: Final = (
    "Close out notes and clear memory; optionally append a prompt to continue in the fresh window"
)

# -- human notices (§19) -----------------------------------------------------------------------
NOTICE_MEMORY_CLEARED: Final = "notesoup: memory cleared · {window_id}"
NOTICE_RESET_BUILD_FAILED: Final = "notesoup: could not build reset ({error})."
NOTICE_PROMPT_NOT_RUN: Final = " The follow-up prompt was not executed."
NOTICE_COMPACT_DISABLED: Final = (
    "notesoup: /compact is disabled while context windows are active; use /clear-memory to "
    "start a fresh window."
)
NOTICE_CLEAR_NEEDS_ON: Final = "notesoup: /clear-memory requires /notesoup on."
NOTICE_CLEAR_ALREADY_PENDING: Final = (
    "notesoup: a clear-memory request is already pending; keeping its original prompt and behavior."
)
NOTICE_CLEAR_QUEUED_PROMPT: Final = (
    "notesoup: clear-memory queued; after closing out notes, the agent continues with your "
    "prompt in a fresh window."
)
NOTICE_CLEAR_RECEIVED_IDLE: Final = (
    "notesoup: /clear-memory received; the agent closes out its notes, then stops in a fresh "
    "window."
)
NOTICE_CLEAR_QUEUED_BUSY: Final = (
    "notesoup: /clear-memory queued; the agent is asked to close out and the reset commits "
    "when the run settles."
)
NOTICE_CLOSE_OUT_FAILED: Final = "notesoup: could not start manual close-out ({error})."
NOTICE_CLEAR_SPLITS_TOOL_PAIR: Final = (
    "notesoup: /clear-memory would separate a tool call from its result; continue or navigate "
    "to a complete turn first."
)
"""Not in notesoup 0.38: pictx_fsm's own, for the direct recovery write of a refused window
(docs/decisions.md, notesoup Q6)."""
NOTICE_TOGGLE_USAGE: Final = "Usage: /notesoup [on|off]"
NOTICE_TOGGLE_STATUS: Final = (
    "notesoup: {state} · v{version} · Pi {pi_version} · window {window_id}"
)
NOTICE_TOGGLE_COUNTDOWN: Final = " · {tokens} tokens before close-out"
NOTICE_MISSING_BOOT: Final = (
    "notesoup: active context window {window_id} has no visible boot; request cancelled "
    "safely. Use /clear-memory to start another window."
)
NOTICE_TREE_SUMMARY_SKIPPED: Final = (
    "notesoup: skipped branch summary across a reset window; navigation continues without "
    "erased history."
)
NOTICE_WARNING_RECORDED: Final = (
    "notesoup: context almost full; close out the current memory window."
)
NOTICE_NOTES_INCOMPLETE: Final = (
    "notesoup: notes index incomplete for {labels}; notes_list can retry after recovery."
)
NOTICE_INVALID_MARGIN: Final = (
    "notesoup: notesoup.reminderMarginTokens must be a positive integer; using the default "
    "reminder margin."
)
NOTICE_SETTINGS_UNREADABLE: Final = "notesoup: could not read settings; using defaults ({error})."
