"""The host-facing surface of pictx_fsm.extensions.pi_context.tools: one schema for every host, one
entry point."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tools_kit import Notes

from pictx_fsm.extensions.pi_context import texts as protocol
from pictx_fsm.extensions.pi_context.tools import (
    HANDLERS,
    SCHEMA_FILE,
    TOOL_NAMES,
    TOOL_SPECS,
    UnknownTool,
    execute_tool,
    run_tools,
    schema_document,
    tool_spec,
)


def test_the_committed_tools_json_is_generated_from_the_specs() -> None:
    # Given the committed schema file
    committed = Path(SCHEMA_FILE).read_text(encoding="utf-8")
    # Then it is exactly what the specs render (regenerate: python -m
    # pictx_fsm.extensions.pi_context.tools > ...)
    assert committed == schema_document(), (
        "pictx_fsm/extensions/pi_context/tools/tools.json is stale: run "
        "`python -m pictx_fsm.extensions.pi_context.tools > "
        "pictx_fsm/extensions/pi_context/tools/tools.json`"
    )


def test_python_m_pictx_fsm_tools_prints_the_schema_document() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pictx_fsm.extensions.pi_context.tools"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == schema_document() and not result.stderr


def test_all_eleven_tools_in_registration_order_each_with_one_owner_for_its_texts() -> None:
    assert TOOL_NAMES == (
        "get_context_remaining",
        "wipe_memory",
        "history_windows",
        "history_list",
        "history_read",
        "history_search",
        "notes_write",
        "notes_edit",
        "notes_read",
        "notes_list",
        "notes_search",
    )
    wipe, remaining = tool_spec("wipe_memory"), tool_spec("get_context_remaining")
    assert (wipe.description, wipe.label) == (protocol.WIPE_MEMORY_DESCRIPTION, "Wipe memory")
    assert remaining.description == protocol.GET_CONTEXT_REMAINING_DESCRIPTION
    assert {spec.name for spec in TOOL_SPECS if spec.runs_in == "lifecycle"} == {
        "wipe_memory",
        "get_context_remaining",
    }
    assert set(HANDLERS) == {spec.name for spec in TOOL_SPECS if spec.runs_in == "tools"}
    document = json.loads(schema_document())["tools"]
    assert [tool["executionMode"] for tool in document].count("sequential") == 2


def test_lifecycle_tools_and_unknown_names_are_not_run_here(tmp_path: Path) -> None:
    context = Notes(root=tmp_path).context
    with pytest.raises(UnknownTool, match="lifecycle runtime"):
        execute_tool("wipe_memory", {}, context)
    with pytest.raises(UnknownTool, match="no one"):
        execute_tool("notes_append_to_file", {}, context)


def test_arguments_that_are_not_an_object_or_not_schema_typed_are_error_results(
    tmp_path: Path,
) -> None:
    notes = Notes(root=tmp_path)
    assert execute_tool("notes_list", ["x"], notes.context).text == "arguments must be an object"
    assert notes.error("notes_list", cursor="3") == "cursor must be an integer"
    assert notes.error("notes_list", cursor=-1) == "cursor must be an integer >= 0"
    assert notes.error("notes_write", address="a", content=7) == "content must be a string"
    assert notes.error("notes_edit", address="a", edits="x") == "edits must be an array"
    assert notes.ok("notes_list", cursor=0.0, max_results=2.0) == {"files": [], "next_cursor": None}


def test_a_batch_runs_in_call_order(tmp_path: Path) -> None:
    notes = Notes(root=tmp_path)
    outcomes = run_tools(
        [
            ("notes_write", {"address": "batch.md", "content": "v1"}),
            ("notes_edit", {"address": "batch.md", "edits": [{"oldText": "v1", "newText": "v2"}]}),
            ("notes_search", {"query": "v2"}),
        ],
        notes.context,
    )
    assert [outcome.status for outcome in outcomes] == ["ok", "ok", "ok"]
    assert json.loads(outcomes[2].text)["files"][0]["address"] == "batch.md"


def test_n49_concurrent_calls_in_one_process_never_interleave_store_work(tmp_path: Path) -> None:
    # Given many threads editing one note by appending a line each
    notes = Notes(root=tmp_path)
    notes.ok("notes_write", address="n.md", content="start")
    errors: list[str] = []

    def append(index: int) -> None:
        read = notes.call("notes_read", address="n.md")
        outcome = notes.call(
            "notes_edit",
            address="n.md",
            edits=[{"oldText": "start", "newText": f"start\n{index}"}],
        )
        if outcome.status != "ok" or read.status != "ok":
            errors.append(outcome.text)

    threads = [threading.Thread(target=append, args=(index,)) for index in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then every edit applied on top of the previous one
    body = (notes.session_dir() / "n.md").read_text().split("\n\n", 1)[1]
    assert not errors and sorted(body.split("\n")[1:], key=int) == [str(i) for i in range(16)]


def test_an_outcome_serializes_as_the_tool_result_pi_records(tmp_path: Path) -> None:
    notes = Notes(root=tmp_path)
    notes.ok("notes_write", address="n.md", content="x")
    read = notes.call("notes_read", address="n.md")
    assert read.to_json()["details"]["address"] == "n.md"
    assert read.to_json()["isError"] is False
    refusal = notes.call("notes_read", address="missing.md")
    assert refusal.to_json() == {"content": refusal.content, "isError": False}
