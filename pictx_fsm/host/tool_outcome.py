"""What a tool call produced, and the three channels it can take (notes spec N3, N4): the
shape every host gives a tool's result, whichever extension's tool it is.

``ok`` and ``refusal`` are ordinary tool results (a refusal is a JSON ``{"error": …}``
payload the model reads, not an error result); ``error`` is what Pi makes of a thrown
exception: an error result (``isError: true``) whose text is the message.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.session.entries import ABSENT

__all__ = ["JsonReply", "RawReply", "Reply", "ToolOutcome", "ToolStatus", "result_text"]

JSON: TypeAlias = Any
ToolStatus = Literal["ok", "refusal", "error"]


def result_text(value: JSON) -> str:
    """The text of a JSON tool result: ``JSON.stringify(value, null, 2)``."""
    return js.stringify(value, indent=2)


@frozen(kw_only=True)
class JsonReply:
    """A JSON result (``details`` undefined)."""

    value: dict[str, JSON]


@frozen(kw_only=True)
class RawReply:
    """A raw-text result (the READ WINDOW of ``notes_read``/``history_read``) with details."""

    text: str
    details: dict[str, JSON]


Reply: TypeAlias = JsonReply | RawReply


@frozen(kw_only=True)
class ToolOutcome:
    """One tool result as the host records it.

    ``details`` is :data:`~pictx_fsm.session.entries.ABSENT` where pi-context leaves it
    ``undefined``; an ``error`` carries ``{}`` as Pi's ``createErrorToolResult`` does.
    """

    status: ToolStatus
    text: str
    details: JSON = ABSENT

    @property
    def is_error(self) -> bool:
        return self.status == "error"

    @property
    def content(self) -> list[dict[str, str]]:
        return [{"type": "text", "text": self.text}]

    def to_json(self) -> dict[str, JSON]:
        """``{content, details?, isError}`` (``terminate`` is never set by these tools)."""
        out: dict[str, JSON] = {"content": self.content}
        if self.details is not ABSENT:
            out["details"] = self.details
        out["isError"] = self.is_error
        return out

    @classmethod
    def of(cls, reply: Reply) -> ToolOutcome:
        if isinstance(reply, RawReply):
            return cls(status="ok", text=reply.text, details=reply.details)
        status: ToolStatus = "refusal" if "error" in reply.value else "ok"
        return cls(status=status, text=result_text(reply.value))

    @classmethod
    def error(cls, message: str) -> ToolOutcome:
        return cls(status="error", text=message, details={})
