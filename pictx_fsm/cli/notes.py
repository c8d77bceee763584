"""``pictx-fsm notes``: list, read and search a notes home from the shell.

For a human auditing what a model wrote: the same homes, addresses, order and matches as
the ``notes_*`` tools (it runs their store), but read-only — ``read`` prints the file as it
is on disk, without the access bump a model's ``notes_read`` writes. Without ``--session``
the session home is left out (bare addresses name one session's notes).

    pictx-fsm notes list [PATTERN] [--home DIR] [--session ID] [--cwd DIR] [--json]
    pictx-fsm notes read ADDRESS [...]
    pictx-fsm notes search QUERY [QUERY ...] [--pattern GLOB] [--json]

Exit codes: 0 done, 1 nothing found (``read`` of a missing note, ``search`` without a
match), 2 unusable input (a bad address, pattern or home).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path

from pictx_fsm import js_date
from pictx_fsm.errors import UsageError
from pictx_fsm.extensions.pi_context.texts import NOTES_AGENT_ENV, NOTES_HOME_ENV
from pictx_fsm.extensions.pi_context.tools.address import AddressError, decode_address
from pictx_fsm.extensions.pi_context.tools.context import ToolContext
from pictx_fsm.extensions.pi_context.tools.homes import read_note_text
from pictx_fsm.extensions.pi_context.tools.store import (
    HomeRef,
    NoteError,
    NoteRow,
    NotesStore,
    SearchRow,
)

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="list notes, most recently updated first")
    listing.add_argument("pattern", nargs="?", help="a glob over addresses (as notes_list)")
    reading = actions.add_parser("read", help="print one note file as it is on disk")
    reading.add_argument("address", help="a note address (bare = the --session home)")
    search = actions.add_parser("search", help="lines of note bodies holding any query")
    search.add_argument("queries", nargs="+", metavar="QUERY", help="literal, case-sensitive")
    search.add_argument("--pattern", help="a glob over addresses (as notes_search)")
    for action in (listing, reading, search):
        _identity_options(action)
    for action in (listing, search):
        action.add_argument("--json", action="store_true", help="rows as the tool's JSON")


def _identity_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", type=Path, help="notes root (default: $PI_NOTES_HOME)")
    parser.add_argument("--session", metavar="ID", help="the session whose home bare names are")
    parser.add_argument("--cwd", type=Path, default=Path("."), help="names @project (git root)")
    parser.add_argument("--agent", help="the @self agent (default: $PI_NOTES_AGENT or root)")
    parser.add_argument("--model", metavar="ID", help="the @model id (default: default)")


def run(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        if args.action == "read":
            return _read(store, args.address, session=args.session is not None)
        if args.action == "list":
            return _list(store, args.pattern, as_json=args.json)
        return _search(store, args.queries, args.pattern, as_json=args.json)
    except (AddressError, NoteError) as error:
        raise UsageError(str(error)) from error
    except OSError as error:
        raise UsageError(f"cannot read the notes home: {error}") from error


def _store(args: argparse.Namespace) -> NotesStore:
    env = dict(os.environ)
    if args.home is not None:
        env[NOTES_HOME_ENV] = str(args.home)
    if args.agent is not None:
        env[NOTES_AGENT_ENV] = args.agent
    context = ToolContext.for_host(
        env=env,
        user_home=Path.home(),
        cwd=args.cwd,
        session_id=args.session or "",
        model_id=args.model,
    )
    store = context.store
    if not store.place.root.is_dir():
        raise UsageError(f"{store.place.root}: no notes home there (set --home or $PI_NOTES_HOME)")
    return store


def _homes(store: NotesStore, pattern: str | None) -> list[HomeRef]:
    homes = store.homes_for(pattern or None)
    if store.place.identity.session_id:
        return homes
    return [home for home in homes if home.scope != "session"]


def _read(store: NotesStore, address: str, *, session: bool) -> int:
    decoded = decode_address(address)
    if decoded.scope == "session" and not session:
        raise UsageError(f"{address}: a bare address needs --session (the session it belongs to)")
    path = store.place.note_path(decoded.scope, decoded.path, decoded.who)
    if not path.is_file():
        print(f"pictx-fsm notes: {address}: note not found")
        return 1
    print(read_note_text(path), end="")
    return 0


def _list(store: NotesStore, pattern: str | None, *, as_json: bool) -> int:
    rows = store.list_notes(pattern, _homes(store, pattern))
    if as_json:
        print(json.dumps([_row_json(row) for row in rows], indent=2, ensure_ascii=False))
    else:
        for row in rows:
            print(_row_text(row))
    return 0


def _search(
    store: NotesStore, queries: Sequence[str], pattern: str | None, *, as_json: bool
) -> int:
    if any(query == "" for query in queries):
        raise UsageError("query strings must be non-empty: an empty query matches everything")
    hits = store.search_notes(list(queries), pattern, _homes(store, pattern))
    if as_json:
        print(json.dumps([_hit_json(hit) for hit in hits], indent=2, ensure_ascii=False))
    else:
        for hit in hits:
            for match in hit.matches:
                print(f"{hit.row.address}:{match.line}: {match.text}")
    return 0 if hits else 1


def _row_json(row: NoteRow) -> dict[str, object]:
    return {
        "address": row.address,
        "stale": row.stale,
        "updated_at": js_date.local_iso(row.updated_at),
    }


def _row_text(row: NoteRow) -> str:
    lines = row.body.count("\n") + 1
    state = "stale" if row.stale else "fresh"
    size = f"({lines} lines, {row.size_bytes} UTF-8 bytes)"
    return f"{js_date.local_iso(row.updated_at)}  {state}  {row.address}  {size}"


def _hit_json(hit: SearchRow) -> dict[str, object]:
    return {
        **_row_json(hit.row),
        "matches": [
            {"line": m.line, "text": m.text, "offset_chars": m.offset_chars} for m in hit.matches
        ],
    }
