"""The tool-result wire: JSON texts, the 32 KiB budget, pages with cursors, read windows.

pi-context's ``src/tool-output.ts`` (0.25.0, notes spec §10, lifecycle R79–R80): every
result is ``JSON.stringify(value, null, 2)`` or, for reads, a raw READ WINDOW block; a
result never exceeds 32768 UTF-8 bytes. Truncation is always a plain code-point prefix
(cursors stay exact), except metadata that gets a visible middle marker.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.host.tool_outcome import result_text

JSON: TypeAlias = Any

TOOL_OUTPUT_MAX_BYTES: Final = 32 * 1024
DEFAULT_READ_WINDOW_CHARS: Final = 12000
MAX_READ_WINDOW_CHARS: Final = 50000
HISTORY_PREVIEW_CHARS: Final = 1200
READ_WINDOW_HEADER: Final = "--- READ WINDOW ---"

Fits: TypeAlias = Callable[[str], bool]
ItemFits: TypeAlias = Callable[[Any], bool]
"""Whether one candidate page item fits the page alone."""
ItemFit: TypeAlias = Callable[[Any, ItemFits], Any]
"""Shrinks one page item that alone exceeds the budget; gets a ``fits(candidate)`` test."""


def text_fits(text: str) -> bool:
    """True when ``text`` is at most 32 KiB of UTF-8 on the wire."""
    return js.utf8_length(text) <= TOOL_OUTPUT_MAX_BYTES


def within_budget(value: JSON) -> bool:
    return text_fits(result_text(value))


def truncation_marker(removed_chars: int) -> str:
    return f"…[truncated {removed_chars} chars]…"


def prefix_fit(text: str, fits: Fits) -> str:
    """The longest code-point prefix of ``text`` that ``fits`` accepts (N48).

    Binary search, then a back-off: a size can dip by a byte at the end (a numeric cursor
    turning ``null``), so the predicate is only nearly monotone.
    """
    if fits(text):
        return text
    low, high = 0, len(text)
    while low < high:
        middle = math.ceil((low + high) / 2)
        if fits(text[:middle]):
            low = middle
        else:
            high = middle - 1
    while low > 0 and not fits(text[:low]):
        low -= 1
    return text[:low]


def middle_truncate(text: str, fits: Fits) -> str:
    """Keep ``ceil(k/2)`` leading and ``floor(k/2)`` trailing code points around
    ``…[truncated N chars]…``, ``k`` maximal such that the result fits (N48)."""
    if fits(text):
        return text
    total = len(text)

    def build(kept: int) -> str:
        head = math.ceil(kept / 2)
        return text[:head] + truncation_marker(total - kept) + text[total - (kept - head) :]

    low, high = 0, total
    while low < high:
        middle = math.ceil((low + high) / 2)
        if fits(build(middle)):
            low = middle
        else:
            high = middle - 1
    return build(low)


def earliest_match_offset(text: str, queries: Sequence[str]) -> int:
    """Code-point offset of the earliest occurrence of any query in ``text`` (0 if none)."""
    found = [index for query in queries if (index := js.index_of(text, query)) >= 0]
    return min(found) if found else 0


# -- pages (N47) ---------------------------------------------------------------------------------


@frozen(kw_only=True)
class _Sized:
    """One item as it sits inside a page: its pretty JSON at list depth, in UTF-8 bytes."""

    bytes: int

    @classmethod
    def of(cls, item: JSON) -> _Sized:
        text = result_text(item)
        return cls(bytes=js.utf8_length(text) + 4 * text.count("\n") + 4)


def _page_bytes(key: str, sizes: Sequence[_Sized], next_cursor: int | None) -> int:
    """Exact UTF-8 size of ``result_text({key: items, "next_cursor": c})`` from the item sizes
    (pretty JSON is additive: each item is indented by four spaces inside the list)."""
    head = f"{{\n  {js.quote(key)}: "
    tail = f',\n  "next_cursor": {"null" if next_cursor is None else next_cursor}\n}}'
    if not sizes:
        return js.utf8_length(head + "[]" + tail)
    items = sum(size.bytes for size in sizes) + 2 * (len(sizes) - 1)
    return js.utf8_length(head + "[\n" + "\n  ]" + tail) + items


def page(
    items: Sequence[JSON],
    cursor: int,
    key: str,
    limit: int | None = None,
    fit: ItemFit | None = None,
) -> dict[str, JSON]:
    """One page of ``items`` from ``cursor``: items are added while the page stays within the
    budget; an item that alone does not fit is shrunk by ``fit`` (so cursors always move).
    ``limit`` caps the page, never the set; ``next_cursor`` is null only at the true end."""
    total = len(items)
    end = min(total, cursor + (total if limit is None else limit))
    selected: list[JSON] = []
    sizes: list[_Sized] = []
    next_cursor: int | None = end if end < total else None
    for index in range(cursor, end):
        candidate_next = index + 1 if index + 1 < end or end < total else None
        size = _Sized.of(items[index])
        if _page_bytes(key, [*sizes, size], candidate_next) > TOOL_OUTPUT_MAX_BYTES:
            if not selected and fit is not None:
                selected.append(fit(items[index], _single_fits(key, candidate_next)))
                next_cursor = candidate_next
            else:
                next_cursor = index
            break
        selected.append(items[index])
        sizes.append(size)
    return {key: selected, "next_cursor": next_cursor}


def _single_fits(key: str, next_cursor: int | None) -> ItemFits:
    def fits(candidate: JSON) -> bool:
        return _page_bytes(key, [_Sized.of(candidate)], next_cursor) <= TOOL_OUTPUT_MAX_BYTES

    return fits


# -- read windows (N36, N37, R80) ---------------------------------------------------------------


@frozen(kw_only=True)
class ReadWindow:
    """One delivered window of a text: its resolved offset, content and resume cursor."""

    offset_chars: int
    content: str
    total_chars: int
    next_offset_chars: int | None

    @property
    def end_chars(self) -> int:
        return self.offset_chars + len(self.content)

    def cursor(self) -> dict[str, JSON]:
        """``offset_chars, total_chars, next_offset_chars`` (the ``details`` tail)."""
        return {
            "offset_chars": self.offset_chars,
            "total_chars": self.total_chars,
            "next_offset_chars": self.next_offset_chars,
        }


def read_window(
    text: str,
    offset_chars: int | None,
    limit_chars: int | None,
    render: Callable[[ReadWindow], str],
) -> tuple[ReadWindow, str]:
    """The longest prefix of ``text[a : a + min(limit, 50000)]`` whose rendered response fits
    the budget; ``a`` resolves a negative offset from the end. Returns the window and the
    rendered text."""
    total = len(text)
    requested = 0 if offset_chars is None else offset_chars
    start = max(0, total + requested) if requested < 0 else requested
    span = min(DEFAULT_READ_WINDOW_CHARS if limit_chars is None else limit_chars, 50000)
    requested_text = text[start : max(start, start + span)]

    def build(content: str) -> ReadWindow:
        after = start + len(content)
        return ReadWindow(
            offset_chars=start,
            content=content,
            total_chars=total,
            next_offset_chars=after if after < total else None,
        )

    content = prefix_fit(requested_text, lambda candidate: text_fits(render(build(candidate))))
    window = build(content)
    return window, render(window)


def read_window_text(fields: Sequence[tuple[str, str]], window: ReadWindow) -> str:
    """The raw READ WINDOW response: header lines, one empty line, the content verbatim."""
    next_offset = "null" if window.next_offset_chars is None else window.next_offset_chars
    lines = [
        READ_WINDOW_HEADER,
        *(f"{name}: {value}" for name, value in fields),
        f"chars: [{window.offset_chars},{window.end_chars}) of {window.total_chars}",
        f"next_offset_chars: {next_offset}",
    ]
    return "\n".join(lines) + "\n\n" + window.content


def past_end_error(subject: str, offset: JSON, total: int) -> str:
    """The JSON refusal text of an ``offset_chars`` beyond the end (N36, R80)."""
    return (
        f"offset_chars {js.js_string(offset)} is past the end: the {subject} has {total} "
        f"chars; the largest legal offset is {total} (an empty end-read)"
    )


def with_keys(value: Mapping[str, JSON], **extra: JSON) -> dict[str, JSON]:
    """``{...value, ...extra}``: a copy with keys replaced in place or appended."""
    return {**value, **extra}
