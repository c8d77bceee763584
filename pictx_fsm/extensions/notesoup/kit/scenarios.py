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

from pictx_fsm.extensions.notesoup.kit import actions as act
from pictx_fsm.extensions.notesoup.kit.legacy import LegacyHistory
from pictx_fsm.extensions.notesoup.kit.world import NotesoupConfig
from pictx_fsm.extensions.shared.kit import actions as family
from pictx_fsm.testing import actions as host
from pictx_fsm.testing.kit import Scenario

__all__ = ["SCENARIOS"]

SHORT: Final = 60
GUIDANCE_BAND: Final = 76_000
WARNING_BAND: Final = 100_000
HARD_RESERVE: Final = 152_000
TEXT: Final = host.Script(reply="text")
OVERFLOW: Final = host.Script(reply="overflow")
ERROR: Final = host.Script(reply="error")
RETRIES_EXHAUSTED: Final = (ERROR,) * 4


def _tools(*calls: tuple[str, dict[str, object]]) -> host.Script:
    return host.Script(
        reply="tools",
        tools=tuple(name for name, _ in calls),
        arguments=tuple(json.dumps(arguments) for _, arguments in calls),
    )


CLEAR: Final = _tools(("clear_memory", {}))
ECHO: Final = _tools(("echo", {"text": "e"}))
NOTE: Final = _tools(("notes_write", {"address": "plan", "content": "# Plan\nstep one"}))
BIG_READ: Final[tuple[str, dict[str, object]]] = (
    "history_read",
    {"seq": 2, "limit_chars": 30_000},
)
"""The first prompt of the session, read back whole (30 000 characters)."""


def _turn(*scripts: host.Script, chars: int = SHORT) -> list[act.Action]:
    return [*scripts, host.Prompt(chars=chars), host.Settle()]


def _legacy(**fields: object) -> object:
    history = LegacyHistory(**fields)  # type: ignore[arg-type]

    def adjust(config: NotesoupConfig) -> NotesoupConfig:
        from attrs import evolve

        return evolve(config, legacy=history)

    return adjust


def _without_automatic(config: NotesoupConfig) -> NotesoupConfig:
    from attrs import evolve

    return evolve(config, automatic=False)


def _hard_reserve_stop() -> list[act.Action]:
    """A bare /clear-memory during a tool batch that crosses the hard reserve: the safety
    reset commits at the batch's turn_end and latches a stop (S34); stops right after it."""
    return [
        host.Prompt(chars=HARD_RESERVE),
        host.AdvanceTo(step="tool_result"),
        act.ClearMemory(),
        host.AdvanceTo(step="turn_end"),
    ]


def _after_recovery(action: act.Action) -> list[act.Action]:
    """An overflow recovered at settlement (S65); ``action`` lands at the next provider
    request, in the fresh window, whose reply overflows again."""
    return [
        OVERFLOW,
        OVERFLOW,
        TEXT,
        host.Prompt(chars=SHORT),
        host.AdvanceTo(step="context", count=2),
        action,
    ]


def _spent_then_queued(*then: host.Script) -> list[act.Action]:
    """A recovered chain overflows again (pending-spent, S65); another extension queues a
    message at settlement, whose turn replies with ``then``."""
    return [
        OVERFLOW,
        OVERFLOW,
        *then,
        host.Prompt(chars=SHORT),
        host.AdvanceTo(step="context", count=2),
        family.QueueAtSettle(),
    ]


def _story(name: str, actions: Sequence[act.Action], world: object = None) -> Scenario:
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
            act.ClearMemory(),
            host.Settle(),
            NOTE,
            act.ClearMemory(prompt="go on", alias=True),
            host.Settle(),
            *_turn(TEXT),
        ],
    ),
    _story(
        "a /clear-memory during a run is steered in; a second keeps the first prompt; the "
        "model's own clear_memory only acknowledges",
        [
            ECHO,
            CLEAR,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="tool_result"),
            act.ClearMemory(prompt="first"),
            act.ClearMemory(prompt="second"),
            host.Settle(),
            *_turn(TEXT),
        ],
    ),
    _story(
        "queued input during a manual close-out is answered in the old window first",
        [
            ECHO,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="tool_result"),
            act.ClearMemory(),
            host.FollowUp(chars=SHORT),
            family.QueueAtSettle(),
            host.Settle(),
        ],
    ),
    _story(
        "the hard reserve under a bare /clear-memory commits and latches a stop; Pi's tool-batch "
        "follow-up is cancelled",
        [
            ECHO,
            host.Prompt(chars=HARD_RESERVE),
            host.AdvanceTo(step="tool_result"),
            act.ClearMemory(),
            host.Settle(),
            *_turn(TEXT),
        ],
    ),
    _story(
        "the hard reserve under a prompted /clear-memory commits with its prompt and continues",
        [
            ECHO,
            host.Prompt(chars=HARD_RESERVE),
            host.AdvanceTo(step="tool_result"),
            act.ClearMemory(prompt="resume"),
            host.Settle(),
            *_turn(TEXT),
        ],
    ),
    _story(
        "a latched stop with queued input answers it once in the fresh window",
        [
            ECHO,
            host.Prompt(chars=HARD_RESERVE),
            host.AdvanceTo(step="tool_result"),
            act.ClearMemory(),
            host.AdvanceTo(step="turn_end"),
            host.Steer(chars=SHORT),
            host.Settle(),
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
            host.Prompt(chars=WARNING_BAND),
            host.AdvanceTo(step="context"),
            host.Abort(),
            host.Settle(),
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
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end"),
            host.FollowUp(chars=SHORT),
            host.Settle(),
            *_turn(OVERFLOW, *RETRIES_EXHAUSTED),
        ],
    ),
    _story(
        "manual overflow: a pending /clear-memory resets on overflow without a retry, automatic "
        "resets off",
        [
            act.ClearMemory(),
            OVERFLOW,
            host.Settle(),
            act.ClearMemory(prompt="again"),
            OVERFLOW,
            host.Settle(),
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
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="tool_result"),
            host.Abort(),
            host.Settle(),
        ],
        _without_automatic,
    ),
    _story(
        "a hidden boot refuses the window; /clear-memory recovers it at once; a reset there "
        "is checkpoint-backed again",
        [
            *_turn(CLEAR),
            family.HideBoot(),
            *_turn(TEXT),
            *_turn(TEXT),
            act.ClearMemory(),
            *_turn(CLEAR),
            *_turn(TEXT),
        ],
    ),
    _story(
        "another extension voids a reset's boundary and a warning's",
        [
            family.VoidNextBoundary(),
            *_turn(CLEAR),
            *_turn(TEXT, chars=WARNING_BAND),
            family.VoidNextBoundary(),
            *_turn(TEXT),
            *_turn(TEXT),
        ],
    ),
    _story(
        "off keeps the marker window; /compact is refused; status, usage and on again",
        [
            *_turn(CLEAR),
            family.Toggle(arg="off"),
            host.Compact(),
            *_turn(CLEAR),
            act.ClearMemory(),
            family.Toggle(arg=""),
            family.Toggle(arg="bogus"),
            family.Toggle(arg="on"),
            host.Compact(),
            family.Toggle(arg="off"),
        ],
    ),
    _story(
        "/compact and a summarized /tree in the root window, then across a reset",
        [
            *_turn(TEXT, chars=4_000),
            family.Toggle(arg="off"),
            host.Compact(),
            family.Toggle(arg="on"),
            *_turn(CLEAR),
            host.Navigate(index=2, summarize=True),
            *_turn(TEXT),
            host.Navigate(index=-1, summarize=True),
            host.Navigate(index=1, summarize=False),
        ],
    ),
    _story(
        "reload and fork after a reset repair nothing; a fork at the marker repairs its tail",
        [
            *_turn(CLEAR),
            host.Reload(),
            host.Fork(index=-1, anchor="boundary"),
            *_turn(TEXT),
            host.Navigate(index=-3, anchor="boundary"),
            *_turn(TEXT),
        ],
    ),
    _story(
        "automatic compaction switched off mid-run: no warning, no hard reserve, guidance only",
        [
            family.SetAutomatic(enabled=False),
            *_turn(TEXT, chars=HARD_RESERVE),
            family.SetAutomatic(enabled=True),
            *_turn(TEXT),
        ],
    ),
    _story(
        "tool results cross the hard reserve from below the warning line: the reset commits "
        "with no request pending",
        [*_turn(TEXT, chars=78_000), *_turn(_tools(BIG_READ, BIG_READ, BIG_READ)), *_turn(TEXT)],
    ),
    _story(
        "a tool batch in the warning band re-arms the budget close-out at every request",
        [*_turn(ECHO, TEXT, chars=WARNING_BAND)],
    ),
    _story(
        "/clear-memory in the warning band: the budget leaves the manual close-out as it is",
        [*_turn(TEXT, chars=WARNING_BAND), act.ClearMemory(), host.Settle()],
    ),
    _story(
        "an abort after the warning turn's turn_end drops the budget close-out",
        [
            TEXT,
            host.Prompt(chars=WARNING_BAND),
            host.AdvanceTo(step="turn_end"),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "an abort in the guidance band drops the staged guidance",
        [
            TEXT,
            host.Prompt(chars=GUIDANCE_BAND),
            host.AdvanceTo(step="context"),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "a warning voided by another extension is staged again at the next request; one voided "
        "at the last turn is never announced",
        [
            family.VoidNextBoundary(),
            *_turn(ECHO, TEXT, chars=WARNING_BAND),
            *_turn(CLEAR, TEXT),
            family.VoidNextBoundary(),
            *_turn(TEXT, chars=WARNING_BAND),
        ],
    ),
    _story(
        "/clear-memory after the model's clear_memory in the same batch: the user's stop "
        "outranks the rollover",
        [
            _tools(("clear_memory", {}), ("echo", {"text": "e"})),
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="tool_result"),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "a reset voided by another extension and a committed one before the same turn_start: "
        "only the committed one is announced",
        [
            family.VoidNextBoundary(),
            _tools(("clear_memory", {}), ("echo", {"text": "e"})),
            CLEAR,
            TEXT,
            host.Prompt(chars=SHORT),
            host.Settle(),
        ],
    ),
    _story(
        "in a latched stop whose queued input is answered, the model's clear_memory and "
        "another /clear-memory only acknowledge",
        [
            ECHO,
            CLEAR,
            TEXT,
            *_hard_reserve_stop(),
            host.Steer(chars=SHORT),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "a latched stop waits while another extension queues a message at settlement",
        [
            ECHO,
            TEXT,
            TEXT,
            *_hard_reserve_stop(),
            host.Steer(chars=SHORT),
            family.QueueAtSettle(),
            host.Settle(),
        ],
    ),
    _story(
        "a latched stop whose answered input is aborted ends with the run",
        [
            ECHO,
            TEXT,
            TEXT,
            *_hard_reserve_stop(),
            host.Steer(chars=SHORT),
            host.AdvanceTo(step="turn_end", count=2),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "a safety reset voided by another extension is retried at settlement, still stopping",
        [
            ECHO,
            TEXT,
            host.Prompt(chars=HARD_RESERVE),
            host.AdvanceTo(step="tool_result"),
            act.ClearMemory(),
            family.VoidNextBoundary(),
            host.Settle(),
        ],
    ),
    _story(
        "a voided safety reset whose follow-up fails is not retried",
        [
            ECHO,
            *RETRIES_EXHAUSTED,
            host.Prompt(chars=HARD_RESERVE),
            host.AdvanceTo(step="tool_result"),
            act.ClearMemory(),
            family.VoidNextBoundary(),
            host.Settle(),
        ],
    ),
    _story(
        "input steered in after an overflow's agent_end overflows again: the chain stays "
        "armed and recovers once",
        [
            OVERFLOW,
            OVERFLOW,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="agent_end"),
            host.Steer(chars=SHORT),
            host.Settle(),
        ],
    ),
    _story(
        "a message another extension queues at an overflow's settlement: the retry overflows "
        "with it still queued, which ends the chain",
        [
            OVERFLOW,
            OVERFLOW,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end"),
            family.QueueAtSettle(),
            host.Settle(),
        ],
    ),
    _story(
        "a message another extension queues at an overflow's settlement: the retry fails, "
        "which leaves the chain as it was",
        [
            OVERFLOW,
            *RETRIES_EXHAUSTED,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end"),
            family.QueueAtSettle(),
            host.Settle(),
        ],
    ),
    _story(
        "automatic resets switched off after an overflow: settlement does not recover",
        [
            OVERFLOW,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end"),
            family.SetAutomatic(enabled=False),
            host.Settle(),
        ],
    ),
    _story(
        "after a recovery, an overflow with automatic resets off spends the chain; an abort "
        "ends it",
        [
            *_after_recovery(family.SetAutomatic(enabled=False)),
            host.AdvanceTo(step="turn_end"),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "after a recovery, an overflow with automatic resets off, then a message another "
        "extension queues at settlement",
        [
            *_after_recovery(family.SetAutomatic(enabled=False)),
            host.AdvanceTo(step="turn_end"),
            family.QueueAtSettle(),
            host.Settle(),
        ],
    ),
    _story(
        "a /clear-memory delivered into the turn after a recovery that overflows again commits "
        "the manual outcome",
        [
            OVERFLOW,
            OVERFLOW,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="custom_message", count=2),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "a spent chain overflows again, then a queued message overflows once more",
        [*_spent_then_queued(OVERFLOW, TEXT), host.Settle()],
    ),
    _story(
        "a spent chain overflows again, then a queued message fails",
        [*_spent_then_queued(*RETRIES_EXHAUSTED), host.Settle()],
    ),
    _story(
        "a spent chain overflows again, then a queued message overflows with more input queued",
        [
            *_spent_then_queued(OVERFLOW, TEXT, TEXT),
            host.AdvanceTo(step="context"),
            host.FollowUp(chars=SHORT),
            host.Settle(),
        ],
    ),
    _story(
        "a spent chain overflows again, then a queued message overflows under a /clear-memory",
        [
            *_spent_then_queued(OVERFLOW, TEXT),
            host.AdvanceTo(step="context"),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "a spent chain overflows again, then the queued message is aborted",
        [*_spent_then_queued(TEXT), host.AdvanceTo(step="context"), host.Abort(), host.Settle()],
    ),
    _story(
        "an abort right after a second overflow in the chain",
        [
            OVERFLOW,
            OVERFLOW,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end", count=2),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "a /clear-memory landing while a reset's entries are appended belongs to the old "
        "window: the fresh window's clear_memory counts it as none",
        [
            CLEAR,
            CLEAR,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="compaction"),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "the old window's /clear-memory under the fresh window's warning: the budget arms its "
        "own close-out",
        [
            CLEAR,
            TEXT,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="compaction"),
            host.Steer(chars=WARNING_BAND),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "the old window's /clear-memory when the fresh window's tool results cross the hard "
        "reserve: a plain reset",
        [
            CLEAR,
            _tools(*[BIG_READ] * 5),
            TEXT,
            host.Prompt(chars=30_000),
            host.AdvanceTo(step="compaction"),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "/clear-memory twice while a settlement commit is appended: the second belongs to the "
        "fresh window",
        [
            host.Prompt(chars=SHORT),
            act.ClearMemory(),
            host.AdvanceTo(step="compaction"),
            act.ClearMemory(),
            host.AdvanceTo(step="custom"),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "/notesoup off mid-run forgets the budget close-out, a staged or committed warning and "
        "staged guidance",
        [
            TEXT,
            host.Prompt(chars=WARNING_BAND),
            host.AdvanceTo(step="context"),
            family.Toggle(arg="off"),
            host.Settle(),
            family.Toggle(arg="on"),
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end"),
            family.Toggle(arg="off"),
            host.Settle(),
        ],
    ),
    _story(
        "/notesoup off with guidance staged",
        [
            TEXT,
            host.Prompt(chars=GUIDANCE_BAND),
            host.AdvanceTo(step="context"),
            family.Toggle(arg="off"),
            host.Settle(),
        ],
    ),
    _story(
        "/notesoup off in a tool batch after clear_memory: nothing commits",
        [
            _tools(("clear_memory", {}), ("echo", {"text": "e"})),
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="tool_result"),
            family.Toggle(arg="off"),
            host.Settle(),
        ],
    ),
    _story(
        "/notesoup off after the hard reserve latched a stop: the follow-up runs in the fresh "
        "window",
        [ECHO, TEXT, *_hard_reserve_stop(), family.Toggle(arg="off"), host.Settle()],
    ),
    _story(
        "/notesoup off in a spent overflow chain",
        [
            OVERFLOW,
            OVERFLOW,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end", count=2),
            family.Toggle(arg="off"),
            host.Settle(),
        ],
    ),
    _story(
        "an abort after an overflow's turn_end ends the chain",
        [
            OVERFLOW,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end"),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "an abort in the fresh window after a recovery",
        [
            OVERFLOW,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="context", count=2),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "a /clear-memory after an overflow's agent_end, whose turn overflows again: the manual "
        "close-out keeps the chain armed",
        [
            OVERFLOW,
            OVERFLOW,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="agent_end"),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "a refused window recovered, a second one refused and announced for its own id, then "
        "a checkpoint-backed reset in it",
        [
            *_turn(CLEAR),
            family.HideBoot(),
            *_turn(TEXT),
            *_turn(TEXT),
            act.ClearMemory(),
            *_turn(TEXT),
            family.HideBoot(),
            *_turn(TEXT),
            *_turn(TEXT),
            act.ClearMemory(),
            *_turn(CLEAR),
            *_turn(TEXT),
        ],
    ),
    _story(
        "a manual close-out's overflow with a message another extension queues at settlement: "
        "the queued turn runs first",
        [OVERFLOW, TEXT, TEXT, family.QueueAtSettle(), act.ClearMemory(), host.Settle()],
    ),
    _story(
        "an armed chain whose queued retry is aborted",
        [
            OVERFLOW,
            OVERFLOW,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end"),
            family.QueueAtSettle(),
            host.AdvanceTo(step="context"),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "/notesoup off right after an overflow, and after a recovery",
        [
            OVERFLOW,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end"),
            family.Toggle(arg="off"),
            host.Settle(),
            family.Toggle(arg="on"),
            OVERFLOW,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="context", count=2),
            family.Toggle(arg="off"),
            host.Settle(),
        ],
    ),
    _story(
        "a refused window's steered /clear-memory is cancelled with the request; /tree leaves "
        "the refused window",
        [
            *_turn(CLEAR),
            family.HideBoot(),
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="turn_end"),
            act.ClearMemory(),
            host.Settle(),
            *_turn(TEXT),
            host.Navigate(index=-2),
            *_turn(TEXT),
        ],
    ),
    _story(
        "a /clear-memory steered in is dropped by an aborted turn",
        [
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="context"),
            act.ClearMemory(),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "a /clear-memory answered by its close-out turn is dropped by an abort before agent_end",
        [
            TEXT,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="context"),
            act.ClearMemory(),
            host.AdvanceTo(step="turn_end", count=2),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "a /clear-memory after agent_end, then an abort: no settlement, dropped when the run "
        "settles",
        [
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="agent_end"),
            act.ClearMemory(),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "an idle /clear-memory whose close-out turn fails is dropped",
        [*RETRIES_EXHAUSTED, act.ClearMemory(), host.Settle()],
    ),
    _story(
        "a /clear-memory steered in, then /notesoup off mid-run",
        [
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="context"),
            act.ClearMemory(),
            family.Toggle(arg="off"),
            host.Settle(),
        ],
    ),
    _story(
        "the old window's /clear-memory when the fresh window's turn just ends: dropped",
        [
            CLEAR,
            TEXT,
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="compaction"),
            act.ClearMemory(),
            host.Settle(),
        ],
    ),
    _story(
        "an abort after an overflow's agent_end: no settlement, the chain ends at agent_settled",
        [
            OVERFLOW,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="agent_end"),
            host.Abort(),
            host.Settle(),
        ],
    ),
    _story(
        "boot repair waits for a run (/notesoup on mid-run) and never splits a tool pair",
        [
            family.Toggle(arg="off"),
            TEXT,
            host.Prompt(chars=SHORT),
            host.AdvanceTo(step="context"),
            family.Toggle(arg="on"),
            host.Settle(),
            *_turn(ECHO, TEXT),
            host.Navigate(index=-1, anchor="tool_call"),
        ],
    ),
    _story(
        "/notesoup on, status and usage while on; /compact in the root window is refused",
        [
            *_turn(TEXT, chars=GUIDANCE_BAND),
            family.Toggle(arg="on"),
            family.Toggle(arg=""),
            family.Toggle(arg="bogus"),
            host.Compact(),
        ],
    ),
    _story(
        "off twice; /compact and Pi's own compaction are refused on a marker branch, native "
        "before it; /tree summaries are native where no marker is crossed",
        [
            *_turn(CLEAR),
            family.Toggle(arg="off"),
            family.Toggle(arg="off"),
            *_turn(TEXT, chars=GUIDANCE_BAND),
            host.Compact(),
            *_turn(TEXT, chars=HARD_RESERVE),
            *_turn(TEXT),
            host.Navigate(index=-2, summarize=True),
            host.Navigate(index=1, summarize=True),
            host.Compact(),
        ],
    ),
    _story(
        "off keeps /tree summaries from crossing a marker",
        [*_turn(CLEAR), family.Toggle(arg="off"), host.Navigate(index=2, summarize=True)],
    ),
    _story(
        "off in the root window: a /tree summary is Pi's own",
        [
            family.Toggle(arg="off"),
            *_turn(TEXT),
            *_turn(TEXT),
            host.Navigate(index=-3, summarize=True),
        ],
    ),
    _story(
        "a fork into a 0.25 window's tail past its boot is left as it is",
        [*_turn(TEXT, chars=8), *_turn(TEXT, chars=8), host.Fork(index=-7)],
        _legacy(windows=1, turns=1, tail="complete", chars=200),
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
        [*_turn(TEXT), act.ClearMemory(), host.Settle()],
        _legacy(windows=1, turns=1, tail="bare"),
    ),
    _story(
        "a 0.25 session whose last tail has only its boot gets its continuation",
        [*_turn(TEXT), host.Reload(), *_turn(TEXT)],
        _legacy(windows=3, turns=1, tail="boot_only"),
    ),
    _story(
        "a 0.25 root window with its root boot resumes as is",
        [*_turn(TEXT, chars=WARNING_BAND), *_turn(TEXT)],
        _legacy(windows=0, turns=2, tail="complete", chars=20_000),
    ),
)
