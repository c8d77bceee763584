"""The five notes tools: what each ``execute`` reads, calls and returns (N24–N46).

Each handler takes the call's arguments and context and returns a reply; a store refusal
(:class:`NoteError`) becomes the JSON refusal of N4a here, everything else propagates to
:func:`pictx_fsm.extensions.pi_context.tools.execute.execute_tool`, which turns it into an error
result (N4b).
Source: ``src/notes/tools.ts`` of pi-context 0.25.0.
"""

from __future__ import annotations

from typing import Final

from pictx_fsm import js_date
from pictx_fsm.extensions.pi_context.tools.address import decode_address
from pictx_fsm.extensions.pi_context.tools.context import ToolContext
from pictx_fsm.extensions.pi_context.tools.output import (
    JSON,
    ItemFits,
    middle_truncate,
    page,
    past_end_error,
    prefix_fit,
    read_window,
    read_window_text,
    with_keys,
)
from pictx_fsm.extensions.pi_context.tools.store import NOT_FOUND, NoteError, SearchRow
from pictx_fsm.extensions.shared.tools.arguments import Arguments, search_queries
from pictx_fsm.host.tool_outcome import JsonReply, RawReply, Reply

__all__ = ["NOTE_SUBJECT", "notes_edit", "notes_list", "notes_read", "notes_search", "notes_write"]

NOTE_SUBJECT: Final = "note"


def notes_write(args: Arguments, context: ToolContext) -> Reply:
    """N24–N27: ``{"address", "written": true}``."""
    address = args.get("address")
    destination = decode_address(address)
    content = args.text("content")
    try:
        context.store.write(
            destination, content, origin=args.get("origin"), stale=args.get("stale")
        )
    except NoteError as refusal:
        return JsonReply(value=refusal.payload())
    return JsonReply(value={"address": address, "written": True})


def notes_edit(args: Arguments, context: ToolContext) -> Reply:
    """N28–N33: ``{"address", "applied", "diff"}``."""
    address = args.get("address")
    destination = decode_address(address)
    edits = args.array("edits")
    try:
        outcome = context.store.edit(
            destination,
            edits,
            origin=args.get("origin"),
            stale=args.get("stale"),
            replace_all=args.truthy("replace_all"),
        )
    except NoteError as refusal:
        return JsonReply(value=refusal.payload())
    return JsonReply(value={"address": address, "applied": outcome.applied, "diff": outcome.diff})


def notes_read(args: Arguments, context: ToolContext) -> Reply:
    """N34–N37: the READ WINDOW of the note's serialized text (after the access bump)."""
    address = args.get("address")
    text = context.store.read(decode_address(address))
    if text is None:
        return JsonReply(value={"error": NOT_FOUND, "address": address})
    offset = args.integer("offset_chars")
    limit = args.integer("limit_chars")
    total = len(text)
    if offset is not None and offset > total:
        error = past_end_error(NOTE_SUBJECT, offset, total)
        return JsonReply(
            value={"error": error, "address": address, "offset_chars": offset, "total_chars": total}
        )
    window, rendered = read_window(
        text, offset, limit, lambda window: read_window_text([("address", address)], window)
    )
    return RawReply(text=rendered, details={"address": address, **window.cursor()})


def notes_list(args: Arguments, context: ToolContext) -> Reply:
    """N38–N43: rows ``{address, stale, updated_at}``, newest first, paged."""
    try:
        rows = context.store.list_notes(args.given("pattern"))
    except NoteError as refusal:
        return JsonReply(value=refusal.payload())
    cursor = args.integer("cursor", minimum=0) or 0
    limit = args.integer("max_results")
    files = [
        {
            "address": row.address,
            "stale": row.stale,
            "updated_at": js_date.local_iso(row.updated_at, context.zone),
        }
        for row in rows
    ]
    return JsonReply(value=page(files, cursor, "files", limit, _fit_row))


def _fit_row(row: dict[str, JSON], fits: ItemFits) -> dict[str, JSON]:
    """A row alone over the budget keeps a middle-truncated address (N43)."""
    if fits(row):
        return row
    address = middle_truncate(
        row["address"],
        lambda candidate: fits(with_keys(row, address=candidate, address_truncated=True)),
    )
    return with_keys(row, address=address, address_truncated=True)


def notes_search(args: Arguments, context: ToolContext) -> Reply:
    """N44–N46: files with matching body lines, by address, paged."""
    queries = search_queries(args.get("query"))
    try:
        rows = context.store.search_notes(queries, args.given("pattern"))
    except NoteError as refusal:
        return JsonReply(value=refusal.payload())
    cursor = args.integer("cursor", minimum=0) or 0
    per_file = args.integer("max_matches_per_file")
    limit = args.integer("max_files")
    files = [_search_entry(row, per_file, context) for row in rows]
    return JsonReply(value=page(files, cursor, "files", limit, _fit_file))


def _search_entry(hit: SearchRow, per_file: int | None, context: ToolContext) -> dict[str, JSON]:
    matches = [
        {"line": m.line, "text": m.text, "truncated": False, "offset_chars": m.offset_chars}
        for m in hit.matches
    ]
    return {
        "address": hit.row.address,
        "updated_at": js_date.local_iso(hit.row.updated_at, context.zone),
        "stale": hit.row.stale,
        "matches_total": len(matches),
        "matches": matches if per_file is None else matches[:per_file],
    }


def _fit_file(file: dict[str, JSON], fits: ItemFits) -> dict[str, JSON]:
    """N46: the longest prefix of >= 1 matches; else one match cut to a prefix; else the
    address middle-truncated too. ``matches_total`` is never reduced."""
    matches = file["matches"]
    if fits(file) or not matches:
        return file
    low, high = 0, len(matches)
    while low < high:
        middle = -(-(low + high) // 2)
        if middle >= 1 and fits(with_keys(file, matches=matches[:middle])):
            low = middle
        else:
            high = middle - 1
    if low >= 1:
        return with_keys(file, matches=matches[:low])

    def cut(text: str) -> dict[str, JSON]:
        return with_keys(file, matches=[with_keys(matches[0], text=text, truncated=True)])

    return _fit_row(cut(prefix_fit(matches[0]["text"], lambda text: fits(cut(text)))), fits)
