"""notesoup's seed scenarios: short, named host stories that open every exploration.

They walk the main roads at once — ``clear_memory`` and its dedupe, ``/clear-memory`` idle,
busy and with a prompt, the hard reserve under a manual close-out and its stop latch, the
budget's guidance, warning and close-out, overflow (automatic and manual), queued input,
aborts, a refused window and its recovery, off/on, ``/compact``, ``/tree``, reload, fork —
and the migration: worlds that resume a pi-context 0.25 session with a complete, a half and a
bare last tail. They are data, replayable like any trace.

The numbers assume :func:`~.world.scenario_config` (a 40 000-token window, reserve 2 000,
reminder margin 20 000): the root window's usage is Pi's chars/4, the system message and boot
cost some 1 400 tokens, so a 76 000-character prompt lands in the reminder band, 100 000 in
the warning band and 152 000 within the hard reserve (still under the window).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from pictx_fsm.extensions.notesoup.kit.actions import (
    Abort,
    Action,
    AdvanceTo,
    ClearMemory,
    Compact,
    FollowUp,
    Fork,
    HideBoot,
    Navigate,
    Prompt,
    QueueAtSettle,
    Reload,
    Script,
    SetAutomatic,
    Settle,
    Steer,
    Toggle,
    VoidNextBoundary,
)
from pictx_fsm.extensions.notesoup.kit.legacy import LegacyHistory
from pictx_fsm.extensions.notesoup.kit.world import NotesoupConfig
from pictx_fsm.testing.kit import Scenario

__all__ = ["SCENARIOS"]

SHORT: Final = 60
GUIDANCE_BAND: Final = 76_000
WARNING_BAND: Final = 100_000
HARD_RESERVE: Final = 152_000
TEXT: Final = Script(reply="text")
OVERFLOW: Final = Script(reply="overflow")
ERROR: Final = Script(reply="error")
RETRIES_EXHAUSTED: Final = (ERROR,) * 4


def _tools(*calls: tuple[str, dict[str, object]]) -> Script:
    return Script(
        reply="tools",
        tools=tuple(name for name, _ in calls),
        arguments=tuple(json.dumps(arguments) for _, arguments in calls),
    )


CLEAR: Final = _tools(("clear_memory", {}))
ECHO: Final = _tools(("echo", {"text": "e"}))
NOTE: Final = _tools(("notes_write", {"address": "plan", "content": "# Plan\nstep one"}))


def _turn(*scripts: Script, chars: int = SHORT) -> list[Action]:
    return [*scripts, Prompt(chars=chars), Settle()]


def _legacy(**fields: object) -> object:
    history = LegacyHistory(**fields)  # type: ignore[arg-type]

    def adjust(config: NotesoupConfig) -> NotesoupConfig:
        from attrs import evolve

        return evolve(config, legacy=history)

    return adjust


def _without_automatic(config: NotesoupConfig) -> NotesoupConfig:
    from attrs import evolve

    return evolve(config, automatic=False)


def _story(name: str, actions: Sequence[Action], world: object = None) -> Scenario:
    return Scenario(name=name, actions=tuple(actions), world=world)  # type: ignore[arg-type]


SCENARIOS: Final[tuple[Scenario, ...]] = (
    _story(
        "clear_memory commits once at the batch's turn_end and continues in the fresh window",
        [*_turn(NOTE), *_turn(_tools(("clear_memory", {}), ("clear_memory", {}))), *_turn(TEXT)],
    ),
    _story(
        "clear_memory in a mixed batch, then get_context_remaining in the fresh window",
        [
            *_turn(_tools(("echo", {"text": "x"}), ("clear_memory", {}))),
            *_turn(_tools(("get_context_remaining", {}))),
        ],
    ),
    _story(
        "an idle /clear-memory closes out, commits at settle and stops; /cm with a prompt "
        "continues once",
        [
            *_turn(TEXT),
            NOTE,
            ClearMemory(),
            Settle(),
            NOTE,
            ClearMemory(prompt="go on", alias=True),
            Settle(),
            *_turn(TEXT),
        ],
    ),
    _story(
        "a /clear-memory during a run is steered in; a second keeps the first prompt; the "
        "model's own clear_memory only acknowledges",
        [
            ECHO,
            CLEAR,
            Prompt(chars=SHORT),
            AdvanceTo(step="tool_result"),
            ClearMemory(prompt="first"),
            ClearMemory(prompt="second"),
            Settle(),
            *_turn(TEXT),
        ],
    ),
    _story(
        "queued input during a manual close-out is answered in the old window first",
        [
            ECHO,
            Prompt(chars=SHORT),
            AdvanceTo(step="tool_result"),
            ClearMemory(),
            FollowUp(chars=SHORT),
            QueueAtSettle(),
            Settle(),
        ],
    ),
    _story(
        "the hard reserve under a bare /clear-memory commits and latches a stop; Pi's tool-batch "
        "follow-up is cancelled",
        [
            ECHO,
            Prompt(chars=HARD_RESERVE),
            AdvanceTo(step="tool_result"),
            ClearMemory(),
            Settle(),
            *_turn(TEXT),
        ],
    ),
    _story(
        "the hard reserve under a prompted /clear-memory commits with its prompt and continues",
        [
            ECHO,
            Prompt(chars=HARD_RESERVE),
            AdvanceTo(step="tool_result"),
            ClearMemory(prompt="resume"),
            Settle(),
            *_turn(TEXT),
        ],
    ),
    _story(
        "a latched stop with queued input answers it once in the fresh window",
        [
            ECHO,
            Prompt(chars=HARD_RESERVE),
            AdvanceTo(step="tool_result"),
            ClearMemory(),
            AdvanceTo(step="turn_end"),
            Steer(chars=SHORT),
            Settle(),
        ],
    ),
    _story(
        "the hard reserve alone commits and continues",
        [*_turn(TEXT, chars=HARD_RESERVE), *_turn(TEXT)],
    ),
    _story(
        "guidance, then the warning (injected and re-armed), then clear_memory under the budget "
        "close-out; a settle alone never resets",
        [
            *_turn(TEXT, chars=GUIDANCE_BAND),
            *_turn(TEXT, chars=WARNING_BAND - GUIDANCE_BAND),
            *_turn(TEXT),
            *_turn(CLEAR),
            *_turn(TEXT),
        ],
    ),
    _story(
        "an aborted warning turn stays silent and re-arms later",
        [
            TEXT,
            Prompt(chars=WARNING_BAND),
            AdvanceTo(step="context"),
            Abort(),
            Settle(),
            *_turn(ERROR, *RETRIES_EXHAUSTED),
            *_turn(TEXT),
        ],
    ),
    _story(
        "an overflow recovers once; a second overflow in the chain settles without a reset",
        [*_turn(OVERFLOW), *_turn(OVERFLOW, OVERFLOW), *_turn(TEXT)],
    ),
    _story(
        "a queued success ends an overflow chain; an error leaves it",
        [
            OVERFLOW,
            Prompt(chars=SHORT),
            AdvanceTo(step="turn_end"),
            FollowUp(chars=SHORT),
            Settle(),
            *_turn(OVERFLOW, *RETRIES_EXHAUSTED),
        ],
    ),
    _story(
        "manual overflow: a pending /clear-memory resets on overflow without a retry, automatic "
        "resets off",
        [
            ClearMemory(),
            OVERFLOW,
            Settle(),
            ClearMemory(prompt="again"),
            OVERFLOW,
            Settle(),
            *_turn(TEXT),
        ],
        _without_automatic,
    ),
    _story(
        "a tool request dropped by an overflow; error and aborted turns never commit",
        [
            *_turn(CLEAR, OVERFLOW),
            *_turn(CLEAR, *RETRIES_EXHAUSTED),
            CLEAR,
            Prompt(chars=SHORT),
            AdvanceTo(step="tool_result"),
            Abort(),
            Settle(),
        ],
        _without_automatic,
    ),
    _story(
        "a hidden boot refuses the window; /clear-memory recovers it at once",
        [*_turn(CLEAR), HideBoot(), *_turn(TEXT), *_turn(TEXT), ClearMemory(), *_turn(TEXT)],
    ),
    _story(
        "another extension voids a reset's boundary and a warning's",
        [
            VoidNextBoundary(),
            *_turn(CLEAR),
            *_turn(TEXT, chars=WARNING_BAND),
            VoidNextBoundary(),
            *_turn(TEXT),
            *_turn(TEXT),
        ],
    ),
    _story(
        "off keeps the marker window; /compact is refused; status, usage and on again",
        [
            *_turn(CLEAR),
            Toggle(arg="off"),
            Compact(),
            *_turn(CLEAR),
            ClearMemory(),
            Toggle(arg=""),
            Toggle(arg="bogus"),
            Toggle(arg="on"),
            Compact(),
            Toggle(arg="off"),
        ],
    ),
    _story(
        "/compact and a summarized /tree in the root window, then across a reset",
        [
            *_turn(TEXT, chars=4_000),
            Toggle(arg="off"),
            Compact(),
            Toggle(arg="on"),
            *_turn(CLEAR),
            Navigate(index=2, summarize=True),
            *_turn(TEXT),
            Navigate(index=-1, summarize=True),
            Navigate(index=1, summarize=False),
        ],
    ),
    _story(
        "reload and fork after a reset repair nothing; a fork at the marker repairs its tail",
        [
            *_turn(CLEAR),
            Reload(),
            Fork(index=-1, anchor="boundary"),
            *_turn(TEXT),
            Navigate(index=-3, anchor="boundary"),
            *_turn(TEXT),
        ],
    ),
    _story(
        "automatic compaction switched off mid-run: no warning, no hard reserve, guidance only",
        [
            SetAutomatic(enabled=False),
            *_turn(TEXT, chars=HARD_RESERVE),
            SetAutomatic(enabled=True),
            *_turn(TEXT),
        ],
    ),
    _story(
        "a 0.25 session with two windows resumes under notesoup: its windows and notes carry "
        "over, then a notesoup reset",
        [
            *_turn(TEXT),
            *_turn(_tools(("notes_list", {}), ("history_windows", {}))),
            *_turn(CLEAR),
            *_turn(TEXT),
        ],
        _legacy(windows=2, turns=2, tail="complete", warning=True),
    ),
    _story(
        "a 0.25 session whose last tail is bare is repaired narrowly",
        [*_turn(TEXT), ClearMemory(), Settle()],
        _legacy(windows=1, turns=1, tail="bare"),
    ),
    _story(
        "a 0.25 session whose last tail has only its boot gets its continuation",
        [*_turn(TEXT), Reload(), *_turn(TEXT)],
        _legacy(windows=3, turns=1, tail="boot_only"),
    ),
    _story(
        "a 0.25 root window with its root boot resumes as is",
        [*_turn(TEXT, chars=WARNING_BAND), *_turn(TEXT)],
        _legacy(windows=0, turns=2, tail="complete", chars=20_000),
    ),
)
