"""``pictx-fsm check --workers N``: a layer shared among local worker processes is the serial
search, state for state — the same distinct states per depth, transitions, fired
transitions and shortest counterexample (``pictx_fsm.testing.local_check``)."""

from __future__ import annotations

import pytest
from test_third_extension import _cli

from pictx_fsm.testing import local_check
from pictx_fsm.testing.check import CheckOptions, CheckReport, check
from pictx_fsm.testing.kit import kit_named


def _outcome(report: CheckReport) -> object:
    searches = [
        (s.alphabet, s.states, s.transitions, s.layers, s.depth, s.complete, sorted(s.fired))
        for s in report.searches
    ]
    trace = report.counterexample
    actions = None if trace is None else [report.kit.action_to_json(a) for a in trace.actions]
    return searches, report.violation, actions


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("pi-context", CheckOptions(depth=4, alphabets=("turns",))),
        ("pi-context", CheckOptions(depth=4, alphabets=("turns",), fault="recover-twice")),
        ("notesoup", CheckOptions(depth=3, alphabets=("memory", "legacy"))),
    ],
)
def test_two_local_workers_explore_exactly_what_one_process_does(
    name: str, options: CheckOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a kit, an alphabet and a bound (every layer dealt to the workers, however small)
    kit = kit_named(name)
    monkeypatch.setattr(local_check, "SERIAL_BELOW", 0)
    # When the search runs in this process, and with its layers shared by two workers
    serial = check(kit, options)
    with local_check.local_expander(2) as expander:
        shared = check(kit, options, expander=expander)
    # Then both explored the same states, transitions and coverage, and agree on the verdict
    assert _outcome(shared) == _outcome(serial)
    assert serial.searches[0].transitions > 100


def test_the_command_reports_the_same_search_with_one_worker_and_with_two() -> None:
    # Given turn-bell's host alphabet to depth 4 (its deeper layers go to the workers)
    args = ("check", "--extension", "turn_bell:KIT", "--depth", "4", "--quiet")
    # When the command runs in one process and with two workers
    one, two = _cli(*args, "--workers", "1"), _cli(*args, "--workers", "2")
    # Then it reports the same search (its counts; the times differ)
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    assert _counts(one.stdout) and _counts(one.stdout) == _counts(two.stdout)


def _counts(out: str) -> list[str]:
    return [line.split(" transitions")[0] for line in out.splitlines() if "distinct states" in line]
