"""notesoup's typed tool outcomes and their two surfaces (S92): the text the model reads and
the compact structured content, both within 32 KiB.

Each operation yields an :class:`Outcome`: success data, or a refusal with a stable code, a
bounded message and optional bounded details. The host gets one text part rendered from it,
``structuredContent`` = the data itself or ``{error, code, details?}``, and ``isError`` on a
refusal. A refusal reads ``error: <code>: <message>`` plus `` <details JSON>``; a message over
2000 code points is clipped with ``…[truncated <n> chars]``, details over 4096 bytes become
``{truncated: true, details_bytes: <n>}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, TypeAlias

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.extensions.shared.tools.output import (
    DEFAULT_READ_WINDOW_CHARS,
    MAX_READ_WINDOW_CHARS,
    TOOL_OUTPUT_MAX_BYTES,
    text_fits,
)
from pictx_fsm.host.tool_outcome import ToolOutcome

__all__ = [
    "DEFAULT_READ_WINDOW_CHARS",
    "ERROR_DETAILS_MAX_BYTES",
    "ERROR_MESSAGE_MAX_CHARS",
    "MAX_READ_WINDOW_CHARS",
    "Outcome",
    "Render",
    "failure",
    "fits",
    "read_text_window",
    "render_outcome",
    "render_text_window",
    "structured_bytes",
    "success",
    "tool_outcome",
]

JSON: TypeAlias = Any
ERROR_MESSAGE_MAX_CHARS: Final = 2000
ERROR_DETAILS_MAX_BYTES: Final = 4096


@frozen(kw_only=True)
class Outcome:
    """Success data, or a refusal (``code``, ``message``, ``details``); never both."""

    data: Mapping[str, JSON] | None = None
    code: str | None = None
    message: str = ""
    details: Mapping[str, JSON] | None = None

    @property
    def ok(self) -> bool:
        return self.code is None

    def structured(self) -> dict[str, JSON]:
        """``structuredContent``: the data, or ``{error, code, details?}``."""
        if self.ok:
            assert self.data is not None
            return dict(self.data)
        out: dict[str, JSON] = {"error": self.message, "code": self.code}
        if self.details is not None:
            out["details"] = dict(self.details)
        return out


Render = Callable[[Mapping[str, JSON]], str]
"""An operation's reading of its success data."""


def success(data: Mapping[str, JSON]) -> Outcome:
    return Outcome(data=data)


def failure(code: str, message: str, details: Mapping[str, JSON] | None = None) -> Outcome:
    """A refusal with its message and details bounded (the code is never clipped)."""
    return Outcome(
        code=code,
        message=_bounded_message(message),
        details=None if details is None else _bounded_details(details),
    )


def _bounded_message(message: str) -> str:
    if len(message) <= ERROR_MESSAGE_MAX_CHARS:
        return message
    cut = len(message) - ERROR_MESSAGE_MAX_CHARS
    return f"{message[:ERROR_MESSAGE_MAX_CHARS]}…[truncated {cut} chars]"


def _bounded_details(details: Mapping[str, JSON]) -> Mapping[str, JSON]:
    size = structured_bytes(details)
    if size <= ERROR_DETAILS_MAX_BYTES:
        return details
    return {"truncated": True, "details_bytes": size}


def render_outcome(outcome: Outcome, render: Render) -> str:
    """The text the model reads: the operation's rendering, or the refusal line."""
    if outcome.ok:
        assert outcome.data is not None
        return render(outcome.data)
    details = "" if outcome.details is None else f" {js.stringify(outcome.details)}"
    return f"error: {outcome.code}: {outcome.message}{details}"


def structured_bytes(value: JSON) -> int:
    """UTF-8 bytes of the compact JSON of ``value``."""
    return js.utf8_length(js.stringify(value))


def fits(outcome: Outcome, render: Render) -> bool:
    """S92's one bound: the text and the structured payload both fit 32 KiB."""
    if not text_fits(render_outcome(outcome, render)):
        return False
    return structured_bytes(outcome.structured()) <= TOOL_OUTPUT_MAX_BYTES


def tool_outcome(outcome: Outcome, render: Render) -> ToolOutcome:
    """The host's result: one text part, the structured content, ``isError`` on a refusal."""
    return ToolOutcome(
        status="ok" if outcome.ok else "refusal",
        text=render_outcome(outcome, render),
        structured=outcome.structured(),
        refusal_is_error=True,
    )


# -- read windows (S102, S115) ---------------------------------------------------------------

LimitedBy = Literal["limit", "bytes"] | None


def read_text_window(
    text: str,
    offset: int | None,
    limit: int | None,
    make_data: Callable[[dict[str, JSON]], Mapping[str, JSON]],
    render: Render,
) -> Outcome:
    """One code-point window of ``text`` wrapped by ``make_data``, the longest that fits.
    A negative ``offset`` counts from the end; the caller refuses one past the end. A
    window that cannot advance at all is ``output_too_large``."""
    total = len(text)
    requested = 0 if offset is None else offset
    start = max(0, total + requested) if requested < 0 else requested
    wanted = DEFAULT_READ_WINDOW_CHARS if limit is None else limit
    span = max(0, min(wanted, total - start))

    def window(delivered: int) -> dict[str, JSON]:
        end = start + delivered
        withheld = end < total
        limited: LimitedBy = None if not withheld else "limit" if delivered == span else "bytes"
        return {
            "text": text[start:end],
            "offset_chars": start,
            "total_chars": total,
            "next_offset_chars": end if withheld else None,
            "limited_by": limited,
        }

    def fits_with(delivered: int) -> bool:
        return fits(success(make_data(window(delivered))), render)

    if fits_with(span):
        return success(make_data(window(span)))
    low, high = 0, span
    while low < high:
        middle = -(-(low + high) // 2)
        if fits_with(middle):
            low = middle
        else:
            high = middle - 1
    if low == 0:
        details = {
            "total_chars": total,
            "offset_chars": start,
            "budget_bytes": TOOL_OUTPUT_MAX_BYTES,
        }
        return failure(
            "output_too_large",
            "The response metadata leaves no room for a progressing read window.",
            details,
        )
    return success(make_data(window(low)))


def render_text_window(window: Mapping[str, JSON]) -> str:
    """The slice verbatim, then — only when characters remain — the line that says how to
    continue (S102): ``[<n> more characters. …]`` or ``[Showing chars [a, b) of t (32KB
    limit). …]``."""
    next_offset = window["next_offset_chars"]
    if next_offset is None:
        return str(window["text"])
    resume = f"Use offset_chars={next_offset} to continue."
    if window["limited_by"] == "limit":
        remaining = window["total_chars"] - next_offset
        return f"{window['text']}\n\n[{remaining} more characters. {resume}]"
    return (
        f"{window['text']}\n\n[Showing chars [{window['offset_chars']}, {next_offset}) of "
        f"{window['total_chars']} ({TOOL_OUTPUT_MAX_BYTES // 1024}KB limit). {resume}]"
    )
