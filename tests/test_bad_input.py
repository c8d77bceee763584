"""Bad input everywhere (issue 14): each reader answers hostile input with one line and its
documented exit code — never a traceback, a hang or unbounded memory — and loses nothing."""

from __future__ import annotations

import json
import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pictx_fsm.cli import main
from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import audit_file
from pictx_fsm.errors import PictxError
from pictx_fsm.extensions.pi_context.kit.actions import Prompt, Script, Settle
from pictx_fsm.extensions.pi_context.kit.kit import KIT
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig
from pictx_fsm.host.events import ModelInfo
from pictx_fsm.hosts.model.errors import HostSettingsError
from pictx_fsm.hosts.model.settings import CompactionSettings, HostSettings
from pictx_fsm.session.jsonl import dumps_entry, parse_session, read_session
from pictx_fsm.session.problems import ProblemKind
from pictx_fsm.testing.trace import record_trace, trace_from_json

HEADER = '{"type":"session","version":3,"id":"s-1","timestamp":"t","cwd":"/w"}'


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _user(entry_id: str, parent: str | None) -> str:
    message = {"role": "user", "content": "hi", "timestamp": 1}
    entry = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t"}
    return json.dumps({**entry, "message": message})


def _one_line_error(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


# -- lone surrogates -------------------------------------------------------------------------


def _surrogate_session(tmp_path: Path) -> Path:
    path = tmp_path / "cut-emoji.jsonl"
    entry = {
        "type": "message",
        "id": "e1\ud83d",
        "parentId": "gone\udc00",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "a cut emoji \ud83d here", "timestamp": 1},
    }
    path.write_text(HEADER + "\n" + json.dumps(entry) + "\n", encoding="ascii")
    return path


@pytest.mark.parametrize(
    "argv", [["inspect"], ["inspect", "--json"], ["audit"], ["audit", "--json"]]
)
def test_lone_surrogates_are_read_and_printed_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    # Given a session file where JSON.stringify wrote a lone surrogate (a cut emoji)
    path = _surrogate_session(tmp_path)
    # When it is inspected or audited
    code, out, _ = _run(capsys, *argv, str(path))
    # Then it reads (one finding: the dangling parent) and the ids print as their escapes
    assert code == 1
    assert "e1\\ud83d" in out and "gone" in out
    if "--json" in argv:
        document = json.loads(out)
        assert "e1\ud83d" in json.dumps(document, ensure_ascii=False)


def test_lone_surrogates_round_trip_byte_for_byte(tmp_path: Path) -> None:
    # Given the entry line Pi wrote with a lone surrogate
    path = _surrogate_session(tmp_path)
    written = path.read_text(encoding="ascii").splitlines()[1]
    # When it is read and written back / Then the same JSON value comes out, as valid UTF-8
    entry = read_session(path).entries[0]
    again = dumps_entry(entry)
    again.encode("utf-8")
    assert json.loads(again) == json.loads(written)
    assert "\\ud83d" in again


# -- files that are not files ----------------------------------------------------------------


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize(
    "argv",
    [
        ["inspect"],
        ["audit"],
        ["replay"],
        ["log", "verify"],
        ["diagram", "--trace"],
        ["diagram", "--coverage"],
    ],
)
def test_a_device_behind_a_jsonl_name_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], device: str, argv: list[str]
) -> None:
    # Given a symlink named .jsonl to an endless device
    link = tmp_path / "session.jsonl"
    link.symlink_to(device)
    # When any reader is pointed at it / Then it is refused, exit 2, without reading
    code, out, err = _run(capsys, *argv, str(link))
    assert code == 2
    assert "not a regular file" in out + err


# -- runs of blank lines, cycles, versions ---------------------------------------------------


def test_a_megabyte_of_blank_lines_is_one_problem_in_bounded_memory(tmp_path: Path) -> None:
    # Given 1 MB of blank lines after a header
    path = tmp_path / "blank.jsonl"
    path.write_text(HEADER + "\n" + "\n" * 1_000_000)
    # When it is audited
    tracemalloc.start()
    audit = audit_file(path, session_checks())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # Then the run is one info problem, and memory stayed far below the file's size
    blank = [f for f in audit.findings if f.name == "structure/blank_line"]
    assert [(f.line, f.message) for f in blank] == [
        (2, "1000000 blank lines, 2–1000001 (Pi skips them)")
    ]
    assert audit.exit_code == 0
    assert peak < 2_000_000


def test_a_parent_cycle_is_reported_by_inspect_and_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given entries whose parents loop: e1 → e3 → e2 → e1
    path = tmp_path / "cycle.jsonl"
    entries = [_user("e1", "e3"), _user("e2", "e1"), _user("e3", "e2")]
    path.write_text("\n".join([HEADER, *entries]) + "\n")
    # When it is inspected and audited / Then both name the cycle at its first line
    for command in ("inspect", "audit"):
        code, out, _ = _run(capsys, command, str(path))
        assert code == 1
        assert f"{path}:2: error:" in out
        assert "parentId cycle e1 → e3 → e2 → e1" in out


def test_a_header_version_below_one_is_a_warning_and_read_as_v1() -> None:
    text = '{"type":"session","version":-1,"id":"s","timestamp":"t","cwd":"/w"}\n'
    loaded = parse_session(text + '{"type":"message","message":{"role":"user","content":"x"}}\n')
    problems = [(p.kind, p.field, p.severity.value) for p in loaded.problems]
    assert problems == [(ProblemKind.INVALID_FIELD, "version", "warning")]
    assert [e.id for e in loaded.entries] != [None]  # migrated like v1: ids were derived


# -- hostile JSON for replay and diagram ----------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "{" + '"a": 1' + "0" * 5000 + "}"


@pytest.mark.parametrize("content", [DEEP, HUGE], ids=["nested-100000", "int-5000-digits"])
@pytest.mark.parametrize("argv", [["replay"], ["diagram", "--coverage"], ["diagram", "--trace"]])
def test_hostile_json_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, argv: list[str]
) -> None:
    path = tmp_path / "input.json"
    path.write_text(content)
    code, _, err = _run(capsys, *argv, str(path))
    assert code == 2
    _one_line_error(err, str(path))


# -- traces with wrong fields ----------------------------------------------------------------


@pytest.fixture(scope="module")
def trace_json() -> dict[str, Any]:
    trace, _ = record_trace(
        KIT, WorldConfig(), [Prompt(chars=40), Script(reply="text", chars=40), Settle()]
    )
    return trace.to_json()


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        target: Any = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


BAD_TRACES = {
    "decisions-not-a-list": (_set(("decisions",), "x"), "field 'decisions'"),
    "decision-without-hook": (_set(("decisions", 0, "hook"), 5), "decisions[0].hook"),
    "failure-not-an-object": (_set(("failure",), [1]), "field 'failure'"),
    "failure-message-number": (_set(("failure",), {"message": 3}), "failure.message"),
    "unknown-profile": (_set(("config", "profile"), "9.9"), "config.profile"),
    "unknown-fault": (_set(("config", "fault"), "gremlins"), "config.fault"),
    "seed-a-string": (_set(("config", "seed"), "x"), "config.seed"),
    "window-zero": (_set(("config", "context_window"), 0), "config.context_window"),
    "reserve-over-window": (_set(("config", "reserve_tokens"), 10**6), "reserve_tokens"),
    "unknown-config-field": (_set(("config", "colour"), 1), "unknown field"),
    "advance-to-unknown-step": (
        _set(("actions", 2), {"action": "advance_to", "step": "no_such_hook"}),
        "actions[2].step",
    ),
    "prompt-of-a-billion-chars": (
        _set(("actions", 0), {"action": "prompt", "chars": 10**9}),
        "actions[0].chars",
    ),
    "chars-a-string": (_set(("actions", 0), {"action": "prompt", "chars": "many"}), "chars"),
    "unknown-action-field": (_set(("actions", 1, "colour"), "red"), "unknown field"),
    "unknown-action": (_set(("actions", 1), {"action": "dance"}), "actions[1].action"),
}


@pytest.mark.parametrize("case", sorted(BAD_TRACES))
def test_replay_refuses_a_wrong_field_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    trace_json: dict[str, Any],
    case: str,
) -> None:
    # Given a recorded trace with one field made wrong
    change, field = BAD_TRACES[case]
    document = json.loads(json.dumps(trace_json))
    change(document)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(document))
    # When it is replayed / Then one line names the file and the field, exit 2
    code, out, err = _run(capsys, "replay", str(path))
    assert (code, out) == (2, "")
    _one_line_error(err, str(path), field)


def test_the_recorded_trace_itself_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trace_json: dict[str, Any]
) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace_json))
    code, out, _ = _run(capsys, "replay", str(path))
    assert code == 0, out


@pytest.mark.parametrize("host", ["pi-0.87", "pi-1.6"])
def test_a_trace_keeps_its_host_profile_through_load(host: str) -> None:
    # Given a trace recorded on a model session that behaves as one Pi version
    trace, _ = record_trace(
        KIT, WorldConfig(host=host), [Prompt(chars=40), Script(reply="text", chars=40), Settle()]
    )
    # When it is read back / Then it replays on the same Pi version (not the default one)
    assert trace_from_json(trace.to_json()).config.host == host


@pytest.mark.parametrize(("window", "reserve"), [(0, 0), (-5, 0), (1000, 1000), (1000, 5000)])
def test_the_model_host_refuses_settings_no_turn_could_complete(window: int, reserve: int) -> None:
    # Given settings with a window of no tokens, or a reserve that fills it
    model = ModelInfo(provider="faux", id="faux-1", context_window=window, max_tokens=100)
    # When they are made / Then a typed error names the setting
    with pytest.raises(HostSettingsError) as caught:
        HostSettings(model=model, compaction=CompactionSettings(reserve_tokens=reserve))
    assert isinstance(caught.value, PictxError)
    assert "context_window" in str(caught.value) or "reserve_tokens" in str(caught.value)


def test_replay_writes_no_audit_dir_over_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trace_json: dict[str, Any]
) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace_json))
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    code, _, err = _run(capsys, "replay", str(path), "--audit-dir", str(blocker / "sub"))
    assert code == 2
    _one_line_error(err, "blocker")


def test_no_reader_leaves_a_file_descriptor_open(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    link = tmp_path / "z.jsonl"
    link.symlink_to("/dev/zero")
    for _ in range(5):
        audit_file(link, session_checks())
    assert len(os.listdir("/proc/self/fd")) == before


def test_every_step_the_model_host_takes_is_a_name_advance_to_accepts() -> None:
    # Given a world driven through prompts, tool batches, an overflow, an error and /compact
    from pictx_fsm.extensions.pi_context.kit.actions import Compact
    from pictx_fsm.extensions.pi_context.kit.trace_input import STEP_NAMES

    world = World(WorldConfig(context_window=6_000, reserve_tokens=1_000))
    seen: set[str] = set()
    replies = [
        Script(reply="tools", tools=("echo", "wipe_memory")),
        Script(reply="text", chars=40),
        Script(reply="overflow"),
        Script(reply="error"),
        Script(reply="text", chars=40),
    ]
    for reply in replies:
        world.apply(reply)
    world.apply(Prompt(chars=4_000))
    while (step := world.session.step()) is not None:
        seen.add(step.name)
    world.apply(Compact())
    # Then every step it paused at is a name a trace's advance_to may wait for
    assert len(seen) >= 15 and seen <= STEP_NAMES, (sorted(seen), seen - STEP_NAMES)
