"""Seed scenarios: short, named host stories that open every exploration.

Random exploration finds the unexpected; these make sure every run of ``verify`` also walks
the lifecycle's main roads at once — the wipe tool and its dedupe, the threshold reset with
guidance and warning, the overflow chain, queued deferral, aborts, ``/wipe-memory``,
off/on, ``/compact``, navigation, fork and reload — in both profiles. They are data: each is
a list of host actions, replayable like any trace.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from pictx_fsm.testing.actions import (
    Abort,
    Action,
    Advance,
    Compact,
    FollowUp,
    Fork,
    Navigate,
    Prompt,
    Reload,
    Script,
    Settle,
    Steer,
    Toggle,
    WipeCommand,
)

SHORT = 60
LONG = 40_000


@frozen(kw_only=True)
class Scenario:
    name: str
    actions: tuple[Action, ...]


def _turn(*scripts: Script, chars: int = SHORT) -> list[Action]:
    return [*scripts, Prompt(chars=chars), Settle()]


def _wipe(*tools: str) -> Script:
    return Script(reply="tools", tools=tools or ("wipe_memory",))  # type: ignore[arg-type]


SCENARIOS: Sequence[Scenario] = (
    Scenario(name="plain", actions=(*_turn(), *_turn(Script(reply="text", chars=200)))),
    Scenario(
        name="wipe-tool-and-dedupe",
        actions=(
            *_turn(_wipe()),
            *_turn(_wipe("wipe_memory", "wipe_memory", "echo")),
            *_turn(_wipe("get_context_remaining")),
        ),
    ),
    Scenario(
        name="threshold-reset-with-reminders",
        actions=tuple(a for _ in range(4) for a in _turn(chars=LONG // 2)),
    ),
    Scenario(
        name="overflow-chain",
        actions=(
            *_turn(Script(reply="overflow")),
            *_turn(Script(reply="overflow"), Script(reply="overflow")),
            *_turn(Script(reply="length")),
            *_turn(Script(reply="error"), Script(reply="error")),
        ),
    ),
    Scenario(
        name="oversized-prompts-overflow",
        actions=(*_turn(chars=LONG * 4), *_turn(chars=LONG * 4), *_turn()),
    ),
    Scenario(
        name="queued-deferral",
        actions=(
            _wipe("echo"),
            Prompt(chars=SHORT),
            Advance(steps=12),
            Steer(chars=SHORT),
            FollowUp(chars=SHORT),
            Settle(),
            Script(reply="overflow"),
            Prompt(chars=SHORT),
            Advance(steps=10),
            FollowUp(chars=SHORT),
            Settle(),
        ),
    ),
    Scenario(
        name="aborts",
        actions=(
            Prompt(chars=SHORT),
            Advance(steps=8),
            Abort(),
            Settle(),
            _wipe("wipe_memory", "echo"),
            Prompt(chars=SHORT),
            Advance(steps=14),
            Abort(),
            Settle(),
            *_turn(),
        ),
    ),
    Scenario(
        name="wipe-command",
        actions=(*_turn(), WipeCommand(), *_turn(), WipeCommand(), WipeCommand()),
    ),
    Scenario(
        name="off-and-on",
        actions=(
            *_turn(_wipe()),
            Toggle(arg="off"),
            *_turn(_wipe()),
            WipeCommand(),
            Compact(),
            Toggle(arg=""),
            Toggle(arg="bogus"),
            *_turn(chars=LONG),
            Toggle(arg="on"),
            *_turn(),
        ),
    ),
    Scenario(
        name="compact",
        actions=(*_turn(), Compact(), Toggle(arg="off"), Compact(), Toggle(arg="on"), *_turn()),
    ),
    Scenario(
        name="tree-fork-reload",
        actions=(
            *_turn(),
            *_turn(_wipe()),
            *_turn(),
            Navigate(index=3, summarize=True),
            *_turn(),
            Navigate(index=9, summarize=True),
            Navigate(index=10, summarize=False),
            *_turn(),
            Reload(),
            Fork(index=9),
            *_turn(),
            Fork(index=10),
            Reload(),
            *_turn(),
        ),
    ),
    Scenario(
        name="broken-tail-repair",
        actions=(
            *_turn(_wipe()),
            Navigate(index=8),
            Navigate(index=9),
            Toggle(arg="off"),
            Navigate(index=8),
            *_turn(),
            Toggle(arg="on"),
            *_turn(),
        ),
    ),
)
