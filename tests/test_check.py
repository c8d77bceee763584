"""``pictx-fsm check``: every action sequence of an alphabet up to a depth, breadth first,
deduplicated on canonical states; the shortest counterexample as a trace ``replay`` reads.

The full depth-8 runs and every planted fault are benchmarks (``bench/bench_check.py``,
``bench/check_faults.py``); these run small bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attrs import evolve
from test_third_extension import HOME, _cli

from pictx_fsm.cli import main
from pictx_fsm.extensions.pi_context.texts import DEFAULT_PROFILE
from pictx_fsm.testing.check import CheckOptions, check, expand
from pictx_fsm.testing.kit import kit_named, kit_names
from pictx_fsm.testing.trace import load_trace, run_actions


@pytest.fixture
def turn_bell(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.syspath_prepend(str(HOME))
    return "turn_bell:KIT"


def test_check_finds_the_third_extensions_fault_with_a_shortest_trace_replay_reproduces(
    tmp_path: Path,
) -> None:
    # Given turn-bell with its bell rung at the first turn
    # When check explores every host-action sequence of up to four actions
    result = _cli(
        "check",
        "--extension",
        "turn_bell:KIT",
        "--depth",
        "4",
        "--fault",
        "early-bell",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    # Then it fails with the shortest counterexample — a prompt and its settling
    assert result.returncode == 1, result.stdout + result.stderr
    assert "shortest counterexample: 2 actions" in result.stdout
    trace = tmp_path / "check-turn-bell-early-bell.json"
    assert [a["action"] for a in json.loads(trace.read_text())["actions"]] == ["prompt", "settle"]
    # And replay reproduces it
    replay = _cli("replay", str(trace))
    assert replay.returncode == 1 and "reproduces the recorded failure" in replay.stdout


def test_a_clean_check_reports_states_transitions_depth_speed_and_unreached_transitions(
    tmp_path: Path,
) -> None:
    result = _cli("check", "--extension", "turn_bell:KIT", "--depth", "3", "--quiet")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "depth 3/3 complete: 58 distinct states" in out
    assert "transitions, " in out and "states/s" in out
    # The bell rings after three turns, the third turn needs six actions: named, not reached
    assert "not reached: turn_bell:turn_bell:counting:turn_end:1" in out
    assert "result         OK" in out


def test_breadth_first_search_deduplicates_what_sampling_would_run_again(turn_bell: str) -> None:
    # Given the host alphabet (8 actions) to depth 3: 1 + 8 + 64 + 512 sequences
    kit = kit_named(turn_bell)
    report = check(kit, CheckOptions(depth=3))
    [search] = report.searches
    # Then far fewer distinct states are expanded, and every state is expanded once:
    # each explored state but the last layer contributes one transition per action
    assert search.complete and search.layers == [1, 4, 13, 40]
    assert search.states == 58 < 1 + 8 + 64 + 512
    assert search.transitions == (1 + 4 + 13) * len(search.actions)


@pytest.mark.parametrize(
    ("fault", "alphabet", "length"),
    [
        ("skip-dedupe", "turns", 2),
        ("drop-queued-message", "turns", 2),
        ("duplicate-queued-message", "turns", 2),
        ("recover-twice", "turns", 3),
        ("announce-uncommitted", "turns", 2),
    ],
)
def test_check_finds_pi_context_faults_no_longer_than_verify_does(
    fault: str, alphabet: str, length: int
) -> None:
    # Given a fault planted in pi-context / When its alphabet is checked to depth 4
    kit = kit_named("pi-context")
    report = check(kit, CheckOptions(depth=4, fault=fault, alphabets=(alphabet,)))
    # Then the violation is the one the fault names, at the shortest depth
    trace = report.counterexample
    assert trace is not None and trace.failure is not None
    assert trace.failure["invariant"] == kit.faults[fault].caught_by
    assert len(trace.actions) == length
    # And the trace replays to the same violation
    assert run_actions(kit, trace.config, trace.actions).describe_failure() == report.violation


def test_check_takes_verifys_default_profile_and_finds_its_shortest_counterexample() -> None:
    # Given repair-after-later-work, which verify reports in three actions on pi-context
    # 0.25.1, the README's default profile (/wipe-memory, a prompt, /pi-context on, then the
    # run's closing settle: all in the repair alphabet)
    kit = kit_named("pi-context")
    fault = "repair-after-later-work"
    options = CheckOptions(depth=4, fault=fault, alphabets=("repair",))
    # When the repair alphabet is checked to depth 4 in the default configuration, and in 0.25.0
    default = check(kit, options)
    older = check(kit, evolve(options, variants={"profile": ("0.25.0",)}))
    # Then the default is 0.25.1 and finds three actions, as verify (/wipe-memory, a prompt,
    # then /pi-context on, judged at rest); 0.25.0 has none within four
    trace = default.counterexample
    assert trace is not None and trace.failure is not None
    assert trace.config.profile == DEFAULT_PROFILE.value == "0.25.1"
    assert trace.failure["invariant"] == kit.faults[fault].caught_by
    names = [type(a).__name__ for a in trace.actions]
    assert names == ["WipeCommand", "Prompt", "Toggle"]
    assert older.counterexample is None


def test_check_finds_context_management_faults_shorter_than_verify() -> None:
    kit = kit_named("context-management")
    for fault, verify_length in (
        ("refused-write-changes-store", 3),
        ("background-in-cooldown", 10),
    ):
        report = check(kit, CheckOptions(depth=3, fault=fault, alphabets=("notes",)))
        assert report.counterexample is not None, fault
        assert len(report.counterexample.actions) <= verify_length


def test_a_state_reached_twice_is_expanded_once_and_noops_merge_with_their_parent() -> None:
    # Given pi-context's turns alphabet: a steer while idle changes nothing
    kit = kit_named("pi-context")
    options = CheckOptions(depth=1)
    config = kit.check_configs(options.settings(kit))[0]
    alphabet = kit.alphabets()["turns"]
    steer = next(i for i, a in enumerate(alphabet) if type(a).__name__ == "Steer")
    # When the initial state and the steer from it are expanded
    root = expand(kit, config, alphabet, ())
    noop = expand(kit, config, alphabet, (steer,))
    # Then they are the same canonical state
    assert not noop.applied and noop.digest == root.digest


def test_bad_check_options_exit_2_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for args, message in (
        (["--depth", "-1"], "--depth must be between 0 and 64"),
        (["--extension", "pi-context", "--alphabet", "nope"], "has no alphabet 'nope'"),
        (["--fault", "no-such-fault"], "no such planted fault"),
    ):
        assert main(["check", *args]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1


def test_check_says_how_to_install_ray_when_it_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    for command in ("check", "verify"):
        assert (
            main(
                [command, "--extension", "pi-context", "--ray", "--no-contracts"][
                    : 4 if command == "check" else 5
                ]
            )
            == 2
        )
        err = capsys.readouterr().err
        assert "pip install 'pictx-fsm[ray]'" in err and err.count("\n") == 1


def test_a_check_counterexample_is_a_trace_of_the_generic_format(tmp_path: Path) -> None:
    result = _cli(
        "check",
        "--extension",
        "pi-context",
        "--alphabet",
        "turns",
        "--depth",
        "3",
        "--fault",
        "drop-queued-message",
        "--out",
        str(tmp_path),
        "--quiet",
    )
    assert result.returncode == 1, result.stderr
    trace = load_trace(tmp_path / "check-pi-context-drop-queued-message.json")
    assert trace.extension == "pi-context"
    assert [type(a).__name__ for a in trace.actions] == ["Prompt", "Steer"]


def test_the_docs_name_every_alphabet_of_every_kit(turn_bell: str) -> None:
    # docs/check.md states each alphabet: every one a kit supplies has its row
    text = (Path(__file__).resolve().parents[1] / "docs" / "check.md").read_text()
    for name in (*kit_names(), turn_bell):
        for alphabet, actions in kit_named(name).alphabets().items():
            row = next((line for line in text.splitlines() if f"| `{alphabet}` |" in line), "")
            listed = row.rstrip(" |").rsplit("|", 1)[-1]
            assert listed.count("`") == 2 * len(actions), (name, alphabet, listed)


def test_a_narrow_region_is_explored_to_its_horizon_unless_it_is_named(turn_bell: str) -> None:
    # Given turn-bell with a second, narrow alphabet whose horizon is one action
    from pictx_fsm.testing.actions import HOST_ALPHABET
    from pictx_fsm.testing.kit import Regions

    base = type(kit_named(turn_bell))

    class Narrowed(base):  # type: ignore[valid-type,misc]
        def regions(self) -> Regions:
            return Regions(
                alphabets={"host": HOST_ALPHABET, "narrow": HOST_ALPHABET[:3]},
                horizons={"narrow": 1},
            )

    kit = Narrowed()
    # When every alphabet is explored to depth 3
    every = check(kit, CheckOptions(depth=3))
    # Then the broad one goes to depth 3 and the narrow one stops, complete, at its horizon
    depths = {s.alphabet: (s.depth, s.bound, s.complete) for s in every.searches}
    assert depths == {"host": (3, 3, True), "narrow": (1, 1, True)}
    # And named, the narrow one is explored to the depth asked
    named = check(kit, CheckOptions(depth=3, alphabets=("narrow",)))
    assert [(s.depth, s.bound) for s in named.searches] == [(3, 3)]
    assert named.searches[0].states > every.searches[1].states


def test_a_horizon_names_an_alphabet_of_its_table() -> None:
    from pictx_fsm.testing.kit import Regions

    with pytest.raises(ValueError, match="no alphabet 'lnes'"):
        Regions(alphabets={"lines": ()}, horizons={"lnes": 2})
