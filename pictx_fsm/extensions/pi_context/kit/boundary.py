"""pi-context's boundary values: its budget lines, met at −1, exactly and +1.

The lines are the fields of the policy's thresholds (:data:`~.actions.LINE_NAMES`), each
valued as the world's settings resolve it (:func:`lines_now`); an :class:`~.actions.AimAt`
action lands the next decision on one (:func:`aim`). A hit is read back from the audit
records: a decision whose guards read ``remaining`` and the thresholds (reset, warning and
guidance due, the meter) met a line when the two differ by at most one (:func:`hits`) —
what the guards actually compared, whatever the generator aimed at.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pictx_fsm.extensions.pi_context.kit.actions import LINE_NAMES, AimAt, filler
from pictx_fsm.extensions.pi_context.policy import resolve_policy
from pictx_fsm.host.events import ModelInfo
from pictx_fsm.host.settings import SettingsSource
from pictx_fsm.hosts.model import ModelSession, Text
from pictx_fsm.session.estimate import MessageText, TokenCounter
from pictx_fsm.testing.boundaries import hit

__all__ = ["aim", "hits", "lines_now", "sized_text"]

WindowTokens = Callable[[], int | None]
"""The active window's usage now as the lifecycle would read it (``None``: unknown)."""


def lines_now(settings: SettingsSource, model: ModelInfo | None) -> dict[str, int]:
    """Every budget line, in remaining tokens, as the policy resolves the settings now."""
    thresholds = resolve_policy(settings, model).thresholds
    return {name: int(getattr(thresholds, name)) for name in LINE_NAMES}


def aim(
    session: ModelSession,
    action: AimAt,
    lines: Mapping[str, int],
    usage: tuple[WindowTokens, TokenCounter],
    serial: int,
) -> bool:
    """Carry out ``action``: queue the reply, or send the prompt, that lands the next
    decision on its line; ``False`` when it cannot (a prompt while a run is active, before
    the session's first request, or with usage unknown or already past the target)."""
    window = session.model.context_window or 0
    target = window - (lines[action.line] + action.offset)
    if action.at == "reply":
        session.provider.push(Text(text=filler(f"aim-{serial}", 40), context=max(0, target)))
        return True
    tokens_now, counter = usage
    before = tokens_now() if session.is_idle and _has_system(session) else None
    if before is None:
        return False
    label = f"aim-{serial}"
    text = sized_text(label, target - before, lambda t: counter.count(MessageText(parts=(t,))))
    if text is None:
        return False
    session.prompt(text)
    return True


def _has_system(session: ModelSession) -> bool:
    """Pi sends its system prompt with a session's first request: before it, a prompt adds
    more than its own tokens, and no aim is exact."""
    return any(m.get("role") == "system" for m in session.store.context_messages())


def sized_text(label: str, tokens: int, count: Callable[[str], int]) -> str | None:
    """A prompt of exactly ``tokens`` tokens by ``count`` — ``label`` then `` a`` repeated
    (one more token, or half of one, each) — or ``None`` when no such text exists."""
    if count(label) > tokens:
        return None
    low, high = 0, 1
    while count(label + " a" * high) < tokens:
        low, high = high, high * 2
    while low < high:
        middle = (low + high) // 2
        if count(label + " a" * middle) < tokens:
            low = middle + 1
        else:
            high = middle
    text = label + " a" * low
    return text if count(text) == tokens else None


def hits(records: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """``<line>:<offset>`` of every decision that compared remaining tokens with a line it
    lay at most one from (once per record and line value)."""
    found: Counter[str] = Counter()
    for record in records:
        met: set[str] = set()
        for step in record.get("steps") or ():
            facts = step.get("facts") or {}
            remaining, thresholds = facts.get("remaining"), facts.get("thresholds")
            if not isinstance(remaining, int) or not isinstance(thresholds, Mapping):
                continue
            for name in LINE_NAMES:
                line = thresholds.get(name)
                key = hit(name, remaining, line) if isinstance(line, int) else None
                if key is not None:
                    met.add(key)
        found.update(met)
    return found
