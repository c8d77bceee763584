"""The step protocol: host procedures are generators that yield a :class:`Step` at every
hook emission, persistence point and wait, so a test can act between any two host steps."""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

from pictx_fsm.hosts.model.records import Step

__all__ = ["Steps", "T", "drain"]

T = TypeVar("T")
Steps = Generator[Step, None, T]
"""A host procedure that pauses at each step and finally returns a ``T``."""


def drain(steps: Steps[T]) -> T:
    """Run a procedure to its end (for operations Pi performs without yielding to the user)."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            result: T = stop.value
            return result
