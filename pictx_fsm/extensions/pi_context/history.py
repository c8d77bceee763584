"""History windows and items of a branch (lifecycle R76–R77), what the history tools serve.

Pure functions of the active branch and the session id, recomputed on every call as
pi-context does (R76: no cache; sibling branches and global tails are never read). Source:
``historyFromSession`` in ``src/history/history.ts`` of pi-context 0.25.0
(astrosheep-zero/pi-context@5a9d4b49).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from attrs import frozen

from pictx_fsm.extensions.pi_context.texts import CUSTOM_TYPE_PREFIX
from pictx_fsm.extensions.pi_context.windows import root_window_id, window_id_of_marker
from pictx_fsm.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
)
from pictx_fsm.session.estimate import js_json

__all__ = [
    "HistoryItem",
    "HistoryWindow",
    "content_text",
    "entry_items",
    "history_items",
    "history_windows",
]

_ROLES: Final[Mapping[str, str]] = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "tool",
    "bashExecution": "tool",
    "custom": "user",
    "compactionSummary": "system",
    "branchSummary": "system",
}
"""R77: history role of each ``message`` role; other roles are not items."""


@frozen(kw_only=True)
class HistoryItem:
    """One readable record of a window. ``item_id`` is the entry id, or ``<entryId>#<n>`` for
    the n-th tool call (0-based) of an assistant reply."""

    window_id: str
    item_id: str
    role: str
    content: str
    created_at: str | None
    tool_name: str | None = None
    output_truncated: bool = False
    full_output_path: str | None = None
    tool_error: bool = False


@frozen(kw_only=True)
class HistoryWindow:
    """A window of the branch: the root window, or one opened by a valid marker (R76)."""

    window_id: str
    created_at: str | None
    items: tuple[HistoryItem, ...]


def content_text(content: Any) -> str:
    """pi-context ``contentText``: a string as is, else its string text blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def history_windows(branch: Iterable[Entry], session_id: str) -> tuple[HistoryWindow, ...]:
    """R76: the root window first; every valid marker opens the next (markers are not items)."""
    windows: list[tuple[str, str | None, list[HistoryItem]]] = [
        (root_window_id(session_id), None, [])
    ]
    for entry in branch:
        opened = window_id_of_marker(entry)
        if opened is not None:
            windows.append((opened, entry.timestamp, []))
            continue
        window_id, _, items = windows[-1]
        items.extend(entry_items(entry, window_id))
    return tuple(
        HistoryWindow(window_id=window_id, created_at=created, items=tuple(items))
        for window_id, created, items in windows
    )


def history_items(branch: Iterable[Entry], session_id: str) -> list[HistoryItem]:
    """Every item of the branch, oldest first."""
    return [item for window in history_windows(branch, session_id) for item in window.items]


def entry_items(entry: Entry, window_id: str) -> list[HistoryItem]:
    """R77: the items one entry contributes to ``window_id``."""
    if isinstance(entry, CompactionEntry | BranchSummaryEntry):
        return [_item(entry, window_id, "system", entry.summary)]
    if isinstance(entry, CustomMessageEntry):
        role = "developer" if entry.custom_type.startswith(CUSTOM_TYPE_PREFIX) else "user"
        return [_item(entry, window_id, role, content_text(entry.content))]
    if isinstance(entry, MessageEntry):
        return _message_items(entry, window_id)
    return []


def _item(entry: Entry, window_id: str, role: str, content: str, **extra: Any) -> HistoryItem:
    assert entry.id is not None
    return HistoryItem(
        window_id=window_id,
        item_id=entry.id,
        role=role,
        content=content,
        created_at=entry.timestamp,
        **extra,
    )


def _message_items(entry: MessageEntry, window_id: str) -> list[HistoryItem]:
    message = entry.message.raw
    role = _ROLES.get(entry.message.role)
    if role is None:
        return []
    item = _item(entry, window_id, role, _message_content(message), **_tool_info(message))
    return [item, *_tool_call_items(entry, window_id)]


def _message_content(message: Mapping[str, Any]) -> str:
    role = message.get("role")
    if role == "bashExecution":
        command = _string(message.get("command"))
        output = _string(message.get("output"))
        return f"{command}\n{output}" if output else command
    if role in ("branchSummary", "compactionSummary"):
        return _string(message.get("summary"))
    return content_text(message.get("content"))


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _tool_info(message: Mapping[str, Any]) -> dict[str, Any]:
    role = message.get("role")
    if role == "bashExecution":
        truncated = bool(message.get("truncated"))
        path = message.get("fullOutputPath") if truncated else None
        return {
            "tool_name": "bash",
            "output_truncated": truncated,
            "full_output_path": path if isinstance(path, str) else None,
        }
    if role != "toolResult":
        return {}
    name = message.get("toolName")
    return {
        "tool_name": name if isinstance(name, str) else None,
        "tool_error": message.get("isError") is True,
    }


def _tool_call_items(entry: MessageEntry, window_id: str) -> list[HistoryItem]:
    """Each ``toolCall`` block of an assistant reply, right after it (R77)."""
    content = entry.message.raw.get("content")
    if entry.message.role != "assistant" or not isinstance(content, list):
        return []
    calls = [b for b in content if isinstance(b, Mapping) and b.get("type") == "toolCall"]
    items = []
    for index, call in enumerate(calls):
        name = call.get("name")
        items.append(
            HistoryItem(
                window_id=window_id,
                item_id=f"{entry.id}#{index}",
                role="tool_call",
                content=js_json(call["arguments"]) if "arguments" in call else "",
                created_at=entry.timestamp,
                tool_name=name if isinstance(name, str) else None,
            )
        )
    return items
