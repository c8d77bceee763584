"""End-to-end scenarios through the runtime (issue 3 item 7): each a short Pi story."""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from lifecycle_kit import ROOT_ID, WINDOW, Kit, audits_verify  # noqa: F401

from pictx_fsm.extensions.pi_context.notes import InMemoryNotesSource
from pictx_fsm.extensions.pi_context.runtime import pi_file_settings
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    NOTICE_COMPACT_DISABLED,
    NOTICE_INVALID_MARGIN,
    NOTICE_MISSING_BOOT,
    NOTICE_TREE_SUMMARY_SKIPPED,
    WARNING_TYPE,
)
from pictx_fsm.host.effects import BoundaryResult, CancelResult, CustomDraft, HookResult, Notify
from pictx_fsm.host.events import ModelInfo
from pictx_fsm.host.settings import StaticSettingsSource

TAIL = [MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE]
INCOMING = (CustomDraft(custom_type="other/ext", data={}),)


def _started(**kw: Any) -> Kit:
    kit = Kit.create(**kw)
    kit.start()
    kit.build.user("task")
    return kit


def _types(result: HookResult) -> list[str]:
    if result.value is None:
        return []
    assert isinstance(result.value, BoundaryResult)
    return [d.custom_type for d in result.value.entries]  # type: ignore[union-attr]


def _continues(result: HookResult) -> bool:
    return isinstance(result.value, BoundaryResult) and result.value.continue_ is True


# -- the turn_end commit matrix --------------------------------------------------------------

# Reach each overflow state the way Pi does.
REACH: dict[str, Callable[[Kit], Any]] = {
    "idle": lambda k: None,
    "pending": lambda k: k.overflow_turn(),
    "spent": lambda k: (k.overflow_turn(), k.before_settle()),
    "pending_spent": lambda k: (k.overflow_turn(), k.before_settle(), k.overflow_turn()),
}
# turn kind -> (how to end the turn, resets?, overflow state after, per state before)
KEEP = {"idle": "idle", "pending": "pending", "spent": "spent", "pending_spent": "pending_spent"}
ARM = {
    "idle": "pending",
    "pending": "pending",
    "spent": "pending_spent",
    "pending_spent": "pending_spent",
}
IDLE = dict.fromkeys(KEEP, "idle")


def _disabled(kit: Kit) -> HookResult:
    # White box: /pi-context off clears the chain (R60), so a disabled turn in an armed chain
    # is reached by moving the toggle alone.
    kit.set_toggle("off")
    return kit.turn_end("ok")


TURNS: dict[str, tuple[Callable[[Kit], HookResult], bool, dict[str, str]]] = {
    "aborted": (lambda k: k.turn_end("x", stop="aborted", incoming=INCOMING), False, IDLE),
    "overflow": (lambda k: k.overflow_turn(), False, ARM),
    "error": (lambda k: k.turn_end("", stop="error", error="rate limit: wait"), False, KEEP),
    "disabled": (_disabled, False, IDLE),
    "requested": (lambda k: (k.tool("wipe_memory"), k.turn_end("ok"))[1], True, IDLE),
    "threshold": (lambda k: _due_turn(k), True, IDLE),
}


def _due_turn(kit: Kit, text: str = "ok") -> HookResult:
    """A turn leaving 1000 tokens: the host's usage in the root window, the reply's own usage
    in a reset window (R47, R48)."""
    return kit.turn_end(text, total=WINDOW - 1_000, usage=_usage(WINDOW - 1_000))


def _usage(tokens: int) -> Any:
    from pictx_fsm.host.events import ContextUsage

    return ContextUsage(tokens=tokens, context_window=WINDOW)


@pytest.mark.parametrize("state", sorted(REACH))
@pytest.mark.parametrize("turn", sorted(TURNS))
def test_scenario_turn_end_commit_matrix(turn: str, state: str) -> None:
    # Given the overflow chain in `state`
    kit = _started()
    REACH[state](kit)
    assert kit.configuration("reset_control")["overflow"] == state
    end, resets, after = TURNS[turn]
    # When a turn of this kind ends
    result = end(kit)
    # Then it resets (with continue) only when requested or due, and the chain moves per R23–R27
    assert _continues(result) is resets
    assert (_types(result)[-3:] == TAIL) is resets
    assert kit.configuration("reset_control")["overflow"] == after[state]
    assert kit.configuration("reset_control")["request"] == "none"


# -- abort -----------------------------------------------------------------------------------


def test_scenario_abort_while_streaming_discards_everything_pending() -> None:
    # Given a staged guidance, a pending wipe request and an armed overflow
    kit = _started(tokens=WINDOW - 35_000)
    kit.overflow_turn()
    kit.turn_start()
    kit.context()
    kit.tool("wipe_memory")
    # When the user aborts: aborted turn_end, agent_end (signal aborted), no before_settle,
    # agent_settled
    result = kit.turn_end("partial", stop="aborted", incoming=INCOMING, signal_aborted=True)
    kit.agent_end(signal_aborted=True)
    kit.settled()
    # Then only the other extension's drafts were written: no reset, no reminder, no notice
    assert _types(result) == ["other/ext"] and not _continues(result)
    assert kit.of_type(MARKER_TYPE) == [] and kit.of_type(GUIDANCE_TYPE) == []
    assert kit.notices == []
    config = kit.configuration("reset_control")
    assert (config["request"], config["overflow"]) == ("none", "idle")


# -- the overflow chain ---------------------------------------------------------------------


def test_scenario_overflow_chain_arm_recover_once_spend_settle_clear() -> None:
    kit = _started()
    # Arm: the provider overflows (Pi's own overflow compaction is cancelled silently)
    kit.overflow_turn()
    kit.agent_end()
    assert isinstance(kit.compact("overflow").value, CancelResult) and kit.notices == []
    # Recover once: the settle boundary writes the reset tail and continues
    recovery = kit.before_settle(outcome="error")
    assert _types(recovery) == TAIL and _continues(recovery)
    # The retry runs in the new window (announced at its turn_start) and overflows again:
    # no second reset
    assert kit.turn_start().notices == (
        Notify(message=f"pi-context: memory cleared · {kit.window_id()}", level="info"),
    )
    kit.overflow_turn()
    kit.agent_end()
    assert kit.before_settle(outcome="error").value is None
    # Settlement ends the chain quietly
    assert kit.settled().notices == ()
    assert kit.configuration("reset_control")["overflow"] == "idle"
    # A new prompt starts a fresh chain
    kit.build.user("again")
    kit.overflow_turn()
    assert _continues(kit.before_settle())
    assert len(kit.of_type(MARKER_TYPE)) == 2


# -- queued deferral (R24, R35) --------------------------------------------------------------


def test_scenario_queued_messages_defer_recovery_to_the_queued_turn() -> None:
    kit = _started()
    # An overflow while a steer is queued does not arm
    kit.overflow_turn(pending=1)
    assert kit.configuration("reset_control")["overflow"] == "idle"
    # The queued turn overflows with nothing queued: armed
    kit.overflow_turn()
    # A follow-up is queued at settle time: recovery waits, the flag stays
    assert kit.before_settle(has_pending_messages=True).value is None
    assert kit.configuration("reset_control")["overflow"] == "pending"
    # The queued turn succeeds: the failure is superseded, nothing left to recover
    kit.turn_end("handled the follow-up")
    assert kit.before_settle().value is None
    assert kit.of_type(MARKER_TYPE) == []


def test_scenario_a_queued_turn_that_overflows_again_recovers_at_the_next_settle() -> None:
    kit = _started()
    kit.overflow_turn()
    assert kit.before_settle(pending=1).value is None
    kit.overflow_turn()
    assert _types(kit.before_settle()) == TAIL


# -- reset-construction failure (R29) ------------------------------------------------------


def test_scenario_reset_construction_failure_keeps_drafts_warns_and_does_not_continue() -> None:
    # Given a notes source whose project home fails with a non-errno exception
    notes = InMemoryNotesSource().failing("project", RuntimeError("notes index corrupt"))
    kit = Kit.create(notes=notes, tokens=WINDOW - 10_000)
    kit.build.user("task")
    kit.context()
    # When a due reset (with a staged warning) is built at turn_end
    result = kit.turn_end("ok", incoming=INCOMING)
    # Then: a warning, the incoming and warning drafts kept, no marker, no continue
    assert result.notices == (
        Notify(
            message="pi-context: could not build reset (RuntimeError: notes index corrupt).",
            level="warning",
        ),
    )
    assert _types(result) == ["other/ext", WARNING_TYPE] and not _continues(result)
    # And the same failure during overflow recovery is reported the same way
    kit.turn_start()
    kit.overflow_turn()
    recovery = kit.before_settle(incoming=INCOMING)
    assert _types(recovery) == ["other/ext"] and not _continues(recovery)
    assert recovery.notices[0].message.startswith("pi-context: could not build reset (")


# -- off / on (R60, R61) ---------------------------------------------------------------------


def test_scenario_off_keeps_the_boundary_and_on_restores_the_lifecycle() -> None:
    # Given a reset window with later work
    kit = _started()
    kit.wipe()
    kit.build.user("in the new window")
    kit.take_notices()
    # When switched off
    assert kit.toggle("off").notices[-1].message.startswith("pi-context: off · ")
    # Then the boundary holds and native tools stay blocked on this branch...
    assert kit.project().value.messages[0]["customType"] == BOOT_TYPE  # type: ignore[union-attr]
    assert isinstance(kit.compact("threshold").value, CancelResult)
    assert kit.before_tree(kit.tree.leaf_id).notices[0].message == NOTICE_TREE_SUMMARY_SKIPPED
    # ...but nothing new is written: no reset at the reserve, no reminder, no wipe
    assert _due_turn(kit, "x").value is None
    assert kit.context().value is None
    assert kit.tool_payload("wipe_memory") == {
        "error": "pi-context is off (/pi-context on to enable)"
    }
    # When switched back on, the lifecycle works again
    kit.toggle("on")
    kit.turn_start()
    assert _types(_due_turn(kit, "y"))[-3:] == TAIL


def test_scenario_off_on_a_fresh_root_branch_gives_compact_back() -> None:
    kit = _started()
    kit.toggle("off")
    assert kit.compact("manual").value is None
    kit.toggle("on")
    assert isinstance(kit.compact("manual").value, CancelResult)


# -- /compact (R62) ----------------------------------------------------------------------------


def test_scenario_manual_compact_is_explained_automatic_compaction_is_silent() -> None:
    kit = _started()
    manual = kit.compact("manual")
    assert isinstance(manual.value, CancelResult)
    assert manual.notices == (Notify(message=NOTICE_COMPACT_DISABLED, level="warning"),)
    for reason in ("threshold", "overflow"):
        silent = kit.compact(reason)
        assert isinstance(silent.value, CancelResult) and silent.notices == ()


# -- /wipe-memory in both profiles (R59, D2, D3) -------------------------------------------


@pytest.mark.parametrize("profile", ["0.25.0", "0.25.1"])
def test_scenario_wipe_memory_persists_a_window_and_the_next_prompt_starts_there(
    profile: str,
) -> None:
    # Given a session with history
    kit = _started(profile=profile)
    kit.turn_end("old answer")
    kit.settled()
    # When /wipe-memory runs
    result = kit.wipe()
    window_id = kit.window_id()
    # Then the tail is persisted (0.25.1 with the continuation), announced at once
    expected = [f"custom:{MARKER_TYPE}", f"custom_message:{BOOT_TYPE}"]
    if profile == "0.25.1":
        expected.append(f"custom_message:{CONTINUATION_TYPE}")
    assert kit.branch_types()[-len(expected) :] == expected
    assert result.notices == (
        Notify(message=f"pi-context: memory cleared · {window_id}", level="info"),
    )
    # And the next prompt only shows the new window to the provider, with no second notice
    kit.build.user("new prompt")
    projected = kit.project().value.messages  # type: ignore[union-attr]
    assert projected[0]["details"] == {"windowId": window_id}
    assert kit.turn_start().notices == () and kit.settled().notices == ()


# -- repair refusals (R65, D4) -------------------------------------------------------------


@pytest.mark.parametrize("profile", ["0.25.0", "0.25.1"])
def test_scenario_repair_refuses_after_later_work_and_wipe_memory_recovers(profile: str) -> None:
    # Given a marker whose boot never landed, followed by later conversation
    kit = Kit.create(profile=profile)
    kit.build.marker("pcw:12345678:badbad00")
    kit.build.user("later work")
    # When the session starts, repair refuses silently and requests are cancelled safely
    assert kit.start().effects == ()
    kit.project()
    assert kit.aborts == 1
    # When the user runs /wipe-memory, a fresh complete window exists and requests flow again
    kit.wipe()
    kit.take_notices()
    kit.project()
    assert kit.aborts == 1 and kit.notices == []


# -- projection with a missing boot (R68) ------------------------------------------------


def test_scenario_missing_boot_notice_once_per_window_abort_and_safe_head() -> None:
    kit = Kit.create()
    kit.build.system()
    kit.build.user("erased history")
    kit.build.marker("pcw:12345678:00c0ffee")
    kit.build.user("after the marker")
    # Three requests: each aborted with only the system head, one notice
    for _ in range(3):
        messages = kit.project().value.messages  # type: ignore[union-attr]
        assert [m["role"] for m in messages] == ["system"]
    assert kit.aborts == 3
    assert kit.notice_texts() == [NOTICE_MISSING_BOOT.format(window_id="pcw:12345678:00c0ffee")]
    # After a tree navigation the notice may be given again
    kit.navigate(kit.tree.leaf_id)
    kit.project()
    assert len(kit.notices) == 2


# -- tree-summary suppression (R75) --------------------------------------------------------


def test_scenario_tree_summary_is_suppressed_across_a_reset_window_only() -> None:
    kit = _started()
    fork = kit.build.assistant("first answer")
    kit.wipe()
    kit.build.user("in window")
    leaf_in_window = kit.build.assistant("window answer")
    # Leaving the reset window for the old branch: summary suppressed
    assert kit.before_tree(fork).value is not None
    kit.navigate(fork)
    kit.build.user("plain branch")
    plain = kit.build.assistant("plain answer")
    kit.navigate(kit.tree.branch()[-3].id)
    # Between two plain root branches: the native summary is kept
    assert kit.before_tree(plain).value is None
    # Returning into the reset window: suppressed again
    assert kit.before_tree(leaf_in_window).value is not None


# -- settings precedence and invalid margins (R41–R46) -------------------------------------


def _write(path: Path, settings: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))


def test_scenario_settings_precedence_and_invalid_margin_warnings(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    _write(
        agent / "settings.json",
        {
            "compaction": {
                "reserveTokens": 20_000,
                "modelOverrides": {"faux/big": {"reserveTokens": 60_000}},
            },
            "pi-context": {"reminderMarginTokens": "lots"},
        },
    )
    _write(project / ".pi" / "settings.json", {"compaction": {"reserveTokens": 30_000}})
    kit = Kit.create(tokens=WINDOW - 25_000, settings=pi_file_settings(agent))
    kit.ctx = attrs.evolve(kit.ctx, cwd=str(project), project_trusted=True)
    # session_start resolves the policy: the invalid margin is reported once
    kit.start()
    kit.build.user("x")
    assert kit.notice_texts() == [NOTICE_INVALID_MARGIN]
    # The trusted project's reserve (30000) wins over the global one (20000): 25000 left resets
    assert _continues(kit.turn_end("a"))
    # Later decisions in the same transition period do not repeat the warning
    kit.turn_start()
    kit.context()
    assert kit.notice_texts().count(NOTICE_INVALID_MARGIN) == 1
    # A model change is a transition: the warning shows once more, and the model override wins
    big = ModelInfo(provider="faux", id="big", context_window=WINDOW)
    kit.ctx = attrs.evolve(kit.ctx, model=big)
    kit.model_select(big)
    kit.build.user("y")
    assert _continues(kit.turn_end("b", total=WINDOW - 55_000))
    assert kit.notice_texts().count(NOTICE_INVALID_MARGIN) == 2
    # An untrusted project contributes nothing: the global reserve (20000) applies
    kit.ctx = attrs.evolve(
        kit.ctx, model=ModelInfo(provider="faux", id="faux-1"), project_trusted=False
    )
    kit.navigate(kit.tree.leaf_id)
    assert kit.turn_end("c", total=WINDOW - 25_000).value is None


def test_scenario_notes_failures_warn_once_per_window_but_never_block() -> None:
    kit = Kit.create(notes=InMemoryNotesSource().failing("agent", errno.EACCES))
    kit.start()
    kit.build.user("x")
    kit.tool_turn("wipe_memory")
    kit.turn_start()
    warnings = [n for n in kit.notices if "notes index incomplete" in n.message]
    assert len(warnings) == 2
    assert kit.notices[-1].message.startswith("pi-context: memory cleared · ")
    assert ROOT_ID in kit.runtime.state.notes_notified


def test_scenario_a_static_settings_source_is_live() -> None:
    source = StaticSettingsSource(global_settings={})
    kit = _started(settings=source, tokens=WINDOW - 40_000)
    assert kit.turn_end("a").value is None
    kit.runtime.settings = StaticSettingsSource(
        global_settings={"compaction": {"reserveTokens": 50_000}}
    )
    assert _continues(kit.turn_end("b"))
