"""Regressions for the counterexamples long explorations found: a boot between a tool call
and its results (FM19), a second boot in one window (R65, D4), a boot repaired mid-run behind
the run's conversation (R65, D4), a run that never settled after a failed overflow recovery
(liveness, FM6–9) — issue 14 — and an invariant that took a new failure chain after
``/pi-context off`` for the old one (R37).

Each lifecycle bug is pinned twice: on the runtime alone (the lifecycle kit, the rule as a
specification) and on the model session (the counterexample kept as a seed scenario replays
clean, and the planted fault that brings the bug back is caught by it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lifecycle_kit import Kit, audits_verify  # noqa: F401

from pictx_fsm.cli import main
from pictx_fsm.extensions.pi_context.kit.actions import Action, Toggle
from pictx_fsm.extensions.pi_context.kit.faults import FAULTS
from pictx_fsm.extensions.pi_context.kit.kit import KIT
from pictx_fsm.extensions.pi_context.kit.scenarios import SCENARIOS
from pictx_fsm.extensions.pi_context.kit.world import scenario_config
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE, MARKER_TYPE, WIPE_MEMORY_TOOL
from pictx_fsm.host.effects import BoundaryResult, SendMessage
from pictx_fsm.host.events import SessionTreeEvent, TurnEnd
from pictx_fsm.testing.trace import record_trace, run_actions

PROFILES = ("0.25.0", "0.25.1")
SCENARIO_OF_FAULT = {
    "split-tool-pair-behind-summary": "tool-pair-behind-a-summary",
    "repair-during-commit": "on-between-boundary-appends",
    "repair-mid-run": "on-mid-run-after-tree-to-a-marker",
}


def _sends(result: Any) -> list[SendMessage]:
    return [e for e in result.effects if isinstance(e, SendMessage)]


# -- FM19: a branch summary does not close a tool pair ---------------------------------------


def _tool_call_with_summary(profile: str, *, result: bool) -> tuple[Kit, str]:
    """A root window without a visible boot whose assistant message called a tool (its
    result appended when ``result``), and a branch summary ``/tree`` wrote below it."""
    kit = Kit.create(profile=profile)
    kit.build.user("do it")
    kit.build.assistant("calling", stop="toolUse", calls=[{"name": "echo", "arguments": {}}])
    if result:
        kit.build.tool_result("ok")
    return kit, kit.build.branch_summary()


@pytest.mark.parametrize("profile", PROFILES)
def test_fm19_tree_repair_appends_no_boot_after_a_summary_on_an_open_tool_call(
    profile: str,
) -> None:
    # Given /tree with a summary onto an assistant message whose tool call has no result
    kit, summary = _tool_call_with_summary(profile, result=False)
    # When the navigation's repair runs
    result = kit.handle(SessionTreeEvent(new_leaf_id=summary))
    # Then it appends nothing: the tool call's result is still missing behind the summary
    assert _sends(result) == [] and kit.of_type(BOOT_TYPE) == []


@pytest.mark.parametrize("profile", PROFILES)
def test_fm19_tree_repair_still_boots_after_a_summary_once_the_results_are_in(
    profile: str,
) -> None:
    # Given the same branch with the tool's result before the summary
    kit, summary = _tool_call_with_summary(profile, result=True)
    # When the navigation's repair runs / Then the root window gets its boot
    (send,) = _sends(kit.handle(SessionTreeEvent(new_leaf_id=summary)))
    assert send.custom_type == BOOT_TYPE


# -- R65/D4: repair never completes a tail its own boundary is still committing --------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("persisted", [1, 2])
def test_r65_pi_context_on_between_two_appends_of_a_reset_commit_adds_no_second_boot(
    profile: str, persisted: int
) -> None:
    # Given a wipe_memory turn whose turn_end drafted a reset (marker, boot[, continuation])
    kit = Kit.create(profile=profile)
    kit.start()
    calls = [{"name": WIPE_MEMORY_TOOL, "arguments": {}}]
    entry_id = kit.build.assistant("calling", stop="toolUse", calls=calls)
    kit.tool(WIPE_MEMORY_TOOL)
    kit.build.tool_result("requested", name=WIPE_MEMORY_TOOL)
    value = kit.runtime.handle(TurnEnd(message=kit.message(entry_id)), kit.ctx).value
    assert isinstance(value, BoundaryResult)
    drafts = list(value.entries)
    # And Pi has persisted only the first entries of that commit
    for draft in drafts[:persisted]:
        kit.append_draft(draft)
    # When /pi-context on arrives between two appends
    result = kit.toggle("on")
    for draft in drafts[persisted:]:
        kit.append_draft(draft)
    # Then repair appended nothing, and the window has exactly the commit's one boot
    assert _sends(result) == []
    branch = kit.branch_types()
    tail = branch[branch.index(f"custom:{MARKER_TYPE}") :]
    assert tail.count(f"custom_message:{BOOT_TYPE}") == 1


# -- R65/D4: no repair while a run is under way ---------------------------------------------


def _torn_tail_off(profile: str) -> Kit:
    """A window whose marker is the leaf (``/tree`` onto it while off): its boot is missing."""
    kit = Kit.create(profile=profile)
    kit.start()
    kit.wipe()
    kit.toggle("off")
    marker = kit.of_type(MARKER_TYPE)[-1]
    kit.navigate(marker.id)
    return kit


@pytest.mark.parametrize("profile", PROFILES)
def test_r65_pi_context_on_mid_run_repairs_nothing_pi_would_append_behind_the_run(
    profile: str,
) -> None:
    # Given a reset window whose boot is off the branch, and a prompt's run under way
    kit = _torn_tail_off(profile)
    # When /pi-context on arrives mid-run (ctx.isIdle() is false)
    result = kit.toggle("on", idle=False)
    # Then repair refuses: Pi would hold the boot until the turn's end, behind the run's
    # user and assistant messages (a boot after later conversation, R65/D4)
    assert _sends(result) == []


@pytest.mark.parametrize("profile", PROFILES)
def test_r64_pi_context_on_while_idle_still_repairs_the_missing_boot(profile: str) -> None:
    # Given the same torn tail with the session idle
    kit = _torn_tail_off(profile)
    # When /pi-context on arrives / Then repair appends the missing boot
    sends = _sends(kit.toggle("on"))
    assert [send.custom_type for send in sends][:1] == [BOOT_TYPE]


@pytest.mark.parametrize("profile", PROFILES)
def test_r64_a_root_boot_repair_asked_mid_run_is_made_at_the_turns_end(profile: str) -> None:
    # Given a root window whose boot is hidden from the projection (another extension's
    # context edit), as a runtime restarted at a request of a running turn finds it
    kit = Kit.create(profile=profile)
    kit.start()
    kit.build.user("hello")
    kit.build.edit(kit.of_type(BOOT_TYPE)[-1].id)
    # When the restart resynchronises with session_start while the run is under way
    held = kit.start(reason="reload", idle=False)
    # Then it sends nothing yet: Pi would hold the boot to the turn's end, behind the run
    assert _sends(held) == []
    # And the repair it owes is made at the turn's end (awaited, unlike agent_settled)
    assert [send.custom_type for send in _sends(kit.turn_end(idle=False))] == [BOOT_TYPE]
    # And owed once: the settle and an idle repair afterwards send nothing
    assert _sends(kit.settled()) == []
    assert _sends(kit.start(reason="reload")) == []


@pytest.mark.parametrize("profile", PROFILES)
def test_r64_a_repair_owed_mid_run_is_void_when_that_turn_commits_a_reset(profile: str) -> None:
    # Given a repair held mid-run (the root boot hidden) and a wipe_memory in that turn
    kit = Kit.create(profile=profile)
    kit.start()
    kit.build.user("hello")
    kit.build.edit(kit.of_type(BOOT_TYPE)[-1].id)
    assert _sends(kit.start(reason="reload", idle=False)) == []
    root = kit.window_id()
    # When the turn ends and commits the reset
    result = kit.tool_turn(WIPE_MEMORY_TOOL, idle=False)
    # Then the reset is committed with its own boot, and no root boot is sent after it (it
    # would land inside the new window)
    assert isinstance(result.value, BoundaryResult)
    boots = [e for e in result.value.entries if e.custom_type == BOOT_TYPE]
    assert [b.details["windowId"] for b in boots] != [root]  # type: ignore[index]
    assert _sends(result) == []


@pytest.mark.parametrize("profile", PROFILES)
def test_r64_an_aborted_turn_keeps_the_repair_owed_to_the_next_turns_end(profile: str) -> None:
    # Given a repair held mid-run (the root boot hidden)
    kit = Kit.create(profile=profile)
    kit.start()
    kit.build.user("hello")
    kit.build.edit(kit.of_type(BOOT_TYPE)[-1].id)
    assert _sends(kit.start(reason="reload", idle=False)) == []
    # When that turn is aborted / Then nothing is sent at its end
    assert _sends(kit.turn_end(stop="aborted", signal_aborted=True)) == []
    # And the next turn's end makes the repair
    assert [send.custom_type for send in _sends(kit.turn_end())] == [BOOT_TYPE]


# -- the counterexamples on the model session --------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("fault", sorted(SCENARIO_OF_FAULT))
def test_the_kept_counterexample_replays_clean_and_catches_its_planted_fault(
    fault: str, profile: str
) -> None:
    # Given the seed scenario that keeps the counterexample
    scenario = next(s for s in SCENARIOS if s.name == SCENARIO_OF_FAULT[fault])
    # When it runs on the lifecycle as declared / Then every invariant holds
    clean = run_actions(KIT, scenario_config(profile), scenario.actions)
    assert not clean.failed, clean.describe_failure()
    # And with the bug planted back, the invariant that found it reports it
    faulty = run_actions(KIT, scenario_config(profile, fault=fault), scenario.actions)
    assert faulty.violation is not None
    assert faulty.violation.invariant == FAULTS[fault].caught_by


@pytest.mark.parametrize("fault", sorted(SCENARIO_OF_FAULT))
def test_the_counterexample_trace_replays_clean_with_pictx_fsm_replay(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the counterexample written as a trace file (both profiles' stories are the same)
    scenario = next(s for s in SCENARIOS if s.name == SCENARIO_OF_FAULT[fault])
    trace, _ = record_trace(KIT, scenario_config("0.25.1"), scenario.actions)
    path = trace.save(tmp_path / f"{scenario.name}.json")
    # When `pictx-fsm replay` re-runs it
    code = main(["replay", str(path)])
    # Then it replays clean: same decisions, every invariant held
    out = capsys.readouterr().out
    assert code == 0, out
    assert "invariants     all held" in out


def _off_on_story() -> tuple[Action, ...]:
    scenario = next(s for s in SCENARIOS if s.name == "off-and-on-start-a-new-overflow-chain")
    return scenario.actions


@pytest.mark.parametrize("profile", PROFILES)
def test_r37_off_and_on_start_a_new_chain_so_a_second_recovery_is_no_violation(
    profile: str,
) -> None:
    # Given an overflow recovered at settle, then /pi-context off and on, and the retry
    # overflowing again (the story the long exploration found, kept as a seed scenario)
    # When it runs with every invariant checked
    run = run_actions(KIT, scenario_config(profile), _off_on_story())
    # Then both overflows were recovered (off cleared the chain, R37) and no invariant broke
    assert not run.failed, run.describe_failure()
    markers = [
        e for e in run.world.session.entries if getattr(e, "custom_type", None) == MARKER_TYPE
    ]
    assert len(markers) == 2


def test_r36_two_recoveries_in_one_chain_are_still_a_violation() -> None:
    # Given the same story without off and on, and the lifecycle planted to recover twice
    actions = [a for a in _off_on_story() if not isinstance(a, Toggle)]
    # When it runs / Then the overflow invariant reports the second recovery
    run = run_actions(KIT, scenario_config("0.25.1", fault="recover-twice"), actions)
    assert run.violation is not None and run.violation.invariant == "overflow_bounded"


@pytest.mark.parametrize("profile", PROFILES)
def test_fm6_liveness_a_follow_up_after_a_failed_overflow_recovery_settles(profile: str) -> None:
    # Given the kept counterexample: pi-context off over a marked branch (its compactions are
    # cancelled, R62), a prompt and a follow-up that really overflow, the recovery failing
    scenario = next(s for s in SCENARIOS if s.name == "follow-up-after-a-failed-overflow-recovery")
    # When it runs with every invariant checked
    run = run_actions(KIT, scenario_config(profile), scenario.actions)
    # Then every run settled (Pi's continue() delivered the follow-up) and nothing broke
    assert not run.failed, run.describe_failure()
    assert run.world.endless_runs == [] and run.world.session.is_idle


def test_fm6_liveness_the_counterexample_trace_replays_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the endless-run counterexample written as a trace file
    scenario = next(s for s in SCENARIOS if s.name == "follow-up-after-a-failed-overflow-recovery")
    trace, _ = record_trace(KIT, scenario_config("0.25.0"), scenario.actions)
    path = trace.save(tmp_path / f"{scenario.name}.json")
    # When `pictx-fsm replay` re-runs it / Then every invariant holds
    code = main(["replay", str(path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "invariants     all held" in out
