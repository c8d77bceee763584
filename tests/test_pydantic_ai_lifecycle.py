"""pi-context's rules on pydantic-ai's own agent loop (a real ``Agent``, a scripted model)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai_kit import WINDOW, agent_for, kinds, new_session, texts

from pictx_fsm.audit.log import verify_chain
from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import audit_file
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    WARNING_TYPE,
)
from pictx_fsm.extensions.pi_context.windows import WindowIndex, root_window_id
from pictx_fsm.hosts.pydantic_ai import PiSession, audit_path_of
from pictx_fsm.hosts.pydantic_ai.scripted import overflow, provider_error, text, tools
from pictx_fsm.session.entries import MessageEntry

RESET = [MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE]


def test_r16_r30_two_wipes_in_one_batch_give_one_reset_after_both_tool_results() -> None:
    # Given a session whose model calls wipe_memory twice in one batch, then answers
    session = new_session()
    agent, model = agent_for(
        session, tools(("wipe_memory", {}), ("wipe_memory", {})), text("fresh start")
    )
    # When the agent runs
    result = agent.run_sync("start over")
    # Then the tool results say requested / already pending, and one reset closes the batch
    returns = [
        json.loads(e.message.text()) for e in session.tree.branch() if _role(e) == "toolResult"
    ]
    assert returns == [{"status": "rollover_requested"}, {"status": "rollover_already_pending"}]
    assert kinds(session.tree.branch()) == [
        BOOT_TYPE,
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        *RESET,
        "assistant",
    ]
    # And exactly one further request follows, carrying only the new window
    assert result.output == "fresh start" and len(model.requests) == 2
    assert "start over" not in texts(model.requests[1].messages)
    assert session.notices[-1].message.startswith("pi-context: memory cleared · pcw:")


def _role(entry: object) -> str | None:
    return entry.message.role if isinstance(entry, MessageEntry) else None


def test_r67_no_later_request_carries_history_from_before_the_marker() -> None:
    # Given a reset in the first run
    session = new_session()
    agent, model = agent_for(session, tools(("wipe_memory", {})), text("ok"), text("second"))
    first = agent.run_sync("secret before the reset")
    # When the next run continues from the result's history
    agent.run_sync("after", message_history=first.all_messages())
    # Then no request after the marker carries the erased prompt, and the new one arrives
    assert all("secret before the reset" not in texts(r.messages) for r in model.requests[1:])
    assert "after" in texts(model.requests[-1].messages)


def test_r17_get_context_remaining_answers_from_the_models_real_usage() -> None:
    # Given a model whose first request reports 30000 input tokens
    session = new_session()
    agent, _ = agent_for(session, tools(("get_context_remaining", {}), tokens=30_000), text())
    # When it asks for the remaining context
    agent.run_sync("how much room?")
    # Then the answer is the window minus the reply's usage minus the warning line (R17)
    [result] = [e for e in session.tree.branch() if _role(e) == "toolResult"]
    remaining = json.loads(result.message.text())["remaining_tokens"]
    assert remaining == WINDOW - (30_000 + 10) - 28_672


def test_r51_r54_guidance_then_warning_from_real_usage_are_committed_once() -> None:
    # Given replies whose usage crosses the reminder line, then the warning line
    session = new_session()
    agent, model = agent_for(
        session, text("a", tokens=60_000), text("b", tokens=72_000), text("c", tokens=72_500)
    )
    # When three prompts run
    for prompt in ("one", "two", "three"):
        agent.run_sync(prompt)
    # Then guidance was committed after the first reply, the warning after the second
    branch = kinds(session.tree.branch())
    assert branch.count(GUIDANCE_TYPE) == 1 and branch.count(WARNING_TYPE) == 1
    assert branch.index(GUIDANCE_TYPE) < branch.index(WARNING_TYPE)
    # And the warning was already in the request that staged it (R51), and notices told once
    assert any("Your memory is about to be erased" in t for t in texts(model.requests[2].messages))
    levels = [(n.level, n.message.split(" —")[0]) for n in session.notices]
    assert levels.count(("warning", "pi-context: context budget low")) == 1
    assert levels.count(("warning", "pi-context: context budget critical")) == 1


def test_r27_r50_automatic_reset_at_the_reserve_continues_with_one_request() -> None:
    # Given a text reply whose usage leaves no more than the reserve
    session = new_session()
    agent, model = agent_for(session, text("long", tokens=90_000), text("resumed"))
    # When the run would stop, the reset commits and the run goes on once
    result = agent.run_sync("work")
    assert result.output == "resumed" and len(model.requests) == 2
    assert kinds(session.tree.branch())[-4:] == [*RESET, "assistant"]
    assert "work" not in texts(model.requests[1].messages)


def test_r33_r36_an_overflow_is_recovered_once_and_a_second_one_fails_the_run() -> None:
    # Given an overflow, then (after the recovery) a second overflow
    session = new_session()
    agent, model = agent_for(session, overflow(), overflow())
    # When the agent runs, Then the retry happens once in a new window and the error surfaces
    with pytest.raises(ModelHTTPError, match="prompt is too long"):
        agent.run_sync("too big")
    branch = kinds(session.tree.branch())
    assert branch == [BOOT_TYPE, "user", "assistant", *RESET, "assistant"]
    assert len(model.requests) == 2 and "too big" not in texts(model.requests[1].messages)


def test_r33_an_overflow_recovered_once_continues_the_task_in_the_new_window() -> None:
    session = new_session()
    agent, _ = agent_for(session, overflow(), text("done in the new window"))
    assert agent.run_sync("too big").output == "done in the new window"
    assert kinds(session.tree.branch())[-4:] == [*RESET, "assistant"]


def test_r38_an_ordinary_provider_error_never_resets() -> None:
    # Given a provider error that is not an overflow
    session = new_session()
    agent, _ = agent_for(session, provider_error())
    # When the run fails, Then the failed reply is recorded and nothing resets
    with pytest.raises(ModelHTTPError):
        agent.run_sync("hello")
    assert kinds(session.tree.branch()) == [BOOT_TYPE, "user", "assistant"]
    assert session.tree.branch()[-1].message.stop_reason == "error"
    # And the next run continues the session from before the failed turn (a new branch)
    agent.run_sync("again", message_history=[])
    assert len(session.tree.leaves()) == 1


def test_an_empty_history_continues_the_session_and_an_older_one_branches_it() -> None:
    session = new_session()
    agent, model = agent_for(session, text("1"), text("2"), text("3"))
    first = agent.run_sync("one")
    agent.run_sync("two")  # no history: the session continues
    assert "one" in texts(model.requests[1].messages)
    agent.run_sync("three", message_history=first.all_messages())  # back to after "one"
    assert len(session.tree.leaves()) == 2
    assert "two" not in texts(model.requests[2].messages)


def test_r64_d4_opening_a_session_whose_reset_tail_is_incomplete_repairs_it(tmp_path: Path) -> None:
    # Given a session file cut after the marker and boot of a reset
    path = tmp_path / "s.jsonl"
    session = new_session(path)
    agent, _ = agent_for(session, tools(("wipe_memory", {})), text("ok"))
    agent.run_sync("go")
    session.close()
    lines = path.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if CONTINUATION_TYPE in line)
    path.write_text("\n".join(lines[:cut]) + "\n")
    audit_path_of(path).unlink()
    # When it is opened again
    resumed = PiSession.open(path, rng=random.Random(5), config=session.config)
    # Then the missing continuation is appended (D4), and reaches the next request
    assert kinds(resumed.tree.branch())[-3:] == RESET
    agent2, model = agent_for(resumed, text("back"))
    agent2.run_sync("next")
    assert any("Your memory was just erased" in t for t in texts(model.requests[0].messages))
    assert kinds(resumed.tree.branch()).count(CONTINUATION_TYPE) == 1


def test_resuming_from_a_stored_pydantic_ai_history_keeps_the_window(tmp_path: Path) -> None:
    # Given a run with a reset, its history stored as pydantic-ai JSON
    session = new_session()
    agent, _ = agent_for(session, tools(("wipe_memory", {})), text("ok"))
    stored = agent.run_sync("erase me").all_messages_json()
    # When a new session is built from it
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    history = ModelMessagesTypeAdapter.validate_json(stored)
    resumed = new_session_from(history, tmp_path / "r.jsonl", session)
    # Then the reset window is the current one and nothing was repaired
    assert (
        WindowIndex.of(resumed.tree).current_window.window_id
        == WindowIndex.of(session.tree).current_window.window_id
    )
    assert kinds(resumed.tree.branch()) == kinds(session.tree.branch())
    agent2, model = agent_for(resumed, text("hi"))
    agent2.run_sync("next")
    assert "erase me" not in texts(model.requests[0].messages)


def test_r66_a_session_rebuilt_from_a_stored_history_is_a_clone_the_audit_finds_clean(
    tmp_path: Path,
) -> None:
    # Given a session whose branch left the root window (a reset), stored as messages
    session = new_session()
    agent, _ = agent_for(session, tools(("wipe_memory", {})), text("ok"))
    history = agent.run_sync("erase me").all_messages()
    old_root = root_window_id(session.tree.session_id)
    # When a new session file is built from the history
    path = tmp_path / "clone.jsonl"
    clone = new_session_from(history, path, session)
    clone.close()
    # Then it is a clone, as Pi's fork: a new session id, its header names the copied root
    assert clone.tree.session_id != session.tree.session_id
    assert clone.tree.header.parent_session == old_root
    # And pictx-fsm audit finds no defect (the copied root boot is explained, R66)
    found = audit_file(path, session_checks()).findings
    assert [f.name for f in found] == ["inherited_root_boot"] and not found[0].is_defect


def new_session_from(history: list, path: Path, earlier: PiSession) -> PiSession:
    return PiSession.from_messages(history, path, rng=random.Random(3), config=earlier.config)


def test_the_session_file_reads_with_inspect_audit_and_diagram_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pictx_fsm.cli import main

    path = tmp_path / "s.jsonl"
    session = new_session(path)
    agent, _ = agent_for(session, tools(("wipe_memory", {})), text("ok"), overflow(), text("x"))
    agent.run_sync("go")
    agent.run_sync("more")
    session.close()
    assert main(["inspect", str(path)]) == 0
    assert main(["audit", str(path)]) == 0
    assert "findings: 0" in capsys.readouterr().out
    chain = verify_chain(audit_path_of(path))
    assert chain.sealed and chain.records == len(session.audit.records) + 1  # and the seal
    assert main(["diagram", "--machine", "reset_control", "--trace", str(audit_path_of(path))]) == 0
    assert "fired" in capsys.readouterr().out


def test_r59_d2_wipe_memory_between_runs_starts_the_next_run_in_a_fresh_window() -> None:
    # Given a conversation, then /wipe-memory between runs
    session = new_session()
    agent, model = agent_for(session, text("1"), text("2"))
    agent.run_sync("remember the secret")
    session.command("wipe-memory")
    # Then marker, boot and continuation are persisted at once, and the notice is given
    assert kinds(session.tree.branch())[-3:] == RESET
    assert session.notices[-1].message.startswith("pi-context: memory cleared · pcw:")
    # And the next run's request starts from them, without the erased conversation
    agent.run_sync("next")
    sent = texts(model.requests[-1].messages)
    assert "remember the secret" not in sent and "next" in sent


def test_r60_r61_off_refuses_wipe_memory_and_on_restores_it() -> None:
    session = new_session()
    agent, _ = agent_for(session, tools(("wipe_memory", {})), text("ok"))
    session.command("pi-context", "off")
    agent.run_sync("wipe please")
    [result] = [e for e in session.tree.branch() if _role(e) == "toolResult"]
    assert json.loads(result.message.text()) == {
        "error": "pi-context is off (/pi-context on to enable)"
    }
    assert MARKER_TYPE not in kinds(session.tree.branch())
    session.command("pi-context", "bogus")
    assert session.notices[-1].message == "Usage: /pi-context [on|off]"


def test_r37_a_run_the_caller_cancels_ends_with_an_aborted_agent_end() -> None:
    import asyncio

    from pydantic_ai import CallToolsNode

    # Given a run whose model asked for wipe_memory, cancelled by the caller after the tools
    session = new_session()
    agent, _ = agent_for(session, tools(("wipe_memory", {})), text("never"))

    async def cancel_after_the_batch() -> None:
        async with agent.iter("go") as run:
            node = run.next_node
            while not isinstance(node, CallToolsNode):
                node = await run.next(node)
            await run.next(node)  # the batch runs; turn_end commits the reset
            raise asyncio.CancelledError  # the caller stops before the next request

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel_after_the_batch())
    # Then the lifecycle saw the abort: agent_end with an aborted signal, then settled
    hooks = [r["hook"] for r in session.audit.records]
    assert hooks[-2:] == ["agent_end", "agent_settled"]
    assert session.audit.records[-2]["ctx"]["signal_aborted"] is True
