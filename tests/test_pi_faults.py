"""Fault injection on the real Pi 0.87.1 (offline, faux provider): the bridge fails closed.

Every fault of issue 8 — the server killed at every hook kind, between turns and in a tool
batch after ``wipe_memory`` answered, garbage and half lines on its stdout, a slow, a split
and a hung reply, a missing interpreter, a Python without the package, another package
version, a lone UTF-16 surrogate in a kept message, a resumed reset session without a server —
is run through Pi's print mode, and each case checks what a user relies on: Pi exits by itself
with its normal code; no provider request (as the faux provider logged it) carries text from
before the active window's marker (R67–R69); ``pictx-fsm audit`` finds nothing in the session;
exactly one notice per failure episode (the extension echoes notices to stderr when Pi has no
UI); no stack trace reaches the terminal.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pi_versions
import pytest
from driven import DRIVER, shape
from real_pi import PiExit, RpcPi, faulty_python, python_wrapper, run_pi

from pictx_fsm.cli import main
from pictx_fsm.extensions.pi_context.kit.actions import (
    KillRuntime,
    Navigate,
    Prompt,
    Script,
    Settle,
    WipeCommand,
)
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    MARKER_TYPE,
    NOTICE_MISSING_BOOT,
)
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.hosts.pi import texts
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.projection import context_messages
from pictx_fsm.session.tree import SessionTree

# Three prompts; the second makes the model wipe its memory. Every text is unique, so a text
# of the first window found in a later request is erased history, never a coincidence.
SCRIPT = [
    {"text": "ALPHA answer one"},
    {"tools": [{"name": "wipe_memory"}], "text": "ALPHA wiping now"},
    {"text": "BRAVO fresh window"},
    {"text": "BRAVO answer three"},
]
PROMPTS = ("ALPHA prompt one", "ALPHA prompt two, wipe please", "BRAVO prompt three")
FAULT_NOTICE = re.compile(r"^notice\[warning\] pi-context: the lifecycle server .*; restarting it")
LIFECYCLE_ERROR = re.compile(r"^notice\[error\] pi-context: the lifecycle failed in ")
GIVE_UP = re.compile(r"^notice\[error\] pi-context: the lifecycle server .*restarting did not help")
DIAGNOSIS = re.compile(r"^notice\[error\] pi-context: cannot run the lifecycle server: ")
STACK_TRACE = re.compile(r"Traceback \(most recent call last\)|^\s+at .*:\d+:\d+\)?$", re.M)
HOOKS = (
    "session_start",
    "turn_start",
    "context",
    "context_with_system",
    "turn_end",
    "agent_end",
    "agent_before_settle",
    "agent_settled",
    "wipe_memory",
    "session_shutdown",
)


def _texts(messages: Iterable[Mapping[str, Any]]) -> set[str]:
    found: set[str] = set()
    for message in messages:
        if message.get("role") == "system":
            continue
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content or []
        found.update(b["text"] for b in blocks if isinstance(b, Mapping) and "text" in b)
    return found


def leaks(run: PiExit) -> list[str]:
    """Requests made in a reset window that carry a text only the erased history holds."""
    loaded = read_session(run.session_file())
    tree = SessionTree.from_entries(loaded.header, loaded.entries)
    found = []
    for index, request in enumerate(run.requests):
        node = tree.find(request["leaf"]) if request["leaf"] else None
        window = None if node is None else WindowIndex.of(tree).window_of(node)
        if node is None or window is None or window.marker_id is None:
            continue
        path = [n.entry for n in node.path()]
        cut = next(i for i, e in enumerate(path) if e.id == window.marker_id)
        erased = _texts(context_messages(path[:cut])) - _texts(context_messages(path[cut:]))
        leaked = erased & _texts(request["messages"])
        if leaked:
            found.append(f"request {index} in {window.window_id}: {sorted(leaked)}")
    return found


def audit_findings(run: PiExit, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    code = main(["audit", str(run.session_file())])
    out = capsys.readouterr().out
    return "" if code == 0 and "findings: 0 " in out else out


FAILURE_PREFIXES = tuple(
    text.split("{")[0]
    for text in (
        texts.NOTICE_FAULT,
        texts.NOTICE_GIVE_UP,
        texts.NOTICE_DIAGNOSIS,
        texts.NOTICE_LIFECYCLE_ERROR,
        NOTICE_MISSING_BOOT,
    )
)


def failure_notices(run: PiExit) -> list[str]:
    """The bridge's failure notices (the lifecycle's own, such as "memory cleared", go on)."""
    return [n for n in run.notices() if n.split("] ", 1)[1].startswith(FAILURE_PREFIXES)]


def kinds(run: PiExit) -> list[str]:
    entries = read_session(run.session_file()).entries
    return [getattr(e, "custom_type", None) or e.type for e in entries]


def assert_fails_closed(
    run: PiExit, capsys: pytest.CaptureFixture[str], notices: list[re.Pattern[str]]
) -> None:
    """The checks every fault case shares."""
    assert run.returncode == 0, run.stderr
    assert not STACK_TRACE.search(run.stderr), run.stderr
    assert leaks(run) == []
    assert audit_findings(run, capsys) == ""
    told = failure_notices(run)
    assert len(told) == len(notices), told
    for line, pattern in zip(told, notices, strict=True):
        assert pattern.search(line), line


def _fault(tmp_path: Path, fault: dict[str, Any], **env: str) -> dict[str, str]:
    return {
        "PICTX_FSM_PYTHON": str(faulty_python(tmp_path)),
        "PICTX_FAULT": json.dumps(fault),
        "PICTX_FAULT_STATE": str(tmp_path / "fault-state"),
        **env,
    }


def _reset_committed(run: PiExit) -> bool:
    found = kinds(run)
    return any(
        found[i : i + 3] == [MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE] for i in range(len(found))
    )


# -- the server dies ---------------------------------------------------------------------------


@pytest.mark.parametrize("hook", HOOKS)
def test_a_server_killed_at_any_hook_is_restarted_and_no_request_leaks(
    hook: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server that dies (kill -9) on the first request for `hook`
    env = _fault(tmp_path, {"fault": "kill", "hook": hook, "nth": 1})
    # When Pi runs three prompts, the second one a wipe
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env=env)
    # Then Pi finishes normally, told once, and no request after the marker leaks
    assert_fails_closed(run, capsys, [FAULT_NOTICE])
    assert "stopped (exit 137)" in failure_notices(run)[0]
    # And the restarted server rebuilt the lifecycle from the resent session: the root window
    # has its boot (repaired on resync when the first server died before writing it), and
    # the model's wipe was committed — unless the server died answering that very call
    committed = hook != "wipe_memory"
    assert _reset_committed(run) is committed
    assert kinds(run).count(BOOT_TYPE) == 1 + committed


def test_a_server_killed_between_turns_after_a_reset_is_resynchronised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server that answers the second agent_settled (the reset turn's) and then dies
    env = _fault(tmp_path, {"fault": "kill_after", "hook": "agent_settled", "nth": 2})
    # When the third prompt runs on a restarted server
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env=env)
    # Then the restarted server got the header and the branch again: the third prompt's
    # request is cut at the boot (5 messages, not the whole history) and Pi exits
    assert_fails_closed(run, capsys, [FAULT_NOTICE])
    assert _reset_committed(run)
    last = run.requests[-1]["messages"]
    assert "BRAVO prompt three" in _texts(last) and "ALPHA prompt one" not in _texts(last)
    assert len(last) <= 5


@pytest.mark.parametrize(("hook", "nth"), [("context", 3), ("turn_end", 1), ("turn_end", 4)])
def test_a_server_dying_after_deciding_hooks_ahead_is_one_fault_and_nothing_leaks(
    hook: str, nth: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server that answers a request whose reply also holds the hooks decided ahead
    # (the third context: the continuation turn's, in the reset window, with its
    # context_with_system; a turn_end ending a run, with agent_end and agent_before_settle)
    # and then dies
    env = _fault(tmp_path, {"fault": "kill_after", "hook": hook, "nth": nth})
    # When Pi runs the three prompts
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env=env)
    # Then the lost confirmation is one fault, the restarted server goes on, the reset is
    # committed, and no request after the marker leaks (the continuation's is cut at the boot)
    assert_fails_closed(run, capsys, [FAULT_NOTICE])
    assert _reset_committed(run)
    fresh = run.requests[2]["messages"]
    assert not any("ALPHA" in text for text in _texts(fresh)) and len(fresh) <= 5
    assert "BRAVO prompt three" in _texts(run.requests[-1]["messages"])


def test_a_server_dying_in_a_wipe_batch_tells_the_human_and_the_model_the_reset_was_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a batch of two wipe_memory calls and a server that dies after answering the first
    script = [
        {"tools": [{"name": "wipe_memory"}, {"name": "wipe_memory"}], "text": "ALPHA wiping"},
        {"text": "ALPHA still here"},
        {"text": "ALPHA answer two"},
    ]
    env = _fault(tmp_path, {"fault": "kill_after", "hook": "wipe_memory", "nth": 1})
    # When Pi runs the prompt
    run = run_pi(tmp_path, script, "ALPHA wipe twice", env=env)
    # Then no reset happened, the one notice says the request was lost, and the model's next
    # request carries the hidden message saying so
    assert_fails_closed(run, capsys, [FAULT_NOTICE])
    assert texts.LOST_RESET in failure_notices(run)[0]
    assert not _reset_committed(run)
    assert texts.MODEL_LOST_RESET in _texts(run.requests[1]["messages"])


def test_a_crash_loop_is_restarted_three_times_then_degraded_and_pi_context_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server that dies on its first context request, every time it is started
    env = _fault(tmp_path, {"fault": "kill", "hook": "context", "every": True})
    script = [{"text": f"BRAVO answer {n}", "delayMs": 700} for n in range(6)]
    prompts = [f"BRAVO prompt {n}" for n in range(6)]
    # When Pi runs six prompts (back-off 0, 0.25 and 1 s between restarts), then /pi-context
    run = run_pi(
        tmp_path, script, *prompts[:3], "/pi-context", *prompts[3:], "/pi-context", env=env
    )
    # Then the first fault is told, the faults of the restarted servers continue the same
    # episode, restarts are bounded (one start, three restarts) and giving up is told once;
    # /pi-context reports the degraded mode and the cause
    assert_fails_closed(run, capsys, [FAULT_NOTICE, GIVE_UP])
    assert (tmp_path / "fault-state").read_text() == "4"
    assert run.notices()[-1].startswith("notice[info] pi-context: degraded · stopped (exit 137)")


# -- the server misbehaves ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "hook"),
    [("garbage", "context"), ("partial", "turn_end"), ("garbage", "context_with_system")],
)
def test_garbage_or_a_half_line_on_stdout_is_one_fault_not_a_crash(
    fault: str, hook: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server that writes a non-JSON line (or half a reply and dies) on its 2nd `hook`
    env = _fault(tmp_path, {"fault": fault, "hook": hook, "nth": 2})
    # When Pi runs the three prompts
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env=env)
    # Then it is one fault, the server is restarted, and nothing leaks
    assert_fails_closed(run, capsys, [FAULT_NOTICE])


def test_a_reply_that_cannot_be_applied_is_told_once_and_the_request_still_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server that is up but answers every context_with_system with message slices
    # that do not fit the request (applying the reply throws in the extension)
    env = _fault(tmp_path, {"fault": "bad_reply", "hook": "context_with_system"})
    # When Pi runs the three prompts, the second one a wipe
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env=env)
    # Then each request got the extension's own projection instead (no leak after the
    # marker), the user was told once, and the lifecycle went on (the reset committed)
    assert_fails_closed(run, capsys, [LIFECYCLE_ERROR])
    assert "context_with_system: bridge: Error: slice" in failure_notices(run)[0]
    assert _reset_committed(run)


def test_a_hung_server_times_out_once_and_pi_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server that never answers its second context request, and a 1.5 s timeout
    env = _fault(
        tmp_path, {"fault": "hang", "hook": "context", "nth": 2}, PICTX_FSM_TIMEOUT_MS="1500"
    )
    # When Pi runs the three prompts
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env=env)
    # Then the wait ends at the timeout, the server is replaced, and Pi exits normally
    assert_fails_closed(run, capsys, [FAULT_NOTICE])
    assert "did not answer context within 1500 ms" in failure_notices(run)[0]
    assert _reset_committed(run)


def test_escape_ends_the_wait_on_a_hung_server_and_rpc_mode_exits(tmp_path: Path) -> None:
    # Given RPC mode, a long timeout, and a server that never answers its first context
    env = _fault(
        tmp_path, {"fault": "hang", "hook": "context", "nth": 1}, PICTX_FSM_TIMEOUT_MS="60000"
    )
    pi = RpcPi(tmp_path, [{"text": "ALPHA answer"}, {"text": "BRAVO answer"}], env)
    # When the user sends a prompt and, while the request waits, aborts (Escape)
    pi.send({"id": "p1", "type": "prompt", "message": "ALPHA prompt"})
    pi.until("message_end")
    time.sleep(1.0)
    aborted = time.monotonic()
    pi.send({"id": "a1", "type": "abort"})
    pi.until("agent_settled")
    waited = time.monotonic() - aborted
    # Then the run ends within the abort grace, not the 60 s timeout; the next prompt runs on
    # a restarted server; Pi exits when its input closes; the user was told once
    pi.send({"id": "p2", "type": "prompt", "message": "BRAVO prompt"})
    pi.until("agent_settled")
    assert pi.close() == 0
    assert waited < 10.0
    told = [n for n in pi.notices() if n.startswith(FAILURE_PREFIXES)]
    assert len(told) == 1 and "after the request was aborted" in told[0], pi.notices()


def test_R65_D4_a_restart_at_tree_navigation_repairs_a_bare_marker_once(tmp_path: Path) -> None:
    # Given a reset by /wipe-memory (marker → boot …) and a server that dies on the
    # navigation's session_before_tree, so that the restart (no back-off the first time) comes
    # at session_tree, on the bare marker the user navigated to
    env = _fault(tmp_path, {"fault": "kill", "hook": "session_before_tree", "nth": 1})
    pi = RpcPi(tmp_path, [{"text": "ALPHA answer"}] * 4, env, extensions=[DRIVER])
    commands = ["ALPHA prompt", "/wipe-memory", f"/drive-tree {MARKER_TYPE} 1"]
    for number, text in enumerate(commands):
        pi.send({"id": f"c{number}", "type": "prompt", "message": text})
        pi.until("response", id=f"c{number}")
        if number == 0:
            pi.until("agent_settled")
    assert pi.close() == 0
    # Then the resynchronised server repaired the boot, the extension applied it before
    # forwarding session_tree, and session_tree found the tail intact: the marker's new
    # branch holds exactly one boot (R65, D4), the model session's twin agrees
    entries = read_session(next((tmp_path / "sessions").glob("*.jsonl"))).entries
    [marker] = [e for e in entries if getattr(e, "custom_type", None) == MARKER_TYPE]
    children = [getattr(e, "custom_type", None) for e in entries if e.parent_id == marker.id]
    assert children.count(BOOT_TYPE) == 2  # the /wipe-memory branch's, and the repair's
    repaired = [e for e in entries if e.parent_id == marker.id][-1]
    assert not [e for e in entries if e.parent_id == repaired.id and
                getattr(e, "custom_type", None) == BOOT_TYPE]  # fmt: skip
    assert sum(n.startswith(FAILURE_PREFIXES) for n in pi.notices()) == 1, pi.notices()
    assert shape(entries) == shape(_twin_navigates_after_a_kill())


def _twin_navigates_after_a_kill() -> list[Any]:
    """The same story on the model session, the bridge's twin killed before the navigation."""
    world = World(WorldConfig())
    for action in [Script(reply="text"), Prompt(chars=20), Settle(), WipeCommand(), KillRuntime()]:
        world.apply(action)
    kinds = [getattr(e, "custom_type", None) for e in world.session.entries]
    world.apply(Navigate(index=kinds.index(MARKER_TYPE)))
    return list(world.session.entries)


@pytest.mark.parametrize(("fault", "ms"), [("slow", 800), ("split", 300)])
def test_a_slow_server_or_a_reply_split_across_writes_is_no_fault(
    fault: str, ms: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server that takes 0.8 s per context request, or writes each reply in two pieces
    env = _fault(tmp_path, {"fault": fault, "hook": "context", "ms": ms})
    # When Pi runs the three prompts
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env=env)
    # Then nothing failed: no notice, and the reset was committed as usual
    assert_fails_closed(run, capsys, [])
    assert _reset_committed(run)


def test_a_lone_surrogate_in_a_kept_message_does_not_break_the_lifecycle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a reply holding half an emoji (a lone UTF-16 surrogate, as JSON.stringify writes it)
    script = [{"text": "ALPHA cut emoji \ud83d here"}, *SCRIPT[1:]]
    # When the session goes on through a wipe
    run = run_pi(tmp_path, script, *PROMPTS)
    # Then the server never died: no notice, and the reset was committed
    assert_fails_closed(run, capsys, [])
    assert _reset_committed(run)


# -- the interpreter cannot run the server -----------------------------------------------------


def test_a_missing_interpreter_is_diagnosed_once_naming_pictx_fsm_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given PICTX_FSM_PYTHON pointing nowhere
    env = {"PICTX_FSM_PYTHON": str(tmp_path / "no" / "python3")}
    # When Pi runs the three prompts, then /pi-context
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, "/pi-context", env=env)
    # Then Pi does not crash: one notice names the variable and the fix; the tool call got
    # an error result instead of a reset; /pi-context says the lifecycle is degraded
    assert_fails_closed(run, capsys, [DIAGNOSIS])
    assert run.notices()[-1].startswith("notice[info] pi-context: degraded · PICTX_FSM_PYTHON=")
    assert run.notices()[-1].split(" · ")[2].startswith(f"Pi {pi_versions.selected().version}: ")
    assert (
        "PICTX_FSM_PYTHON=" in failure_notices(run)[0]
        and "was not found" in failure_notices(run)[0]
    )
    assert not _reset_committed(run)
    [result] = [
        e.message.raw
        for e in read_session(run.session_file()).entries
        if e.type == "message" and e.message.role == "toolResult"
    ]
    assert result["isError"] is True and result["toolName"] == "wipe_memory"
    assert result["content"][0]["text"].startswith(
        "pi-context: the lifecycle server is unavailable (degraded: PICTX_FSM_PYTHON="
    )


def test_a_python_without_the_package_is_started_once_and_diagnosed_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a Python that cannot import pictx_fsm (no site-packages), counting its starts
    starts = tmp_path / "starts"
    python = python_wrapper(
        tmp_path, "bare-python", f'echo x >> "{starts}"; exec "{sys.executable}" -I -S "$@"'
    )
    # When Pi runs the three prompts
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env={"PICTX_FSM_PYTHON": str(python)})
    # Then it was started once, not once per hook, and diagnosed in one notice
    assert_fails_closed(run, capsys, [DIAGNOSIS])
    assert "cannot import pictx_fsm" in failure_notices(run)[0]
    assert starts.read_text().count("x") == 1


def test_another_package_version_is_diagnosed_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server whose handshake reports another pictx-fsm version
    env = _fault(tmp_path, {"fault": "version"})
    # When Pi runs the prompts
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env=env)
    # Then one notice names both versions and how to match them
    assert_fails_closed(run, capsys, [DIAGNOSIS])
    assert "pictx-fsm 9.9.9" in failure_notices(run)[0]


def test_resuming_a_reset_session_without_a_server_never_sends_the_erased_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a session whose window was reset in a first, healthy run
    first = run_pi(tmp_path, SCRIPT[:3], *PROMPTS[:2])
    assert first.returncode == 0 and _reset_committed(first)
    # When it is continued (-c) with a Python that cannot run the server
    bare = python_wrapper(tmp_path, "bare-python", f'exec "{sys.executable}" -I -S "$@"')
    run = run_pi(
        tmp_path,
        [{"text": "BRAVO resumed answer"}],
        "BRAVO resumed prompt",
        env={"PICTX_FSM_PYTHON": str(bare)},
        resume=True,
    )
    # Then the extension's own projection cut the request at the boot: nothing of the first
    # window reached the model, and the user was told once
    assert_fails_closed(run, capsys, [DIAGNOSIS])
    resumed = run.requests[-1]["messages"]
    assert "BRAVO resumed prompt" in _texts(resumed)
    assert not _texts(resumed) & {"ALPHA prompt one", "ALPHA answer one", "ALPHA wiping now"}


def test_without_a_server_native_compaction_of_a_reset_session_is_cancelled(
    tmp_path: Path,
) -> None:
    # Given a reset session with enough history before the marker for Pi to compact
    history = [{"text": "ALPHA long " * 12_000}, *SCRIPT[1:3]]
    first = run_pi(tmp_path, history, *PROMPTS[:2])
    assert first.returncode == 0 and _reset_committed(first)
    before = len(first.requests)
    # When it is continued in RPC mode with a Python that cannot run the server, and the
    # user asks for /compact
    bare = python_wrapper(tmp_path, "bare-python", f'exec "{sys.executable}" -I -S "$@"')
    pi = RpcPi(tmp_path, [{"text": "## Goal\nsummary"}] * 2, {"PICTX_FSM_PYTHON": str(bare)},
               resume=True)  # fmt: skip
    pi.send({"id": "c1", "type": "compact"})
    pi.until("response", id="c1")
    assert pi.close() == 0
    # Then the extension cancelled it alone (R62): no summarization request carried the
    # erased window to the model, and no compaction was written
    log = (tmp_path / "requests.jsonl").read_text().splitlines()
    assert len(log) == before
    assert "compaction" not in [e.type for e in read_session(first.session_file()).entries]
