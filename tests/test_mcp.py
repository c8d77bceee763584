"""``pictx-fsm mcp``: the notes and history tools over MCP, driven by the official SDK's own
client over stdio (a real subprocess), and the same texts, budgets and confinement as the
tool in Pi (the extension's runtime) for the same notes home and session."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from notesoup_kit import NotesoupKit, audits_verify  # noqa: F401
from session_builders import SessionBuilder

from pictx_fsm.cli import main
from pictx_fsm.extensions.notesoup.runtime import NotesoupRuntime
from pictx_fsm.extensions.notesoup.tools.surface import tool_surface
from pictx_fsm.extensions.shared.tools.homes import SESSION_NOTES_PARTS
from pictx_fsm.host.effects import HookResult
from pictx_fsm.host.events import ToolCall
from pictx_fsm.host.tool_outcome import ToolOutcome
from pictx_fsm.hosts.mcp import SessionFile
from pictx_fsm.hosts.mcp.server import call_result
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.tree import SessionTree

NOTES_TOOLS = ["notes_write", "notes_update", "notes_read", "notes_list", "notes_search"]
HISTORY_TOOLS = ["history_windows", "history_list", "history_read", "history_search"]
NOW_MS: Final = 1_796_000_000_000.0


def _session_file(tmp_path: Path, *texts: str) -> Path:
    """A Pi session file with one exchange per text (the user asks, the model answers)."""
    build = SessionBuilder("5e55a0b1-0000-4000-8000-000000000001")
    build.add("model_change", provider="faux", modelId="faux/brainy-1")
    for text in texts:
        build.user(text)
        build.assistant(f"answer to {text}")
    path = tmp_path / "session.jsonl"
    lines = [json.dumps(build.tree.header.to_json())]
    lines += [json.dumps(entry.to_json()) for entry in build.tree.entries]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _with_client(
    session: Path, notes: Path, *extra: str
) -> Callable[[Callable[[Client], Awaitable[Any]]], Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "pictx_fsm.cli",
            "mcp",
            "--session",
            str(session),
            "--notes-home",
            str(notes),
            "--agent",
            "tester",
            *extra,
        ],
    )

    def run(body: Callable[[Client], Awaitable[Any]]) -> Any:
        async def session_body() -> Any:
            async with Client(params) as client:
                return await body(client)

        return anyio.run(session_body)

    return run


def _text(result: Any) -> str:
    return str(result.content[0].text)


# -- over stdio, with the SDK's client ------------------------------------------------------------


def test_an_mcp_client_lists_the_tools_and_writes_reads_and_searches_a_note(
    tmp_path: Path,
) -> None:
    # Given a Pi session file and an empty notes home, served by `pictx-fsm mcp`
    session = _session_file(tmp_path, "fix the parser")
    notes = tmp_path / "notes"
    client = _with_client(session, notes)

    async def body(c: Client) -> dict[str, Any]:
        listed = await c.list_tools()
        wrote = await c.call_tool("notes_write", {"address": "plan", "content": "# Plan\nstep one"})
        read = await c.call_tool("notes_read", {"address": "plan"})
        found = await c.call_tool("notes_search", {"query": "step"})
        return {"tools": listed.tools, "wrote": wrote, "read": read, "found": found}

    # When an MCP client session lists the tools, writes, reads and searches a note
    out = client(body)
    # Then it sees notesoup's nine notes and history tools with their schemas
    assert sorted(t.name for t in out["tools"]) == sorted(NOTES_TOOLS + HISTORY_TOOLS)
    write_tool = next(t for t in out["tools"] if t.name == "notes_write")
    assert write_tool.input_schema["required"] == ["address", "content"]
    assert write_tool.output_schema is not None
    # and the note is written in the session's notes home, read back and found
    assert not out["wrote"].is_error
    assert out["wrote"].structured_content == {"address": "plan.md", "outcome": "created"}
    home = notes.joinpath(*SESSION_NOTES_PARTS, "5e55a0b1-0000-4000-8000-000000000001")
    assert (home / "plan.md").is_file()
    assert not out["read"].is_error and _text(out["read"]).endswith("# Plan\nstep one")
    assert "line 2 at offset_chars 7: step one" in _text(out["found"])


@pytest.mark.parametrize("address", ["../escape", "@project/../../escape", "/etc/passwd"])
def test_an_mcp_client_cannot_write_outside_the_notes_root(tmp_path: Path, address: str) -> None:
    # Given the server over a notes home inside tmp_path/root
    session = _session_file(tmp_path, "task")
    notes = tmp_path / "root" / "notes"
    client = _with_client(session, notes)

    async def body(c: Client) -> Any:
        return await c.call_tool("notes_write", {"address": address, "content": "x"})

    # When a client writes to an address that leaves the root
    result = client(body)
    # Then the call is refused as an error result, with notesoup's typed refusal, and nothing
    # is written anywhere under tmp_path but (possibly) the empty notes root
    assert result.is_error
    assert _text(result).startswith("error: invalid_address")
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".jsonl"]
    assert written == []


def test_an_mcp_client_digs_through_the_sessions_history_as_pi_appends_to_it(
    tmp_path: Path,
) -> None:
    # Given a session with one exchange
    session = _session_file(tmp_path, "first question")
    client = _with_client(session, tmp_path / "notes")

    async def body(c: Client) -> tuple[str, str]:
        before = _text(await c.call_tool("history_search", {"query": "second"}))
        # Pi appends the next exchange while the client is connected
        (tmp_path / "later").mkdir()
        grown = _session_file(tmp_path / "later", "first question", "second question")
        session.write_text(grown.read_text(encoding="utf-8"), encoding="utf-8")
        after = _text(await c.call_tool("history_search", {"query": "second"}))
        return before, after

    # When it searches, then searches again after the file grew
    before, after = client(body)
    # Then the second search sees what was appended
    assert "second question" not in before
    assert "second question" in after


def test_pi_context_s_tools_are_served_too(tmp_path: Path) -> None:
    session = _session_file(tmp_path, "task")
    client = _with_client(session, tmp_path / "notes", "--extension", "pi-context")

    async def body(c: Client) -> tuple[list[str], Any, Any]:
        listed = await c.list_tools()
        wrote = await c.call_tool("notes_write", {"address": "plan", "content": "step one"})
        escaped = await c.call_tool("notes_write", {"address": "../x", "content": "x"})
        return [t.name for t in listed.tools], wrote, escaped

    names, wrote, escaped = client(body)
    assert "notes_edit" in names and "wipe_memory" not in names
    assert json.loads(_text(wrote))["address"] == "plan"
    # pi-context throws on an address that leaves its home: an error result (N4, N11)
    assert escaped.is_error and "unsupported component" in _text(escaped)


# -- the same tool as in Pi ------------------------------------------------------------------------


def _runtime_outcome(runtime: NotesoupRuntime, name: str, arguments: dict[str, Any]) -> Any:
    result = runtime.handle(ToolCall(name=name, arguments=arguments))
    assert isinstance(result, HookResult)
    return result.value


BIG_NOTE: Final = ("notes_write", {"address": "@project/design", "content": "# D\n" + "x" * 40_000})


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        BIG_NOTE,
        ("notes_read", {"address": "@project/design"}),
        ("notes_read", {"address": "@project/design", "offset_chars": 12_000}),
        ("notes_list", {}),
        ("notes_write", {"address": "../escape", "content": "x"}),
        ("history_list", {"limit": 1}),
        ("history_read", {"seq": 1}),
    ],
)
def test_an_mcp_call_answers_what_the_tool_answers_in_pi(
    tmp_path: Path, name: str, arguments: dict[str, Any]
) -> None:
    # Given the same session and notes home contents, once behind the MCP surface and once in
    # notesoup's runtime (the tool in Pi), at the same moment
    session = _session_file(tmp_path, "a long task " * 500)
    loaded = read_session(session)
    assert loaded.header is not None
    tree = SessionTree.from_entries(loaded.header, loaded.entries)
    served = tool_surface(
        tmp_path / "mcp", SessionFile(session).tree, agent="tester", clock=lambda: NOW_MS
    )
    runtime = NotesoupRuntime(
        tree, notes_home=tmp_path / "pi", notes_agent="tester", clock=lambda: int(NOW_MS)
    )
    if name != "notes_write":
        served.call(*BIG_NOTE)
        _runtime_outcome(runtime, *BIG_NOTE)
    # When the same call is made through both
    over_mcp = served.call(name, arguments)
    in_pi = _runtime_outcome(runtime, name, arguments)
    # Then the text (its budget, its window), the structured content and the error flag agree
    assert isinstance(over_mcp, ToolOutcome) and isinstance(in_pi, ToolOutcome)
    assert (over_mcp.text, over_mcp.structured, over_mcp.is_error) == (
        in_pi.text,
        in_pi.structured,
        in_pi.is_error,
    )
    result = call_result(over_mcp)
    assert result.is_error == in_pi.is_error and result.content[0].text == in_pi.text


# -- bad input -------------------------------------------------------------------------------------


def test_mcp_refuses_a_session_file_that_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text('{"type": "message"}\n', encoding="utf-8")
    code = main(["mcp", "--session", str(bogus), "--notes-home", str(tmp_path / "n")])
    assert code == 2
    assert f"{bogus}: not a Pi session file (no session header)" in capsys.readouterr().err


def test_mcp_refuses_a_missing_session_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["mcp", "--session", str(tmp_path / "nope.jsonl")])
    assert code == 2
    assert "nope.jsonl" in capsys.readouterr().err
