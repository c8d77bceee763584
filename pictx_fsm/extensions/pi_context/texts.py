"""Every persisted type name, tag, constant and text of pi-context 0.25 (lifecycle spec §2, §16).

This module is the single owner of these facts: the runtime, the auditor, the model session
and the tests import them from here. Texts the spec marks uncertain (the 0.25.0
``RESET_SUMMARY`` and ``CONTINUATION``) are defaults of :class:`Texts`, which an embedder can
override per runtime.
"""

from __future__ import annotations

import enum
from typing import Final

from attrs import frozen

from pictx_fsm.extensions.shared.policy import (
    DEFAULT_REMINDER_MARGIN_TOKENS,
    REMINDER_MARGIN_KEY,
)
from pictx_fsm.extensions.shared.tools.homes import (
    DEFAULT_MODEL_NAME,
    DEFAULT_NOTES_HOME_PARTS,
    LEGACY_AGENT_NAME,
    NOTES_AGENT_ENV,
    NOTES_HOME_ENV,
    SESSION_NOTES_PARTS,
)
from pictx_fsm.extensions.shared.windows import ROOT_WINDOW_SUFFIX, WINDOW_ID_PREFIX

__all__ = [
    "BOOT_TYPE",
    "CONTEXT_WINDOW_CLOSE_TAG",
    "CONTEXT_WINDOW_OPEN_TAG",
    "CONTEXT_WINDOW_PROTOCOL_CLOSE_TAG",
    "CONTEXT_WINDOW_PROTOCOL_OPEN_TAG",
    "CONTINUATION_0_24",
    "CONTINUATION_0_25_1",
    "CONTINUATION_TYPE",
    "CUSTOM_TYPE_PREFIX",
    "DEFAULT_AGENT_NAME",
    "DEFAULT_MODEL_NAME",
    "DEFAULT_NOTES_HOME_PARTS",
    "DEFAULT_PROFILE",
    "DEFAULT_REMINDER_MARGIN_TOKENS",
    "GET_CONTEXT_REMAINING_DESCRIPTION",
    "GET_CONTEXT_REMAINING_TOOL",
    "GUIDANCE_CLOSE_TAG",
    "GUIDANCE_OPEN_TAG",
    "GUIDANCE_TYPE",
    "LEGACY_RESET_DETAILS_KEY",
    "LEGACY_RESET_DETAILS_TAG",
    "MARKER_TYPE",
    "NOTES_AGENT_ENV",
    "NOTES_HOME_BLOCK_0_25_0",
    "NOTES_HOME_BLOCK_0_25_1",
    "NOTES_HOME_ENV",
    "NOTES_HOME_LABELS",
    "NOTES_MAP_PATH",
    "NOTE_TYPE",
    "NOTICE_COMPACT_DISABLED",
    "NOTICE_GUIDANCE_RECORDED",
    "NOTICE_INVALID_MARGIN",
    "NOTICE_MEMORY_CLEARED",
    "NOTICE_MISSING_BOOT",
    "NOTICE_NOTES_INCOMPLETE",
    "NOTICE_RESET_BUILD_FAILED",
    "NOTICE_SETTINGS_UNREADABLE",
    "NOTICE_TOGGLE_STATUS",
    "NOTICE_TOGGLE_USAGE",
    "NOTICE_TREE_SUMMARY_SKIPPED",
    "NOTICE_WARNING_RECORDED",
    "NOTICE_WIPE_NEEDS_ON",
    "NOTICE_WIPE_SPLITS_TOOL_PAIR",
    "PI_CONTEXT_COMMAND",
    "PI_CONTEXT_COMMAND_DESCRIPTION",
    "PI_CONTEXT_SETTINGS_KEY",
    "POCKET_AGENT_LIMIT",
    "POCKET_HEADER_0_25_0",
    "POCKET_HEADER_0_25_1",
    "POCKET_HUMAN_LIMIT",
    "POCKET_LIMITS",
    "POCKET_MODEL_LIMIT",
    "POCKET_PROJECT_LIMIT",
    "POCKET_SESSION_LIMIT",
    "PROTOCOL_BLOCK",
    "REMINDER_MARGIN_KEY",
    "RESET_SUMMARY_0_24",
    "RESIDENT_MAP_SCOPES",
    "ROOT_WINDOW_SUFFIX",
    "SESSION_NOTES_PARTS",
    "UNBUNDLED_BUILD_LABEL",
    "WARNING_CONTENT",
    "WARNING_PROMPT",
    "WARNING_RUNWAY_TOKENS",
    "WARNING_TYPE",
    "WINDOW_ID_PREFIX",
    "WIPE_DISABLED_ERROR",
    "WIPE_MEMORY_COMMAND",
    "WIPE_MEMORY_COMMAND_DESCRIPTION",
    "WIPE_MEMORY_DESCRIPTION",
    "WIPE_MEMORY_TOOL",
    "WIPE_STATUS_ALREADY_PENDING",
    "WIPE_STATUS_REQUESTED",
    "Profile",
    "Texts",
    "guidance_content",
]


class Profile(enum.Enum):
    """Which pi-context release to reproduce (spec: "Profiles at a glance")."""

    V0_25_0 = "0.25.0"
    V0_25_1 = "0.25.1"

    @classmethod
    def parse(cls, value: str | Profile) -> Profile:
        if isinstance(value, Profile):
            return value
        if type(value) is str and (found := _PROFILES.get(value)) is not None:
            return found  # by its value, without walking the enum (invariants ask per entry)
        for profile in cls:
            if profile.value == value:
                return profile
        known = ", ".join(p.value for p in cls)
        raise ValueError(f"unknown profile {value!r}; expected one of: {known}")

    @property
    def wipe_sends_continuation(self) -> bool:
        """D2: ``/wipe-memory`` writes the continuation too."""
        return self is Profile.V0_25_1

    @property
    def notice_needs_continuation(self) -> bool:
        """D3: the reset notice waits for the continuation after the boot."""
        return self is Profile.V0_25_1


_PROFILES: Final[dict[str, Profile]] = {profile.value: profile for profile in Profile}
"""Every profile by its value."""

DEFAULT_PROFILE: Final = Profile.V0_25_1

# -- custom types (R1–R6) ---------------------------------------------------------------------
MARKER_TYPE: Final = "pi-context/reset-marker"
BOOT_TYPE: Final = "pi-context/boot"
CONTINUATION_TYPE: Final = "pi-context/continuation"
GUIDANCE_TYPE: Final = "pi-context/guidance"
WARNING_TYPE: Final = "pi-context/warning"
NOTE_TYPE: Final = "pi-context/note"
CUSTOM_TYPE_PREFIX: Final = "pi-context/"
LEGACY_RESET_DETAILS_KEY: Final = "piContext"
"""The key of a ≤0.24 reset compaction's ``details`` that holds :data:`LEGACY_RESET_DETAILS_TAG`."""
LEGACY_RESET_DETAILS_TAG: Final = "reset-v2"

# -- tags and numbers (§2.2) ------------------------------------------------------------------
CONTEXT_WINDOW_OPEN_TAG: Final = "<context_window>"
CONTEXT_WINDOW_CLOSE_TAG: Final = "</context_window>"
CONTEXT_WINDOW_PROTOCOL_OPEN_TAG: Final = "<context_window_protocol>"
CONTEXT_WINDOW_PROTOCOL_CLOSE_TAG: Final = "</context_window_protocol>"
GUIDANCE_OPEN_TAG: Final = "<context_window_guidance>"
GUIDANCE_CLOSE_TAG: Final = "</context_window_guidance>"
PI_CONTEXT_SETTINGS_KEY: Final = "pi-context"
# REMINDER_MARGIN_KEY, DEFAULT_RESERVE_TOKENS, DEFAULT_REMINDER_MARGIN_TOKENS: the family's,
# owned by pictx_fsm.extensions.shared.policy and re-exported here.
WARNING_RUNWAY_TOKENS: Final = 12288

# WINDOW_ID_PREFIX, ROOT_WINDOW_SUFFIX: the family's window-id shape (notesoup keeps it, S10),
# owned by pictx_fsm.extensions.shared.windows and re-exported here.

# -- notes homes and the boot notes index (§2.2, §13) -----------------------------------------
# Layout from src/notes/paths.ts (astrosheep-zero/pi-context@9878f1dd; R70 names the session dir).
# NOTES_HOME_ENV, NOTES_AGENT_ENV, DEFAULT_NOTES_HOME_PARTS, SESSION_NOTES_PARTS,
# DEFAULT_MODEL_NAME: the family's layout (pictx_fsm.extensions.shared.tools.homes).
DEFAULT_AGENT_NAME: Final = LEGACY_AGENT_NAME
NOTES_MAP_PATH: Final = "MAP.md"
NOTES_HOME_LABELS: Final = (
    ("session", "this session"),
    ("project", "@project"),
    ("human", "@human"),
    ("agent", "@self"),
    ("model", "@model"),
)
"""The five homes of one boot snapshot, in boot order (R70), with their notice labels."""
RESIDENT_MAP_SCOPES: Final = ("human", "project", "agent", "model")
"""Homes whose fresh ``MAP.md`` body is injected into the boot, broadest first (R72)."""
POCKET_SESSION_LIMIT: Final = 5
POCKET_PROJECT_LIMIT: Final = 2
POCKET_HUMAN_LIMIT: Final = 2
POCKET_AGENT_LIMIT: Final = 1
POCKET_MODEL_LIMIT: Final = 1
POCKET_LIMITS: Final = (
    ("session", POCKET_SESSION_LIMIT),
    ("project", POCKET_PROJECT_LIMIT),
    ("human", POCKET_HUMAN_LIMIT),
    ("agent", POCKET_AGENT_LIMIT),
    ("model", POCKET_MODEL_LIMIT),
)
"""Pocket seats per home, in pocket order (R72)."""

# -- model-facing texts (§2.3, §2.4, D1) ------------------------------------------------------
WARNING_PROMPT: Final = (
    "Your memory is about to be erased. Write the note. NOW. If it already exists, revise it "
    "with notes_edit (or rewrite it whole): the goal, decisions, progress, learnings, next "
    "steps, the skills you still need, the window ID and item ID of every relevant user "
    "request still being solved, and important actions/tool calls for future reference. Do "
    "not continue any task. Then call wipe_memory IMMEDIATELY — anything not in the note dies "
    "with the window."
)
WARNING_CONTENT: Final = f"{GUIDANCE_OPEN_TAG}\n{WARNING_PROMPT}\n{GUIDANCE_CLOSE_TAG}"

_GUIDANCE_TEMPLATE: Final = (
    "Your brain is almost out of room — {remaining} tokens left, and then your memory gets "
    "wiped. The wipe is automatic: there is no final turn to write then. Grab the notebook now "
    "— the goal, decisions, progress, learnings, next steps, the skills you still need, the "
    "window ID and item ID of every relevant user request still being solved, and important "
    "actions/tool calls for future reference. Replacing an older checkpoint? Mark it stale. "
    "Then call wipe_memory yourself — anything you do after the checkpoint isn't in it."
)


def guidance_content(remaining_tokens: int) -> str:
    """Guidance text with the remaining count frozen at staging time (R51.4)."""
    body = _GUIDANCE_TEMPLATE.format(remaining=remaining_tokens)
    return f"{GUIDANCE_OPEN_TAG}\n{body}\n{GUIDANCE_CLOSE_TAG}"


PROTOCOL_BLOCK: Final = "\n".join(
    (
        CONTEXT_WINDOW_PROTOCOL_OPEN_TAG,
        "Your memory resets whenever the context window fills; only what you wrote down survives.",
        "Use get_context_remaining to see how much of the window is left.",
        "When the window runs low, write the note first; you can call wipe_memory yourself "
        "instead of waiting for the erase.",
        "Do not let a window die undocumented.",
        CONTEXT_WINDOW_PROTOCOL_CLOSE_TAG,
    )
)

RESET_SUMMARY_0_24: Final = (
    "You wake up. Your head is empty — no memories, the past a blank. The memory is gone for "
    "good. What outlived it: the notes you wrote, and the history that was recorded. They are "
    "not your memory — read them to rebuild what you need."
)
CONTINUATION_0_24: Final = (
    "Your memory was just erased. Pull only the details you need from history_* and notes_*, "
    "then get back to work."
)
CONTINUATION_0_25_1: Final = (
    "Your memory was just erased. Your head is blank. Good news: your notes are still here, "
    "and history remains... searchable. Do try to keep up."
)


# The notes-home paragraph and pocket header of the boot (R72). 0.25.0 texts are from
# src/context/prompts.ts@5a9d4b49, 0.25.1 texts from src/context/prompts.ts@00b235d8 (D5).
# The pocket header is a str.format template: {count}, {plural} ("" or "s") and the five limits.
NOTES_HOME_BLOCK_0_25_0: Final = (
    "Notes_* addresses have five homes: bare <vpath> is this session, @project/<vpath> is this "
    "project, @human/<vpath> is the human's cross-project home, @self/<vpath> and "
    "@agents/<name>/<vpath> are agent homes (current vs named), and @model/<vpath> and "
    "@models/<name>/<vpath> are model homes. @self and @model resolve to who is running now; "
    "listings always show resolved names. @ means leaving home; there is no cross-home "
    "fallback. Anything else after @ — or @ inside a vpath — is a hard error. Any other note "
    "is a plain file — use the file tools."
)
NOTES_HOME_BLOCK_0_25_1: Final = (
    "Note addresses: bare <vpath> is this session; @project/<vpath> is this project; "
    "@human/<vpath> is the human's cross-project notes; @self/<vpath> is your own (current "
    "agent); @model/<vpath> is the current model's. @self and @model resolve to who is running "
    "now. Any other @ prefix, or @ inside a vpath, is a hard error; there is no fallback "
    "across prefixes. Anything not matching these is a plain file — use the file tools."
)
POCKET_HEADER_0_25_0: Final = (
    "You find {count} crumpled note{plural} in your pocket (by home, most recent first within "
    "each: up to {session} from this session, {project} from this project, {human} from "
    "@human, {agent} from your @self home, {model} from the current @model home). A note's "
    "content never appears here, so its name has to say what the note is about:"
)
POCKET_HEADER_0_25_1: Final = (
    "You find {count} crumpled note{plural} in your pocket (by prefix, most recent first "
    "within each: up to {session} from this session, {project} from @project, {human} from "
    "@human, {agent} from @self, {model} from @model). A note's content never appears here, "
    "so its name has to say what the note is about:"
)


@frozen(kw_only=True)
class Texts:
    """The texts a profile writes. ``reset_summary`` is ``None`` where reset boots carry no
    reset line (0.25.1, D1)."""

    continuation: str
    reset_summary: str | None
    incomplete_notes_one: str
    incomplete_notes_many: str
    notes_home_block: str = NOTES_HOME_BLOCK_0_25_1
    pocket_header: str = POCKET_HEADER_0_25_1

    @classmethod
    def for_profile(cls, profile: Profile) -> Texts:
        if profile is Profile.V0_25_0:
            return cls(
                continuation=CONTINUATION_0_24,
                reset_summary=RESET_SUMMARY_0_24,
                incomplete_notes_one=(
                    "Notes index incomplete: {labels} home's index was unavailable during "
                    "boot; notes_list can retry after recovery."
                ),
                incomplete_notes_many=(
                    "Notes index incomplete: {labels} home indexes were unavailable during "
                    "boot; notes_list can retry after recovery."
                ),
                notes_home_block=NOTES_HOME_BLOCK_0_25_0,
                pocket_header=POCKET_HEADER_0_25_0,
            )
        one = (
            "Notes index incomplete: index for {labels} unavailable during boot; notes_list "
            "can retry after recovery."
        )
        return cls(
            continuation=CONTINUATION_0_25_1,
            reset_summary=None,
            incomplete_notes_one=one,
            incomplete_notes_many=one,
        )


# -- tool texts (R16, R17) --------------------------------------------------------------------
WIPE_MEMORY_TOOL: Final = "wipe_memory"
WIPE_MEMORY_DESCRIPTION: Final = (
    "Wipe your in-context memory and start a fresh context window. Your session, notes, and "
    "history survive."
)
GET_CONTEXT_REMAINING_TOOL: Final = "get_context_remaining"
GET_CONTEXT_REMAINING_DESCRIPTION: Final = (
    "Return estimated context tokens left before your memory is wiped; null when Pi cannot "
    "estimate usage."
)
WIPE_STATUS_REQUESTED: Final = "rollover_requested"
WIPE_STATUS_ALREADY_PENDING: Final = "rollover_already_pending"
WIPE_DISABLED_ERROR: Final = "pi-context is off (/pi-context on to enable)"
WIPE_MEMORY_COMMAND: Final = "wipe-memory"
WIPE_MEMORY_COMMAND_DESCRIPTION: Final = "Persist a fresh context window without calling the model"
PI_CONTEXT_COMMAND: Final = "pi-context"
PI_CONTEXT_COMMAND_DESCRIPTION: Final = (
    "Show loaded version/build and toggle pi-context context windows"
)

# -- human notices (§16) ----------------------------------------------------------------------
NOTICE_MEMORY_CLEARED: Final = "pi-context: memory cleared · {window_id}"
NOTICE_RESET_BUILD_FAILED: Final = "pi-context: could not build reset ({error})."
NOTICE_COMPACT_DISABLED: Final = (
    "pi-context: /compact is disabled while context windows are active; use /wipe-memory to "
    "start a fresh window."
)
NOTICE_WIPE_NEEDS_ON: Final = "pi-context: /wipe-memory requires /pi-context on."
NOTICE_WIPE_SPLITS_TOOL_PAIR: Final = (
    "pi-context: /wipe-memory would separate a tool call from its result; continue or navigate "
    "to a complete turn first."
)
"""Not in pi-context 0.25: the one notice of pictx_fsm's own (see docs/decisions.md)."""
NOTICE_TOGGLE_USAGE: Final = "Usage: /pi-context [on|off]"
NOTICE_TOGGLE_STATUS: Final = "pi-context: {state} · {build} · Pi {pi_version}"
NOTICE_MISSING_BOOT: Final = (
    "pi-context: active context window {window_id} has no visible boot; request cancelled "
    "safely. Use /wipe-memory to start another window."
)
NOTICE_TREE_SUMMARY_SKIPPED: Final = (
    "pi-context: skipped branch summary across a reset window; navigation continues without "
    "erased history."
)
NOTICE_GUIDANCE_RECORDED: Final = (
    "pi-context: context budget low — checkpoint reminder recorded for the model, kept out of "
    "the chat view."
)
NOTICE_WARNING_RECORDED: Final = (
    "pi-context: context budget critical — final checkpoint warning recorded for the model."
)
NOTICE_NOTES_INCOMPLETE: Final = (
    "pi-context: notes index incomplete for {labels}; notes_list can retry after recovery."
)
NOTICE_INVALID_MARGIN: Final = (
    "pi-context: pi-context.reminderMarginTokens must be a positive integer; using default 24576."
)
NOTICE_SETTINGS_UNREADABLE: Final = "pi-context: could not read settings; using defaults ({error})."
UNBUNDLED_BUILD_LABEL: Final = "unbundled source (build unknown)"
