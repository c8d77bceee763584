"""The eleven tools notesoup registers (S4, S12, S13, S91, S107): names, labels, descriptions,
parameter and output schemas, execution modes and namespaces, in Pi's registration order
(context runtime, then history, then notes; S2).

One owner for the model-facing tool surface: the Pi adapter, the bridge manifest and the MCP
server all register from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pictx_fsm.extensions.notesoup.texts import (
    CLEAR_MEMORY_DESCRIPTION,
    CLEAR_MEMORY_LABEL,
    CLEAR_MEMORY_TOOL,
    GET_CONTEXT_REMAINING_DESCRIPTION,
    GET_CONTEXT_REMAINING_LABEL,
    GET_CONTEXT_REMAINING_TOOL,
)
from pictx_fsm.extensions.shared.tools.output import (
    DEFAULT_READ_WINDOW_CHARS,
    HISTORY_PREVIEW_CHARS,
    MAX_READ_WINDOW_CHARS,
)
from pictx_fsm.extensions.shared.tools.schema import (
    BOOLEAN,
    NULLABLE_STRING,
    POSITIVE_INTEGER,
    STRING,
    ToolSpec,
    literal_options,
    object_schema,
)

__all__ = [
    "HISTORY_NAMESPACE",
    "HISTORY_TOOL_NAMES",
    "NOTES_NAMESPACE",
    "NOTES_TOOL_NAMES",
    "TOOLS_BY_NAME",
    "TOOL_NAMES",
    "TOOL_SPECS",
]

NOTES_NAMESPACE: Final = {
    "name": "notes",
    "description": "Notes you choose to keep across context windows. See /skill:memory.",
}
HISTORY_NAMESPACE: Final = {
    "name": "history",
    "description": "What happened in this session, read-only. See /skill:memory.",
}

ADDRESS_DESCRIPTION: Final = (
    "Address forms per the boot protocol. `@` addresses are notes, not files: feed one to "
    "read/write/edit/bash and a real directory named `@project` is born. Don't."
)
WINDOW_DESCRIPTION: Final = (
    "The response carries the longest fitting prefix of that window as text, plus the same "
    "window as structured fields; when characters remain, the closing line names the "
    "offset_chars to pass back to continue."
)
ORIGIN: Final = {
    "anyOf": literal_options(("user", "self", "external")),
    "description": (
        "Where the note's content came from. user: written or dictated by the human. self: "
        "written by you, the agent (default). external: anything else — third-party text, "
        "tool output, fetched material."
    ),
}
CRUMPLED: Final = {
    "type": "boolean",
    "description": (
        "true crumples the note: it leaves the boot index, list, and search, stays readable "
        "by address, and appears with wastebasket: true. false smooths it back."
    ),
}
WASTEBASKET: Final = {
    "type": "boolean",
    "description": "true lists only crumpled notes instead of live ones.",
}
RENAME_TO: Final = {
    "type": "string",
    "description": (
        "Move the note to this address (same address rules as address), preserving createdAt "
        "and all other metadata. Used alone: never combined with edits, origin, crumpled, or "
        "replace_all. A live note at the target refuses; a crumpled target is replaced. "
        "References elsewhere do not follow the move. An empty rename_to is ignored as if "
        "omitted."
    ),
}
SEARCH_QUERY: Final = {
    "anyOf": [STRING, {"type": "array", "items": STRING, "minItems": 1}],
}
OFFSET: Final = {
    "type": "integer",
    "description": (
        "Code-point offset (default 0). A negative value counts back from the end; the "
        "response echoes the resolved absolute offset. Pass the previous next_offset_chars "
        "back unchanged to continue."
    ),
}
LIMIT_CHARS: Final = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_READ_WINDOW_CHARS,
    "description": (
        f"Largest requested window in code points (default {DEFAULT_READ_WINDOW_CHARS}). A "
        "window too large for the wire budget is cut short; next_offset_chars names where the "
        "next read resumes."
    ),
}
ROLES: Final = {
    "type": "array",
    "items": {"anyOf": literal_options(("user", "assistant", "tool", "context"))},
    "minItems": 1,
    "description": "Any of user, assistant, tool, context.",
}
SEQ_BOUND: Final = {"type": "integer", "description": "Strict bound on seq."}
WINDOW_ID: Final = {
    "type": "string",
    "description": "A window_id from history_windows, or @previous for the window before this one.",
}
MAX_CHARS_PER_ITEM: Final = {
    "type": "integer",
    "minimum": 1,
    "description": f"Preview characters per item (default {HISTORY_PREVIEW_CHARS}).",
}

_EDIT: Final = object_schema({"oldText": STRING, "newText": STRING}, ("oldText", "newText"))
_ERROR: Final = object_schema(
    {"error": STRING, "code": STRING, "details": {"type": "object"}}, ("error", "code")
)


def _output(data: Mapping[str, Any]) -> dict[str, Any]:
    """S92: the union of the data schema and the refusal object."""
    return {"anyOf": [data, _ERROR]}


_OPEN_OBJECT: Final = {"type": "object"}

TOOL_SPECS: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        name=GET_CONTEXT_REMAINING_TOOL,
        label=GET_CONTEXT_REMAINING_LABEL,
        description=GET_CONTEXT_REMAINING_DESCRIPTION,
        parameters=object_schema({}),
        runs_in="lifecycle",
    ),
    ToolSpec(
        name=CLEAR_MEMORY_TOOL,
        label=CLEAR_MEMORY_LABEL,
        description=CLEAR_MEMORY_DESCRIPTION,
        parameters=object_schema({}),
        runs_in="lifecycle",
    ),
    ToolSpec(
        name="history_windows",
        label="History list windows",
        description=(
            "List this session's context windows on the current branch, oldest first: each "
            "window_id with its first and last seq and its event count. Pass a window_id to "
            "history_list or history_search to look inside one window."
        ),
        parameters=object_schema({}),
        output_schema=_output(_OPEN_OBJECT),
        namespace=HISTORY_NAMESPACE["name"],
    ),
    ToolSpec(
        name="history_list",
        label="History list items",
        description=(
            "Page through this session's history by seq, oldest first within a page. Without "
            "roles the conversation view shows user and assistant text and folds every run of "
            "tool and context events into one row (expand it with roles). before and after "
            "are strict seq bounds; the page footer names the anchors to page older or newer. "
            "window_id narrows to one window; @previous is the window before this one."
        ),
        parameters=object_schema(
            {
                "limit": POSITIVE_INTEGER,
                "roles": ROLES,
                "before": SEQ_BOUND,
                "after": SEQ_BOUND,
                "window_id": WINDOW_ID,
                "max_chars_per_item": MAX_CHARS_PER_ITEM,
            }
        ),
        output_schema=_output(_OPEN_OBJECT),
        namespace=HISTORY_NAMESPACE["name"],
    ),
    ToolSpec(
        name="history_read",
        label="History read item",
        description=(
            "Read one history event by seq: its text, or for a tool its name, arguments, "
            f"output and nested calls. {WINDOW_DESCRIPTION}"
        ),
        parameters=object_schema(
            {"seq": {"type": "integer"}, "offset_chars": OFFSET, "limit_chars": LIMIT_CHARS},
            ("seq",),
        ),
        output_schema=_output(_OPEN_OBJECT),
        namespace=HISTORY_NAMESPACE["name"],
    ),
    ToolSpec(
        name="history_search",
        label="History search",
        description=(
            "Case-insensitive literal search over this session's history events (a tool event "
            "is its name, arguments and output); query is one string or several (OR). Each "
            "hit's preview starts at its earliest match. Same bounds, window_id and paging as "
            "history_list; roles default to all four."
        ),
        parameters=object_schema(
            {
                "query": SEARCH_QUERY,
                "limit": POSITIVE_INTEGER,
                "roles": ROLES,
                "before": SEQ_BOUND,
                "after": SEQ_BOUND,
                "window_id": WINDOW_ID,
                "max_chars_per_item": MAX_CHARS_PER_ITEM,
            },
            ("query",),
        ),
        output_schema=_output(_OPEN_OBJECT),
        namespace=HISTORY_NAMESPACE["name"],
    ),
    ToolSpec(
        name="notes_write",
        label="Notes write",
        description=(
            "Create or rewrite a note, and name it for what it holds and when to reach for it: "
            "a fresh window sees only the name in the index and decides whether to open by it. "
            "Write it for a reader who arrives knowing nothing, and keep it true when the "
            f"content drifts. {ADDRESS_DESCRIPTION} A rewrite replaces the body whole while "
            "preserving createdAt and every other frontmatter key. Writing always produces an "
            "uncrumpled note. The receipt reports the resolved address, project key when "
            "applicable, and actual create/overwrite/uncrumple outcome."
        ),
        parameters=object_schema(
            {"address": STRING, "content": STRING, "origin": ORIGIN}, ("address", "content")
        ),
        execution_mode="sequential",
        output_schema=_output(_OPEN_OBJECT),
        namespace=NOTES_NAMESPACE["name"],
    ),
    ToolSpec(
        name="notes_update",
        label="Notes update",
        description=(
            "Update one note: exact-text body edits, a metadata-only change, or a rename_to "
            f"move; frontmatter is never editable through edits. {ADDRESS_DESCRIPTION} Each "
            "oldText must occur exactly once unless replace_all is set; a multi-match anchor "
            "fails with its match line numbers and a zero-match anchor names the failing edit "
            "index. edits may be omitted (or empty) for a metadata-only update, which requires "
            "at least one of origin/crumpled. rename_to moves the note to a new address "
            "preserving createdAt and every other metadata key; it is used alone, never "
            "combined with edits, origin, crumpled, or replace_all, refuses a live note at the "
            "target, and may replace a crumpled one. The receipt reports resolved identity, the "
            "number of edits that changed text, the change kind (including none), and the "
            "actual diff, shortened when it would not fit the output budget."
        ),
        parameters=object_schema(
            {
                "address": STRING,
                "edits": {"type": "array", "items": _EDIT},
                "origin": ORIGIN,
                "crumpled": CRUMPLED,
                "replace_all": BOOLEAN,
                "rename_to": RENAME_TO,
            },
            ("address",),
        ),
        execution_mode="sequential",
        output_schema=_output(_OPEN_OBJECT),
        namespace=NOTES_NAMESPACE["name"],
    ),
    ToolSpec(
        name="notes_read",
        label="Notes read",
        description=(
            f"Read a window of one note's body, frontmatter excluded. {ADDRESS_DESCRIPTION} The "
            "response leads with the resolved address and the note's metadata, then delivers "
            "the body window verbatim. offset_chars is the code-point offset into the body "
            "(default 0) - a negative value counts back from the end - and limit_chars caps "
            f"the window (default {DEFAULT_READ_WINDOW_CHARS}, max {MAX_READ_WINDOW_CHARS}). "
            f"{WINDOW_DESCRIPTION} Body text is never re-encoded, so concatenating consecutive "
            "windows reconstructs the body exactly. Metadata values too large to show are "
            "counted rather than listed; they remain in the note file."
        ),
        parameters=object_schema(
            {"address": STRING, "offset_chars": OFFSET, "limit_chars": LIMIT_CHARS},
            ("address",),
        ),
        output_schema=_output(_OPEN_OBJECT),
        namespace=NOTES_NAMESPACE["name"],
    ),
    ToolSpec(
        name="notes_list",
        label="Notes list",
        description=(
            "List note files as a recent-first snapshot carrying address and updated_at; "
            "wastebasket rows also carry crumpled_at. more is the number of matching files "
            "omitted by limit or the wire budget; use pattern to narrow the address range. "
            f"{ADDRESS_DESCRIPTION} Listings merge your five prefixes: this session, "
            "@project/, @human/, @self/, and @model/. The receipt counts hidden crumpled files "
            "and names unavailable homes; row identities and omission counts reflect the "
            "scanned result."
        ),
        parameters=object_schema(
            {"pattern": NULLABLE_STRING, "limit": POSITIVE_INTEGER, "wastebasket": WASTEBASKET}
        ),
        output_schema=_output(_OPEN_OBJECT),
        namespace=NOTES_NAMESPACE["name"],
    ),
    ToolSpec(
        name="notes_search",
        label="Notes search",
        description=(
            "Case-insensitive literal substring search over note bodies; query is one string or "
            "several (OR), each matched line appears once. Results are a recent-first "
            "snapshot, not pageable; more counts matching files omitted by limit or the wire "
            f"budget. Use pattern to narrow the address range. {ADDRESS_DESCRIPTION} Each "
            "match carries line, text, offset_chars (a code-point offset into the note body "
            "delivered by notes_read, at the earliest query match), and truncated. Pass address "
            "and offset_chars to notes_read to read from the match."
        ),
        parameters=object_schema(
            {
                "query": SEARCH_QUERY,
                "pattern": NULLABLE_STRING,
                "limit": POSITIVE_INTEGER,
                "max_matches_per_file": POSITIVE_INTEGER,
                "wastebasket": WASTEBASKET,
            },
            ("query",),
        ),
        output_schema=_output(_OPEN_OBJECT),
        namespace=NOTES_NAMESPACE["name"],
    ),
)
TOOLS_BY_NAME: Final[Mapping[str, ToolSpec]] = {spec.name: spec for spec in TOOL_SPECS}
TOOL_NAMES: Final = tuple(TOOLS_BY_NAME)
NOTES_TOOL_NAMES: Final = tuple(s.name for s in TOOL_SPECS if s.namespace == "notes")
HISTORY_TOOL_NAMES: Final = tuple(s.name for s in TOOL_SPECS if s.namespace == "history")
