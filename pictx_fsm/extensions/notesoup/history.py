"""notesoup's history of a session (S108–S111): stable ``seq`` addresses, windows, events.

Every entry of the session, all branches, in file order, gets a ``seq`` when it can be read:
a compaction, a branch summary and every custom message take one; a message of role user,
assistant, toolResult, bashExecution, custom, compactionSummary or branchSummary takes one,
an assistant message one more per tool call (the calls take the following seqs). Markers,
custom entries and metadata take none. Appending or branching never renumbers (S108).

Only the active branch becomes events, grouped by window: the root window, then one per valid
marker (S109; this port's migrating scheme counts a 0.25 marker too). Roles are ``user``,
``assistant``, ``tool`` and ``context`` (S110): compactions, branch summaries, every custom
message and custom-role message are context — so a reset's empty checkpoint is an empty
context event closing its window. A tool call and the first later result with its
``toolCallId`` form one tool event at the call's seq; the result's own seq is then "consumed".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.extensions.notesoup.windows import SCHEME
from pictx_fsm.extensions.shared.windows import root_window_id
from pictx_fsm.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
)
from pictx_fsm.session.tree import SessionTree

__all__ = [
    "Event",
    "History",
    "HistoryWindow",
    "Role",
    "ToolStatus",
    "document",
    "history_of",
    "seq_counts",
]

JSON: TypeAlias = Any
Role = Literal["user", "assistant", "tool", "context"]
ToolStatus = Literal["ok", "error", "unfinished"]
ROLES: Final[tuple[Role, ...]] = ("user", "assistant", "tool", "context")
_MESSAGE_ROLES: Final = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "compactionSummary",
        "branchSummary",
    }
)


@frozen(kw_only=True)
class Event:
    """One readable event of the active branch."""

    seq: int
    window_id: str
    role: Role
    created_at: str | None
    text: str
    tool: str | None = None
    arguments: JSON = None
    has_arguments: bool = False
    status: ToolStatus | None = None
    output_truncated: bool = False
    full_output_path: str | None = None
    nested_calls: Mapping[str, JSON] | None = None


@frozen(kw_only=True)
class HistoryWindow:
    window_id: str
    created_at: str | None
    events: tuple[Event, ...]


@frozen(kw_only=True)
class History:
    session_id: str
    windows: tuple[HistoryWindow, ...]
    highest_seq: int
    branch_seqs: frozenset[int]
    consumed: Mapping[int, int]
    """A result's seq → the seq of the call that shows it (S115 ``not_an_event``)."""

    def events(self) -> list[Event]:
        return [event for window in self.windows for event in window.events]

    def event(self, seq: int) -> Event | None:
        for window in self.windows:
            for event in window.events:
                if event.seq == seq:
                    return event
        return None

    def window_ids(self) -> list[str]:
        return [window.window_id for window in self.windows]


def seq_counts(entry: Entry) -> int:
    """S108: how many seqs an entry takes (by kind and role only, never by content)."""
    if isinstance(entry, CompactionEntry | BranchSummaryEntry | CustomMessageEntry):
        return 1
    if not isinstance(entry, MessageEntry) or entry.message.role not in _MESSAGE_ROLES:
        return 0
    if entry.message.role != "assistant":
        return 1
    return 1 + len(entry.message.tool_calls())


def history_of(tree: SessionTree) -> History:
    """S108–S110: the session's seqs and the active branch's windows and events."""
    seq_of: dict[str, int] = {}
    next_seq = 1
    for entry in tree.entries:
        count = seq_counts(entry)
        if count and entry.id is not None:
            seq_of.setdefault(entry.id, next_seq)
            next_seq += count
    builder = _Builder(root_window_id(tree.session_id))
    for entry in tree.branch():
        opened = SCHEME.window_id_of_marker(entry)
        if opened is not None:
            builder.open(opened, entry.timestamp)
            continue
        seq = seq_of.get(entry.id or "")
        if seq is not None:
            builder.add(entry, seq)
    return builder.finish(tree.session_id, next_seq - 1)


class _Builder:
    def __init__(self, root_id: str) -> None:
        self.windows: list[tuple[str, str | None, list[Event]]] = [(root_id, None, [])]
        self.branch_seqs: set[int] = set()
        self.calls: dict[str, tuple[int, int]] = {}
        """toolCallId → (window index, event index) of a call still waiting for its result."""
        self.consumed: dict[int, int] = {}

    def open(self, window_id: str, created_at: str) -> None:
        self.windows.append((window_id, created_at, []))

    @property
    def _current(self) -> tuple[str, str | None, list[Event]]:
        return self.windows[-1]

    def _push(self, event: Event) -> None:
        self.branch_seqs.add(event.seq)
        self._current[2].append(event)

    def add(self, entry: Entry, seq: int) -> None:
        window_id = self._current[0]
        stamp = entry.timestamp or None
        if isinstance(entry, CompactionEntry | BranchSummaryEntry):
            self._push(_context(seq, window_id, stamp, str(entry.summary or "")))
        elif isinstance(entry, CustomMessageEntry):
            self._push(_context(seq, window_id, stamp, content_text(entry.content)))
        elif isinstance(entry, MessageEntry):
            self._message(entry, seq, window_id, stamp)

    def _message(self, entry: MessageEntry, seq: int, window_id: str, stamp: str | None) -> None:
        raw = entry.message.raw
        role = raw.get("role")
        if role in ("user", "assistant"):
            self._push(
                Event(
                    seq=seq,
                    window_id=window_id,
                    role=role,
                    created_at=stamp,
                    text=content_text(raw.get("content")),
                )
            )
            if role == "assistant":
                self._calls(raw, seq, window_id, stamp)
        elif role == "toolResult":
            self._result(raw, seq, window_id, stamp)
        elif role == "bashExecution":
            self._push(_bash(raw, seq, window_id, stamp))
        else:  # custom, compactionSummary, branchSummary
            text = raw.get("summary") if role != "custom" else content_text(raw.get("content"))
            self._push(_context(seq, window_id, stamp, str(text or "")))

    def _calls(self, raw: Mapping[str, JSON], seq: int, window_id: str, stamp: str | None) -> None:
        content = raw.get("content")
        blocks = (
            [b for b in content if js.is_plain_object(b) and b.get("type") == "toolCall"]
            if (isinstance(content, list))
            else []
        )
        for index, block in enumerate(blocks):
            has_arguments = "arguments" in block
            event = Event(
                seq=seq + index + 1,
                window_id=window_id,
                role="tool",
                created_at=stamp,
                text="",
                tool=str(block.get("name", "")),
                arguments=block.get("arguments"),
                has_arguments=has_arguments,
                status="unfinished",
            )
            self._push(event)
            call_id = block.get("id")
            if isinstance(call_id, str) and call_id not in self.calls:
                self.calls[call_id] = (len(self.windows) - 1, len(self._current[2]) - 1)

    def _result(self, raw: Mapping[str, JSON], seq: int, window_id: str, stamp: str | None) -> None:
        output = content_text(raw.get("content"))
        status: ToolStatus = "error" if raw.get("isError") is True else "ok"
        nested = _nested(raw.get("nestedCalls"))
        call_id = raw.get("toolCallId")
        waiting = self.calls.pop(call_id, None) if isinstance(call_id, str) else None
        if waiting is not None:
            window_index, event_index = waiting
            events = self.windows[window_index][2]
            call = events[event_index]
            events[event_index] = Event(
                seq=call.seq,
                window_id=call.window_id,
                role="tool",
                created_at=call.created_at,
                text=output,
                tool=call.tool,
                arguments=call.arguments,
                has_arguments=call.has_arguments,
                status=status,
                nested_calls=nested,
            )
            self.consumed[seq] = call.seq
            self.branch_seqs.add(seq)
            return
        self._push(
            Event(
                seq=seq,
                window_id=window_id,
                role="tool",
                created_at=stamp,
                text=output,
                tool=str(raw.get("toolName", "")),
                status=status,
                nested_calls=nested,
            )
        )

    def finish(self, session_id: str, highest: int) -> History:
        windows = tuple(
            HistoryWindow(window_id=wid, created_at=created, events=tuple(events))
            for wid, created, events in self.windows
        )
        return History(
            session_id=session_id,
            windows=windows,
            highest_seq=highest,
            branch_seqs=frozenset(self.branch_seqs),
            consumed=dict(self.consumed),
        )


def _context(seq: int, window_id: str, stamp: str | None, text: str) -> Event:
    return Event(seq=seq, window_id=window_id, role="context", created_at=stamp, text=text)


def _bash(raw: Mapping[str, JSON], seq: int, window_id: str, stamp: str | None) -> Event:
    exit_code = raw.get("exitCode")
    status: ToolStatus
    if raw.get("cancelled") is True:
        status = "error"
    elif js.is_number(exit_code):
        status = "ok" if exit_code == 0 else "error"
    else:
        status = "unfinished"
    truncated = raw.get("truncated") is True
    path = raw.get("fullOutputPath")
    return Event(
        seq=seq,
        window_id=window_id,
        role="tool",
        created_at=stamp,
        text=str(raw.get("output") or ""),
        tool="bash",
        arguments={"command": raw.get("command")},
        has_arguments=True,
        status=status,
        output_truncated=truncated,
        full_output_path=path if truncated and isinstance(path, str) else None,
    )


def _nested(value: JSON) -> Mapping[str, JSON] | None:
    if not js.is_plain_object(value):
        return None
    calls = value.get("calls")
    return {
        "calls": list(calls) if isinstance(calls, list) else [],
        "complete": value.get("complete") is True,
    }


def content_text(content: JSON) -> str:
    """``contentText``: a string as is, else the text blocks joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if js.is_plain_object(block)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


def document(event: Event) -> str:
    """S111: what search matches and read pages — the text of a non-tool event; for a tool
    event ``<name> <arguments JSON>``, then its output and its recorded nested calls."""
    if event.role != "tool":
        return event.text
    arguments = js.stringify(event.arguments) if event.has_arguments else "(arguments not recorded)"
    parts = [f"{event.tool} {arguments}"]
    if event.text:
        parts.append(f"\n--- output ---\n{event.text}")
    nested = event.nested_calls
    if nested is not None:
        calls: Sequence[Any] = nested["calls"]
        state = "complete" if nested["complete"] else "incomplete"
        parts.append(f"\n--- nested calls ({state}, {len(calls)} recorded) ---")
        parts += [f"\n{_nested_line(call)}" for call in calls]
    return "".join(parts)


def _nested_line(call: JSON) -> str:
    if not js.is_plain_object(call):
        return js.stringify(call)
    fields = [str(call.get("id", "")), str(call.get("name", "")), f"[{call.get('status', '')}]"]
    if js.is_number(call.get("durationMs")):
        fields.append(f"{call['durationMs']}ms")
    if isinstance(call.get("error"), str):
        fields.append(call["error"])
    if "arguments" in call:
        fields.append(js.stringify(call["arguments"]))
    return " ".join(fields)
