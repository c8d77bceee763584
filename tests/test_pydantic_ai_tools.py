"""The notes and history tools on pydantic-ai's own agent loop: all eleven registered from
``TOOL_SPECS``, executed by the runtime against the session's notes home, N4's three channels
mapped to pydantic-ai's (a real ``Agent``, a scripted ``FunctionModel``)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_kit import agent_for, conversation, kinds, new_session, texts

from pictx_fsm import TOOL_SPECS, ToolCall
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    DEFAULT_PROFILE,
    MARKER_TYPE,
    NOTES_HOME_ENV,
    Profile,
)
from pictx_fsm.extensions.pi_context.tools import (
    NotesIdentity,
    ToolContext,
    execute_tool,
    project_key,
)
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.hosts.pydantic_ai import LifecycleSettings, PiContext, PiSession
from pictx_fsm.hosts.pydantic_ai.scripted import text, tools
from pictx_fsm.session.entries import CustomMessageEntry, MessageEntry

SECRET = "the launch code is zebra-17"


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def _tool_records(session: PiSession) -> list[tuple[str, Any]]:
    return [
        (r["event"]["name"], (r["result"]["value"] or {}).get("status"))
        for r in session.audit.records
        if r["hook"] == ToolCall.HOOK
    ]


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_all_eleven_tools_are_registered_as_their_specs_say() -> None:
    # Given an agent with the capability, and a model that looks at the tools it is offered
    offered: list[AgentInfo] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append(info)
        return ModelResponse(parts=[TextPart("ok")])

    session = new_session()
    Agent(FunctionModel(model), capabilities=[PiContext(session)]).run_sync("hi")
    # Then every spec is a tool with its name, description and JSON schema byte for byte, and
    # the sequential ones (notes_write, notes_edit) are pydantic-ai barriers
    tools_by_name = {tool.name: tool for tool in offered[0].function_tools}
    assert set(tools_by_name) == {spec.name for spec in TOOL_SPECS}
    for spec in TOOL_SPECS:
        tool = tools_by_name[spec.name]
        assert tool.description == spec.description
        assert tool.parameters_json_schema == spec.parameters
        assert tool.sequential is (spec.execution_mode == "sequential")
    assert {n for n, t in tools_by_name.items() if t.sequential} == {"notes_write", "notes_edit"}


def test_n2_a_note_written_before_wipe_memory_is_in_the_next_boot_and_readable_after() -> None:
    # Given a model that writes a note and asks for a fresh window in one batch, then reads
    # the note in the new window
    session = new_session()
    note = {"address": "plan.md", "content": "ship the zebra release"}
    agent, model = agent_for(
        session,
        tools(("notes_write", note), ("wipe_memory", {})),
        tools(("notes_read", {"address": "plan.md"})),
        text("done"),
    )
    # When the agent runs
    result = agent.run_sync("plan, then start over")
    # Then the write ran before the wipe was requested, both through the runtime
    assert _tool_records(session)[:2] == [("notes_write", "ok"), ("wipe_memory", None)]
    # And the new window's boot indexes the note
    branch = conversation(session)
    marker = kinds(branch).index(MARKER_TYPE)
    boot = branch[marker + 1]
    assert isinstance(boot, CustomMessageEntry) and boot.custom_type == BOOT_TYPE
    assert "plan.md" in str(boot.content)
    # And after the reset the note is read back whole, though the request no longer carries it
    assert "ship the zebra release" not in texts(model.requests[1].messages)
    read = _returns(result.all_messages())[-1]
    assert read.tool_name == "notes_read" and read.outcome == "success"
    assert str(read.content).endswith("ship the zebra release")
    note_text = str(read.content).split("\n\n", 1)[1]  # after the READ WINDOW block
    assert read.metadata == {  # details ride as metadata, never sent to the model
        "address": "plan.md",
        "offset_chars": 0,
        "total_chars": len(note_text),
        "next_offset_chars": None,
    }


def test_r78_history_search_finds_a_pre_reset_message_the_model_no_longer_sees() -> None:
    # Given a message in the first window, then a reset
    session = new_session()
    agent, model = agent_for(
        session,
        text("noted"),
        tools(("wipe_memory", {})),
        text("fresh"),
        tools(("history_search", {"query": "zebra-17"})),
        text("found it"),
    )
    agent.run_sync(SECRET)
    agent.run_sync("start over")
    # When the model, in the new window, searches the durable history
    result = agent.run_sync("what was the code?")
    # Then the request it searched from did not carry the message, and the search found it
    searched_from = model.requests[-2]
    assert SECRET not in texts(searched_from.messages)
    [found] = [p for p in _returns(result.new_messages()) if p.tool_name == "history_search"]
    assert found.outcome == "success" and SECRET in str(found.content)
    hits = json.loads(str(found.content))["items"]
    [pre_reset] = [hit for hit in hits if hit["role"] == "user"]
    assert SECRET in pre_reset["truncated_content"]
    assert pre_reset["window_id"] != WindowIndex.of(session.tree).current_window.window_id
    assert _tool_records(session)[-1] == ("history_search", "ok")


def test_n4_an_invalid_address_is_a_failed_tool_result_and_writes_nothing() -> None:
    # Given a model that writes to an address that climbs out of its home
    session = new_session()
    home = session.config.notes_home
    assert home is not None
    arguments = {"address": "../x.md", "content": "escaped"}
    agent, model = agent_for(session, tools(("notes_write", arguments)), text("sorry"))
    # When the agent runs
    result = agent.run_sync("write it")
    # Then the model got a failed tool result (pydantic-ai's error channel, Pi's isError)
    # with the tool's own error text, without a retry prompt
    [failed] = _returns(result.all_messages())
    expected = execute_tool("notes_write", arguments, _context(home))
    assert expected.status == "error"
    assert failed.outcome == "failed" and failed.content == expected.text
    [sent] = [m for m in model.requests[1].messages if m.get("role") == "toolResult"]
    assert sent["isError"] is True and texts((sent,)) == [expected.text]
    [entry] = [e for e in session.tree.branch() if _role(e) == "toolResult"]
    assert isinstance(entry, MessageEntry) and entry.message.raw["isError"] is True
    assert entry.message.text() == expected.text
    # And nothing was written, inside the notes root or beside it
    assert _files(home.parent) == []
    assert _tool_records(session) == [("notes_write", "error")]


def _context(home: Path) -> ToolContext:
    identity = NotesIdentity(session_id="oracle", project_key="oracle")
    return ToolContext(notes_root=home, identity=identity, clock=lambda: 0)


def _role(entry: object) -> str | None:
    return entry.message.role if isinstance(entry, MessageEntry) else None


def test_n4_a_refusal_is_an_ordinary_tool_return_the_model_reads() -> None:
    # Given a write into another agent's home (read-only: refused in JSON)
    session = new_session()
    arguments = {"address": "@agents/other/x.md", "content": "x"}
    agent, _ = agent_for(session, tools(("notes_write", arguments)), text("ok"))
    # When the agent runs
    result = agent.run_sync("write it")
    # Then the return is a success whose JSON carries the refusal
    [refused] = _returns(result.all_messages())
    assert refused.outcome == "success"
    assert json.loads(str(refused.content))["error"].startswith("@agents/other/ is not your home")
    assert _tool_records(session) == [("notes_write", "refusal")]


def test_n2_a_batch_runs_call_by_call_in_the_order_the_model_gave() -> None:
    # Given one batch: read a note, write it, read it again
    session = new_session()
    address = {"address": "order.md"}
    agent, _ = agent_for(
        session,
        tools(
            ("notes_read", address),
            ("notes_write", {**address, "content": "first"}),
            ("notes_read", address),
        ),
        text("ok"),
    )
    # When the agent runs
    result = agent.run_sync("go")
    # Then the first read missed the note and the second, after the write, found it
    before, write, after = _returns(result.all_messages())
    assert write.tool_name == "notes_write" and write.outcome == "success"
    assert "first" not in str(before.content) and str(after.content).endswith("first")
    statuses = [status for _, status in _tool_records(session)]
    assert statuses[1:] == ["ok", "ok"] and statuses[0] != "ok"


def test_n6_the_notes_home_defaults_to_pi_notes_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given PI_NOTES_HOME set, and a session built without a notes home
    monkeypatch.setenv(NOTES_HOME_ENV, str(tmp_path / "env-notes"))
    session = PiSession.create(None, rng=random.Random(1), config=LifecycleSettings())
    note = {"address": "@project/design.md", "content": "d"}
    agent, _ = agent_for(session, tools(("notes_write", note)), text("ok"))
    # When the model writes a project note
    agent.run_sync("write")
    # Then it lands under $PI_NOTES_HOME, as the Pi bridge would put it
    home = tmp_path / "env-notes"
    assert _files(home) == [home / "project" / project_key(Path.cwd()) / "design.md"]


def test_notes_home_and_boot_writer_together_are_refused_when_given() -> None:
    from pictx_fsm.extensions.pi_context.boot_writer import BootWriter
    from pictx_fsm.extensions.pi_context.texts import Texts
    from pictx_fsm.hosts.pydantic_ai import SettingsError

    texts_ = Texts.for_profile(Profile.parse(DEFAULT_PROFILE))
    with pytest.raises(SettingsError, match=r"notes_home or LifecycleSettings\.boot_writer"):
        LifecycleSettings(notes_home=Path("/nonexistent"), boot_writer=BootWriter(texts=texts_))
