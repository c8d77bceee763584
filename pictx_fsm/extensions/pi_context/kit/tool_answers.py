"""The nine notes and history tools' answers, compared with the spec's texts and arithmetic.

Each answer is judged as the model received it — the ``toolResult`` of the call in the
session, its arguments from the assistant's ``toolCall`` — against what the spec fixes:
the JSON envelope (N3, 2-space ``JSON.stringify``), the refusal texts and their keys (the
notes tools' error catalogue, N4, N36; R79, R80), the success objects of ``notes_write`` and
``notes_edit`` (N27, N33), the read window's header arithmetic (N36, N37, R80), and every
history answer against the windows and items of the branch the call saw, rebuilt here from
R76 and R77 (:func:`history_of`) — not from the tools' own projection. Errors the host
raised from a thrown exception (N4 b: filesystem, validation) carry no text of the spec.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from attrs import field, frozen

from pictx_fsm import js
from pictx_fsm.extensions.pi_context.kit.account import place_of
from pictx_fsm.extensions.pi_context.kit.oracle import Place, marker_window
from pictx_fsm.extensions.pi_context.kit.view import WorldView
from pictx_fsm.extensions.pi_context.kit.walks import PerRecord
from pictx_fsm.extensions.pi_context.texts import CUSTOM_TYPE_PREFIX
from pictx_fsm.extensions.pi_context.tools import HANDLERS
from pictx_fsm.extensions.pi_context.tools.output import (
    DEFAULT_READ_WINDOW_CHARS,
    HISTORY_PREVIEW_CHARS,
    MAX_READ_WINDOW_CHARS,
    READ_WINDOW_HEADER,
    TOOL_OUTPUT_MAX_BYTES,
)
from pictx_fsm.extensions.pi_context.tools.store import BAD_HOME_NAME
from pictx_fsm.extensions.shared.kit.walks import Records
from pictx_fsm.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
)
from pictx_fsm.session.estimate import js_json
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing.invariants import Violation, remembering

__all__ = ["ExactToolAnswers", "Item", "answer_problem", "history_of"]

JSON = Any
Record = Mapping[str, Any]

# -- the branch's history (R76, R77) -----------------------------------------------------------


@frozen(kw_only=True)
class Item:
    window_id: str
    item_id: str
    role: str
    content: str
    tool_name: str | None = None


_ROLES: Final = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "tool",
    "bashExecution": "tool",
    "custom": "user",
    "compactionSummary": "system",
    "branchSummary": "system",
}


def _text(content: JSON) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        b["text"]
        for b in blocks
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _string(value: JSON) -> str:
    return value if isinstance(value, str) else ""


def _items(entry: Entry, window: str) -> list[Item]:
    """R77: what one entry contributes to the window it is in."""
    if isinstance(entry, CompactionEntry | BranchSummaryEntry):
        return [Item(window_id=window, item_id=str(entry.id), role="system", content=entry.summary)]
    if isinstance(entry, CustomMessageEntry):
        author = "developer" if entry.custom_type.startswith(CUSTOM_TYPE_PREFIX) else "user"
        text = _text(entry.content)
        return [Item(window_id=window, item_id=str(entry.id), role=author, content=text)]
    if not isinstance(entry, MessageEntry):
        return []
    raw = entry.message.raw
    role = _ROLES.get(str(raw.get("role")))
    if role is None:
        return []
    kind = raw.get("role")
    if kind == "bashExecution":
        output = _string(raw.get("output"))
        content = _string(raw.get("command")) + (f"\n{output}" if output else "")
        tool: str | None = "bash"
    elif kind in ("compactionSummary", "branchSummary"):
        content, tool = _string(raw.get("summary")), None
    else:
        content = _text(raw.get("content"))
        name = raw.get("toolName")
        tool = name if kind == "toolResult" and isinstance(name, str) else None
    items = [
        Item(window_id=window, item_id=str(entry.id), role=role, content=content, tool_name=tool)
    ]
    if kind == "assistant" and isinstance(raw.get("content"), list):
        calls = [
            b for b in raw["content"] if isinstance(b, Mapping) and b.get("type") == "toolCall"
        ]
        for index, call in enumerate(calls):
            name = call.get("name")
            items.append(
                Item(
                    window_id=window,
                    item_id=f"{entry.id}#{index}",
                    role="tool_call",
                    content=js_json(call["arguments"]) if "arguments" in call else "",
                    tool_name=name if isinstance(name, str) else None,
                )
            )
    return items


def history_of(place: Place) -> list[tuple[str, list[Item]]]:
    """R76: the root window, then one per valid marker on the branch, with their items."""
    windows: list[tuple[str, list[Item]]] = [(place.root_id, [])]
    for entry in place.branch:
        opened = marker_window(entry)
        if opened is not None:
            windows.append((opened, []))
        else:
            windows[-1][1].extend(_items(entry, windows[-1][0]))
    return windows


# -- refusals (N4, N36, the notes error catalogue; R79, R80) -----------------------------------

_REFUSALS: Final = tuple(
    (re.compile(pattern), keys)
    for pattern, keys in (
        (r"note path exceeds 512 UTF-8 bytes \(got \d+\)", ("error",)),
        (r"note exceeds 1000000 UTF-8 bytes \(serialized \d+\)", ("error",)),
        (
            r"@(agents|models)/[^/]+/ is not your home: writable homes are this session, "
            r"@project/, @human/, @self/, and the current @model/ home",
            ("error",),
        ),
        (r"origin must be one of user, self, external \(got .+\)", ("error",)),
        (r"nothing to do: provide edits or at least one of origin, stale", ("error",)),
        (r"note not found", ("error",)),
        (r"note not found", ("error", "address")),
        (r"edit \d+: oldText must be a non-empty string", ("error", "edit_index")),
        (r"edit \d+: newText must be a string", ("error", "edit_index")),
        (r"edit \d+: oldText does not occur in the note body", ("error", "edit_index")),
        (
            r"edit \d+: oldText occurs \d+ times \(lines .+\); pass replace_all to replace "
            r"every occurrence",
            ("error", "line_numbers", "edit_index"),
        ),
        (
            r"offset_chars -?\d+ is past the end: the note has (\d+) chars; the largest legal "
            r"offset is \1 \(an empty end-read\)",
            ("error", "address", "offset_chars", "total_chars"),
        ),
        (
            r'tool_name is only set on "tool_call" and "tool" items; role "[^"]*" never '
            r"carries one",
            ("error", "role", "tool_name"),
        ),
        (r'unknown window_id ".*"', ("error", "window_id", "known_windows")),
        (r"unknown item_id or window_id", ("error",)),
        # pictx_fsm's own refusal of a pattern's home name that is no slug (docs/decisions.md)
        (re.escape(BAD_HOME_NAME), ("error",)),
        (
            r"offset_chars -?\d+ is past the end: the item has (\d+) chars; the largest legal "
            r"offset is \1 \(an empty end-read\)",
            ("error", "window_id", "item_id", "offset_chars", "total_chars"),
        ),
    )
)


def _refusal_problem(value: Mapping[str, JSON]) -> str | None:
    error = value.get("error")
    keys = tuple(value)
    for pattern, expected in _REFUSALS:
        if isinstance(error, str) and pattern.fullmatch(error) and keys == expected:
            return None
    return f"refusal {dict(value)!r} is no text of the spec with its keys"


# -- success answers ---------------------------------------------------------------------------


@frozen(kw_only=True)
class _Window:
    """A read window as answered: its header lines, the range and the content."""

    header: list[str]
    start: int
    end: int
    total: int
    following: str
    content: str
    size: int
    """UTF-8 bytes of the whole answer (the wire budget, N36)."""


def _window_of(text: str) -> _Window | None:
    head, blank, content = text.partition("\n\n")
    lines = head.split("\n")
    matched = (
        re.fullmatch(r"chars: \[(\d+),(\d+)\) of (\d+)", lines[-2]) if len(lines) > 2 else None
    )
    if not blank or matched is None:
        return None
    start, end, total = (int(g) for g in matched.groups())
    return _Window(
        header=lines[:-2],
        start=start,
        end=end,
        total=total,
        following=lines[-1],
        content=content,
        size=js.utf8_length(text),
    )


def _window_problem(
    window: _Window, arguments: Mapping[str, JSON], total: int, header: list[str]
) -> str | None:
    """N36, N37, R80: the read window's header, its arithmetic and the wire fit."""
    offset = arguments.get("offset_chars", 0)
    offset = offset if isinstance(offset, int) and not isinstance(offset, bool) else 0
    resolved = max(0, total + offset) if offset < 0 else offset
    asked = arguments.get("limit_chars")
    asked = asked if isinstance(asked, int) and not isinstance(asked, bool) else None
    limit = min(DEFAULT_READ_WINDOW_CHARS if asked is None else asked, MAX_READ_WINDOW_CHARS)
    start, end = window.start, window.end
    expected_next = f"next_offset_chars: {end if end < total else 'null'}"
    problems = [
        (window.header != header, f"header {window.header} (expected {header})"),
        (window.total != total, f"of {window.total}, the text has {total} chars"),
        (start != resolved, f"starts at {start}, the offset resolves to {resolved}"),
        (end - start != len(window.content), f"[{start},{end}) for {len(window.content)} chars"),
        (end - start > limit, f"{end - start} chars beyond the limit {limit}"),
        (window.following != expected_next, f"{window.following!r}, not {expected_next!r}"),
        (window.size > TOOL_OUTPUT_MAX_BYTES, "over the 32 KiB wire budget"),
        (
            end < min(start + limit, total) and window.size + 4 <= TOOL_OUTPUT_MAX_BYTES,
            "cut short though the next character fits the wire budget",
        ),
    ]
    return next((why for failed, why in problems if failed), None)


def _history_item_problem(
    shown: Mapping[str, JSON], items: Mapping[tuple[str, str], Item], arguments: Mapping[str, JSON]
) -> str | None:
    """R79: one item view against the branch's item."""
    item = items.get((str(shown.get("window_id")), str(shown.get("item_id"))))
    if item is None:
        return f"item {shown.get('window_id')}/{shown.get('item_id')} is not on the branch"
    cap = arguments.get("max_chars_per_item")
    cap = cap if isinstance(cap, int) and not isinstance(cap, bool) else HISTORY_PREVIEW_CHARS
    preview = str(shown.get("truncated_content", ""))
    problems = [
        (shown.get("role") != item.role, f"role {shown.get('role')}, the item's is {item.role}"),
        (shown.get("tool_name") != item.tool_name, f"tool_name {shown.get('tool_name')!r}"),
        (shown.get("total_chars") != len(item.content), f"total_chars {shown.get('total_chars')}"),
        (shown.get("truncated") != (len(item.content) > cap), "truncated flag"),
        (not item.content.startswith(preview), "truncated_content is not the item's prefix"),
        (len(preview) > cap, f"{len(preview)} chars shown beyond {cap}"),
    ]
    for key in ("window_id", "role", "tool_name"):
        if key in arguments and arguments[key] is not None and shown.get(key) != arguments[key]:
            problems.append((True, f"{key} {shown.get(key)!r} despite the filter"))
    if "match_offset_chars" in shown:
        query = arguments.get("query")
        queries = [query] if isinstance(query, str) else list(query or ())
        found = [item.content.find(q) for q in queries if isinstance(q, str) and q in item.content]
        if shown["match_offset_chars"] != (min(found) if found else None):
            problems.append((True, f"match_offset_chars {shown['match_offset_chars']}"))
    why = next((why for failed, why in problems if failed), None)
    return None if why is None else f"{item.window_id}/{item.item_id}: {why}"


def answer_problem(name: str, arguments: Mapping[str, JSON], text: str, place: Place) -> str | None:
    """What is wrong with ``text`` as ``name``'s answer to ``arguments`` on ``place``'s
    branch (``None``: nothing the spec fixes)."""
    windows = history_of(place)
    if text.startswith(READ_WINDOW_HEADER + "\n"):
        return _read_problem(name, arguments, text, windows)
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return "neither JSON nor a read window"
    if not isinstance(value, dict) or js.stringify(value, indent=2) != text:
        return "not JSON.stringify(value, null, 2) of an object"
    if "error" in value:
        return _refusal_problem(value)
    return _ok_problem(name, arguments, value, windows)


def _read_problem(
    name: str, arguments: Mapping[str, JSON], text: str, windows: list[tuple[str, list[Item]]]
) -> str | None:
    window = _window_of(text)
    if window is None:
        return "a read window without its chars line or the blank line before its content"
    if name == "notes_read":
        header = [READ_WINDOW_HEADER, f"address: {arguments.get('address')}"]
        return _window_problem(window, arguments, window.total, header)
    if name != "history_read":
        return f"{name} answered with a read window"
    items = {(i.window_id, i.item_id): i for _, its in windows for i in its}
    key = (str(arguments.get("window_id")), str(arguments.get("item_id")))
    item = items.get(key)
    if item is None:
        return f"a read window for {key}, which is not on the branch"
    header = [READ_WINDOW_HEADER, f"window_id: {key[0]}", f"item_id: {key[1]}"]
    problem = _window_problem(window, arguments, len(item.content), header)
    if problem is not None:
        return problem
    expected = item.content[window.start : window.end]
    return None if window.content == expected else "content is not the item's text"


def _ok_problem(
    name: str,
    arguments: Mapping[str, JSON],
    value: Mapping[str, JSON],
    windows: list[tuple[str, list[Item]]],
) -> str | None:
    keys = list(value)
    if name == "notes_write":
        expected = {"address": arguments.get("address"), "written": True}
        return None if value == expected and keys == list(expected) else f"{dict(value)!r}"
    if name == "notes_edit":
        edits = arguments.get("edits")
        applied = len(edits) if isinstance(edits, list) else 0
        good = keys == ["address", "applied", "diff"] and value["applied"] == applied
        good = good and value["address"] == arguments.get("address")
        return None if good and isinstance(value["diff"], str) else f"{dict(value)!r}"
    if name in ("notes_list", "notes_search"):
        return _rows_problem(name, value)
    if name == "history_windows":
        shown = [{"window_id": w, "item_count": len(items)} for w, items in windows]
        if arguments.get("recent_first") is not False:
            shown.reverse()
        limit = arguments.get("limit")
        if isinstance(limit, int) and not isinstance(limit, bool):
            shown = shown[:limit]
        return (
            None
            if value == {"windows": shown}
            else f"windows {value.get('windows')!r}, expected {shown!r}"
        )
    if keys != ["items", "next_cursor"]:
        return f"keys {keys}"
    items = {(i.window_id, i.item_id): i for _, its in windows for i in its}
    for shown_item in value["items"]:
        problem = _history_item_problem(shown_item, items, arguments)
        if problem:
            return problem
    return None


_ROW_KEYS: Final = {
    "notes_list": {"address", "updated_at", "stale"},
    "notes_search": {"address", "updated_at", "stale", "matches_total", "matches"},
}


def _rows_problem(name: str, value: Mapping[str, JSON]) -> str | None:
    """N38, N44, N47: a page of rows with the fields the spec names."""
    if list(value) != ["files", "next_cursor"]:
        return f"keys {list(value)}"
    for row in value["files"]:
        if set(row) != _ROW_KEYS[name]:
            return f"a row with keys {sorted(row)}"
    return None


# -- the invariant -----------------------------------------------------------------------------


@remembering
class ExactToolAnswers(PerRecord):
    """every notes and history tool answer the model receives holds what the spec fixes: 2-space
    JSON, a refusal text of the catalogue with its keys, notes_write's and notes_edit's
    objects, a read window's header arithmetic (offset, count, next offset, the 32 KiB wire
    fit), and history answers equal to the windows and items of the branch the call saw (R76,
    R77)"""

    name = "exact_tool_answers"
    rule = "N3, N4, N27, N33, N36, N37, R76–R80"

    _waiting: dict[str, tuple[str, int, Place]] = field(init=False, factory=dict)
    """Call id → (tool, runtime, where the call was decided), until its result is seen."""
    _cursors: dict[int, int] = field(init=False, factory=dict)
    _calls: dict[str, Mapping[str, JSON]] = field(init=False, factory=dict)
    _results: dict[str, Mapping[str, JSON]] = field(init=False, factory=dict)

    def check_records(self, world: WorldView, fresh: Records) -> list[Violation]:
        for record, runtime, _ in fresh:
            event = record.get("event") or {}
            if record.get("hook") == "tool" and event.get("name") in HANDLERS:
                place = place_of(world, runtime, record)
                if place is not None:
                    self._waiting[str(event.get("tool_call_id"))] = (event["name"], runtime, place)
        if not self._waiting:
            return []
        for observed in world.observed:
            self._index(observed.tree)
        return self._judge_answered()

    def _index(self, tree: SessionTree) -> None:
        start = self._cursors.get(id(tree), 0)
        for entry in tree.entries[start:]:
            if not isinstance(entry, MessageEntry):
                continue
            raw = entry.message.raw
            if raw.get("role") == "toolResult":
                self._results[str(raw.get("toolCallId"))] = raw
            elif raw.get("role") == "assistant" and isinstance(raw.get("content"), list):
                for block in raw["content"]:
                    if isinstance(block, Mapping) and block.get("type") == "toolCall":
                        self._calls[str(block.get("id"))] = block
        self._cursors[id(tree)] = len(tree.entries)

    def _judge_answered(self) -> list[Violation]:
        found: list[Violation] = []
        for call_id in [c for c in self._waiting if c in self._results and c in self._calls]:
            name, _, place = self._waiting.pop(call_id)
            result = self._results.pop(call_id)
            arguments = self._calls[call_id].get("arguments") or {}
            if result.get("isError") is True:
                continue  # N4 (b): a thrown error, the host's text
            blocks: Sequence[Any] = result.get("content") or ()
            text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, Mapping))
            problem = answer_problem(name, arguments, text, place)
            if problem is not None:
                found.append(self.violation(f"{name} ({call_id}): {problem}"))
        return found
