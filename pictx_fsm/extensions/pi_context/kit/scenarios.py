"""Seed scenarios: short, named host stories that open every exploration.

Random exploration finds the unexpected; these make sure every run of ``verify`` also walks
the lifecycle's main roads at once — the wipe tool and its dedupe, the threshold reset with
guidance and warning, the overflow chain, queued deferral, aborts, ``/wipe-memory``,
off/on, ``/compact``, navigation, fork and reload — in both profiles, and then its corners:
every outcome of the turn after an overflow, before and after the recovery; reminders that
are dropped, cleared, voided or superseded by a reset; resets that another extension voids;
a window whose boot disappears; off with a marker. Together they fire every declared
transition that Pi can reach (the rest are exempted in
``models/pi_context/coverage-exemptions.toml``),
so coverage never depends on how far the random phase got. They are data: each is a list of
host actions, replayable like any trace.

The numbers assume the scenario world of :func:`~.explore.scenario_config` (a 36 000-token
window, reserve 2 000, reminder margin 16 000, so the reminder line is at 18 000 tokens
left and the warning line at 14 288; the root window's usage is Pi's chars/4 estimate):
a 72 000-character prompt lands in the reminder band, 90 000 in the warning band.
"""

from __future__ import annotations

from collections.abc import Sequence

from pictx_fsm.extensions.pi_context.kit.actions import (
    Abort,
    Action,
    Advance,
    AdvanceTo,
    AimAt,
    Compact,
    FollowUp,
    Fork,
    HideBoot,
    KillRuntime,
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
    WipeCommand,
)
from pictx_fsm.extensions.pi_context.kit.tool_coverage import tool_story
from pictx_fsm.testing.kit import Scenario

__all__ = [
    "ERROR",
    "GUIDANCE_BAND",
    "LONG",
    "OVERFLOW",
    "RETRIES_EXHAUSTED",
    "SCENARIOS",
    "SHORT",
    "TEXT",
    "WARNING_BAND",
]

SHORT = 60
LONG = 40_000
GUIDANCE_BAND = 72_000
"""Characters of one prompt that leave the root window in the reminder band."""
WARNING_BAND = 90_000
"""Characters of one prompt that leave the root window below the warning line."""


def _turn(*scripts: Script, chars: int = SHORT) -> list[Action]:
    return [*scripts, Prompt(chars=chars), Settle()]


def _wipe(*tools: str) -> Script:
    return Script(reply="tools", tools=tools or ("wipe_memory",))  # type: ignore[arg-type]


OVERFLOW = Script(reply="overflow")
ERROR = Script(reply="error")
TEXT = Script(reply="text")
RETRIES_EXHAUSTED = (ERROR,) * 4
"""An ordinary error outlasting Pi's three retries, so the run settles on it."""


def _after_overflow(*replies: Script, overflows: int = 1, then: Sequence[Action]) -> list[Action]:
    """A prompt whose first ``overflows`` replies overflow (the second one after pi-context's
    recovery), stopped right after the last overflowing ``turn_end`` to act (``then``)."""
    return [
        *(OVERFLOW,) * overflows,
        *replies,
        Prompt(chars=SHORT),
        AdvanceTo(step="turn_end", count=overflows),
        *then,
        Settle(),
    ]


def _chain_outcomes(overflows: int) -> list[Action]:
    """Every outcome of the turn that follows an armed overflow (R24–R26, R36): a message
    queued after the overflowing ``turn_end`` makes Pi run another turn before settling (a
    steer is delivered in it; of two follow-ups, ``agent.continue()`` delivers the first and
    the second is still queued at its end)."""
    steer, follow = Steer(chars=SHORT), FollowUp(chars=SHORT)
    return [
        *_after_overflow(TEXT, overflows=overflows, then=[steer]),
        *_after_overflow(OVERFLOW, overflows=overflows, then=[steer]),
        *_after_overflow(OVERFLOW, overflows=overflows, then=[follow, follow]),
        *_after_overflow(*RETRIES_EXHAUSTED, overflows=overflows, then=[steer]),
        *_after_overflow(overflows=overflows, then=[steer, AdvanceTo(step="streaming"), Abort()]),
    ]


def _chain_interruptions(overflows: int) -> list[Action]:
    """The armed chain meets an abort before and after ``agent_end`` (R37), ``/pi-context
    off`` (R37), a message queued while ``agent_before_settle`` runs (R35) and automatic
    resets switched off mid-chain (R35, R39)."""
    return [
        *_after_overflow(overflows=overflows, then=[Abort()]),
        *_after_overflow(overflows=overflows, then=[AdvanceTo(step="agent_end"), Abort()]),
        *_after_overflow(overflows=overflows, then=[Toggle(arg="off")]),
        Toggle(arg="on"),
        *_after_overflow(overflows=overflows, then=[QueueAtSettle(chars=SHORT)]),
        *_after_overflow(overflows=overflows, then=[SetAutomatic(enabled=False)]),
        SetAutomatic(enabled=True),
    ]


def _after_recovery(*replies: Script, then: Sequence[Action]) -> list[Action]:
    """An overflow recovered at ``agent_before_settle``; ``then`` acts right after it."""
    return [
        OVERFLOW,
        *replies,
        Prompt(chars=SHORT),
        AdvanceTo(step="agent_before_settle"),
        *then,
        Settle(),
    ]


def _on_between_appends(reply: Script, boundary: str, appended: int) -> list[Action]:
    """``/pi-context on`` after ``appended`` of the boundary's reset drafts were persisted
    (Pi persists them one entry at a time): repair must leave the rest to the commit (R65)."""
    return [
        reply,
        Prompt(chars=SHORT),
        AdvanceTo(step=boundary),
        Advance(steps=appended),
        Toggle(arg="on"),
        Settle(),
    ]


def _reminder_lost(chars: int) -> list[Action]:
    """A reminder staged and dropped by an abort (R22), committed but voided by another
    extension (R54), staged then cleared by off (R55), committed then cleared by off."""
    off_on = (Toggle(arg="off"), Settle(), Toggle(arg="on"))
    return [
        Prompt(chars=chars),
        AdvanceTo(step="streaming"),
        Abort(),
        Settle(),
        VoidNextBoundary(),
        *_turn(),
        Prompt(chars=SHORT),
        AdvanceTo(step="context"),
        *off_on,
        Prompt(chars=SHORT),
        AdvanceTo(step="turn_end"),
        *off_on,
    ]


SCENARIOS: Sequence[Scenario] = (
    Scenario(name="plain", actions=(*_turn(), *_turn(Script(reply="text", chars=200)))),
    Scenario(name="notes-and-history-tools", actions=tool_story()),
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
        actions=(
            *(a for _ in range(4) for a in _turn(chars=LONG // 2)),
            *_turn(chars=16_000),
            *_turn(chars=LONG),
        ),
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
            AdvanceTo(step="tool_result"),  # wipe_memory has answered; aborted before turn_end
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
            Fork(index=8, position="at"),
            *_turn(),
            Fork(index=9, position="at"),
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
    Scenario(name="overflow-pending-outcomes", actions=tuple(_chain_outcomes(overflows=1))),
    Scenario(name="overflow-pending-interrupted", actions=tuple(_chain_interruptions(overflows=1))),
    Scenario(name="overflow-spent-outcomes", actions=tuple(_chain_outcomes(overflows=2))),
    Scenario(name="overflow-spent-interrupted", actions=tuple(_chain_interruptions(overflows=2))),
    Scenario(
        name="after-recovery",
        actions=(
            *_after_recovery(then=[AdvanceTo(step="streaming"), Abort()]),
            *_after_recovery(OVERFLOW, then=[FollowUp(chars=SHORT)]),
            *_after_recovery(*RETRIES_EXHAUSTED, then=[]),
            *_after_recovery(ERROR, then=[AdvanceTo(step="turn_end"), Abort()]),
            *_after_recovery(then=[Toggle(arg="off")]),
            Toggle(arg="on"),
            # The recovery is committed, then the run is aborted before its next turn: the
            # settle announces it (R63).
            *_after_recovery(then=[Abort()]),
        ),
    ),
    Scenario(
        name="reminders-in-one-window",
        actions=(
            *_turn(_wipe("echo"), chars=GUIDANCE_BAND),
            *_turn(_wipe("echo"), chars=16_000),
            *_turn(chars=48_000),
        ),
    ),
    Scenario(
        name="guidance-committed-with-a-reset",
        actions=tuple(_turn(_wipe(), chars=GUIDANCE_BAND)),
    ),
    Scenario(name="guidance-lost", actions=tuple(_reminder_lost(GUIDANCE_BAND))),
    Scenario(name="warning-lost", actions=tuple(_reminder_lost(WARNING_BAND))),
    Scenario(
        name="voided-resets",
        actions=(
            # A reset voided by a later extension is never announced (R63, D3) ...
            VoidNextBoundary(),
            *_turn(_wipe("wipe_memory", "echo")),
            # ... even when a second reset commits before the next notice check.
            VoidNextBoundary(),
            *_turn(_wipe("wipe_memory", "echo"), _wipe()),
            # The overflow recovery voided at agent_before_settle.
            OVERFLOW,
            Prompt(chars=SHORT),
            AdvanceTo(step="agent_end"),
            VoidNextBoundary(),
            Settle(),
        ),
    ),
    Scenario(
        name="missing-boots",
        actions=(
            *_turn(_wipe()),
            # Another extension hides the window's boot: every request is cancelled (R68).
            HideBoot(),
            *_turn(),
            *_turn(),
            *_turn(),
            # /wipe-memory starts a window with a boot (the notice stays given for the
            # first window); then that boot is hidden too: a second missing window.
            WipeCommand(),
            *_turn(),
            HideBoot(),
            *_turn(),
            *_turn(),
            Navigate(index=-2),  # not the leaf: navigating to it is no navigation (Pi)
            *_turn(),
        ),
    ),
    Scenario(
        # Found by the derandomized stateful test: the runtime dies after /wipe-memory, the
        # next hook (session_before_tree) finds it dead, and the restart comes at
        # session_tree, on the bare marker the user navigated to. The resynchronised runtime
        # repairs the boot (R65) — applied at once, as the bridge applies it — so the
        # session_tree that follows finds the tail intact and appends no second boot (D4).
        name="restart-repairs-a-bare-marker-once",
        actions=(
            WipeCommand(),
            KillRuntime(),
            Script(reply="tools", tools=("history_windows",), arguments=("{}",)),
            Navigate(index=-2),
            *_turn(),
        ),
    ),
    # Found by the long exploration with the kill group (seeds 3 and 5): the runtime dies for
    # good after a reset, then the user forks onto the marker or onto the boot and prompts.
    # Nothing is left to complete the forked tail, so the prompt follows the bare marker
    # (every request aborted, R68) or the boot without its continuation (cut at the boot,
    # R67): no erased history reaches the provider, which is what the degraded mode promises
    # (docs/decisions.md, "A dead lifecycle repairs nothing").
    Scenario(
        name="a-dead-lifecycle-forks-onto-a-marker",
        actions=(
            *_turn(_wipe()),
            KillRuntime(permanent=True),
            Fork(index=-3, anchor="boundary", position="at"),
            *_turn(),
        ),
    ),
    Scenario(
        name="a-dead-lifecycle-forks-onto-a-boot",
        actions=(
            *_turn(_wipe()),
            KillRuntime(permanent=True),
            Fork(index=-2, anchor="boundary", position="at"),
            *_turn(),
        ),
    ),
    Scenario(
        name="tool-pair-guards",
        actions=(
            *_turn(_wipe("echo")),
            # The leaf between a tool call and its result: no repair, no wipe (FM19).
            Navigate(index=-3),
            WipeCommand(),
            Navigate(index=-1),
            *_turn(),
        ),
    ),
    # Counterexamples long explorations found (issue 14), kept as stories.
    Scenario(
        name="tool-pair-behind-a-summary",
        actions=(
            # Another extension voids the wipe's reset; the run ends on two wipe calls with
            # one result, then a fork and /tree with a summary onto the calls: the branch
            # summary does not close the tool pair, so repair appends no boot (FM19).
            VoidNextBoundary(),
            Prompt(chars=SHORT),
            _wipe("wipe_memory", "wipe_memory"),
            AdvanceTo(step="context", count=2),
            Fork(index=-2, position="at"),
            Navigate(index=-2, summarize=True),
        ),
    ),
    Scenario(
        name="on-between-boundary-appends",
        actions=(
            *_on_between_appends(OVERFLOW, "agent_before_settle", appended=1),
            *_on_between_appends(OVERFLOW, "agent_before_settle", appended=2),
            *_on_between_appends(_wipe(), "turn_end", appended=1),
        ),
    ),
    Scenario(
        name="on-mid-run-after-tree-to-a-marker",
        actions=(
            # /tree onto the marker leaves its boot off the branch while off; /pi-context on
            # before the prompt's user message is persisted: Pi would hold a repaired boot
            # until the turn's end, behind the run's conversation, so repair refuses (R65).
            WipeCommand(),
            Toggle(arg="off"),
            Navigate(index=1, anchor="boundary"),
            Prompt(chars=SHORT),
            Advance(steps=2),
            Toggle(arg="on"),
            Settle(),
        ),
    ),
    Scenario(
        name="follow-up-after-a-failed-overflow-recovery",
        actions=(
            # A reset window, then /pi-context off: its marker makes pi-context cancel Pi's
            # overflow compaction (R62). A prompt and a follow-up that really overflow the
            # window: the failed recovery leaves the error reply last, and Pi's
            # agent.continue() runs the queued follow-up as its prompt — the run settles
            # (it once re-sent the overflowing context forever: runs_settle).
            OVERFLOW,
            Script(reply="text", chars=29_928),
            Script(reply="text", chars=29_928),
            Prompt(chars=SHORT),
            Script(reply="text", chars=54_000),
            Settle(),
            Toggle(arg="off"),
            Prompt(chars=7_704),
            Settle(),
            QueueAtSettle(chars=40),
            Prompt(chars=23_815),
            FollowUp(chars=1_674),
            AdvanceTo(step="custom_message"),
            Settle(),
        ),
    ),
    Scenario(
        name="off-and-on-start-a-new-overflow-chain",
        actions=(
            # Recovered, then /pi-context off and on before the retry overflows again: off
            # cleared the chain (R37), so the second overflow is recovered too.
            OVERFLOW,
            OVERFLOW,
            Prompt(chars=SHORT),
            AdvanceTo(step="agent_before_settle"),
            Advance(steps=3),
            Toggle(arg="off"),
            Toggle(arg="on"),
            Settle(),
        ),
    ),
    Scenario(
        name="toggle-corners",
        actions=(
            Toggle(arg="on"),
            Toggle(arg=""),
            Toggle(arg="bogus"),
            *_turn(chars=LONG // 4),
            Compact(),
            # The wipe tool ran; off before its turn_end clears the request (R37, R60).
            _wipe(),
            Prompt(chars=SHORT),
            AdvanceTo(step="tool_result"),
            Toggle(arg="off"),
            Settle(),
            Toggle(arg="off"),
            # Off on a root branch gives /compact back (R61) ...
            Compact(),
            Toggle(arg="on"),
            *_turn(_wipe(), chars=LONG // 4),
            # ... but not on a marked branch, manual or automatic (R62), and branch summaries
            # across the reset window stay suppressed (R75).
            Toggle(arg="off"),
            Compact(),
            *_turn(OVERFLOW),
            Navigate(index=-8, summarize=True),
            Toggle(arg="on"),
        ),
    ),
    Scenario(
        name="a-reply-ends-exactly-at-the-reserve",
        actions=(
            # R50 is inclusive: a turn that leaves exactly the reserve resets at its end.
            *_turn(),
            AimAt(line="reserve", offset=0, at="reply"),
            *_turn(),
        ),
    ),
    Scenario(
        name="requests-exactly-on-the-reminder-and-warning-lines",
        actions=(
            # R52 is inclusive: a request exactly on the reminder line stages guidance, one
            # exactly on the warning line (after a reset, in a fresh window) the warning.
            *_turn(),
            AimAt(line="reminder", offset=0, at="prompt"),
            Settle(),
            WipeCommand(),
            *_turn(),
            AimAt(line="warning", offset=0, at="prompt"),
            Settle(),
        ),
    ),
    Scenario(
        name="a-runtime-restarted-mid-run-holds-its-repair",
        actions=(
            # Found by exact_reset_entries (issue 27): the root boot hidden, the runtime
            # killed, and the next prompt's run restarts it; the resync's repair would send a
            # root boot Pi holds to the turn's end — behind the reset wipe_memory commits
            # there, a root boot inside the new window. Now owed to the turn's end, where the
            # committed reset makes it void.
            Prompt(chars=8),
            Script(reply="text", chars=8),
            Script(reply="tools", chars=8, tools=("wipe_memory",)),
            HideBoot(),
            AdvanceTo(step="context", count=2),
            KillRuntime(permanent=False),
            Prompt(chars=8),
            Settle(),
        ),
    ),
    Scenario(
        name="a-repair-owed-mid-run-is-asked-again-mid-run",
        actions=(
            # The resync's repair owed (the root boot hidden, the runtime restarted at the
            # next request of the run: /pi-context on), and a second command's repair held too.
            Prompt(chars=8),
            Settle(),
            HideBoot(),
            Prompt(chars=8),
            Advance(steps=2),
            KillRuntime(permanent=False),
            Toggle(arg="on"),
            Toggle(arg="on"),
            Settle(),
        ),
    ),
    Scenario(
        name="a-repair-owed-over-an-aborted-turn-is-made-when-asked-idle",
        actions=(
            # An aborted turn keeps the repair owed; /pi-context on once idle makes it now.
            Prompt(chars=8),
            Settle(),
            HideBoot(),
            Prompt(chars=8),
            Advance(steps=2),
            KillRuntime(permanent=False),
            Toggle(arg="on"),
            Abort(),
            Settle(),
            Toggle(arg="on"),
            Settle(),
        ),
    ),
)
