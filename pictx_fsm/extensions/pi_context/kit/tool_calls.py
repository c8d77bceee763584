"""Hypothesis strategies for the nine notes and history tools, as scripted model replies.

A :func:`tool_scripts` action is one assistant message calling up to three tools, with
arguments of every kind: valid ones that reach ``ok`` (addresses from a small pool, so a
later read, edit or search meets an earlier write), ones the tools refuse in JSON (a home
you do not own, a missing note, an unknown window, an edit that matches nothing), and ones
that throw (dot segments, absolute paths, bad globs and queries, mistyped cursors, addresses
through the links :mod:`.notes_sandbox` plants out of the root). ``wipe_memory`` joins a
batch at any position, so a write and a wipe in one batch order as Pi orders them (N2).
History ids are placeholders resolved when the reply is generated. Every integer drawn lies
between -99 and 99, a larger one is drawn from a table by its index (a seed means the same
runs on every install: :mod:`pictx_fsm.testing.tables`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.kit.actions import Script
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import ITEM_REF, WINDOW_REF
from pictx_fsm.extensions.pi_context.tools.schema import ROLES
from pictx_fsm.testing.tables import table

__all__ = [
    "ADDRESSES",
    "CALLS",
    "ESCAPING",
    "INVALID",
    "ITEM_CHARS",
    "ITEM_OFFSETS",
    "JSON",
    "NOTE_OFFSETS",
    "NOT_OWNED",
    "PATTERNS",
    "TOOL_NAMES_IN_HISTORY",
    "WORDS",
    "Arguments",
    "tool_script_moves",
    "tool_scripts",
]

JSON: TypeAlias = Any
Arguments: TypeAlias = dict[str, JSON]

WORDS: Final = ("alpha", "beta", "gamma", "delta", "needle", "MAP")
ADDRESSES: Final = (
    "plan.md",
    "a/b.md",
    "MAP.md",
    "@project/design.md",
    "@project/MAP.md",
    "@human/prefs.md",
    "@self/habits.md",
    "@model/quirks.md",
)
NOT_OWNED: Final = ("@agents/other/x.md", "@models/other/x.md")
"""Homes of another agent or model: read-only, a write is refused in JSON."""
ESCAPING: Final = ("@human/escape/x.md", "@human/leak.md", "@agents/evil/sentinel.md")
"""Addresses through the links the sandbox plants out of the root: refused (EACCES)."""
INVALID: Final = ("../x.md", "/abs.md", "a\\b.md", "", "@nope/x.md", "a/../b.md", "x@y.md", 7)
PATTERNS: Final = (
    None,
    "**",
    "*",
    "@project/**",
    "@human/*",
    "@agents/*/**",
    "@agents/evil/**",
    "@agents/Bad Name/**",
    "../**",
    "@nope/**",
)
TOOL_NAMES_IN_HISTORY: Final = ("wipe_memory", "notes_write", "history_list", None)
NOTE_OFFSETS: Final = (*range(-40, 0, 8), *range(0, 401, 5))
"""Where a note is read from (-40 to 400 characters; a negative offset is an error)."""
ITEM_OFFSETS: Final = (*range(-30, 0, 10), *range(0, 3_001, 40))
"""Where a history item is read from (-30 to 3,000 characters)."""
ITEM_CHARS: Final = tuple(range(1, 121, 2))
"""A history list's characters per item (1 to 119)."""


def _text() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)


def _address() -> st.SearchStrategy[JSON]:
    return st.one_of(
        st.sampled_from(ADDRESSES),
        st.sampled_from(ADDRESSES),
        st.sampled_from(NOT_OWNED + ESCAPING + INVALID),
    )


def _mistyped() -> st.SearchStrategy[JSON]:
    return st.sampled_from(("x", -1, 1.5, [1]))


def _query() -> st.SearchStrategy[JSON]:
    return st.one_of(
        st.sampled_from(WORDS),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
        st.sampled_from(("", [], [1], ["a", ""], 3)),
    )


def _notes_write() -> st.SearchStrategy[Arguments]:
    return st.one_of(
        st.builds(
            lambda address, content, extra: {"address": address, "content": content, **extra},
            _address(),
            _text(),
            st.fixed_dictionaries(
                {},
                optional={
                    "origin": st.sampled_from(("user", "self", "external", "nobody")),
                    "stale": st.booleans(),
                },
            ),
        ),
        st.fixed_dictionaries({"address": _address()}, optional={"content": st.just(3)}),
    )


def _notes_edit() -> st.SearchStrategy[Arguments]:
    edit = st.fixed_dictionaries(
        {"oldText": st.sampled_from(WORDS), "newText": _text()},
    )
    return st.fixed_dictionaries(
        {"address": _address()},
        optional={
            "edits": st.one_of(st.lists(edit, min_size=1, max_size=2), st.just("x")),
            "replace_all": st.booleans(),
            "stale": st.booleans(),
            "origin": st.sampled_from(("user", "external")),
        },
    )


def _notes_read() -> st.SearchStrategy[Arguments]:
    return st.fixed_dictionaries(
        {"address": _address()},
        optional={
            "offset_chars": st.one_of(table(NOTE_OFFSETS), _mistyped()),
            "limit_chars": st.integers(1, 60),
        },
    )


def _notes_list() -> st.SearchStrategy[Arguments]:
    return st.fixed_dictionaries(
        {},
        optional={
            "pattern": st.sampled_from(PATTERNS),
            "cursor": st.one_of(st.integers(0, 3), _mistyped()),
            "max_results": st.integers(1, 3),
        },
    )


def _notes_search() -> st.SearchStrategy[Arguments]:
    return st.fixed_dictionaries(
        {"query": _query()},
        optional={
            "pattern": st.sampled_from(PATTERNS),
            "cursor": st.integers(0, 2),
            "max_matches_per_file": st.integers(1, 2),
            "max_files": st.integers(1, 2),
        },
    )


def _window() -> st.SearchStrategy[JSON]:
    return st.one_of(
        st.builds(lambda i: {WINDOW_REF: i}, st.integers(-3, 3)),
        st.just("pcw:unknown:window"),
    )


def _filters() -> Mapping[str, st.SearchStrategy[JSON]]:
    return {
        "limit": st.integers(1, 4),
        "cursor": st.one_of(st.integers(0, 3), _mistyped()),
        "recent_first": st.booleans(),
        "role": st.sampled_from((*ROLES, None)),
        "tool_name": st.sampled_from(TOOL_NAMES_IN_HISTORY),
        "window_id": _window(),
        "max_chars_per_item": table(ITEM_CHARS),
    }


def _history_windows() -> st.SearchStrategy[Arguments]:
    return st.fixed_dictionaries(
        {},
        optional={
            "limit": st.one_of(st.integers(1, 3), _mistyped()),
            "recent_first": st.booleans(),
        },
    )


def _history_read() -> st.SearchStrategy[Arguments]:
    item = st.one_of(
        st.builds(lambda i, j: {ITEM_REF: [i, j]}, st.integers(-2, 2), st.integers(-6, 6)),
        st.just("no-such-item"),
    )
    return st.fixed_dictionaries(
        {"window_id": _window(), "item_id": item},
        optional={
            "offset_chars": st.one_of(table(ITEM_OFFSETS), _mistyped()),
            "limit_chars": st.integers(1, 80),
        },
    )


CALLS: Final[Mapping[str, st.SearchStrategy[Arguments]]] = {
    "history_windows": _history_windows(),
    "history_list": st.fixed_dictionaries({}, optional=_filters()),
    "history_read": _history_read(),
    "history_search": st.fixed_dictionaries(
        {"query": _query()},
        optional=_filters(),
    ),
    "notes_write": _notes_write(),
    "notes_edit": _notes_edit(),
    "notes_read": _notes_read(),
    "notes_list": _notes_list(),
    "notes_search": _notes_search(),
}
"""Arguments of every kind, per tool (built once)."""


def _encoded(name: str) -> st.SearchStrategy[tuple[str, str]]:
    return CALLS[name].map(lambda args: (name, json.dumps(args, sort_keys=True)))


_ENCODED: Final[Mapping[str, st.SearchStrategy[tuple[str, str]]]] = {
    name: _encoded(name) for name in CALLS
}
"""Each tool's calls as (name, JSON arguments), built once: a strategy built per draw is
validated again on every draw."""


def _call() -> st.SearchStrategy[tuple[str, str]]:
    return st.sampled_from(tuple(CALLS)).flatmap(_ENCODED.__getitem__)


def _batch(calls: list[tuple[str, str]], wipe_at: int | None) -> Script:
    if wipe_at is not None:
        calls.insert(wipe_at % (len(calls) + 1), ("wipe_memory", "{}"))
    names, arguments = zip(*calls, strict=True)
    return Script(reply="tools", chars=40, tools=tuple(names), arguments=tuple(arguments))


def _batch_move(calls: list[tuple[str, str]], wipe_at: int | None) -> tuple[Script]:
    return (_batch(calls, wipe_at),)


def tool_scripts() -> st.SearchStrategy[Script]:
    """One model reply calling 1–3 notes or history tools, ``wipe_memory`` sometimes among
    them."""
    return st.builds(_batch, _CALLS, _WIPE_AT)


def tool_script_moves() -> st.SearchStrategy[tuple[Script]]:
    """:func:`tool_scripts` as a move of one action."""
    return st.builds(_batch_move, _CALLS, _WIPE_AT)


_CALLS: Final = st.lists(_call(), min_size=1, max_size=3)
_WIPE_AT: Final = st.one_of(st.none(), st.none(), st.integers(0, 3))
