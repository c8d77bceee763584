"""notesoup's four history tools (S107, S112–S116): windows, a paged list (a conversation
view that folds tool and context runs), a case-insensitive search and a windowed read, each
a typed outcome within 32 KiB.

Selection is by seq: ``before`` and ``after`` are strict bounds; with neither (or with
``before`` alone) the newest ``limit`` rows are shown, with ``after`` alone the oldest after
it; rows always read oldest first, with the anchors ``older_before``/``newer_after`` that page
on (``null`` at the ends). ``window_id`` may be ``@previous``, the window before the current.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from pictx_fsm import js
from pictx_fsm.extensions.notesoup.history import (
    ROLES,
    Event,
    History,
    document,
    history_of,
)
from pictx_fsm.extensions.notesoup.notes.store import earliest_match_offset
from pictx_fsm.extensions.notesoup.tools.outcome import (
    Outcome,
    Render,
    failure,
    fits,
    read_text_window,
    render_text_window,
    success,
)
from pictx_fsm.extensions.shared.tools.arguments import (
    Arguments,
    ToolArgumentError,
    search_queries,
)
from pictx_fsm.extensions.shared.tools.output import HISTORY_PREVIEW_CHARS, prefix_fit
from pictx_fsm.session.tree import SessionTree

__all__ = ["HISTORY_OPERATIONS", "PREVIOUS_WINDOW", "HistoryOperation"]

JSON: TypeAlias = Any
PREVIOUS_WINDOW: Final = "@previous"
DEFAULT_LIMIT: Final = 20
MAX_FOLD_TOOLS: Final = 20
MAX_TOOL_NAME_CHARS: Final = 120
MAX_KNOWN_WINDOWS: Final = 25
NEIGHBORHOOD: Final = 10


HistoryRun = Callable[[Arguments, SessionTree], Outcome]


class HistoryOperation:
    """One history tool: how it runs over the session tree, and how its success reads."""

    def __init__(self, run: HistoryRun, render: Render) -> None:
        self.run = run
        self.render = render


# -- history_windows (S112) --------------------------------------------------------------------


def _windows(args: Arguments, tree: SessionTree) -> Outcome:
    history = history_of(tree)
    rows = []
    for window in history.windows:
        seqs = [event.seq for event in window.events]
        rows.append(
            {
                "window_id": window.window_id,
                "created_at": window.created_at,
                "first_seq": min(seqs) if seqs else None,
                "last_seq": max(seqs) if seqs else None,
                "item_count": len(seqs),
            }
        )
    kept: list[dict[str, JSON]] = []
    for row in rows:
        candidate = {"session_id": history.session_id, "windows": [*kept, row], "more": 0}
        if not fits(success(candidate), _render_windows):
            break
        kept.append(row)
    return success(
        {"session_id": history.session_id, "windows": kept, "more": len(rows) - len(kept)}
    )


def _render_windows(data: Mapping[str, JSON]) -> str:
    lines = [f"session {data['session_id']}"]
    for window in data["windows"]:
        first, last = window["first_seq"], window["last_seq"]
        seqs = "none" if first is None else f"{first}-{last}"
        lines.append(f"window {window['window_id']} | seqs {seqs} | {window['item_count']} events")
    if data["more"]:
        lines.append(f"{data['more']} more windows omitted")
    return "\n".join(lines)


# -- selection (S113, S114, S116) --------------------------------------------------------------


def _window_filter(args: Arguments, history: History) -> str | Outcome | None:
    """The window asked for (``@previous`` resolved), ``None`` for all, or a refusal."""
    window_id = args.given("window_id")
    if window_id is None:
        return None
    if not isinstance(window_id, str):
        raise ToolArgumentError("window_id must be a string")
    known = history.window_ids()
    if window_id == PREVIOUS_WINDOW:
        if len(known) < 2:
            return failure(
                "unknown_window_id",
                "@previous names no window: this branch has only its first window",
                {"known_windows": known[-MAX_KNOWN_WINDOWS:]},
            )
        return known[-2]
    if window_id not in known:
        return failure(
            "unknown_window_id",
            f'unknown window_id "{window_id}"',
            {"known_windows": known[-MAX_KNOWN_WINDOWS:]},
        )
    return window_id


def _roles(args: Arguments) -> tuple[str, ...] | None:
    value = args.given("roles")
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(v in ROLES for v in value):
        raise ToolArgumentError("roles must be a non-empty array of user, assistant, tool, context")
    return tuple(value)


def _bound(args: Arguments, name: str) -> int | None:
    return args.integer(name)


def _select(
    events: Sequence[Event], limit: int, before: int | None, after: int | None
) -> tuple[list[Event], int | None, int | None]:
    """The rows in the strict ``(after, before)`` range: the newest ``limit`` (the oldest when
    only ``after`` is given), oldest first, with the paging anchors."""
    in_range = [
        e for e in events if (before is None or e.seq < before) and (after is None or e.seq > after)
    ]
    chosen = in_range[:limit] if after is not None and before is None else in_range[-limit:]
    if not chosen:
        return [], None, None
    older = chosen[0].seq if in_range[0].seq < chosen[0].seq else None
    newer = chosen[-1].seq if in_range[-1].seq > chosen[-1].seq else None
    return chosen, older, newer


def _preview(event: Event, max_chars: int, start: int = 0) -> dict[str, JSON]:
    text = document(event)
    total = len(text)
    start = min(max(0, start), total)
    content = text[start : start + max_chars]
    item: dict[str, JSON] = {
        "seq": event.seq,
        "window_id": event.window_id,
        "role": event.role,
        "created_at": event.created_at,
    }
    if event.role == "tool":
        item["tool"] = event.tool
        item["tool_status"] = event.status
        if event.output_truncated:
            item["output_truncated"] = True
            item["full_output_path"] = event.full_output_path
        if event.nested_calls is not None:
            item["nested_calls"] = {
                "call_count": len(event.nested_calls["calls"]),
                "complete": event.nested_calls["complete"],
            }
    item["truncated"] = start > 0 or start + len(content) < total
    item["total_chars"] = total
    if start:
        item["offset_chars"] = start
    item["content"] = content
    return item


def _fold(events: Sequence[Event]) -> dict[str, JSON]:
    """S113: one run of tool and context events as one row."""
    names = Counter(e.tool for e in events if e.role == "tool" and e.tool is not None)
    tools: dict[str, int] = {}
    omitted = 0
    for name, count in names.items():
        if len(tools) < MAX_FOLD_TOOLS and len(name) <= MAX_TOOL_NAME_CHARS:
            tools[name] = count
        else:
            omitted += count
    row: dict[str, JSON] = {
        "folded": True,
        "first_seq": events[0].seq,
        "last_seq": events[-1].seq,
        "count": len(events),
        "tools": tools,
    }
    if omitted:
        row["omitted_tools"] = omitted
    return row


def _conversation(events: Sequence[Event]) -> list[Event | list[Event]]:
    """S113's conversation view: non-empty user/assistant events; runs of tool and context
    events folded (an empty user/assistant event belongs to no row)."""
    rows: list[Event | list[Event]] = []
    run: list[Event] = []
    for event in events:
        if event.role in ("tool", "context"):
            run.append(event)
            continue
        if not event.text:
            continue
        if run:
            rows.append(run)
            run = []
        rows.append(event)
    if run:
        rows.append(run)
    return rows


def _page(
    rows: Sequence[dict[str, JSON]],
    older: int | None,
    newer: int | None,
    render: Render,
) -> Outcome:
    """S116: rows added while both surfaces fit; the first row that alone does not fit is
    shrunk (content prefix, then its tool name omitted); a page that cannot fit is refused."""
    kept: list[dict[str, JSON]] = []

    def data(items: list[dict[str, JSON]], cut_newer: int | None) -> dict[str, JSON]:
        return {"items": items, "older_before": older, "newer_after": cut_newer}

    for index, row in enumerate(rows):
        cut_newer = newer if index == len(rows) - 1 else row.get("seq", row.get("last_seq"))
        if fits(success(data([*kept, row], cut_newer)), render):
            kept.append(row)
            continue
        if not kept:
            anchor = cut_newer
            shrunk = _shrink(
                row,
                lambda candidate: fits(success(data([candidate], anchor)), render),  # noqa: B023
            )
            if shrunk is not None:
                kept.append(shrunk)
                continue
            return failure(
                "page_too_large", "The first event of this page cannot fit in a response."
            )
        last = kept[-1]
        return success(data(kept, last.get("seq", last.get("last_seq"))))
    return success(data(kept, newer))


def _shrink(
    row: dict[str, JSON], fits_row: Callable[[dict[str, JSON]], bool]
) -> dict[str, JSON] | None:
    if "content" not in row:
        return None

    def with_content(text: str, omit_tool: bool = False) -> dict[str, JSON]:
        out = {**row, "content": text, "truncated": True}
        if omit_tool and "tool" in out:
            del out["tool"]
            out["tool_name_omitted"] = True
        return out

    content = prefix_fit(row["content"], lambda text: fits_row(with_content(text)))
    if fits_row(with_content(content)):
        return with_content(content)
    if "tool" in row:
        content = prefix_fit(row["content"], lambda text: fits_row(with_content(text, True)))
        if fits_row(with_content(content, True)):
            return with_content(content, True)
    return None


def _render_rows(data: Mapping[str, JSON]) -> str:
    items = data["items"]
    if not items:
        return "no events match this selection"
    lines = []
    for item in items:
        if item.get("folded"):
            tools = ", ".join(f"{name}×{count}" for name, count in item["tools"].items())
            lines.append(
                f"seqs {item['first_seq']}-{item['last_seq']} | {item['count']} tool/context "
                f"events folded{f' | {tools}' if tools else ''}"
            )
            expand = {
                "after": item["first_seq"] - 1,
                "before": item["last_seq"] + 1,
                "roles": ["tool", "context"],
            }
            lines.append(f"  expand → history_list({js.stringify(expand)})")
            continue
        head = f"seq {item['seq']} | {item['role']} | {item['created_at']}"
        if "tool" in item:
            head += f" | {item['tool']} [{item['tool_status']}]"
        elif item.get("tool_name_omitted"):
            head += f" | [{item['tool_status']}]"
        lines.append(head)
        lines.append(item["content"])
        if item["truncated"]:
            start = item.get("offset_chars", 0)
            lines.append(
                f"[preview of {len(item['content'])} chars from offset {start}; read this seq "
                "for the rest]"
            )
    footer = []
    if data["older_before"] is not None:
        footer.append(f"→ older: {js.stringify({'before': data['older_before']})}")
    if data["newer_after"] is not None:
        footer.append(f"→ newer: {js.stringify({'after': data['newer_after']})}")
    if footer:
        lines.append(" | ".join(footer))
    return "\n".join(lines)


def _common(args: Arguments, tree: SessionTree) -> tuple[History, str | None, int, int] | Outcome:
    history = history_of(tree)
    window = _window_filter(args, history)
    if isinstance(window, Outcome):
        return window
    limit = args.integer("limit", minimum=1)
    max_chars = args.integer("max_chars_per_item", minimum=1)
    return (
        history,
        window,
        DEFAULT_LIMIT if limit is None else limit,
        (HISTORY_PREVIEW_CHARS if max_chars is None else max_chars),
    )


def _list(args: Arguments, tree: SessionTree) -> Outcome:
    common = _common(args, tree)
    if isinstance(common, Outcome):
        return common
    history, window, limit, max_chars = common
    roles = _roles(args)
    before, after = _bound(args, "before"), _bound(args, "after")
    events = [e for e in history.events() if window is None or e.window_id == window]
    if roles is not None:
        chosen, older, newer = _select([e for e in events if e.role in roles], limit, before, after)
        return _page([_preview(e, max_chars) for e in chosen], older, newer, _render_rows)
    rows = _conversation(
        [
            e
            for e in events
            if (before is None or e.seq < before) and (after is None or e.seq > after)
        ]
    )
    keyed = [(row if isinstance(row, Event) else row[-1], row) for row in rows]
    picked = keyed[:limit] if after is not None and before is None else keyed[-limit:]
    older = _first_seq(picked[0][1]) if picked and picked[0] is not keyed[0] else None
    newer = _last_seq(picked[-1][1]) if picked and picked[-1] is not keyed[-1] else None
    items = [
        _preview(row, max_chars) if isinstance(row, Event) else _fold(row) for _, row in picked
    ]
    return _page(items, older, newer, _render_rows)


def _first_seq(row: Event | list[Event]) -> int:
    return row.seq if isinstance(row, Event) else row[0].seq


def _last_seq(row: Event | list[Event]) -> int:
    return row.seq if isinstance(row, Event) else row[-1].seq


def _search(args: Arguments, tree: SessionTree) -> Outcome:
    try:
        queries = search_queries(args.get("query"))
    except ToolArgumentError as error:
        return failure("invalid_query", str(error))
    common = _common(args, tree)
    if isinstance(common, Outcome):
        return common
    history, window, limit, max_chars = common
    roles = _roles(args) or ROLES
    before, after = _bound(args, "before"), _bound(args, "after")
    hits = []
    for event in history.events():
        if (window is not None and event.window_id != window) or event.role not in roles:
            continue
        offset = earliest_match_offset(document(event), queries)
        if offset >= 0:
            hits.append((event, offset))
    offsets = {event.seq: offset for event, offset in hits}
    chosen, older, newer = _select([event for event, _ in hits], limit, before, after)
    items = [_preview(event, max_chars, offsets[event.seq]) for event in chosen]
    return _page(items, older, newer, _render_rows)


# -- history_read (S115) -----------------------------------------------------------------------


def _read(args: Arguments, tree: SessionTree) -> Outcome:
    seq = args.integer("seq")
    if seq is None:
        raise ToolArgumentError("seq must be an integer")
    offset = args.integer("offset_chars")
    limit = args.integer("limit_chars", minimum=1)
    if limit is not None and limit > 50000:
        raise ToolArgumentError("limit_chars must be an integer <= 50000")
    history = history_of(tree)
    if seq < 1 or seq > history.highest_seq:
        return failure(
            "unknown_seq", f"unknown seq {seq}: this session's items run 1..{history.highest_seq}"
        )
    if seq not in history.branch_seqs:
        return failure("not_on_branch", f"seq {seq} is on another branch and is not readable here")
    if seq in history.consumed:
        call = history.consumed[seq]
        return failure(
            "not_an_event",
            f"seq {seq} is a tool result already shown inside the call at seq {call}; read that "
            "seq instead",
            {"read_seq": call},
        )
    event = history.event(seq)
    if event is None:
        return failure("unknown_seq", f"seq {seq} is on this branch but carries no readable event")
    text = document(event)
    total = len(text)
    if offset is not None and offset > total:
        return failure(
            "invalid_offset",
            f"offset_chars {offset} is past the end of the event: it has {total} chars; the "
            f"largest legal offset is {total} (an empty end-read)",
        )
    head: dict[str, JSON] = {
        "seq": seq,
        "window_id": event.window_id,
        "role": event.role,
        "created_at": event.created_at,
    }
    if event.role == "tool":
        head.update(tool=event.tool, tool_status=event.status)

    def make(window: dict[str, JSON]) -> dict[str, JSON]:
        return {**head, **window}

    return read_text_window(text, offset, limit, make, _render_read)


def _render_read(data: Mapping[str, JSON]) -> str:
    seq = data["seq"]
    lines = [f"seq {seq} | window {data['window_id']} | {data['role']}"]
    if "tool" in data:
        lines.append(f"tool {data['tool']} [{data['tool_status']}]")
    around = {"after": max(0, seq - NEIGHBORHOOD), "before": seq + NEIGHBORHOOD}
    lines.append(f"neighborhood → history_list({js.stringify(around)})")
    return "\n".join(lines) + "\n\n" + render_text_window(data)


HISTORY_OPERATIONS: Final[Mapping[str, HistoryOperation]] = {
    "history_windows": HistoryOperation(_windows, _render_windows),
    "history_list": HistoryOperation(_list, _render_rows),
    "history_read": HistoryOperation(_read, _render_read),
    "history_search": HistoryOperation(_search, _render_rows),
}
"""S107: the four history tools, in registration order."""
