"""The bridge's degraded mode in the model session: the runtime can be killed, and the
invariants ``pictx-fsm verify`` checks — no erased history after a marker first — still hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import audit_file
from pictx_fsm.extensions.pi_context.kit.actions import (
    Action,
    Compact,
    KillRuntime,
    Navigate,
    Prompt,
    Script,
    Settle,
    Toggle,
    WipeCommand,
    action_from_json,
    action_to_json,
)
from pictx_fsm.extensions.pi_context.kit.invariants import InvariantSuite
from pictx_fsm.extensions.pi_context.kit.kit import KIT
from pictx_fsm.extensions.pi_context.kit.scenarios import SCENARIOS
from pictx_fsm.extensions.pi_context.kit.strategies import host_actions, world_configs
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig, scenario_config
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    MARKER_TYPE,
    NOTICE_MISSING_BOOT,
    WARNING_TYPE,
)
from pictx_fsm.hosts.pi import lease, texts
from pictx_fsm.hosts.pi.connection import connection_spec
from pictx_fsm.hosts.pi.twin import BridgeTwin
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.testing.trace import run_actions


def run(actions: list[Action], config: WorldConfig | None = None) -> World:
    world = World(config or WorldConfig())
    suite = InvariantSuite()
    for action in actions:
        world.apply(action)
        assert suite.check(world) == [], action
    world.apply(Settle())
    assert suite.check(world) == []
    return world


def twin(world: World) -> BridgeTwin:
    assert isinstance(world.extension, BridgeTwin)
    return world.extension


def notices(world: World) -> list[str]:
    return [n.message for n in world.session.log.notices]


WIPE_TURN: list[Action] = [
    Prompt(chars=200),
    Script(reply="text", chars=300),
    Settle(),
    Prompt(chars=200),
    Script(reply="tools", tools=("wipe_memory",)),
    Script(reply="text", chars=100),
    Settle(),
]


def test_a_killed_runtime_is_restarted_with_the_session_and_told_once() -> None:
    # Given a window reset by the model, then the runtime killed between turns
    world = run([*WIPE_TURN, KillRuntime(), Prompt(chars=100), Script(reply="text")])
    bridge = twin(world)
    # Then the next hook saw the fault, a new runtime was started and resynchronised, and the
    # user was told once
    assert [t.target for t in bridge.connection.history] == [
        "starting", "ready", "restarting", "starting", "ready",
    ]  # fmt: skip
    assert len(bridge.runtimes) == 2
    assert sum(n.startswith("pi-context: the lifecycle server") for n in notices(world)) == 1


def test_a_runtime_killed_in_a_wipe_batch_tells_the_model_its_reset_was_lost() -> None:
    # Given a wipe_memory answered rollover_requested, and the runtime killed before turn_end
    world = World(WorldConfig())
    for action in [Prompt(chars=100), Script(reply="tools", tools=("wipe_memory",))]:
        world.apply(action)
    session = world.session
    while not any(e.name == "tool_execution_end" for e in session.log.events):
        assert session.step() is not None
    world.apply(KillRuntime())
    world.apply(Script(reply="text"))
    world.apply(Settle())
    # Then no reset was committed, the notice says it was lost, and the model got the message
    types = [getattr(e, "custom_type", None) for e in session.entries]
    assert MARKER_TYPE not in types
    assert any(texts.LOST_RESET in n for n in notices(world))
    assert texts.BRIDGE_NOTICE_TYPE in types
    assert InvariantSuite().check(world) == []


def test_R65_D4_a_restart_at_tree_navigation_repairs_a_bare_marker_once() -> None:
    # Given /wipe-memory (marker → boot), then the runtime killed; the navigation's
    # session_before_tree finds it dead, so the restart comes at session_tree, on the bare
    # marker the user navigated to (the counterexample of the derandomized stateful test)
    world = World(WorldConfig(profile="0.25.0", context_window=28_000, reserve_tokens=500,
                              reminder_margin=12_800, keep_recent_tokens=500))  # fmt: skip
    for action in [WipeCommand(), KillRuntime(), Navigate(index=-2)]:
        world.apply(action)
    # Then the resynchronised runtime repaired the boot at once (as the bridge applies its
    # resync), so session_tree found the tail intact: one boot under the marker, not two
    [marker] = [e for e in world.session.entries if getattr(e, "custom_type", None) == MARKER_TYPE]
    children = [e for e in world.session.tree.branch() if e.parent_id == marker.id]
    assert [getattr(e, "custom_type", None) for e in children] == [BOOT_TYPE]
    assert world.session.leaf_id == children[0].id
    assert [t.target for t in twin(world).connection.history][-3:] == [
        "restarting", "starting", "ready"
    ]  # fmt: skip
    assert InvariantSuite().check(world) == []


def test_a_permanently_dead_runtime_degrades_and_requests_stay_cut_at_the_window() -> None:
    # Given a reset window, then a runtime that can never start again
    actions: list[Action] = [*WIPE_TURN, KillRuntime(permanent=True)]
    for serial in range(5):
        actions += [Prompt(chars=100 + serial), Script(reply="text")]
    world = run([*actions, Settle(), Toggle(arg="")])
    bridge = twin(world)
    # Then the twin gave up after its restarts (one notice when the fault was found, one
    # when it gave up), /pi-context says degraded, and every request after the marker was
    # cut at the boot (the invariants above held after every action)
    assert bridge.connection.state == "degraded"
    said = notices(world)
    assert sum(n.startswith("pi-context: the lifecycle server") for n in said) == 2
    assert said[-1].startswith("pi-context: degraded · stopped (exit killed) · Pi 0.87.1: ")
    last = world.session.log.requests[-1].messages
    assert any(m.get("role") == "user" and BOOT_TYPE not in str(m) for m in last)


def test_a_degraded_bridge_still_refuses_native_compaction_on_a_marked_branch() -> None:
    # Given a reset window, then a runtime that can never start again
    actions = [*WIPE_TURN, KillRuntime(permanent=True), Prompt(chars=3000),
               Script(reply="text", chars=3000), Settle(), Compact()]  # fmt: skip
    world = run(actions, WorldConfig(keep_recent_tokens=500))
    # Then /compact was cancelled by the bridge alone (R62): no compaction after the marker
    # (the invariants, off_keeps_boundary among them, held after every action)
    types = [e.type for e in world.session.entries]
    assert "compaction" not in types[types.index("custom") :]
    assert twin(world).connection.state == "degraded"


def test_a_degraded_twin_answers_every_notes_tool_with_a_clear_error_result() -> None:
    # Given a runtime that can never start again, then a model calling a notes tool
    write = Script(reply="tools", tools=("notes_write",),
                   arguments=('{"address": "a.md", "content": "x"}',))  # fmt: skip
    world = run([*WIPE_TURN, KillRuntime(permanent=True), write, Prompt(chars=50)])
    # Then the call is an error result naming the unavailable server, as the bridge's
    [result] = [
        e.message.raw for e in world.session.entries
        if isinstance(e, MessageEntry) and e.message.raw.get("toolName") == "notes_write"
    ]  # fmt: skip
    assert result["isError"] is True
    assert result["content"][0]["text"] == texts.TOOL_UNAVAILABLE.format(
        state=f"degraded: {texts.FAULT_EXITED.format(code='killed')}", tool="notes_write"
    )
    assert not any(p.is_file() and p.name == "a.md" for p in world.notes.root.rglob("*"))


def test_the_twin_follows_only_declared_transitions() -> None:
    # Given a run through every connection state
    world = run([*WIPE_TURN, KillRuntime(), Prompt(chars=50), Script(reply="text"),
                 KillRuntime(permanent=True), Prompt(chars=50), Script(reply="text"),
                 Prompt(chars=50), Script(reply="text"), Prompt(chars=50)])  # fmt: skip
    declared = {t.id for t in connection_spec().transitions}
    fired = {t.transition_id for c in twin(world).connections for t in c.history}
    # Then each transition it took is one of the machine's
    assert fired <= declared and len(fired) >= 6


def test_kill_runtime_is_a_replayable_action() -> None:
    assert action_from_json(action_to_json(KillRuntime(permanent=True))) == KillRuntime(
        permanent=True
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=world_configs(),
    actions=st.lists(
        st.one_of(host_actions(), st.builds(KillRuntime, permanent=st.booleans())),
        max_size=25,
    ),
)
def test_no_invariant_breaks_when_runtimes_die_anywhere(
    config: WorldConfig, actions: list[Action]
) -> None:
    # Given generated host actions with runtime deaths anywhere in them
    # Then every invariant holds after every action (run() checks)
    run(actions, config)


# -- a dead lifecycle repairs nothing (issue 14: seeds 3 and 5 with the kill group) -----------


def _scenario(name: str) -> tuple[Action, ...]:
    return next(s for s in SCENARIOS if s.name == name).actions


def _after_marker(world: World) -> list[Any]:
    """The forked branch from its reset marker on."""
    branch = world.session.tree.branch()
    at = next(i for i, e in enumerate(branch) if getattr(e, "custom_type", None) == MARKER_TYPE)
    return list(branch[at:])


@pytest.mark.parametrize("profile", ["0.25.0", "0.25.1"])
def test_r68_a_dead_lifecycle_forked_onto_a_marker_aborts_the_prompt_and_audit_tells(
    profile: str, tmp_path: Path
) -> None:
    # Given a committed reset, the runtime dead for good, a fork onto the marker and a prompt
    run = run_actions(
        KIT, scenario_config(profile), _scenario("a-dead-lifecycle-forks-onto-a-marker")
    )
    # Then no invariant breaks: nothing is running to complete the forked tail, and the
    # degraded mode's promise, no erased history, holds: the request is aborted (R68)
    assert not run.failed, run.describe_failure()
    world = run.world
    assert world.lifecycle_down
    prompt = _after_marker(world)[1]
    assert isinstance(prompt, MessageEntry) and prompt.message.role == "user"
    missing_boot = NOTICE_MISSING_BOOT.split("{", 1)[0]
    assert any(n.startswith(missing_boot) for n in notices(world))
    # And the audit of the forked file records the incomplete window honestly
    path = tmp_path / "forked.jsonl"
    path.write_text(world.session.jsonl(), encoding="utf-8")
    assert "boot_missing" in audit_file(path, session_checks(profile)).kinds()


def test_r67_a_dead_lifecycle_forked_onto_a_boot_sends_the_window_from_its_boot() -> None:
    # Given a committed reset (0.25.1: marker, boot, continuation), the runtime dead for good,
    # a fork onto the boot and a prompt
    run = run_actions(
        KIT, scenario_config("0.25.1"), _scenario("a-dead-lifecycle-forks-onto-a-boot")
    )
    # Then no invariant breaks, though no continuation follows the boot
    assert not run.failed, run.describe_failure()
    _marker, boot, prompt = _after_marker(run.world)[:3]
    assert getattr(boot, "custom_type", None) == BOOT_TYPE
    assert isinstance(prompt, MessageEntry) and prompt.message.role == "user"
    # And the provider saw the system prompt, the boot and the prompt: cut at the boot (R67)
    sent = run.world.session.log.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    assert sent[1]["content"] == [{"type": "text", "text": boot.content}]


def test_a_lifecycle_that_restarts_still_completes_the_forked_tail() -> None:
    # Given the same fork onto the marker, with the runtime killed only for a moment
    actions = [
        KillRuntime(permanent=False) if isinstance(a, KillRuntime) else a
        for a in _scenario("a-dead-lifecycle-forks-onto-a-marker")
    ]
    # When it runs
    run = run_actions(KIT, scenario_config("0.25.1"), actions)
    # Then the restarted runtime repairs the fork: the marker is followed by its boot, and
    # the tail checks apply (the lifecycle is not down)
    assert not run.failed, run.describe_failure()
    assert not run.world.lifecycle_down
    assert getattr(_after_marker(run.world)[1], "custom_type", None) == BOOT_TYPE


# -- the lease on quiet hooks (pictx_fsm.hosts.pi.lease) ---------------------------------------

QUIET_TURNS: list[Action] = [
    action
    for index in range(4)
    for action in (Prompt(chars=200), Script(reply="text", chars=300), Settle())
]


def test_quiet_turns_are_answered_under_a_lease_the_runtime_agrees_with() -> None:
    # Given quiet turns in a large window
    world = run(QUIET_TURNS)
    bridge = twin(world)
    # Then after the first awaited answer the twin answered the provider requests and the
    # turn ends itself, and the runtime decided every one the same way
    assert {"context", "context_with_system", "turn_end"} <= set(bridge.leased)
    assert bridge.disagreements == []


def test_R51_a_window_filling_up_ends_the_lease_before_the_warning_line() -> None:
    # Given leased turns, then a prompt that fills a small window past the warning line
    # (R51: remaining ≤ reserve 2000 + 12288 stages the final warning at context)
    config = WorldConfig(context_window=60000)
    world = run([*QUIET_TURNS, Prompt(chars=190000), Script(reply="text"), Settle()], config)
    bridge = twin(world)
    # Then the warning was committed (the lifecycle decided it, not a lease), and no leased
    # answer disagreed with the runtime
    types = [getattr(e, "custom_type", None) for e in world.session.entries]
    assert WARNING_TYPE in types and "context" in bridge.leased
    assert bridge.disagreements == []


def test_a_lease_with_a_wrong_limit_is_caught_by_verify_s_invariant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given leases granted without a limit (a wrong derivation of R50–R52)
    monkeypatch.setattr(lease, "token_limit", lambda *args: None)
    world = World(WorldConfig(context_window=60000))
    suite = InvariantSuite()
    # When a prompt fills the window past the warning line under such a lease
    for action in [*QUIET_TURNS, Prompt(chars=190000), Script(reply="text"), Settle()]:
        world.apply(action)
    # Then the runtime decided otherwise, and the leases_agree invariant says so
    found = [v for v in suite.check(world) if v.invariant == "leases_agree"]
    assert found and "staged or requested" in found[0].message
    assert texts.NOTICE_LEASE_BROKEN.split("(")[0] in " ".join(notices(world))
