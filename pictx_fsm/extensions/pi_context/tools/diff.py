"""The ``diff`` of a ``notes_edit`` result (notes spec N32).

pi-context calls Pi's ``generateDiffString(old, new)`` (``edit-diff.ts`` of
pi-coding-agent 0.87), which renders the line diff of the ``diff`` package (jsdiff 8,
``diffLines``: Myers' O(ND) algorithm) with numbered lines and four lines of context. The
same algorithm, with jsdiff's tie-breaking, is reproduced here so that the texts agree
byte for byte (checked against Node in the test suite).
"""

from __future__ import annotations

import re
from typing import Final

from attrs import frozen

__all__ = ["CONTEXT_LINES", "Part", "diff_lines", "diff_text", "line_tokens"]

CONTEXT_LINES: Final = 4
_NEWLINE: Final = re.compile(r"(\n|\r\n)")


@frozen(kw_only=True)
class Part:
    """A run of lines that are common, added or removed."""

    value: str
    added: bool = False
    removed: bool = False


@frozen
class _Component:
    count: int
    added: bool
    removed: bool
    previous: _Component | None


class _Path:
    __slots__ = ("last", "old_pos")

    def __init__(self, old_pos: int, last: _Component | None) -> None:
        self.old_pos = old_pos
        self.last = last


def line_tokens(text: str) -> list[str]:
    """jsdiff's line tokens: each line with its newline (``\\n`` or ``\\r\\n``)."""
    pieces = _NEWLINE.split(text)
    if not pieces[-1]:
        pieces.pop()
    tokens: list[str] = []
    for index, piece in enumerate(pieces):
        if index % 2:
            tokens[-1] += piece
        else:
            tokens.append(piece)
    return [token for token in tokens if token]


def diff_lines(old: str, new: str) -> list[Part]:
    """``diffLines(old, new)``: the shortest edit script, as runs of lines."""
    old_tokens, new_tokens = line_tokens(old), line_tokens(new)
    best: dict[int, _Path | None] = {0: _Path(-1, None)}
    first = best[0]
    assert first is not None
    new_pos = _extract_common(first, new_tokens, old_tokens, 0)
    if _done(first, new_pos, old_tokens, new_tokens):
        return _parts(first.last, new_tokens, old_tokens)
    low: int | None = None
    high: int | None = None
    for edit_length in range(1, len(old_tokens) + len(new_tokens) + 1):
        start = -edit_length if low is None else max(low, -edit_length)
        stop = edit_length if high is None else min(high, edit_length)
        for diagonal in range(start, stop + 1, 2):
            path = _step(best, diagonal, old_tokens, new_tokens)
            if path is None:
                continue
            new_pos = _extract_common(path, new_tokens, old_tokens, diagonal)
            if _done(path, new_pos, old_tokens, new_tokens):
                return _parts(path.last, new_tokens, old_tokens)
            best[diagonal] = path
            if path.old_pos + 1 >= len(old_tokens):
                high = diagonal - 1 if high is None else min(high, diagonal - 1)
            if new_pos + 1 >= len(new_tokens):
                low = diagonal + 1 if low is None else max(low, diagonal + 1)
    raise AssertionError("an edit script always exists")  # pragma: no cover


def _step(
    best: dict[int, _Path | None], diagonal: int, old_tokens: list[str], new_tokens: list[str]
) -> _Path | None:
    """Extend the better of the two neighbouring diagonals by one insertion or removal."""
    remove, add = best.get(diagonal - 1), best.get(diagonal + 1)
    if remove is not None:
        best[diagonal - 1] = None
    can_add = add is not None and 0 <= add.old_pos - diagonal < len(new_tokens)
    can_remove = remove is not None and remove.old_pos + 1 < len(old_tokens)
    if not can_add and not can_remove:
        best[diagonal] = None
        return None
    if not can_remove or (can_add and remove.old_pos < add.old_pos):  # type: ignore[union-attr]
        return _extended(add, added=True, old_step=0)  # type: ignore[arg-type]
    return _extended(remove, added=False, old_step=1)  # type: ignore[arg-type]


def _extended(path: _Path, *, added: bool, old_step: int) -> _Path:
    last = path.last
    if last is not None and last.added == added and last.removed == (not added):
        return _Path(
            path.old_pos + old_step, _Component(last.count + 1, added, not added, last.previous)
        )
    return _Path(path.old_pos + old_step, _Component(1, added, not added, last))


def _extract_common(
    path: _Path, new_tokens: list[str], old_tokens: list[str], diagonal: int
) -> int:
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while (
        new_pos + 1 < len(new_tokens)
        and old_pos + 1 < len(old_tokens)
        and old_tokens[old_pos + 1] == new_tokens[new_pos + 1]
    ):
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = _Component(common, False, False, path.last)
    path.old_pos = old_pos
    return new_pos


def _done(path: _Path, new_pos: int, old_tokens: list[str], new_tokens: list[str]) -> bool:
    return path.old_pos + 1 >= len(old_tokens) and new_pos + 1 >= len(new_tokens)


def _parts(last: _Component | None, new_tokens: list[str], old_tokens: list[str]) -> list[Part]:
    components = []
    while last is not None:
        components.append(last)
        last = last.previous
    parts = []
    new_pos = old_pos = 0
    for component in reversed(components):
        if component.removed:
            value = "".join(old_tokens[old_pos : old_pos + component.count])
            old_pos += component.count
        else:
            value = "".join(new_tokens[new_pos : new_pos + component.count])
            new_pos += component.count
            old_pos += 0 if component.added else component.count
        parts.append(Part(value=value, added=component.added, removed=component.removed))
    return parts


def diff_text(old: str, new: str) -> str:
    """``generateDiffString(old, new).diff``: ``+<n> line`` / ``-<n> line``, numbers padded
    to the width of the larger line count, up to four context lines around each change,
    skipped context as ``<pad> ...``."""
    parts = diff_lines(old, new)
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    out: list[str] = []
    numbers = [1, 1]  # next old line, next new line
    last_was_change = False
    for index, part in enumerate(parts):
        lines = part.value.split("\n")
        if lines[-1] == "":
            lines.pop()
        if part.added or part.removed:
            side = 1 if part.added else 0
            for line in lines:
                out.append(f"{'+' if part.added else '-'}{str(numbers[side]).rjust(width)} {line}")
                numbers[side] += 1
            last_was_change = True
            continue
        following = index < len(parts) - 1 and (parts[index + 1].added or parts[index + 1].removed)
        _context(out, lines, numbers, width, leading=last_was_change, trailing=following)
        last_was_change = False
    return "\n".join(out)


def _context(
    out: list[str],
    lines: list[str],
    numbers: list[int],
    width: int,
    *,
    leading: bool,
    trailing: bool,
) -> None:
    """Common lines: shown next to changes, elided (``...``) elsewhere."""
    if leading and trailing and len(lines) <= CONTEXT_LINES * 2:
        shown: list[tuple[int, int]] = [(0, len(lines))]
    elif leading and trailing:
        shown = [(0, CONTEXT_LINES), (len(lines) - CONTEXT_LINES, len(lines))]
    elif leading:
        shown = [(0, min(CONTEXT_LINES, len(lines)))]
    elif trailing:
        shown = [(max(0, len(lines) - CONTEXT_LINES), len(lines))]
    else:
        shown = []
    position = 0
    for start, stop in shown:
        _skip(out, start - position, numbers, width)
        for line in lines[start:stop]:
            out.append(f" {str(numbers[0]).rjust(width)} {line}")
            numbers[0] += 1
            numbers[1] += 1
        position = stop
    if shown and leading:
        _skip(out, len(lines) - position, numbers, width)
    elif not shown:
        numbers[0] += len(lines)
        numbers[1] += len(lines)


def _skip(out: list[str], count: int, numbers: list[int], width: int) -> None:
    if count > 0:
        out.append(f" {''.rjust(width)} ...")
        numbers[0] += count
        numbers[1] += count
