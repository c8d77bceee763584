"""notesoup's five notes tools (S91–S106): typed outcomes over the notes store.

``notes_write``, ``notes_update`` (edits, metadata, ``rename_to``), ``notes_read`` (a window of
the body), ``notes_list`` and ``notes_search`` (recent-first snapshots with ``more``). Each
returns an :class:`~.outcome.Outcome` and its renderer; refusals are typed (S93), a
filesystem error is ``io_error``, and every result fits 32 KiB on both surfaces.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from attrs import frozen

from pictx_fsm import js, js_date
from pictx_fsm.extensions.notesoup.notes.meta import NoteMeta
from pictx_fsm.extensions.notesoup.notes.store import NoteRefusal, NoteRow, NotesStore
from pictx_fsm.extensions.notesoup.tools.outcome import (
    Outcome,
    Render,
    failure,
    fits,
    read_text_window,
    render_outcome,
    render_text_window,
    structured_bytes,
    success,
)
from pictx_fsm.extensions.shared.tools.arguments import (
    Arguments,
    ToolArgumentError,
    search_queries,
)
from pictx_fsm.extensions.shared.tools.diff import diff_text
from pictx_fsm.extensions.shared.tools.output import prefix_fit

__all__ = ["NOTES_OPERATIONS", "Operation", "io_failure", "refusal"]

JSON: TypeAlias = Any
MAX_ERROR_LINE_FACTS: Final = 20
MAX_METADATA_ENTRY_BYTES: Final = 1024
MAX_METADATA_EXTRA_BYTES: Final = 2048
IO_ERROR: Final = "notes operation failed"


@frozen(kw_only=True)
class Operation:
    """One tool: what it does with a call's arguments, and how its success reads."""

    run: Callable[[Arguments, NotesStore], Outcome]
    render: Render


def refusal(error: NoteRefusal) -> Outcome:
    """S99/S93: a store refusal as an outcome; match lines bounded to 20 in ``details``."""
    details: dict[str, JSON] = {}
    message = error.message
    if error.line_numbers is not None:
        lines = error.line_numbers
        if len(lines) > MAX_ERROR_LINE_FACTS:
            details["line_numbers"] = lines[:MAX_ERROR_LINE_FACTS]
            details["line_numbers_total"] = len(lines)
            message = (
                f"{message} (this refusal names {MAX_ERROR_LINE_FACTS} of {len(lines)} match "
                "lines; the note is unchanged)"
            )
        else:
            details["line_numbers"] = lines
    if error.edit_index is not None:
        details["edit_index"] = error.edit_index
    return failure(error.code, message, details or None)


def io_failure() -> Outcome:
    """S93: any errno failure, one message (paths are never shown)."""
    return failure("io_error", IO_ERROR)


def _identity(store: NotesStore, address_shown: str, scope: str) -> dict[str, JSON]:
    out: dict[str, JSON] = {"address": address_shown}
    if scope == "project":
        out["project_key"] = store.identity.project_key
    return out


def _render_identity(data: Mapping[str, JSON]) -> str:
    key = data.get("project_key")
    return data["address"] if key is None else f"{data['address']} (project {key})"


def _stamp(store: NotesStore, ms: float) -> str:
    return js_date.local_iso(ms, store.zone)


# -- notes_write (S98) -------------------------------------------------------------------------


def _write(args: Arguments, store: NotesStore) -> Outcome:
    content = args.text("content")
    address, outcome = store.write(args.given("address"), content, args.given("origin"))
    data = _identity(store, store.shown(address), address.scope)
    data["outcome"] = outcome
    return success(data)


def _render_write(data: Mapping[str, JSON]) -> str:
    return f"{data['outcome']} {_render_identity(data)}"


# -- notes_update (S99–S101) -------------------------------------------------------------------

RENAME_ALONE: Final = (
    "rename_to is used alone: do not combine it with edits, origin, crumpled, or replace_all"
)


def _update(args: Arguments, store: NotesStore) -> Outcome:
    edits = list(args.array("edits"))
    origin = args.given("origin")
    crumpled = _optional_bool(args, "crumpled")
    replace_all = args.given("replace_all") is True
    rename_to = args.given("rename_to")
    if rename_to == "":
        rename_to = None
    if rename_to is not None:
        if edits or origin is not None or crumpled is not None or replace_all:
            return failure("invalid_scope", RENAME_ALONE)
        source, target, moved = store.rename(args.given("address"), rename_to)
        shown_from, shown_to = store.shown(source), store.shown(target)
        data = _identity(store, shown_to, target.scope)
        data.update(
            rename_from=shown_from,
            rename_to=shown_to,
            applied=0,
            change_kind="file",
            diff=f"rename {shown_from} -> {shown_to}",
            replaced_crumpled_target=moved.replaced_crumpled_target,
        )
        return _bounded_update(data)
    address, result = store.update(
        args.given("address"), edits, origin=origin, crumpled=crumpled, replace_all=replace_all
    )
    data = _identity(store, store.shown(address), address.scope)
    diff = "" if result.kind == "none" else diff_text(result.before, result.after)
    data.update(applied=result.applied, change_kind=result.kind, diff=diff)
    return _bounded_update(data)


def _optional_bool(args: Arguments, name: str) -> bool | None:
    value = args.given(name)
    if value is None or isinstance(value, bool):
        return value
    raise ToolArgumentError(f"{name} must be a boolean")


def _render_update(data: Mapping[str, JSON]) -> str:
    if data.get("rename_from") is None:
        state = "unchanged" if data["change_kind"] == "none" else "updated"
        noun = "edit" if data["applied"] == 1 else "edits"
        head = f"{state} {_render_identity(data)}: {data['applied']} {noun}"
    else:
        replaced = " (replaced a crumpled note)" if data.get("replaced_crumpled_target") else ""
        head = f"moved {data['rename_from']} -> {data['address']}{replaced}"
    lines = [head]
    if data.get("diff_truncated") is True:
        lines.append(
            "diff (this receipt's diff was shortened to fit the output budget; the update "
            "itself was applied):"
        )
    elif data["diff"]:
        lines.append("diff:")
    if data["diff"]:
        lines.append(data["diff"])
    return "\n".join(lines)


def _bounded_update(data: dict[str, JSON]) -> Outcome:
    """S100: a receipt too large is cut to the longest fitting diff prefix."""
    if fits(success(data), _render_update):
        return success(data)
    shortened = {**data, "diff_truncated": True}
    diff = prefix_fit(
        data["diff"], lambda cut: fits(success({**shortened, "diff": cut}), _render_update)
    )
    result = success({**shortened, "diff": diff})
    if fits(result, _render_update):
        return result
    return failure(
        "output_too_large",
        "The update was applied, but its receipt metadata exceeds the response budget.",
    )


# -- notes_read (S102) -------------------------------------------------------------------------


def _read(args: Arguments, store: NotesStore) -> Outcome:
    offset = args.integer("offset_chars")
    limit = _limit_chars(args)
    note = store.read(args.given("address"))
    if note is None:
        return failure("not_found", "note not found")
    address, meta, body = note
    total = len(body)
    if offset is not None and offset > total:
        return failure(
            "invalid_offset",
            f"offset_chars {offset} is past the end of the body: the note has {total} body "
            f"chars; the largest legal offset is {total} (an empty end-read)",
        )
    head = _identity(store, store.shown(address), address.scope)
    head["metadata"] = _metadata(meta, store)

    def make(window: dict[str, JSON]) -> dict[str, JSON]:
        return {**head, **window}

    return read_text_window(body, offset, limit, make, _render_read)


def _limit_chars(args: Arguments) -> int | None:
    limit = args.integer("limit_chars", minimum=1)
    if limit is not None and limit > 50000:
        raise ToolArgumentError("limit_chars must be an integer <= 50000")
    return limit


def _metadata(meta: NoteMeta, store: NotesStore) -> dict[str, JSON]:
    """S102: the known metadata rendered, unknown keys bounded (1024 B each, 2048 B all)."""
    out: dict[str, JSON] = {
        "origin": meta.origin,
        "created_at": _stamp(store, meta.created_at),
        "updated_at": _stamp(store, meta.updated_at),
    }
    if meta.crumpled_at is not None:
        out["crumpled_at"] = meta.crumpled_at
    if meta.project is not None:
        out["project"] = meta.project
    extra: dict[str, JSON] = {}
    used = omitted_keys = omitted_bytes = 0
    for key, value in meta.extra:
        size = structured_bytes(key) + 1 + structured_bytes(value)
        if size > MAX_METADATA_ENTRY_BYTES or used + size > MAX_METADATA_EXTRA_BYTES:
            omitted_keys += 1
            omitted_bytes += size
            continue
        used += size
        extra[key] = value
    out["extra"] = extra
    if omitted_keys:
        out["omitted_extra"] = {"keys": omitted_keys, "bytes": omitted_bytes}
    return out


def _render_metadata(metadata: Mapping[str, JSON]) -> str:
    fields = [
        f"origin {metadata['origin']}",
        f"created {metadata['created_at']}",
        f"updated {metadata['updated_at']}",
    ]
    if "crumpled_at" in metadata:
        fields.append(f"crumpled {metadata['crumpled_at']}")
    if "project" in metadata:
        fields.append(f"project {metadata['project']}")
    if metadata["extra"]:
        fields.append(f"extra {js.stringify(metadata['extra'])}")
    omitted = metadata.get("omitted_extra")
    if omitted is not None:
        fields.append(
            f"{omitted['keys']} more metadata values ({omitted['bytes']} bytes) are in the note "
            "file but too large to show"
        )
    return " | ".join(fields)


def _render_read(data: Mapping[str, JSON]) -> str:
    return (
        f"{_render_identity(data)}\n{_render_metadata(data['metadata'])}\n\n"
        f"{render_text_window(data)}"
    )


# -- notes_list and notes_search (S103, S104) --------------------------------------------------


def _listed(store: NotesStore, row: NoteRow) -> dict[str, JSON]:
    out = _identity(store, row.address, row.scope)
    out["updated_at"] = _stamp(store, row.meta.updated_at)
    if row.meta.crumpled_at is not None:
        out["crumpled_at"] = row.meta.crumpled_at
    return out


def _list(args: Arguments, store: NotesStore) -> Outcome:
    limit = args.integer("limit", minimum=1)
    rows, status = store.list_notes(args.given("pattern"), wastebasket=_wastebasket(args))
    files = [_listed(store, row) for row in rows]
    head = _snapshot_head(status.crumpled_excluded, status.homes_unavailable)
    return _snapshot(files, limit, head, _render_list, None)


def _wastebasket(args: Arguments) -> bool:
    return _optional_bool(args, "wastebasket") is True


def _snapshot_head(excluded: int, unavailable: Sequence[str]) -> dict[str, JSON]:
    return {"crumpled_excluded": excluded, "homes_unavailable": list(unavailable)}


Shrink = Callable[[dict[str, JSON], Callable[[dict[str, JSON]], bool]], dict[str, JSON]]


def _snapshot(
    rows: Sequence[dict[str, JSON]],
    limit: int | None,
    head: Mapping[str, JSON],
    render: Render,
    shrink: Shrink | None,
) -> Outcome:
    """S103: rows kept in order while both surfaces fit; ``more`` counts the rest. Only the
    first row may shrink (a search's matches); identities are never cut."""
    files: list[dict[str, JSON]] = []

    def data(selected: list[dict[str, JSON]]) -> dict[str, JSON]:
        return {
            "files": selected,
            "more": len(rows) - len(selected),
            "crumpled_excluded": head["crumpled_excluded"],
            "homes_unavailable": head["homes_unavailable"],
        }

    def fits_with(item: dict[str, JSON]) -> bool:
        return fits(success(data([*files, item])), render)

    for item in rows[:limit]:
        if fits_with(item):
            files.append(item)
            continue
        if not files and shrink is not None:
            reduced = shrink(item, fits_with)
            if fits_with(reduced):
                files.append(reduced)
        if not files:
            return failure(
                "output_too_large",
                "The first matching note cannot fit in a response without losing its identity.",
            )
        break
    outcome = success(data(files))
    if fits(outcome, render):
        return outcome
    return failure("output_too_large", "The notes snapshot metadata exceeds the response budget.")


def _tail_lines(data: Mapping[str, JSON], kind: str, verb: str) -> list[str]:
    lines = []
    if data["more"] > 0:
        lines.append(f"{data['more']} more matching {kind} omitted; narrow with pattern")
    if data["crumpled_excluded"] > 0:
        lines.append(
            f"{data['crumpled_excluded']} crumpled notes hidden; pass wastebasket to {verb} them"
        )
    lines += [f"{home} could not be read" for home in data["homes_unavailable"]]
    return lines


def _render_list(data: Mapping[str, JSON]) -> str:
    files = data["files"]
    lines = [f"{len(files)} {'note' if len(files) == 1 else 'notes'}"]
    for file in files:
        crumpled = f" | crumpled {file['crumpled_at']}" if "crumpled_at" in file else ""
        lines.append(f"- {_render_identity(file)} | updated {file['updated_at']}{crumpled}")
    return "\n".join([*lines, *_tail_lines(data, "notes", "list")])


def _search(args: Arguments, store: NotesStore) -> Outcome:
    try:
        queries = search_queries(args.get("query"))
    except ToolArgumentError as error:
        return failure("invalid_query", str(error))
    limit = args.integer("limit", minimum=1)
    per_file = args.integer("max_matches_per_file", minimum=1)
    found, status = store.search_notes(
        queries, args.given("pattern"), wastebasket=_wastebasket(args)
    )
    files = []
    for hit in found:
        item = _listed(store, hit.row)
        item["matches_total"] = len(hit.matches)
        item["matches"] = [
            {"line": line, "text": text, "truncated": False, "offset_chars": offset}
            for line, text, offset in hit.matches[:per_file]
        ]
        files.append(item)
    head = _snapshot_head(status.crumpled_excluded, status.homes_unavailable)
    return _snapshot(files, limit, head, _render_search, _fit_search_file)


def _fit_search_file(
    file: dict[str, JSON], fits_with: Callable[[dict[str, JSON]], bool]
) -> dict[str, JSON]:
    """Whole match lines first; shorten the first line only when no whole line fits."""
    matches = file["matches"]
    low, high = 0, len(matches)
    while low < high:
        middle = -(-(low + high) // 2)
        if fits_with({**file, "matches": matches[:middle]}):
            low = middle
        else:
            high = middle - 1
    if low > 0 or not matches:
        return {**file, "matches": matches[:low]} if low else file
    first = matches[0]

    def with_text(text: str) -> dict[str, JSON]:
        return {**file, "matches": [{**first, "text": text, "truncated": True}]}

    return with_text(prefix_fit(first["text"], lambda text: fits_with(with_text(text))))


def _render_search(data: Mapping[str, JSON]) -> str:
    files = data["files"]
    lines = [f"{len(files)} {'file' if len(files) == 1 else 'files'}"]
    for file in files:
        total = file["matches_total"]
        shown = f" ({len(file['matches'])} shown)" if len(file["matches"]) < total else ""
        noun = "match" if total == 1 else "matches"
        lines.append(
            f"- {_render_identity(file)} | updated {file['updated_at']} | {total} {noun}{shown}"
        )
        for match in file["matches"]:
            short = " [line shortened]" if match["truncated"] else ""
            lines.append(
                f"  line {match['line']} at offset_chars {match['offset_chars']}: "
                f"{match['text']}{short}"
            )
    return "\n".join([*lines, *_tail_lines(data, "files", "search")])


NOTES_OPERATIONS: Final[Mapping[str, Operation]] = {
    "notes_write": Operation(run=_write, render=_render_write),
    "notes_update": Operation(run=_update, render=_render_update),
    "notes_read": Operation(run=_read, render=_render_read),
    "notes_list": Operation(run=_list, render=_render_list),
    "notes_search": Operation(run=_search, render=_render_search),
}
"""S91: the five notes tools, in registration order."""


def render_text(name: str, outcome: Outcome) -> str:
    return render_outcome(outcome, NOTES_OPERATIONS[name].render)
