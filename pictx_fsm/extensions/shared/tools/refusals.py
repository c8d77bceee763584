"""A notes tool's typed refusal, the family's one shape (pi-context N4a, notesoup S93): a
code the tools branch on, the message the model reads, and, for an edit, which one and the
lines of an ambiguous match. Each extension names its codes (and how it answers one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

__all__ = ["NoteRefused"]

C = TypeVar("C", bound=str)


class NoteRefused(Exception, Generic[C]):
    """A refusal, never thrown to the host: the tools turn it into their answer."""

    def __init__(
        self,
        code: C,
        message: str,
        *,
        line_numbers: Sequence[int] | None = None,
        edit_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code: C = code
        self.message = message
        self.line_numbers = None if line_numbers is None else list(line_numbers)
        self.edit_index = edit_index
