"""pi-context's whole tool surface on the model session (issue 10, item 2): the extension
registers all eleven tools, the nine notes and history tools run in the runtime against a
real notes directory and the session tree, and a batch orders as Pi 0.87 orders it (N2)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pictx_fsm import TOOL_SPECS, AuditLog, LifecycleRuntime, ModelInfo, SessionTree
from pictx_fsm.extensions.pi_context.adapter import LifecycleExtension
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE
from pictx_fsm.hosts.model import (
    Call,
    HostSettings,
    ModelSession,
    Response,
    ScriptedProvider,
    Text,
    TickClock,
    Tools,
)
from pictx_fsm.hosts.model.profiles import PI_0_87, PI_1_6, HostProfile
from pictx_fsm.session.entries import CustomMessageEntry, Entry, MessageEntry

NOTE = "goal: ship the bridge\nnext: register the nine tools"
TOOL_EVENTS = ("tool_execution_start", "tool_call", "tool_result", "tool_execution_end")


class Host:
    """A model session with pi-context and a temporary ``PI_NOTES_HOME``."""

    def __init__(self, root: Path, *script: Response, settings: HostSettings | None = None) -> None:
        self.notes_home = root / "notes"
        self.notes_home.mkdir()
        self.audit = AuditLog()
        clock = TickClock()
        self.extension = LifecycleExtension(
            lambda tree: LifecycleRuntime(
                tree,
                notes_home=self.notes_home,
                rng=random.Random(3),
                clock=clock,
                audit=self.audit,
            )
        )
        self.session = ModelSession(
            [self.extension], provider=ScriptedProvider(script), clock=clock, settings=settings
        )

    def run(self, prompt: str = "do the task") -> None:
        self.session.prompt(prompt)
        self.session.run_until_idle()

    def results(self, name: str) -> list[dict[str, Any]]:
        """The persisted tool results of ``name``, in file order."""
        return [
            e.message.raw
            for e in self.session.entries
            if isinstance(e, MessageEntry) and e.message.raw.get("toolName") == name
        ]

    def tool_events(self) -> list[tuple[str, str]]:
        """Tool hooks by tool name, and each persisted tool result (``message_end``)."""
        return [
            (e.name, e.detail.get("toolName") or e.detail["role"])
            for e in self.session.log.events
            if e.name in TOOL_EVENTS
            or (e.name == "message_end" and e.detail["role"] == "toolResult")
        ]

    def files(self) -> list[Path]:
        return sorted(p for p in self.notes_home.rglob("*") if p.is_file())


def write_then(address: str, content: str, then: Call) -> Tools:
    """One batch: ``notes_write`` then another call."""
    write = Call(name="notes_write", arguments={"address": address, "content": content})
    return Tools(calls=[write, then])


def text_of(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def boots(entries: list[Entry] | tuple[Entry, ...]) -> list[CustomMessageEntry]:
    return [e for e in entries if isinstance(e, CustomMessageEntry) and e.custom_type == BOOT_TYPE]


# -- registration ------------------------------------------------------------------------------


def test_r18_the_extension_registers_all_eleven_tools_with_their_execution_modes() -> None:
    # Given pi-context loaded into the model session
    extension = LifecycleExtension(lambda tree: LifecycleRuntime(tree))
    # Then every tool of the one schema is registered, write and edit sequential (N1, N2)
    assert list(extension.tools) == [spec.name for spec in TOOL_SPECS]
    assert extension.sequential_tools == {"notes_write", "notes_edit"}


def test_r18_the_first_request_declares_all_eleven_tools(tmp_path: Path) -> None:
    host = Host(tmp_path, Text(text="hi"))
    host.run()
    system = next(
        e.message.raw
        for e in host.session.entries
        if isinstance(e, MessageEntry) and e.message.raw["role"] == "system"
    )
    declared = {tool["name"] for tool in system["toolsAdded"]}
    assert {spec.name for spec in TOOL_SPECS} <= declared


# -- a note survives the reset -----------------------------------------------------------------


def test_a_note_written_before_wipe_memory_is_in_the_next_boot_and_readable_after(
    tmp_path: Path,
) -> None:
    # Given a model that checkpoints, then wipes, then reads its note in the new window
    host = Host(
        tmp_path,
        write_then("checkpoint.md", NOTE, Call(name="wipe_memory")),
        Tools(calls=[Call(name="notes_read", arguments={"address": "checkpoint.md"})]),
        Text(text="resumed"),
    )
    # When the run settles
    host.run()
    # Then the note is on disk in the session's home
    session_id = host.session.tree.session_id
    assert host.files() == [host.notes_home / "pi" / "session" / session_id / "checkpoint.md"]
    # And the reset's boot lists it in the pocket (the boot reads what the tool wrote)
    root_boot, reset_boot = boots(host.session.entries)
    assert "checkpoint.md" not in str(root_boot.content)
    assert "- checkpoint.md (2 lines, 51 UTF-8 bytes, updated" in str(reset_boot.content)
    # And the read in the new window returns the note exactly
    (read,) = host.results("notes_read")
    assert not read["isError"] and text_of(read).endswith("\n\n" + NOTE)
    assert read["details"]["next_offset_chars"] is None
    assert json.loads(text_of(host.results("notes_write")[0])) == {
        "address": "checkpoint.md",
        "written": True,
    }


def test_history_search_finds_a_pre_reset_message_the_provider_no_longer_sees(
    tmp_path: Path,
) -> None:
    # Given a prompt with a fact, a wipe, then a search of the history for it
    host = Host(
        tmp_path,
        Tools(calls=[Call(name="wipe_memory")]),
        Tools(calls=[Call(name="history_search", arguments={"query": "zanzibar"})]),
        Text(text="found it"),
    )
    host.run("the deploy password is zanzibar")
    # Then the request that asked for the search no longer carried the fact
    before_search = host.session.log.requests[1]
    assert "zanzibar" not in json.dumps(before_search.messages)
    # And the search found the user's message of the previous window
    (found,) = host.results("history_search")
    items = json.loads(text_of(found))["items"]
    prompt, search = (
        e
        for e in host.session.entries
        if isinstance(e, MessageEntry) and e.message.raw["role"] in ("user", "assistant")
        if "zanzibar" in json.dumps(e.message.raw)
    )
    assert [(i["item_id"], i["role"], i["match_offset_chars"]) for i in items] == [
        (f"{search.id}#0", "tool_call", 10),  # the search's own call, newest first
        (prompt.id, "user", 23),
    ]
    assert items[1]["window_id"].endswith(":root") and not found["isError"]


def test_n4_an_invalid_address_is_an_error_result_and_writes_nothing(tmp_path: Path) -> None:
    # Given a write to an address that climbs out of its home
    host = Host(
        tmp_path,
        Tools(calls=[Call(name="notes_write", arguments={"address": "../x.md", "content": "x"})]),
    )
    host.run()
    # Then Pi records an error result whose text is the thrown message
    (result,) = host.results("notes_write")
    assert result["isError"] and text_of(result) == "path contains an unsupported component"
    assert result["details"] == {}
    # And nothing was written, inside the notes home or beside it
    assert host.files() == [] and sorted(tmp_path.iterdir()) == [host.notes_home]


def test_n4_a_refusal_is_an_ordinary_result_the_model_reads(tmp_path: Path) -> None:
    host = Host(tmp_path, Tools(calls=[Call(name="notes_read", arguments={"address": "nope"})]))
    host.run()
    (result,) = host.results("notes_read")
    assert not result["isError"] and "details" not in result
    assert json.loads(text_of(result)) == {"error": "note not found", "address": "nope"}


# -- N2: execution modes -----------------------------------------------------------------------


def test_n2_a_batch_with_a_sequential_tool_runs_each_call_start_to_finish(tmp_path: Path) -> None:
    # Given a batch [notes_write, wipe_memory] (notes_write is sequential)
    host = Host(
        tmp_path,
        write_then("a.md", "a", Call(name="wipe_memory")),
    )
    host.run()
    # Then the write finishes, result persisted, before wipe_memory starts (Pi 0.87)
    assert host.tool_events() == [
        *((name, "notes_write") for name in TOOL_EVENTS),
        ("message_end", "toolResult"),
        *((name, "wipe_memory") for name in TOOL_EVENTS),
        ("message_end", "toolResult"),
    ]


def test_n2_a_batch_without_a_sequential_tool_starts_every_call_first(tmp_path: Path) -> None:
    host = Host(
        tmp_path,
        Tools(calls=[Call(name="notes_list"), Call(name="get_context_remaining")]),
    )
    host.run()
    assert host.tool_events() == [
        ("tool_execution_start", "notes_list"),
        ("tool_call", "notes_list"),
        ("tool_execution_start", "get_context_remaining"),
        ("tool_call", "get_context_remaining"),
        ("tool_result", "notes_list"),
        ("tool_execution_end", "notes_list"),
        ("tool_result", "get_context_remaining"),
        ("tool_execution_end", "get_context_remaining"),
        ("message_end", "toolResult"),
        ("message_end", "toolResult"),
    ]


@pytest.mark.parametrize(
    ("profile", "late"),
    [(PI_0_87, []), (PI_1_6, [("Operation aborted", True)])],
)
def test_n2_an_abort_during_a_sequential_batch_never_runs_the_later_write(
    tmp_path: Path, profile: HostProfile, late: list[tuple[str, bool]]
) -> None:
    # Given a sequential batch whose first call is still running when the user aborts
    host = Host(
        tmp_path,
        Tools(
            calls=[
                Call(name="echo", arguments={"text": "slow", "ms": 50}),
                Call(name="notes_write", arguments={"address": "late.md", "content": "x"}),
            ]
        ),
        settings=HostSettings(profile=profile),
    )
    host.session.prompt("go")
    host.session.run_until(lambda step: step.name == "tools_running")
    # When the user aborts
    host.session.abort()
    host.session.run_until_idle()
    # Then the running call fails and the write never runs: Pi 0.87 stops the batch, 1.6
    # answers the later call "Operation aborted" (pi#9986)
    assert text_of(host.results("echo")[0]) == "echo aborted"
    assert [(text_of(r), r["isError"]) for r in host.results("notes_write")] == late
    assert host.files() == []


# -- the audit shows every call ----------------------------------------------------------------


def test_every_tool_call_is_audited_with_its_arguments_digest_and_outcome(tmp_path: Path) -> None:
    host = Host(
        tmp_path,
        write_then("a.md", "secret", Call(name="notes_read", arguments={"address": "../a.md"})),
    )
    host.run()
    tools = [r for r in host.audit.records if r["hook"] == "tool"]
    assert [(r["event"]["name"], r["result"]["value"]["status"]) for r in tools] == [
        ("notes_write", "ok"),
        ("notes_read", "error"),
    ]
    assert set(tools[0]["event"]["arguments"]) == {"bytes", "sha256"}
    assert "secret" not in json.dumps(tools)
    assert all(r["steps"] == [] for r in tools)


@pytest.mark.parametrize(
    ("model", "slug"), [("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"), ("faux-1", "faux-1")]
)
def test_n9_model_notes_follow_the_session_model_and_the_boot_lists_them(
    tmp_path: Path, model: str, slug: str
) -> None:
    # Given a session on ``model`` whose model writes to @model, then wipes
    host = Host(
        tmp_path,
        write_then("@model/style.md", "x", Call(name="wipe_memory")),
        settings=HostSettings(model=ModelInfo(provider="faux", id=model, context_window=200_000)),
    )
    host.run()
    # Then the note is in that model's home and the next boot lists it there (N9, N13)
    (written,) = host.files()
    assert written == host.notes_home / "models" / slug / "style.md"
    boot = str(boots(host.session.entries)[-1].content)
    assert f"(brain: {slug})" in boot
    assert f"- @models/{slug}/style.md (1 lines, 1 UTF-8 bytes, updated" in boot


def test_a_session_tree_given_to_the_runtime_is_what_the_history_tools_read(
    tmp_path: Path,
) -> None:
    host = Host(tmp_path, Tools(calls=[Call(name="history_windows")]))
    host.run()
    runtime = host.extension.runtime
    assert isinstance(runtime, LifecycleRuntime)
    assert isinstance(runtime.tree, SessionTree) and runtime.tree is host.session.tree
    (result,) = host.results("history_windows")
    (window,) = json.loads(text_of(result))["windows"]
    assert window["item_count"] >= 1


def test_the_root_exports_one_tool_surface_for_every_host() -> None:
    # Given what a host imports from the package root
    import pictx_fsm
    from pictx_fsm.extensions.pi_context import tools

    # Then it is the tools package's one schema, and the JSON file hosts outside Python read
    assert pictx_fsm.TOOL_SPECS is tools.TOOL_SPECS
    assert tools.SCHEMA_FILE.read_text(encoding="utf-8") == tools.schema_document()
    assert tuple(spec.name for spec in TOOL_SPECS) == tools.TOOL_NAMES
    assert pictx_fsm.ToolOutcome.error("x").to_json() == {
        "content": [{"type": "text", "text": "x"}],
        "details": {},
        "isError": True,
    }
