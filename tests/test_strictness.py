"""Strictness of the declared lifecycle (issue 3 item 1, 7): illegal events raise, failing
actions leave no trace, and the declarations in ``models/`` decide the behaviour."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lifecycle_kit import Kit, audits_verify  # noqa: F401

from pictx_fsm.errors import IllegalEventError
from pictx_fsm.extensions.pi_context.lifecycle import (
    ACTIONS,
    FACTS,
    Fact,
    FactEnv,
    Facts,
    build_lifecycle,
    load_lifecycle,
)
from pictx_fsm.extensions.pi_context.notes import InMemoryNotesSource
from pictx_fsm.host.events import AgentSettled
from pictx_fsm.machines import load_models, models_dir

MODELS = models_dir() / "pi_context"


def _copy_models(tmp_path: Path, edit: Callable[[str], str] | None = None, name: str = "") -> Path:
    """A copy of ``models/`` with one document edited."""
    target = tmp_path / "models"
    shutil.copytree(MODELS, target)
    if edit is not None:
        path = target / f"{name}.yaml"
        original = path.read_text()
        edited = edit(original)
        assert edited != original, "the edit must change the document"
        path.write_text(edited)
    return target


def _facts(kit: Kit) -> Facts:
    env = FactEnv(
        event=AgentSettled(),
        ctx=kit.ctx,
        state=kit.runtime.state,
        services=kit.runtime.services,
        policy=lambda: pytest.fail("no policy needed"),
        extras={},
        planned_commits=frozenset(),
    )
    return Facts(env)


# -- illegal events ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "machine", ["reset_control", "budget", "boot_repair", "projection", "toggle"]
)
def test_an_unknown_machine_event_raises_illegal_event_error(machine: str) -> None:
    # Given a started runtime
    kit = Kit.create()
    kit.start()
    compiled = kit.runtime.lifecycle.machines[machine]
    # When a machine is sent an event its declaration does not know
    with pytest.raises(IllegalEventError, match="no_such_event"):
        compiled.step(kit.runtime.configuration(machine), "no_such_event", _facts(kit))


def test_an_event_the_runtime_raises_but_the_model_does_not_declare_raises(tmp_path: Path) -> None:
    # Given models whose projection calls its `start` event `restart`
    models = _copy_models(
        tmp_path, lambda text: text.replace("{event: start,", "{event: restart,"), "projection"
    )
    kit = Kit.create(lifecycle=load_lifecycle(models))
    state = kit.runtime.state
    # When session_start raises projection.start
    with pytest.raises(IllegalEventError, match="start"):
        kit.start()
    # Then nothing moved and nothing was audited
    assert kit.runtime.state == state and kit.audit.records == []


def test_a_declared_event_without_an_enabled_transition_raises(tmp_path: Path) -> None:
    # Given models where guidance_idle has no fallback for `context`
    fallback = "              - {event: context, target: guidance_idle}\n"
    models = _copy_models(tmp_path, lambda text: text.replace(fallback, "", 1), "budget")
    kit = Kit.create(lifecycle=load_lifecycle(models), tokens=1_000)
    kit.start()
    state = kit.runtime.state
    # When a request with plenty of room arrives (no guard holds)
    with pytest.raises(IllegalEventError, match="guidance"):
        kit.context()
    # Then the runtime's configuration is unchanged
    assert kit.runtime.state == state


def test_every_ignored_event_is_an_audited_self_transition() -> None:
    # Given a fresh runtime, an event that changes nothing (turn_start)
    kit = Kit.create()
    kit.start()
    kit.turn_start()
    record = kit.audit.records[-1]
    # Then each declaring region fired an explicit self-transition
    fired = [t for step in record["steps"] for t in step["transitions"]]
    assert fired and all(t["source"] == t["target"] for t in fired)
    assert {t["region"] for t in fired} == {"notice", "guidance", "warning"}


# -- failing actions --------------------------------------------------------------------------


def _boom(name: str) -> Any:
    def boom(*_: Any) -> Any:
        raise RuntimeError(f"{name} failed")

    return boom


def _with_failing_action(name: str) -> Any:
    return build_lifecycle(load_models(MODELS), MODELS, actions={**ACTIONS, name: _boom(name)})


def _with_failing_fact(name: str) -> Any:
    facts = {**FACTS, name: Fact(name=name, compute=_boom(name), doc="fails")}
    return build_lifecycle(load_models(MODELS), MODELS, facts=facts)


def test_a_failing_action_does_not_leave_the_machine_in_the_target_state() -> None:
    # Given an action report_requested that raises
    lifecycle = _with_failing_action("report_requested")
    kit = Kit.create(lifecycle=lifecycle)
    kit.start()
    state = kit.runtime.state
    records = len(kit.audit.records)
    # When wipe_memory fires the none → explicit transition
    with pytest.raises(RuntimeError, match="report_requested failed"):
        kit.tool("wipe_memory")
    # Then the request region is still `none`, and no record was written
    assert kit.runtime.state == state
    assert kit.configuration("reset_control")["request"] == "none"
    assert len(kit.audit.records) == records


def test_a_failing_guard_propagates_and_changes_nothing() -> None:
    lifecycle = _with_failing_fact("manual_compaction")
    kit = Kit.create(lifecycle=lifecycle)
    kit.start()
    state = kit.runtime.state
    with pytest.raises(RuntimeError, match="manual_compaction failed"):
        kit.compact("manual")
    assert kit.runtime.state == state


def test_a_failure_in_a_later_machine_event_rolls_back_the_whole_hook() -> None:
    # Given a notes home failing with a non-errno error (a boot cannot be rendered) and
    # pending state that session_start would clear
    kit = Kit.create(notes=InMemoryNotesSource().failing("project", TypeError("bad notes")))
    kit.tool("wipe_memory")
    kit.overflow_turn()
    state = kit.runtime.state
    # When session_start clears budget and lifecycle, then fails rendering the root boot
    with pytest.raises(TypeError, match="bad notes"):
        kit.start()
    # Then every machine, and the data its states hold, is as before the hook
    assert kit.runtime.state is state


def test_a_wipe_command_that_cannot_render_its_boot_writes_nothing() -> None:
    kit = Kit.create(notes=InMemoryNotesSource().failing("model", ValueError("no")))
    kit.tool("wipe_memory")
    state = kit.runtime.state
    with pytest.raises(ValueError, match="no"):
        kit.wipe()
    assert kit.runtime.state == state and kit.tree.entries == []


# -- the declarations decide ------------------------------------------------------------------


def test_changing_a_transition_in_a_copied_model_changes_the_behaviour(tmp_path: Path) -> None:
    # Given the shipped models: a tree summary without any marker is kept
    shipped = Kit.create()
    shipped.start()
    first = shipped.build.user("q")
    assert shipped.before_tree(first).value is None
    # When the toggle model suppresses every wanted summary while on (no Python change)
    models = _copy_models(
        tmp_path,
        lambda text: text.replace(
            "{event: tree_summary, target: on, cond: wants_summary and marker_across,",
            "{event: tree_summary, target: on, cond: wants_summary,",
            1,
        ),
        "toggle",
    )
    edited = Kit.create(lifecycle=load_lifecycle(models))
    edited.start()
    first = edited.build.user("q")
    # Then the runtime follows the edited declaration, and the audit names the new models
    assert edited.before_tree(first).value is not None
    assert edited.audit.records[-1]["models"] != shipped.audit.records[-1]["models"]


def test_retargeting_a_transition_changes_what_wipe_memory_does(tmp_path: Path) -> None:
    # Given a model where a second wipe_memory call withdraws the pending request
    models = _copy_models(
        tmp_path,
        lambda text: text.replace(
            "{event: request, target: explicit, cond: enabled, before: report_already_pending}",
            "{event: request, target: none, cond: enabled, before: report_already_pending}",
            1,
        ),
        "reset_control",
    )
    # Then two calls in one batch reset with the shipped models and not with the edited ones
    for path, resets in ((MODELS, True), (models, False)):
        kit = Kit.create(lifecycle=load_lifecycle(path))
        kit.start()
        kit.build.user("x")
        value = kit.tool_turn("wipe_memory", "wipe_memory").value
        assert (value is not None) is resets
