"""The CrossHair contract check: the decision functions' contracts hold, and the check can
fail (a planted bug is reported with its counterexample)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pictx_fsm.extensions.pi_context.kit.kit import KIT
from pictx_fsm.testing.contracts import check_contracts, contract_targets

CONTRACT_MODULES = KIT.contract_modules

PLANTED = Path(__file__).parent / "fixtures" / "contracts" / "planted_bug.py"


def test_every_decision_module_states_contracts() -> None:
    # Given the modules that decide (tail, window ids, thresholds, overflow, composer)
    targets = contract_targets(CONTRACT_MODULES)
    # Then each of them carries at least one contracted function
    assert {t.module for t in targets} == set(CONTRACT_MODULES)
    assert {"classify_tail", "mint_window_id", "validate_margin", "compose_entries"} <= {
        t.function for t in targets
    }


@pytest.mark.slow
def test_crosshair_finds_no_counterexample_in_the_decision_functions() -> None:
    # Given the contracted decision functions / When CrossHair checks them (bounded time)
    report = check_contracts(CONTRACT_MODULES, per_condition_timeout=1.0)
    # Then no contract is broken
    assert report.passed, "\n".join(str(c) for c in report.counterexamples) or report.output


def test_crosshair_reports_a_planted_bug_with_its_counterexample() -> None:
    # Given a function whose contract the code breaks for small margins
    # When CrossHair checks it
    report = check_contracts([str(PLANTED)], per_condition_timeout=2.0)
    # Then the violation is reported, naming the line and a concrete counterexample
    assert not report.passed
    assert any("reminder_line(" in c.message for c in report.counterexamples)
