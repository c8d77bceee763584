"""The notes and history tools in the real Pi (issue 10 item 3): the bridge registers all
eleven tools from the one schema, the server runs each call in the runtime on its synced
mirror, and an error outcome reaches Pi as an error result (N4). The server alone (always),
then the real Pi — each supported version, offline, faux provider, ``PI_NOTES_HOME`` a
temporary directory — against the model session with the same notes home: the same
tool-result texts, ``isError``, notes files and boot notes lines."""

from __future__ import annotations

import io
import json
import random
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen
from pi_versions import PiInstall
from real_pi import python_wrapper, run_pi

from pictx_fsm import AuditLog, LifecycleRuntime
from pictx_fsm.extensions.pi_context.adapter import LifecycleExtension
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE
from pictx_fsm.extensions.pi_context.tools.homes import LEGACY_HOME_CONFLICT
from pictx_fsm.host.events import ModelInfo
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
from pictx_fsm.hosts.model.profiles import host_profile
from pictx_fsm.hosts.pi import serve, texts
from pictx_fsm.session.entries import CustomMessageEntry, Entry, MessageEntry
from pictx_fsm.session.jsonl import read_session

HEADER = {
    "type": "session",
    "version": 3,
    "id": "01a22b3e-0000-7000-8000-000000000001",
    "timestamp": "2026-11-30T00:00:00.000Z",
    "cwd": "/home/demo/project",
}
CTX = {
    "cwd": "/home/demo/project",
    "model": {"provider": "faux", "id": "faux-1", "contextWindow": 200000, "maxTokens": 16384},
}
NOTE = "goal: ship the bridge\nnext: register the nine tools"


@pytest.fixture
def notes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's environment: a temporary ``PI_NOTES_HOME`` and agent directory."""
    monkeypatch.setenv("PI_NOTES_HOME", str(tmp_path / "notes"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PICTX_FSM_AUDIT_DIR", raising=False)
    return tmp_path / "notes"


def _message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t",
            "message": message}  # fmt: skip


def _start(entries: list[dict[str, Any]], leaf: str | None, kind: str = "hook") -> dict[str, Any]:
    session = {"header": HEADER, "entries": entries, "leaf": leaf}
    event = {"reason": "startup"}
    return {"id": 1, "kind": kind, "name": "session_start", "event": event, "ctx": CTX,
            "session": session}  # fmt: skip


def _tool(number: int, name: str, arguments: Mapping[str, Any], **session: Any) -> dict[str, Any]:
    return {"id": number, "kind": "tool", "name": name, "ctx": CTX,
            "event": {"arguments": dict(arguments), "toolCallId": f"call_{number}"},
            "session": {"entries": [], "leaf": None, **session}}  # fmt: skip


def _serve(*requests: dict[str, Any]) -> list[dict[str, Any]]:
    """The server as Pi starts it (its runtime from the environment)."""
    out = io.StringIO()
    assert serve([json.dumps(r) for r in requests], out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


# -- the server --------------------------------------------------------------------------------


def test_the_server_runs_a_notes_tool_with_its_arguments_in_the_session_s_home(
    notes_home: Path,
) -> None:
    # Given a session, then a notes_write call with its arguments and call id
    write = {"address": "checkpoint.md", "content": NOTE}
    replies = _serve(_start([], None), _tool(2, "notes_write", write))
    # Then the runtime ran it: an ordinary result, the note in this session's home (N9)
    assert "error" not in replies[1]
    text = '{\n  "address": "checkpoint.md",\n  "written": true\n}'
    assert replies[1]["value"] == {"content": [{"type": "text", "text": text}], "isError": False}
    note = notes_home / "pi" / "session" / HEADER["id"] / "checkpoint.md"
    assert note.read_text(encoding="utf-8").endswith("\n---\n\n" + NOTE)


def test_r76_a_history_tool_reads_the_mirror_synced_with_its_own_call(notes_home: Path) -> None:
    # Given a session whose prompt arrives with the history_search call itself
    prompt = _message("u1", None, "user", "the deploy password is zanzibar")
    search = _tool(2, "history_search", {"query": "zanzibar"}, entries=[prompt], leaf="u1")
    replies = _serve(_start([], None), search)
    # Then the search saw the entry the same request synced
    items = json.loads(replies[1]["value"]["content"][0]["text"])["items"]
    assert [(i["item_id"], i["role"], i["match_offset_chars"]) for i in items] == [
        ("u1", "user", 23)
    ]


def test_n4_an_error_is_an_error_result_and_a_refusal_an_ordinary_one(notes_home: Path) -> None:
    # Given an address that climbs out of its home, and a read of a note that is not there
    climb = _tool(2, "notes_write", {"address": "../x.md", "content": "x"})
    missing = _tool(3, "notes_read", {"address": "nope.md"})
    _, thrown, refused = _serve(_start([], None), climb, missing)
    # Then the first travels as isError (the extension throws it: Pi's error result), the
    # second as a result the model reads; nothing was written
    assert thrown["value"] == {
        "content": [{"type": "text", "text": "path contains an unsupported component"}],
        "details": {},
        "isError": True,
    }
    assert refused["value"]["isError"] is False
    assert json.loads(refused["value"]["content"][0]["text"])["error"] == "note not found"
    assert not notes_home.exists() or not any(p.is_file() for p in notes_home.rglob("*"))


def test_n16_a_legacy_home_is_migrated_once_at_activation(notes_home: Path) -> None:
    # Given a notes home with a legacy personal/ home
    (notes_home / "personal").mkdir(parents=True)
    (notes_home / "personal" / "kept.md").write_text("x")
    # When a server answers its first request
    (reply,) = _serve(_start([], None))
    # Then personal/ became human/, silently
    assert (notes_home / "human" / "kept.md").read_text() == "x"
    assert not (notes_home / "personal").exists()
    assert all(e.get("level") != "warning" for e in reply["effects"])


def test_n16_both_homes_are_left_alone_and_told_once_per_activation(notes_home: Path) -> None:
    # Given both personal/ and human/
    for home in ("personal", "human"):
        (notes_home / home).mkdir(parents=True)
    # When a server answers two requests, and a restarted one resynchronises
    first, second = _serve(_start([], None), {**_start([], None), "id": 2, "name": "turn_start"})
    (resynced,) = _serve(_start([], None, kind="resync"))
    # Then nothing moved, and only the activation's first reply warns (pi-context's text)
    assert (notes_home / "personal").is_dir() and (notes_home / "human").is_dir()
    warning = {"effect": "notify", "message": LEGACY_HOME_CONFLICT, "level": "warning"}
    assert first["effects"][0] == warning
    assert warning not in second["effects"] and warning not in resynced["effects"]


# -- the real Pi against the model session -----------------------------------------------------


@frozen(kw_only=True)
class Story:
    """One prompt and the model's replies, as both hosts script them."""

    prompt: str
    replies: tuple[Response, ...]

    def faux_script(self) -> list[dict[str, Any]]:
        return [_faux(reply) for reply in self.replies]


def _faux(reply: Response) -> dict[str, Any]:
    if isinstance(reply, Text):
        return {"text": reply.text}
    assert isinstance(reply, Tools)
    return {"tools": [{"name": c.name, "args": dict(c.arguments)} for c in reply.calls]}


def _write(address: str, content: str) -> Call:
    return Call(name="notes_write", arguments={"address": address, "content": content})


STORIES = {
    # A note written before wipe_memory is in the next boot's index, readable after the reset
    "note-survives-the-reset": Story(
        prompt="checkpoint, then wipe",
        replies=(
            Tools(calls=(_write("checkpoint.md", NOTE), Call(name="wipe_memory"))),
            Tools(calls=(Call(name="notes_read", arguments={"address": "checkpoint.md"}),)),
            Text(text="resumed"),
        ),
    ),
    # history_search finds a pre-reset message the provider no longer sees
    "history-after-the-reset": Story(
        prompt="the deploy password is zanzibar",
        replies=(
            Tools(calls=(Call(name="wipe_memory"),)),
            Tools(calls=(Call(name="history_search", arguments={"query": "zanzibar"}),)),
            Text(text="found it"),
        ),
    ),
    # An invalid address is an error result and writes nothing; a refusal is a result
    "invalid-address": Story(
        prompt="write it outside",
        replies=(
            Tools(calls=(_write("../x.md", "x"),)),
            Tools(calls=(Call(name="notes_read", arguments={"address": "nope.md"}),)),
            Text(text="done"),
        ),
    ),
}


@frozen(kw_only=True)
class Seen:
    """What a run left, comparable across hosts (ids, times and window ids canonical)."""

    results: tuple[tuple[str, str, bool, str], ...]
    """Each tool result: tool, text, isError, details (JSON)."""
    files: tuple[tuple[str, str], ...]
    """Each file under the notes home: its path (the session id canonical) and content."""
    boot_notes: tuple[tuple[str, ...], ...]
    """Each boot's notes index lines."""


def _model(story: Story, notes_home: Path, profile: str) -> tuple[Seen, list[Any]]:
    clock = TickClock()
    extension = LifecycleExtension(
        lambda tree: LifecycleRuntime(
            tree, notes_home=notes_home, rng=random.Random(5), clock=clock, audit=AuditLog()
        )
    )
    model = ModelInfo(provider="faux", id="faux-1", context_window=200_000, max_tokens=16_384)
    settings = HostSettings(profile=host_profile(profile), model=model)
    session = ModelSession(
        [extension], provider=ScriptedProvider(story.replies), clock=clock, settings=settings
    )
    session.prompt(story.prompt)
    session.run_until_idle()
    session.dispose()
    requests = [r.messages for r in session.log.requests]
    return _seen(session.entries, notes_home), requests


def _seen(entries: Sequence[Entry], notes_home: Path) -> Seen:
    canon = Canon()
    results = tuple(
        (
            str(raw["toolName"]),
            canon(raw["content"][0]["text"]),
            bool(raw["isError"]),
            canon(json.dumps(raw.get("details"), sort_keys=True)),
        )
        for e in entries
        if isinstance(e, MessageEntry) and (raw := e.message.raw)["role"] == "toolResult"
    )
    files = tuple(
        (canon(str(path.relative_to(notes_home))), canon(path.read_text(encoding="utf-8")))
        for path in sorted(notes_home.rglob("*"))
        if path.is_file()
    )
    boot_notes = tuple(
        tuple(canon(line) for line in str(e.content).splitlines() if line.startswith("- "))
        for e in entries
        if isinstance(e, CustomMessageEntry) and e.custom_type == BOOT_TYPE
    )
    return Seen(results=results, files=files, boot_notes=boot_notes)


class Canon:
    """Renames what differs between two runs by nature — session ids, entry and window ids,
    times — to placeholders numbered by first appearance, so equal stories compare equal."""

    PATTERNS = (
        ("session", re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")),
        ("window", re.compile(r"pcw:[0-9a-f]{8}:(?:root|[0-9a-f]{8})")),
        ("time", re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")),
        ("age", re.compile(r"updated [0-9]+[smhd] ago")),
        ("id", re.compile(r"\b[0-9a-f]{8}\b")),
    )

    def __init__(self) -> None:
        self.names: dict[tuple[str, str], str] = {}

    def __call__(self, text: str) -> str:
        for kind, pattern in self.PATTERNS:
            text = pattern.sub(lambda found, kind=kind: self._name(kind, found.group()), text)
        return text

    def _name(self, kind: str, value: str) -> str:
        if kind in ("time", "age"):
            return f"<{kind}>"
        return self.names.setdefault((kind, value), f"<{kind} {len(self.names)}>")


def _real(tmp_path: Path, story: Story) -> tuple[Seen, list[Any]]:
    run = run_pi(tmp_path, story.faux_script(), story.prompt)
    assert run.returncode == 0, run.stderr
    entries = read_session(run.session_file()).entries
    return _seen(entries, tmp_path / "notes"), [r["messages"] for r in run.requests]


def _texts(messages: Iterable[Mapping[str, Any]]) -> str:
    return json.dumps([m for m in messages if m.get("role") != "system"])


@pytest.mark.real_pi
@pytest.mark.parametrize("name", sorted(STORIES))
def test_the_tools_in_the_real_pi_answer_as_on_the_model_session(
    name: str, tmp_path: Path, pi_install: PiInstall
) -> None:
    # Given the same prompt and replies, and an empty notes home on each host
    story = STORIES[name]
    # When each runs it (the real Pi through the bridge, PI_NOTES_HOME=tmp)
    model, model_requests = _model(story, tmp_path / "model-notes", pi_install.host_profile)
    real, real_requests = _real(tmp_path, story)
    # Then the tool results (texts, isError, details), the notes files and the boots' notes
    # lines are the same
    assert real.results == model.results
    assert real.files == model.files
    assert real.boot_notes == model.boot_notes
    assert len(real_requests) == len(model_requests)


@pytest.mark.real_pi
def test_n4_a_note_written_before_wipe_memory_is_indexed_and_read_after_the_reset_in_pi(
    tmp_path: Path,
) -> None:
    seen, _ = _real(tmp_path, STORIES["note-survives-the-reset"])
    # Then the write and the read succeeded, the reset's boot lists the note (R70–R74)
    assert [(tool, error) for tool, _, error, _ in seen.results] == [
        ("notes_write", False), ("wipe_memory", False), ("notes_read", False),
    ]  # fmt: skip
    assert seen.results[2][1].endswith("\n\n" + NOTE)
    root_boot, reset_boot = seen.boot_notes
    assert root_boot == () and reset_boot == ("- checkpoint.md (2 lines, 51 UTF-8 bytes, <age>)",)
    [(path, content)] = seen.files
    assert path == "pi/session/<session 0>/checkpoint.md" and content.endswith(NOTE)


@pytest.mark.real_pi
def test_r78_history_search_in_pi_finds_what_the_provider_no_longer_sees(tmp_path: Path) -> None:
    seen, requests = _real(tmp_path, STORIES["history-after-the-reset"])
    # Then the request after the reset did not carry the fact, the search found it
    assert "zanzibar" in _texts(requests[0]) and "zanzibar" not in _texts(requests[1])
    found = json.loads(seen.results[1][1])["items"]
    assert [(i["role"], i["match_offset_chars"]) for i in found] == [
        ("tool_call", 10),
        ("user", 23),
    ]


@pytest.mark.real_pi
def test_n4_an_invalid_address_in_pi_is_an_error_result_and_writes_nothing(
    tmp_path: Path,
) -> None:
    seen, _ = _real(tmp_path, STORIES["invalid-address"])
    # Then Pi recorded the thrown message as an error result; the refusal as a result
    write, read = seen.results
    assert write == ("notes_write", "path contains an unsupported component", True, "{}")
    assert read[2] is False and json.loads(read[1])["error"] == "note not found"
    assert seen.files == ()
    assert not (tmp_path / "x.md").exists() and not (tmp_path / "notes").exists()


def test_without_python_every_tool_answers_a_clear_error_result(tmp_path: Path) -> None:
    # Given a Python that cannot run the server, and a model calling a notes tool
    bare = python_wrapper(tmp_path, "bare-python", f'exec "{sys.executable}" -I -S "$@"')
    script = [_faux(Tools(calls=(_write("a.md", "x"),))), {"text": "ok"}]
    run = run_pi(tmp_path, script, "write", env={"PICTX_FSM_PYTHON": str(bare)})
    # Then Pi ran on; the call is an error result naming the unavailable server
    assert run.returncode == 0
    [result] = [
        e.message.raw
        for e in read_session(run.session_file()).entries
        if isinstance(e, MessageEntry) and e.message.raw["role"] == "toolResult"
    ]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith(texts.TOOL_UNAVAILABLE.split("{state}")[0] + "degraded: ")
    assert text.endswith("; notes_write did nothing. Your context window continues.")
    assert not (tmp_path / "notes").exists()
