"""The four history tools over the active branch (lifecycle spec R76–R80).

Windows and items come from :mod:`pictx_fsm.extensions.pi_context.history` (R76, R77), recomputed on
every call. Source: ``src/history/history-tools.ts`` and ``src/history/history.ts`` of
pi-context 0.25.0 (astrosheep-zero/pi-context@5a9d4b49).
"""

from __future__ import annotations

from typing import Final

from pictx_fsm import js
from pictx_fsm.extensions.pi_context.history import HistoryItem, HistoryWindow, history_windows
from pictx_fsm.extensions.pi_context.tools.context import ToolContext
from pictx_fsm.extensions.pi_context.tools.output import (
    HISTORY_PREVIEW_CHARS,
    JSON,
    ItemFits,
    earliest_match_offset,
    middle_truncate,
    page,
    past_end_error,
    prefix_fit,
    read_window,
    read_window_text,
    with_keys,
)
from pictx_fsm.extensions.shared.tools.arguments import Arguments, search_queries
from pictx_fsm.host.tool_outcome import JsonReply, RawReply, Reply

__all__ = [
    "ITEM_SUBJECT",
    "TOOL_ROLES",
    "UNKNOWN_ITEM",
    "history_list",
    "history_read",
    "history_search",
    "history_windows_tool",
]

UNKNOWN_ITEM: Final = "unknown item_id or window_id"
ITEM_SUBJECT: Final = "item"
TOOL_ROLES: Final = ("tool_call", "tool")


def _windows(context: ToolContext) -> tuple[HistoryWindow, ...]:
    session = context.session()
    return history_windows(session.branch(), session.session_id)


def history_windows_tool(args: Arguments, context: ToolContext) -> Reply:
    """R78: ``{windows: [{window_id, item_count}]}``, newest first unless ``false``."""
    windows = list(_windows(context))
    if args.not_false("recent_first"):
        windows.reverse()
    limit = args.integer("limit")
    shown = windows if limit is None else windows[:limit]
    return JsonReply(
        value={"windows": [{"window_id": w.window_id, "item_count": len(w.items)} for w in shown]}
    )


def history_list(args: Arguments, context: ToolContext) -> Reply:
    """R79: filtered items as previews, paged."""
    refusal = _filter_refusal(args, context)
    if refusal is not None:
        return refusal
    items = [_visible(item, args) for item in _filtered(args, context)]
    return _page(items, args)


def history_search(args: Arguments, context: ToolContext) -> Reply:
    """R79: filtered items containing any query, each once, with ``match_offset_chars``."""
    refusal = _filter_refusal(args, context)
    if refusal is not None:
        return refusal
    queries = search_queries(args.get("query"))
    items = [
        {**_visible(item, args), "match_offset_chars": earliest_match_offset(item.content, queries)}
        for item in _filtered(args, context)
        if any(js.includes(item.content, query) for query in queries)
    ]
    return _page(items, args)


def history_read(args: Arguments, context: ToolContext) -> Reply:
    """R80: the READ WINDOW of one item's content."""
    window_id, item_id = args.get("window_id"), args.get("item_id")
    item = next(
        (
            candidate
            for window in _windows(context)
            for candidate in window.items
            if candidate.window_id == window_id and candidate.item_id == item_id
        ),
        None,
    )
    if item is None:
        return JsonReply(value={"error": UNKNOWN_ITEM})
    offset = args.integer("offset_chars")
    total = len(item.content)
    if offset is not None and offset > total:
        error = past_end_error(ITEM_SUBJECT, offset, total)
        return JsonReply(
            value={
                "error": error,
                "window_id": item.window_id,
                "item_id": item.item_id,
                "offset_chars": offset,
                "total_chars": total,
            }
        )
    identity = {"window_id": item.window_id, "item_id": item.item_id}
    window, rendered = read_window(
        item.content,
        offset,
        args.integer("limit_chars"),
        lambda window: read_window_text(list(identity.items()), window),
    )
    return RawReply(text=rendered, details={**identity, **window.cursor()})


# -- filters, previews, pages --------------------------------------------------------------------


def _filter_refusal(args: Arguments, context: ToolContext) -> Reply | None:
    """The two JSON refusals of R79: a vacuous role × tool_name, an unknown window."""
    role, tool_name, window_id = (
        args.string("role"),
        args.string("tool_name"),
        args.string("window_id"),
    )
    if tool_name is not None and role is not None and role not in TOOL_ROLES:
        error = (
            f'tool_name is only set on "tool_call" and "tool" items; role "{role}" never '
            "carries one"
        )
        return JsonReply(value={"error": error, "role": role, "tool_name": tool_name})
    if window_id is None:
        return None
    known = [window.window_id for window in _windows(context)]
    if window_id in known:
        return None
    return JsonReply(
        value={
            "error": f'unknown window_id "{window_id}"',
            "window_id": window_id,
            "known_windows": known,
        }
    )


def _filtered(args: Arguments, context: ToolContext) -> list[HistoryItem]:
    role, tool_name, window_id = (
        args.string("role"),
        args.string("tool_name"),
        args.string("window_id"),
    )
    items = [
        item
        for window in _windows(context)
        for item in window.items
        if (window_id is None or item.window_id == window_id)
        and (role is None or item.role == role)
        and (tool_name is None or item.tool_name == tool_name)
    ]
    if args.not_false("recent_first"):
        items.reverse()
    return items


def _visible(item: HistoryItem, args: Arguments) -> dict[str, JSON]:
    """``visibleItem``: a preview that is a plain code-point prefix, with honest counts."""
    limit = args.integer("max_chars_per_item")
    limit = HISTORY_PREVIEW_CHARS if limit is None else limit
    total = len(item.content)
    truncated = total > limit
    view: dict[str, JSON] = {
        "window_id": item.window_id,
        "item_id": item.item_id,
        "role": item.role,
        "tool_name": item.tool_name,
    }
    if item.output_truncated:
        view.update(output_truncated=True, full_output_path=item.full_output_path)
    if item.tool_error:
        view["tool_error"] = True
    view.update(
        truncated=truncated,
        total_chars=total,
        truncated_content=item.content[:limit] if truncated else item.content,
    )
    return view


def _page(items: list[dict[str, JSON]], args: Arguments) -> Reply:
    cursor = args.integer("cursor", minimum=0) or 0
    return JsonReply(value=page(items, cursor, "items", args.integer("limit"), _fit_item))


def _fit_item(item: dict[str, JSON], fits: ItemFits) -> dict[str, JSON]:
    """``truncateHistoryItem``: cut the content to a prefix; if even an empty prefix is too
    big, middle-truncate ``tool_name`` instead, then both."""
    if fits(item):
        return item

    def shrink(base: dict[str, JSON]) -> dict[str, JSON]:
        content = prefix_fit(
            base["truncated_content"],
            lambda text: fits(with_keys(base, truncated=True, truncated_content=text)),
        )
        return with_keys(base, truncated=True, truncated_content=content)

    with_content = shrink(item)
    if fits(with_content) or item["tool_name"] is None:
        return with_content
    named = with_keys(
        item,
        tool_name=middle_truncate(
            item["tool_name"], lambda name: fits(with_keys(item, tool_name=name))
        ),
    )
    return named if fits(named) else shrink(named)
