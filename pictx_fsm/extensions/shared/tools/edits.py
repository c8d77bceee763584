"""One exact-text edit of a note's body, as the family's notes tools apply them in order
(pi-context N30, notesoup S99): each replaces text that occurs in the body as already edited
— once, or everywhere with ``replace_all`` — and names the lines of an ambiguous match."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pictx_fsm import js

__all__ = ["Refuse", "apply_edit"]

Refuse = Callable[..., Exception]
"""The tool's refusal: ``refuse(code, message, *, line_numbers=…, edit_index=…)``."""


def apply_edit(
    body: str,
    edit: Any,
    index: int,
    replace_all: bool,
    refuse: Refuse,
    anchor_limit: int | None = None,
) -> tuple[str, bool]:
    """``body`` with edit ``index`` applied, and whether it changed text (``newText !=
    oldText``); an edit that names no text, or text that does not occur (or occurs more than
    once without ``replace_all``), raises ``refuse(…)``. ``anchor_limit``: at most this many
    line numbers in an ambiguous edit's message, then how many more."""
    old = edit.get("oldText") if isinstance(edit, dict) else None
    new = edit.get("newText") if isinstance(edit, dict) else None
    if not isinstance(old, str) or not old:
        raise refuse(
            "no_match", f"edit {index}: oldText must be a non-empty string", edit_index=index
        )
    if not isinstance(new, str):
        raise refuse("no_match", f"edit {index}: newText must be a string", edit_index=index)
    starts = js.occurrence_starts(body, old)
    if not starts:
        raise refuse(
            "no_match", f"edit {index}: oldText does not occur in the note body", edit_index=index
        )
    if len(starts) > 1 and not replace_all:
        lines = [body.count("\n", 0, start) + 1 for start in starts]
        raise refuse(
            "ambiguous_edit",
            f"edit {index}: oldText occurs {len(starts)} times ({_lines(lines, anchor_limit)}); "
            "pass replace_all to replace every occurrence",
            line_numbers=lines,
            edit_index=index,
        )
    edited = js.replace_all(body, old, new) if replace_all else js.splice(body, old, new)
    return edited, old != new


def _lines(lines: Sequence[int], limit: int | None) -> str:
    named = lines if limit is None else lines[:limit]
    rest = len(lines) - len(named)
    more = f", and {rest} more" if rest > 0 else ""
    return f"lines {', '.join(map(str, named))}{more}"
