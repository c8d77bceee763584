"""pi-context-management's boundary values: the policy's lines its decisions compare, met at
−1, exactly and +1.

The lines are read from the code, not listed: every constant of
:mod:`~pictx_fsm.extensions.context_management.policy` that the code deciding with it
imports (:data:`COMPARING`) and
whose unit its name or value tells — a ratio of the context window (usage in tokens), a
duration (``*_MS``) or a size (``*_BYTES``). Counts (tries, attempts per hour, hits per
page) are judged by their own invariants. :func:`aim` lands the next decision on a line;
:func:`hits` reads from the journal what decisions actually compared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from types import ModuleType
from typing import Any, Final, Literal

from attrs import frozen

from pictx_fsm.extensions.context_management import (
    act_handoff,
    facts,
    generation,
    guards,
    history,
    policy,
)
from pictx_fsm.extensions.context_management.events import ReplyEnded, ToolCalled
from pictx_fsm.testing.boundaries import hit

__all__ = ["COMPARING", "LINES", "Line", "hits", "line_value"]

COMPARING: Final[tuple[ModuleType, ...]] = (guards, facts, generation, act_handoff, history)
"""The code whose comparisons decide: the guards, the facts they read, what sets the lines
they compare with (a generation's deadline, a handoff target's cooldown) and the recall
tools' page limits."""
Unit = Literal["tokens", "ms", "bytes"]


@frozen(kw_only=True)
class Line:
    """One policy constant a decision compares with, and what it measures."""

    name: str
    value: float
    unit: Unit
    compared_in: tuple[str, ...]
    """The modules that import it (``history``: a recall call's page size)."""

    @property
    def page_size(self) -> bool:
        """A size the recall tools compare a call's ``maxBytes`` with."""
        return self.unit == "bytes" and history.__name__ in self.compared_in


def _unit(name: str, value: object) -> Unit | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and 0 < value < 1:
        return "tokens"
    if name.endswith("_MS"):
        return "ms"
    if name.endswith("_BYTES"):
        return "bytes"
    return None


def _lines(modules: Iterable[ModuleType]) -> tuple[Line, ...]:
    constants = vars(policy)
    found: dict[str, Line] = {}
    for module in modules:
        for name, value in vars(module).items():
            unit = _unit(name, value)
            if (
                unit is None
                or constants.get(name) is not value
                or not isinstance(value, int | float)
            ):
                continue
            known = found.get(name)
            where = (*known.compared_in, module.__name__) if known else (module.__name__,)
            found[name] = Line(name=name, value=value, unit=unit, compared_in=where)
    return tuple(sorted(found.values(), key=lambda line: (line.unit, line.name)))


LINES: Final = _lines(COMPARING)


def line_value(line: Line, context_window: int) -> float:
    """Where the line lies: a ratio of ``context_window`` in tokens, else the constant."""
    return line.value * context_window if line.unit == "tokens" else line.value


def hits(steps: Iterable[Any]) -> Counter[str]:
    """``<line>:<offset>`` of every decision that met a line: usage at a reply end (and, with
    a baseline, the usage projected one round on) against the token lines, the time of a
    reply end against a duration after an earlier step (every step's time is a moment a
    cooldown or deadline can start from), the page size a recall call asked for against the
    size lines."""
    found: Counter[str] = Counter()
    moments: set[int] = set()
    for step in steps:
        ctx, event = step.ctx, step.event
        met: set[str] = set()
        if isinstance(event, ReplyEnded):
            usages = [] if ctx.tokens is None else [ctx.tokens]
            baseline = step.before.baseline
            if baseline is not None and ctx.tokens is not None:
                usages.append(2 * ctx.tokens - baseline.tokens)  # projected one round on (M54)
            met |= _reply_end(usages, ctx.context_window, ctx.now, moments)
        elif isinstance(event, ToolCalled):
            asked = event.arguments.get("maxBytes")
            met |= {
                key
                for line in LINES
                if line.page_size and isinstance(asked, int)
                for key in [hit(line.name, asked, line.value)]
                if key is not None
            }
        moments.add(ctx.now)
        found.update(met)
    return found


def _reply_end(usages: list[int], window: int | None, now: int, moments: set[int]) -> set[str]:
    met: set[str] = set()
    for line in LINES:
        if line.unit == "tokens" and window:
            value = line_value(line, window)
            key = next((k for u in usages for k in [hit(line.name, u, value)] if k), None)
        elif line.unit == "ms":
            key = next(
                (k for d in (-1, 0, 1) if now - line.value - d in moments for k in [_at(line, d)]),
                None,
            )
        else:
            continue
        if key is not None:
            met.add(key)
    return met


def _at(line: Line, offset: int) -> str:
    return f"{line.name}:{offset}"
