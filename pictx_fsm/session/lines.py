"""Physical lines of a session file, and recovery of the JSON objects on a damaged line.

A line is split on ``\\n`` only and decoded on its own, so one bad line never hides the rest.
:func:`split_line` turns one line into JSON values and junk: a normal line is one value; a
line two writes were glued onto yields both objects; a torn fragment followed by a complete
append yields the fragment as junk plus the object. :func:`classify_junk` says whether junk
is a torn (truncated) object or not JSON at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO, Final, NoReturn

from attrs import frozen

from pictx_fsm.session.entries import ENTRY_TYPES
from pictx_fsm.session.problems import ProblemKind

__all__ = [
    "HEADER_TYPE",
    "JSON_WHITESPACE",
    "MAX_LINE_BYTES",
    "OVERSIZED_PREVIEW",
    "PhysicalLine",
    "Piece",
    "classify_junk",
    "is_blank",
    "iter_line_bytes",
    "iter_physical_lines",
    "iter_text_lines",
    "js_number_value",
    "physical_line",
    "split_line",
]

JSON_WHITESPACE: Final = " \t\r\n"
HEADER_TYPE: Final = "session"


# --------------------------------------------------------------------------------------------
# Physical lines


MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""The longest line read into memory. Longer lines are skipped in bounded chunks and reported
(``oversized_line``): a reader's memory stays bounded by this, whatever the file holds. Real
Pi lines stay far below (the largest in the corpus is 0.4 MB; an image block is a few MB)."""
_SKIP_CHUNK: Final = 1024 * 1024
OVERSIZED_PREVIEW: Final = 200
"""How much of an oversized line is kept in its problem's ``raw``."""


@frozen(kw_only=True)
class PhysicalLine:
    """One ``\\n``-separated line of the file, decoded. ``undecodable`` keeps the original
    bytes (backslash-escaped) when the line was not UTF-8; ``oversized`` is the byte length
    of a line longer than :data:`MAX_LINE_BYTES` (then ``text`` is only its start)."""

    number: int
    text: str
    terminated: bool
    undecodable: str | None = None
    oversized: int | None = None


def iter_physical_lines(
    fp: BinaryIO, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[PhysicalLine]:
    """Lines split on ``\\n`` only (never on ``\\r`` or Unicode separators, as Pi splits),
    each at most ``max_line_bytes`` in memory."""
    number = 0
    while data := fp.readline(max_line_bytes + 1):
        number += 1
        yield physical_line(number, data, fp, max_line_bytes)


def iter_line_bytes(
    fp: BinaryIO, max_line_bytes: int = MAX_LINE_BYTES, block: int = 1 << 18
) -> Iterator[bytes]:
    """What ``fp.readline(max_line_bytes + 1)`` returns again and again, read a block at a
    time (one ``readline`` call per line costs more than the line's bytes). ``fp`` must be
    seekable. A line without its newline (too long, or the last) is read by ``readline``
    itself, and ``fp`` then stands just after it, so a reader may go on reading the rest of a
    too-long line from it (:func:`physical_line`); the next line starts where ``fp`` stands.
    A block (256 KiB) is all it holds beyond the current line."""
    block = min(block, max_line_bytes + 1)  # a whole line in a block is never cut
    while True:
        start = fp.tell()
        data = fp.read(block)
        last = data.rfind(b"\n")
        if last < 0:  # no whole line in a block: a long line (or the last, unterminated)
            fp.seek(start)
            line = fp.readline(max_line_bytes + 1)
            if not line:
                return
            yield line
            continue
        fp.seek(start + last + 1)
        position = 0
        while position <= last:
            end = data.index(b"\n", position) + 1
            yield data[position:end]
            position = end


def physical_line(
    number: int, data: bytes, fp: BinaryIO, max_line_bytes: int = MAX_LINE_BYTES
) -> PhysicalLine:
    """Line ``number`` from ``data``, what ``fp.readline(max_line_bytes + 1)`` returned (the
    rest of an oversized line is read past in ``fp``)."""
    terminated = data.endswith(b"\n")
    if len(data) > max_line_bytes and not terminated:
        return _oversized(number, data, fp)
    return _decode(number, data[:-1] if terminated else data, terminated)


def _oversized(number: int, start: bytes, fp: BinaryIO) -> PhysicalLine:
    """Skip the rest of a too-long line in bounded chunks; keep only its start."""
    size, terminated = len(start), False
    while chunk := fp.readline(_SKIP_CHUNK):
        terminated = chunk.endswith(b"\n")
        size += len(chunk) - terminated
        if terminated:
            break
    preview = start[:OVERSIZED_PREVIEW].decode("utf-8", "backslashreplace")
    return PhysicalLine(number=number, text=preview, terminated=terminated, oversized=size)


def _decode(number: int, body: bytes, terminated: bool) -> PhysicalLine:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return PhysicalLine(
            number=number,
            text=body.decode("utf-8", "replace"),
            terminated=terminated,
            undecodable=body.decode("utf-8", "backslashreplace"),
        )
    return PhysicalLine(number=number, text=text, terminated=terminated)


def iter_text_lines(text: str) -> Iterator[PhysicalLine]:
    """The physical lines of a string (the in-memory twin of :func:`iter_physical_lines`)."""
    start = 0
    number = 0
    while start < len(text):
        number += 1
        end = text.find("\n", start)
        if end < 0:
            yield PhysicalLine(number=number, text=text[start:], terminated=False)
            return
        yield PhysicalLine(number=number, text=text[start:end], terminated=True)
        start = end + 1


# --------------------------------------------------------------------------------------------
# One line → JSON objects and junk


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


_MAX_SAFE_INTEGER: Final = 2**53 - 1


def _js_int(text: str) -> int | float:
    """An integer literal as JavaScript reads it: every number is a double, so an integer
    beyond 2**53 becomes the nearest float (what Pi holds, and what it writes back)."""
    value: int | float = js_number_value(int(text))
    return value


def js_number_value(value: Any) -> Any:
    """An already decoded value as JavaScript would hold it (integers beyond 2**53 become
    the nearest float; anything else is returned as is)."""
    if type(value) is int and not -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
        return float(value)
    return value


# JavaScript's ``JSON.parse`` (and so Pi) rejects ``NaN``/``Infinity`` and reads numbers as
# doubles; this decoder does the same.
_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_js_int)
_LITERALS: Final = ("true", "false", "null")
_RESTART_TYPES: Final = "|".join(re.escape(t) for t in sorted({*ENTRY_TYPES, HEADER_TYPE}))
_ENTRY_START: Final = re.compile(r'\{\s*"type"\s*:\s*"(?:' + _RESTART_TYPES + r')"')
"""Where a glued entry can start: ``{"type":"<entry type>"``, as Pi writes every entry. Only
known types: content blocks (``{"type":"text"…``) inside a fragment are never restarts, and an
entry of an unknown type glued after a fragment stays in the junk's ``raw``."""
_MAX_RESTARTS: Final = 1000
"""Bounds the work on an adversarial line (each failed restart may scan to the line's end)."""


def is_blank(text: str) -> bool:
    """Only JSON whitespace (or nothing): decided at the first other character, no copy."""
    return _BLANK.match(text) is not None


_BLANK: Final = re.compile(r"[ \t\r\n]*\Z")


@frozen(kw_only=True)
class Piece:
    """A parsed JSON value with its text (surrounding whitespace included for a whole line),
    or a junk segment (``value`` unused)."""

    text: str
    value: Any = None
    junk: bool = False


def split_line(text: str) -> list[Piece]:
    """The JSON values of one line, in order, with junk segments between them.

    A normal line is one value. Otherwise objects are recovered: first those that tile the
    line from its start (``{..}{..}``); if junk follows, the earliest entry-like object start
    after it from which objects tile to the end of the line (a torn fragment followed by a
    complete append). Anything left is one junk segment.
    """
    try:
        return [Piece(text=text, value=_DECODER.decode(text))]  # text stripped when shown
    except (ValueError, RecursionError):
        pass
    start = len(text) - len(text.lstrip(JSON_WHITESPACE))
    pieces, stop = _tile(text, start)
    if stop >= len(text):
        return pieces
    restart, tail = _find_restart(text, stop)
    end = restart if restart is not None else len(text)
    pieces.append(Piece(text=text[stop:end], junk=True))  # exact: raw loses nothing
    return pieces + tail


def _tile(text: str, pos: int) -> tuple[list[Piece], int]:
    """Consecutive objects from ``pos``; returns them and where the first failure starts."""
    pieces: list[Piece] = []
    while pos < len(text) and text[pos] == "{":
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            break
        pieces.append(Piece(text=text[pos:end], value=value))
        pos = _skip_whitespace(text, end)
    return pieces, pos


def _skip_whitespace(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in JSON_WHITESPACE:
        pos += 1
    return pos


def _find_restart(text: str, after: int) -> tuple[int | None, list[Piece]]:
    for attempt, match in enumerate(_ENTRY_START.finditer(text, after + 1)):
        if attempt >= _MAX_RESTARTS:
            break
        pieces, stop = _tile(text, match.start())
        if stop >= len(text) and pieces:
            return match.start(), pieces
    return None, []


def classify_junk(junk: str, last_unterminated: bool) -> tuple[ProblemKind, str]:
    """Torn (a prefix of JSON cut short) or invalid, with a message."""
    junk = junk.strip(JSON_WHITESPACE)
    if "\x00" in junk:
        return ProblemKind.INVALID_JSON, f"{len(junk)} characters of NUL-byte junk"
    if last_unterminated:
        return ProblemKind.TORN_LINE, f"unterminated last line does not parse ({len(junk)} chars)"
    if junk.startswith(("{", "[")) and _is_truncated(junk):
        return ProblemKind.TORN_LINE, f"truncated JSON object ({len(junk)} chars)"
    preview = junk[:40] + ("…" if len(junk) > 40 else "")
    return ProblemKind.INVALID_JSON, f"not JSON: {preview!r}"


def _is_truncated(junk: str) -> bool:
    try:
        _DECODER.decode(junk)
    except json.JSONDecodeError as exc:
        rest = junk[exc.pos :]
        cut_literal = bool(rest) and any(word.startswith(rest) for word in _LITERALS)
        return exc.pos >= len(junk) or cut_literal or exc.msg.startswith("Unterminated string")
    except (ValueError, RecursionError):
        return False
    return False
