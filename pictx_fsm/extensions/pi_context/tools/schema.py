"""The eleven tools every host registers: names, labels, descriptions, JSON schemas, modes.

One owner for the model-facing tool surface of pi-context 0.25.0: the two lifecycle tools
(R16, R17; their descriptions live in :mod:`pictx_fsm.extensions.pi_context.texts`), the four
history tools
(R76–R80) and the five notes tools (N1, N2, N22–N24, N28, N34, N38, N44), in Pi's
registration order. Parameter schemas are the JSON Schema that TypeBox emits for the
anchor's definitions (key order included), so a host can hand them to Pi unchanged.
``tools.json`` beside this module is generated from here (``python -m
pictx_fsm.extensions.pi_context.tools >
pictx_fsm/extensions/pi_context/tools/tools.json``) for hosts that are not Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.extensions.pi_context.texts import (
    GET_CONTEXT_REMAINING_DESCRIPTION,
    GET_CONTEXT_REMAINING_TOOL,
    WIPE_MEMORY_DESCRIPTION,
    WIPE_MEMORY_TOOL,
)
from pictx_fsm.extensions.pi_context.tools.output import (
    DEFAULT_READ_WINDOW_CHARS,
    MAX_READ_WINDOW_CHARS,
)

ExecutionMode = Literal["sequential", "parallel"]
RunsIn = Literal["lifecycle", "tools"]

SCHEMA_FILE: Final = Path(__file__).with_name("tools.json")

# -- shared texts (N22, N23, TS@02ba) ------------------------------------------------------------

ADDRESS_DESCRIPTION: Final = (
    "Address forms are bare `<vpath>` for this session, `@project/<vpath>` for this project, "
    "`@human/<vpath>` for the human's cross-project home, `@self/<vpath>` / "
    "`@agents/<name>/<vpath>` for agent homes, and `@model/<vpath>` / `@models/<name>/<vpath>` "
    "for model homes. `@self` and `@model` mean the current agent/model; the `<name>` forms "
    "name one absolutely. The word after `@` is always one of the reserved home names — names "
    "live at the second level, never `@faye/`. `@` means leaving home. Any other `@` prefix, or "
    "`@` inside a vpath, is a hard error. There is no cross-home fallback. Paths reject `..`, "
    "absolute paths, and backslashes. Homes you do not own (`@agents/<other>/`, "
    "`@models/<other>/`) are read-only."
)
ORIGIN_DESCRIPTION: Final = (
    "Where the note's content came from. user: written or dictated by the human. self: written "
    "by you, the agent (default). external: anything else — third-party text, tool output, "
    "fetched material."
)
CURSOR_DESCRIPTION: Final = (
    "Continuation cursor: pass the previous next_cursor back unchanged, with the same filters "
    "and ordering. Omit to start. next_cursor is null only when the set is exhausted."
)
RECENT_FIRST_DESCRIPTION: Final = (
    "Return newest-first. Only an explicit false returns oldest-first. Defaults to true."
)
ROLE_DESCRIPTION: Final = (
    'Filter by the item\'s role. Exactly six: "user" and "assistant" are a message\'s visible '
    'text (assistant text never contains tool calls); "tool_call" is one tool invocation '
    "(tool_name set, content = the call's JSON arguments); \"tool\" is one tool run's output "
    '(tool_name set); "system" is a native Pi compaction or branch summary; "developer" is an '
    "entry this extension authored (boot, guidance, warning, continuation messages, or any "
    "pi-context/* custom message)."
)
LIMIT_CHARS_DESCRIPTION: Final = (
    f"Largest requested window in code points (default {DEFAULT_READ_WINDOW_CHARS}). A window "
    "too large for the wire budget is cut short; next_offset_chars names where the next read "
    "resumes."
)
NOTE_OFFSET_DESCRIPTION: Final = (
    "Code-point offset to start from (default 0). A negative value counts back from the end; "
    "the response echoes the resolved absolute offset. Pass the previous next_offset_chars "
    "back unchanged to continue."
)
HISTORY_OFFSET_DESCRIPTION: Final = (
    "Code-point offset to start from. A negative value counts back from the end; the response "
    "echoes the resolved absolute offset. Pass the previous next_offset_chars back unchanged "
    "to continue."
)
ROLES: Final = ("user", "assistant", "tool_call", "tool", "system", "developer")

# -- tool descriptions ---------------------------------------------------------------------------

HISTORY_WINDOWS_DESCRIPTION: Final = "List durable Pi session-history windows."
HISTORY_LIST_DESCRIPTION: Final = (
    "List durable session items, including items from earlier reset windows, using opaque "
    "item and window IDs; native compaction and branch summaries remain history items in their "
    "current window. The role parameter's description enumerates the six roles. Every item "
    "carries truncated and total_chars: when truncated is true, truncated_content is a plain "
    "prefix of the item's content with no marker, and total_chars is its full code-point "
    "length. max_chars_per_item: 1 therefore yields pure addresses you can resolve with "
    "history_read."
)
HISTORY_READ_DESCRIPTION: Final = (
    "Read a bounded character range from one session item. Each response delivers the longest "
    "contiguous prefix of the requested window that fits the wire budget: follow the resume "
    "cursor to reconstruct the item exactly. A negative offset_chars counts back from the "
    "item's end. Offsets and counts are code points (an emoji or CJK character counts as one). "
    "The response begins with the shared READ WINDOW block naming window_id and item_id; "
    "concatenate only the content after that block to reconstruct the item."
)
HISTORY_SEARCH_DESCRIPTION: Final = (
    "Case-sensitive literal substring search over durable Pi session history; query accepts "
    "one string or an array of strings, an item matches when it contains any of them (OR), and "
    "each item appears once. No semantic search. Invocations and outputs are separate items "
    '(roles "tool_call" and "tool"), so both are searchable; the role parameter\'s '
    "description enumerates all six. Each hit carries truncated and total_chars plus "
    "match_offset_chars: the code-point offset of the earliest query occurrence in the item's "
    "full content. With max_chars_per_item: 1 the page is an address list; resolve an address "
    "with history_read at match_offset_chars."
)
NOTES_WRITE_DESCRIPTION: Final = (
    "Create or replace a note as a real markdown file, and name it for what it holds: a fresh "
    f"window sees only an index entry, never the note itself. {ADDRESS_DESCRIPTION} Keep notes "
    "small and split by topic — by what the note is about, never by who said it (authorship "
    "is origin's job); a rewrite replaces the body whole while preserving created_at and every "
    "other frontmatter key. stale: true marks the note closed so it leaves the boot index but "
    "stays readable and searchable."
)
NOTES_EDIT_DESCRIPTION: Final = (
    "Edit a note body by exact-text replacement; frontmatter is never editable this way. "
    f"{ADDRESS_DESCRIPTION} Each oldText must occur exactly once unless replace_all is set; a "
    "multi-match anchor fails with its match line numbers and a zero-match anchor names the "
    "failing edit index. edits may be omitted (or empty) for a metadata-only update, which "
    "requires at least one of origin/stale. Moving while awake means notes_write at a new "
    "address and notes_edit at the old address with stale=true. The success return carries "
    "the address and a diff of what changed."
)
NOTES_READ_DESCRIPTION: Final = (
    f"Read a character window of a note file, frontmatter included. {ADDRESS_DESCRIPTION} "
    "offset_chars is the code-point offset to start from (default 0) — a negative value counts "
    f"back from the end — and limit_chars caps the window (default {DEFAULT_READ_WINDOW_CHARS}, "
    f"max {MAX_READ_WINDOW_CHARS}). Each response delivers the longest fitting prefix of that "
    "window in the shared READ WINDOW block: concatenate only the content after the block to "
    "reconstruct the note."
)
NOTES_LIST_DESCRIPTION: Final = (
    "List note files as rows carrying address, updated_at, and stale, most recently updated "
    f"first. {ADDRESS_DESCRIPTION} Listings merge your five reachable homes: this session, "
    "@project/, @human/, your @self home, and the current @model home; other agents and models "
    "appear only under an explicit glob (@agents/<name>/**, @models/<name>/**, or a glob in the "
    "name segment to scan a whole namespace)."
)
NOTES_SEARCH_DESCRIPTION: Final = (
    "Case-sensitive literal substring search over note bodies; query is one string or several "
    f"(OR), each matched line appears once. {ADDRESS_DESCRIPTION} Search merges the same five "
    "reachable homes as notes_list; explicit globs reach other agents and models. Patterns glob "
    "over full address strings. Each file entry carries matches_total, its full match count "
    "before capping. Each match carries line, text, offset_chars (a code-point offset into the "
    "serialized note returned by notes_read, at the earliest query match), and truncated."
)

# -- parameter schemas (TypeBox's JSON Schema) ---------------------------------------------------

_STRING: Final = {"type": "string"}
_BOOLEAN: Final = {"type": "boolean"}
_NULLABLE_STRING: Final = {"anyOf": [_STRING, {"type": "null"}]}
_POSITIVE_INTEGER: Final = {"type": "integer", "minimum": 1}
_CURSOR: Final = {"type": "integer", "minimum": 0, "description": CURSOR_DESCRIPTION}
_RECENT_FIRST: Final = {"type": "boolean", "description": RECENT_FIRST_DESCRIPTION}
_SEARCH_QUERY: Final = {
    "anyOf": [_STRING, {"type": "array", "items": _STRING, "minItems": 1}],
}
_LIMIT_CHARS: Final = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_READ_WINDOW_CHARS,
    "description": LIMIT_CHARS_DESCRIPTION,
}


def _literals(values: tuple[str, ...], *, nullable: bool = False) -> list[dict[str, Any]]:
    options: list[dict[str, Any]] = [{"type": "string", "const": value} for value in values]
    return [*options, {"type": "null"}] if nullable else options


_ROLE: Final = {"anyOf": _literals(ROLES, nullable=True), "description": ROLE_DESCRIPTION}
_ORIGIN: Final = {
    "anyOf": _literals(("user", "self", "external")),
    "description": ORIGIN_DESCRIPTION,
}


def object_schema(
    properties: Mapping[str, Mapping[str, Any]], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``Type.Object(properties, {additionalProperties: false})`` as TypeBox emits it."""
    schema: dict[str, Any] = {"type": "object"}
    if required:
        schema["required"] = list(required)
    schema["properties"] = {name: dict(value) for name, value in properties.items()}
    schema["additionalProperties"] = False
    return schema


_EDIT: Final = object_schema({"oldText": _STRING, "newText": _STRING}, ("oldText", "newText"))
_HISTORY_FILTERS: Final[dict[str, Mapping[str, Any]]] = {
    "recent_first": _RECENT_FIRST,
    "role": _ROLE,
    "tool_name": _NULLABLE_STRING,
    "window_id": _NULLABLE_STRING,
    "max_chars_per_item": _POSITIVE_INTEGER,
}


@frozen(kw_only=True)
class ToolSpec:
    """One registered tool. ``runs_in`` says who executes it: the lifecycle runtime
    (``wipe_memory``, ``get_context_remaining``) or
    :func:`pictx_fsm.extensions.pi_context.tools.execute_tool`."""

    name: str
    label: str
    description: str
    parameters: Mapping[str, Any]
    execution_mode: ExecutionMode = "parallel"
    runs_in: RunsIn = "tools"

    def to_json(self) -> dict[str, Any]:
        """The registration Pi takes (``executionMode`` ``parallel`` is Pi's default)."""
        return {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "parameters": self.parameters,
            "executionMode": self.execution_mode,
            "runsIn": self.runs_in,
        }


def _spec(
    name: str, label: str, description: str, parameters: dict[str, Any], **kw: Any
) -> ToolSpec:
    return ToolSpec(name=name, label=label, description=description, parameters=parameters, **kw)


TOOL_SPECS: Final[tuple[ToolSpec, ...]] = (
    _spec(
        GET_CONTEXT_REMAINING_TOOL,
        "Get context remaining",
        GET_CONTEXT_REMAINING_DESCRIPTION,
        object_schema({}),
        runs_in="lifecycle",
    ),
    _spec(
        WIPE_MEMORY_TOOL,
        "Wipe memory",
        WIPE_MEMORY_DESCRIPTION,
        object_schema({}),
        runs_in="lifecycle",
    ),
    _spec(
        "history_windows",
        "History list windows",
        HISTORY_WINDOWS_DESCRIPTION,
        object_schema({"limit": _POSITIVE_INTEGER, "recent_first": _RECENT_FIRST}),
    ),
    _spec(
        "history_list",
        "History list items",
        HISTORY_LIST_DESCRIPTION,
        object_schema({"limit": _POSITIVE_INTEGER, "cursor": _CURSOR, **_HISTORY_FILTERS}),
    ),
    _spec(
        "history_read",
        "History read item",
        HISTORY_READ_DESCRIPTION,
        object_schema(
            {
                "item_id": _STRING,
                "offset_chars": {"type": "integer", "description": HISTORY_OFFSET_DESCRIPTION},
                "limit_chars": _LIMIT_CHARS,
                "window_id": _STRING,
            },
            ("item_id", "window_id"),
        ),
    ),
    _spec(
        "history_search",
        "History search",
        HISTORY_SEARCH_DESCRIPTION,
        object_schema(
            {
                "limit": _POSITIVE_INTEGER,
                "cursor": _CURSOR,
                "query": _SEARCH_QUERY,
                **_HISTORY_FILTERS,
            },
            ("query",),
        ),
    ),
    _spec(
        "notes_write",
        "Notes write",
        NOTES_WRITE_DESCRIPTION,
        object_schema(
            {"address": _STRING, "content": _STRING, "origin": _ORIGIN, "stale": _BOOLEAN},
            ("address", "content"),
        ),
        execution_mode="sequential",
    ),
    _spec(
        "notes_edit",
        "Notes edit",
        NOTES_EDIT_DESCRIPTION,
        object_schema(
            {
                "address": _STRING,
                "edits": {"type": "array", "items": _EDIT},
                "origin": _ORIGIN,
                "stale": _BOOLEAN,
                "replace_all": _BOOLEAN,
            },
            ("address",),
        ),
        execution_mode="sequential",
    ),
    _spec(
        "notes_read",
        "Notes read",
        NOTES_READ_DESCRIPTION,
        object_schema(
            {
                "address": _STRING,
                "offset_chars": {"type": "integer", "description": NOTE_OFFSET_DESCRIPTION},
                "limit_chars": _LIMIT_CHARS,
            },
            ("address",),
        ),
    ),
    _spec(
        "notes_list",
        "Notes list",
        NOTES_LIST_DESCRIPTION,
        object_schema(
            {"pattern": _NULLABLE_STRING, "cursor": _CURSOR, "max_results": _POSITIVE_INTEGER}
        ),
    ),
    _spec(
        "notes_search",
        "Notes search",
        NOTES_SEARCH_DESCRIPTION,
        object_schema(
            {
                "query": _SEARCH_QUERY,
                "pattern": _NULLABLE_STRING,
                "cursor": _CURSOR,
                "max_matches_per_file": _POSITIVE_INTEGER,
                "max_files": _POSITIVE_INTEGER,
            },
            ("query",),
        ),
    ),
)
"""All eleven tools, in the order pi-context 0.25.0 registers them (lifecycle spec §6)."""

TOOLS_BY_NAME: Final[Mapping[str, ToolSpec]] = {spec.name: spec for spec in TOOL_SPECS}
TOOL_NAMES: Final = tuple(TOOLS_BY_NAME)


def tool_spec(name: str) -> ToolSpec:
    """The registration of one tool (``KeyError`` for a name pi-context does not have)."""
    return TOOLS_BY_NAME[name]


def schema_document() -> str:
    """The text of ``tools.json``: every registration, in order, as pretty JSON."""
    return js.stringify({"tools": [spec.to_json() for spec in TOOL_SPECS]}, indent=2) + "\n"
