"""``/ctx-memory`` and its status (spec §9, M71–M72)."""

from __future__ import annotations

import json

import pytest
from cm_kit import C, P, S, T, fired, machine, notices, play, state, tool, world

from pictx_fsm.extensions.context_management.texts import NOTES_EMPTY, USAGE

STATUS_FIELDS = {
    "version",
    "loadedAt",
    "notes",
    "rawMessages",
    "checkpointPosition",
    "recallQuotaRemaining",
    "checkpointState",
    "lastCompaction",
    "failedAttempts",
    "lastFailure",
    "activeNotes",
    "resolvedNotes",
    "memory",
    "background",
    "notesThroughEntryId",
    "throughEntryId",
    "autoHandoff",
    "budgets",
}


def test_m71_notes_explains_only_when_there_are_none() -> None:
    w = play(world(), C(args="notes"))
    assert notices(w)[-1] == NOTES_EMPTY
    play(w, P(chars=200), S, *tool(tool="notes_update"), C(args="notes"))
    assert notices(w)[-1].startswith("k0 [goal/active]")


def test_m71_cancel_keeps_saved_notes_and_later_history_triggers_again() -> None:
    w = play(
        world(), P(chars=200), S, *tool(tool="notes_update"), P(chars=12_000), S, C(args="cancel")
    )
    assert notices(w)[-1] == "Context memory: background notes cancelled; saved notes stay."
    assert state(w).branch.notes
    from cm_kit import wait

    play(w, wait(1.1), P(chars=200), S)
    assert machine(w, "background_notes") == "running"


@pytest.mark.parametrize("args", ["bogus", "auto maybe", "session open"])
def test_m71_unknown_subcommands_show_the_usage(args: str) -> None:
    w = play(world(), C(args=args))
    assert notices(w)[-1] == USAGE


def test_m71_no_subcommand_means_status() -> None:
    w = play(world(), C(args=""))
    assert json.loads(notices(w)[-1])["version"] == "0.6.0-beta.2"


def test_m71_every_subcommand_is_understood() -> None:
    w = play(world(), T(chars=12_000))
    for args in (
        "status",
        "notes",
        "auto off",
        "auto on",
        "session",
        "session close",
        "session export",
        "handoff",
    ):
        play(w, C(args=args))
        assert notices(w)[-1] != USAGE, args
    assert fired(w)


def test_m72_status_names_every_field_of_the_readme() -> None:
    w = play(world(), T(chars=12_000), C(args="status"))
    status = json.loads(notices(w)[-1])
    assert set(status) == STATUS_FIELDS
    assert set(status["memory"]) == {"savedNotes", "lastSaveTime", "lastNoteFailure", "coverage"}
    assert set(status["memory"]["coverage"]) == {"coveredThrough", "coveredTime", "laterMessages"}
    assert set(status["autoHandoff"]) >= {
        "enabled",
        "paused",
        "pending",
        "attemptsInHour",
        "nextEligibleAt",
        "lastFailure",
    }
    assert status["budgets"]["generationTimeoutMs"] == 300_000
    assert status["checkpointState"] == "notes_only" and status["background"]["enabled"] is True
