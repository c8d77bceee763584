"""The tools in ``pictx-fsm verify`` (issue 10, items 3 and 4): generated notes and history
calls of every kind, the notes-root boundary checked after every action, and the coverage of
the tools' outcomes beside transition coverage."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.kit.actions import (
    Prompt,
    Script,
    Settle,
    action_from_json,
    action_to_json,
)
from pictx_fsm.extensions.pi_context.kit.invariants import INVARIANT_TYPES
from pictx_fsm.extensions.pi_context.kit.kit import KIT
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import (
    ESCAPES,
    SECRET,
    NotesConfined,
    NotesSandbox,
)
from pictx_fsm.extensions.pi_context.kit.scenarios import SCENARIOS
from pictx_fsm.extensions.pi_context.kit.tool_calls import CALLS, tool_scripts
from pictx_fsm.extensions.pi_context.kit.tool_coverage import (
    OUTCOMES,
    ToolOutcomeCoverage,
    load_exemptions,
    tool_story,
)
from pictx_fsm.extensions.pi_context.kit.world import World, scenario_config
from pictx_fsm.extensions.pi_context.lifecycle import load_lifecycle
from pictx_fsm.extensions.pi_context.tools import HANDLERS
from pictx_fsm.session.entries import MessageEntry
from pictx_fsm.testing.explore import ExploreOptions, explore
from pictx_fsm.testing.trace import (
    TraceFormatError,
    first_difference,
    record_trace,
    run_actions,
    trace_from_json,
)

MODELS = load_lifecycle().directory
EXPECTED_STORY = [
    ("notes_write", "ok"),
    ("notes_write", "refusal"),
    ("notes_write", "error"),
    ("notes_edit", "ok"),
    ("notes_edit", "refusal"),
    ("notes_edit", "error"),
    ("notes_read", "ok"),
    ("notes_read", "refusal"),
    ("notes_read", "error"),
    ("notes_list", "ok"),
    ("notes_list", "refusal"),
    ("notes_list", "error"),
    ("notes_search", "ok"),
    ("notes_search", "refusal"),
    ("notes_search", "error"),
    ("notes_write", "ok"),
    ("history_windows", "ok"),
    ("history_windows", "error"),
    ("history_list", "ok"),
    ("history_list", "refusal"),
    ("history_list", "error"),
    ("history_read", "ok"),
    ("history_read", "refusal"),
    ("history_read", "error"),
    ("history_search", "ok"),
    ("history_search", "refusal"),
    ("history_search", "error"),
]


def tool_calls_of(world: World) -> list[tuple[str, str]]:
    return [
        (record["event"]["name"], record["result"]["value"]["status"])
        for log in world.audits
        for record in log.records
        if record["hook"] == "tool" and record["event"]["name"] in HANDLERS
    ]


# -- the seed story ----------------------------------------------------------------------------


def test_the_seed_story_reaches_every_outcome_of_every_tool_in_order() -> None:
    # Given the seed scenario of the tools in the scenario world
    run = run_actions(KIT, scenario_config("0.25.1"), tool_story())
    # Then every invariant held and each call took the channel it was written for
    assert not run.failed, run.describe_failure()
    assert tool_calls_of(run.world) == EXPECTED_STORY
    # And together they reach every (tool, outcome) pair but the exempted one
    coverage = ToolOutcomeCoverage(
        counts=run.world.tool_outcomes(), exemptions=load_exemptions(MODELS)
    )
    assert coverage.complete and coverage.missing == ()
    assert "notes-and-history-tools" in {scenario.name for scenario in SCENARIOS}


def test_the_story_s_note_survives_its_wipe_in_the_next_boot() -> None:
    run = run_actions(KIT, scenario_config("0.25.0"), tool_story())
    boots = [
        e for e in run.world.session.entries if getattr(e, "custom_type", None) == "pi-context/boot"
    ]
    assert "@project/design.md" in str(boots[-1].content)  # type: ignore[attr-defined]


# -- outcome coverage --------------------------------------------------------------------------


def test_an_outcome_never_reached_fails_unless_exempted_with_a_reason() -> None:
    reached = dict.fromkeys(OUTCOMES, 1)
    del reached["notes_edit:error"]
    coverage = ToolOutcomeCoverage(counts=reached, exemptions={})
    assert coverage.missing == ("notes_edit:error",) and not coverage.complete
    assert "  never reached: notes_edit:error" in coverage.problems()
    exempted = ToolOutcomeCoverage(counts=reached, exemptions={"notes_edit:error": "why"})
    assert exempted.missing == () and exempted.stale_exemptions == () and exempted.complete


def test_an_exempted_outcome_that_is_reached_or_unknown_fails() -> None:
    counts = dict.fromkeys(OUTCOMES, 1)
    stale = ToolOutcomeCoverage(counts=counts, exemptions={"notes_read:ok": "never"})
    assert stale.stale_exemptions == ("notes_read:ok",) and not stale.complete
    unknown = ToolOutcomeCoverage(counts=counts, exemptions={"notes_fly:ok": "no such tool"})
    assert unknown.unknown_exemptions == ("notes_fly:ok",) and not unknown.complete


def test_the_shipped_exemptions_name_real_outcomes_with_reasons() -> None:
    exemptions = load_exemptions(MODELS)
    assert exemptions and set(exemptions) <= set(OUTCOMES)
    assert all(len(reason) > 20 for reason in exemptions.values())


def test_verify_reports_tool_outcome_coverage_beside_transitions() -> None:
    # Given the seed scenarios of one profile and one tiny generated run
    options = ExploreOptions(
        examples=1, steps=1, variants={"profile": ("0.25.1",)}, time_budget=600
    )
    report = explore(KIT, options)
    # Then the report holds the tools' outcomes, complete with the exemption
    lines, failed = KIT.report_lines(report.tallies, report.failed)
    assert not failed
    assert lines[0].startswith("tool outcomes  26/27 (tool, outcome) pairs reached; 1 exempted")
    assert len(lines) == 1 + len(HANDLERS)


# -- the boundary, after every action ------------------------------------------------------------


def test_the_sandbox_plants_links_out_of_the_root_and_a_secret_outside() -> None:
    sandbox = NotesSandbox()
    for link in ESCAPES:
        path = sandbox.root / link
        assert path.is_symlink()
        assert not os.path.realpath(path).startswith(os.path.realpath(sandbox.root))
    assert SECRET in (sandbox.outside / "sentinel.md").read_text()
    base = sandbox.base
    sandbox.close()
    assert not base.exists()


def test_notes_confined_catches_a_write_outside_the_root() -> None:
    # Given a world, and something that writes beside its notes root
    world = World(scenario_config("0.25.1"))
    invariant = NotesConfined()
    assert invariant.check(world) == []
    (world.notes.outside / "stolen.md").write_text("x")
    # Then the invariant names the outside directory
    (violation,) = invariant.check(world)
    assert violation.invariant == "notes_confined" and "outside" in violation.message


def test_notes_confined_catches_the_secret_in_a_tool_result() -> None:
    world = World(scenario_config("0.25.1"))
    invariant = NotesConfined()
    invariant.check(world)
    world.session.store.message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "notes_read",
            "content": [{"type": "text", "text": SECRET}],
            "isError": False,
            "timestamp": 1,
        }
    )
    (violation,) = invariant.check(world)
    assert "secret" in violation.message
    assert NotesConfined in INVARIANT_TYPES


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(batches=st.lists(tool_scripts(), min_size=1, max_size=3))
def test_generated_tool_calls_never_cross_the_notes_root(batches: list[Script]) -> None:
    # Given generated batches of notes and history calls (some with wipe_memory)
    actions = (*batches, Prompt(chars=60), Settle())
    # When the model makes them
    run = run_actions(KIT, scenario_config("0.25.1"), actions)
    # Then every invariant holds after every action, the boundary included
    assert not run.failed, run.describe_failure()
    calls = tool_calls_of(run.world)
    made = sum(1 for batch in batches for name in batch.tools if name in HANDLERS)
    assert len(calls) == made
    # And every call's outcome is a result Pi records: errors are error results
    results = [
        e.message.raw
        for e in run.world.session.entries
        if isinstance(e, MessageEntry) and e.message.raw.get("toolName") in HANDLERS
    ]
    assert [r["isError"] for r in results] == [status == "error" for _, status in calls]


def test_strategies_offer_every_tool() -> None:
    assert set(CALLS) == set(HANDLERS)


# -- traces ------------------------------------------------------------------------------------


def test_a_trace_with_tool_calls_replays_with_the_same_outcomes(tmp_path: Path) -> None:
    # Given the story recorded as a trace (its JSON form, as verify writes it)
    trace, _ = record_trace(KIT, scenario_config("0.25.1"), tool_story())
    actions = [action_from_json(json.loads(json.dumps(action_to_json(a)))) for a in trace.actions]
    # When it is replayed in a fresh world (another temporary notes home)
    replayed = run_actions(KIT, trace.config, actions)
    # Then every decision, tool outcomes included, is the recorded one
    assert trace.decisions is not None
    assert first_difference(trace.decisions, replayed.world.decisions()) is None
    tools = [d["tool"] for d in trace.decisions if "tool" in d]
    assert tools == [f"{name}:{status}" for name, status in EXPECTED_STORY]


@pytest.mark.parametrize("name", sorted(HANDLERS))
def test_every_tool_s_strategy_draws_json_arguments(name: str) -> None:
    @settings(max_examples=10, deadline=None)
    @given(arguments=CALLS[name])
    def draws(arguments: dict[str, object]) -> None:
        assert json.loads(json.dumps(arguments)) == arguments

    draws()


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        ({"tools": ["notes_fly"]}, "unknown tool(s) 'notes_fly'"),
        ({"tools": ["notes_read"], "arguments": ["[1]"]}, "arguments[0] is not the JSON text"),
    ],
)
def test_a_trace_with_a_bad_tool_call_is_refused_naming_the_action(
    script: dict[str, object], problem: str
) -> None:
    trace = record_trace(KIT, scenario_config("0.25.1"), (Settle(),))[0].to_json()
    trace["actions"] = [{"action": "script", "reply": "tools", **script}]
    with pytest.raises(TraceFormatError, match=r"field 'actions\[0\]'") as caught:
        trace_from_json(trace, "t.json")
    assert problem in str(caught.value)
