"""``pictx-fsm verify --extension notesoup``: full transition coverage (or a reasoned
exemption), the migration invariants, and every planted fault caught by the invariant it
names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pictx_fsm.cli import main
from pictx_fsm.extensions.notesoup.kit.faults import FAULTS
from pictx_fsm.extensions.notesoup.kit.invariants import MIGRATION_INVARIANTS, InvariantSuite
from pictx_fsm.extensions.notesoup.kit.kit import KIT
from pictx_fsm.extensions.notesoup.kit.world import NotesoupWorld, scenario_config
from pictx_fsm.testing.coverage import load_exemptions


def _caught(fault: str) -> set[str]:
    """The invariants the seed scenarios see violated with ``fault`` planted."""
    found: set[str] = set()
    for scenario in KIT.scenarios:
        config = scenario_config(0, fault)
        if scenario.world is not None:
            config = scenario.world(config)
        world = NotesoupWorld(config)
        suite = InvariantSuite()
        for action in scenario.actions:
            world.apply(action)
            violations = suite.check(world)
            if violations:
                found.add(violations[0].invariant)
                break
    return found


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_planted_fault_is_caught_by_the_invariant_it_names(fault: str) -> None:
    assert FAULTS[fault].caught_by in _caught(fault)


def test_the_migration_invariants_are_checked() -> None:
    assert set(MIGRATION_INVARIANTS) <= set(KIT.invariant_names)
    assert {"legacy_history_stays_erased", "session_file_audits"} <= set(MIGRATION_INVARIANTS)


def test_the_seed_scenarios_alone_fire_every_transition_not_exempted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # When verify runs the seed scenarios (no time for generated runs)
    code = main(
        ["verify", "--extension", "notesoup", "--time-budget", "1", "--no-contracts", "--quiet"]
    )
    out = capsys.readouterr().out
    # Then every invariant held and no declared transition is missing
    assert code == 0, out
    assert "all held" in out
    assert re.search(r"transitions +\d+/281 declared transitions fired; .* 0 missing", out)


def test_every_exemption_names_the_rule_test_that_decides_it() -> None:
    exemptions = load_exemptions(KIT.machines().directory)
    assert exemptions
    tests = (Path(__file__).parent / "test_notesoup_reducer.py").read_text(encoding="utf-8")
    for transition, reason in exemptions.items():
        named = re.search(r"tested by tests/test_notesoup_reducer\.py::(test_\w+)", reason)
        assert named is not None, transition
        assert f"def {named.group(1)}(" in tests, (transition, named.group(1))
