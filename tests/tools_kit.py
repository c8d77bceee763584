"""Calling the notes and history tools in tests: a temporary notes root, a stepping clock,
UTC timestamps, and readers for JSON results and READ WINDOW results."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

from attrs import define, field

from pictx_fsm.extensions.pi_context.tools import (
    NotesIdentity,
    ToolContext,
    ToolOutcome,
    execute_tool,
)
from pictx_fsm.session.tree import SessionTree

SESSION = "s-0001"
PROJECT = "repo-0a1b2c3d"
START_MS = 1_700_000_000_000

_HEADER = re.compile(
    r"--- READ WINDOW ---\n(?P<fields>(?:[a-z_]+: .*\n)*?)chars: \[(?P<a>\d+),(?P<b>\d+)\) of "
    r"(?P<total>\d+)\nnext_offset_chars: (?P<next>\d+|null)\n\n",
)


@define
class Clock:
    """Epoch milliseconds that step by ``step`` on every read."""

    now: float = START_MS
    step: float = 1000
    reads: int = 0

    def __call__(self) -> float:
        self.now += self.step
        self.reads += 1
        return self.now


@define
class Notes:
    """One notes root and identity; ``call`` runs a tool like a host does."""

    root: Path
    agent: str = "root"
    model: str = "default"
    session: str = SESSION
    clock: Clock = field(factory=Clock)
    history: SessionTree | None = None

    @property
    def context(self) -> ToolContext:
        identity = NotesIdentity(
            session_id=self.session, project_key=PROJECT, agent=self.agent, model=self.model
        )
        return ToolContext(
            notes_root=self.root,
            identity=identity,
            history=self.history,
            clock=self.clock,
            zone=UTC,
        )

    def call(self, name: str, **arguments: Any) -> ToolOutcome:
        return execute_tool(name, arguments, self.context)

    def ok(self, name: str, **arguments: Any) -> Any:
        """The JSON of a successful call."""
        outcome = self.call(name, **arguments)
        assert outcome.status == "ok", outcome
        return json.loads(outcome.text)

    def refusal(self, name: str, **arguments: Any) -> dict[str, Any]:
        outcome = self.call(name, **arguments)
        assert outcome.status == "refusal", outcome
        value: dict[str, Any] = json.loads(outcome.text)
        return value

    def error(self, name: str, **arguments: Any) -> str:
        outcome = self.call(name, **arguments)
        assert outcome.status == "error", outcome
        return outcome.text

    def session_dir(self) -> Path:
        return self.root / "pi" / "session" / self.session

    def files(self) -> list[str]:
        """Every file below the root, relative and sorted."""
        return sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*") if p.is_file())

    def pages(self, name: str, **arguments: Any) -> Iterator[dict[str, Any]]:
        """Follow ``next_cursor`` from the start."""
        cursor: int | None = 0
        while cursor is not None:
            outcome = self.call(name, cursor=cursor, **arguments)
            assert outcome.status == "ok", outcome
            assert len(outcome.text.encode("utf-8")) <= 32 * 1024
            page = json.loads(outcome.text)
            yield page
            cursor = page["next_cursor"]


@define(frozen=True)
class Read:
    """A parsed READ WINDOW result."""

    header: str
    fields: dict[str, str]
    start: int
    end: int
    total: int
    next_offset: int | None
    content: str
    details: Any


def read_result(outcome: ToolOutcome) -> Read:
    assert outcome.status == "ok", outcome
    assert len(outcome.text.encode("utf-8", errors="surrogatepass")) <= 32 * 1024
    match = _HEADER.match(outcome.text)
    assert match is not None, outcome.text[:300]
    fields = dict(line.split(": ", 1) for line in match["fields"].splitlines())
    return Read(
        header=match.group(0)[:-1],
        fields=fields,
        start=int(match["a"]),
        end=int(match["b"]),
        total=int(match["total"]),
        next_offset=None if match["next"] == "null" else int(match["next"]),
        content=outcome.text[match.end() :],
        details=outcome.details,
    )


def follow_reads(notes: Notes, name: str, **identity: Any) -> tuple[str, list[Read]]:
    """Read from offset 0 following ``next_offset_chars``; the concatenated content."""
    reads = [read_result(notes.call(name, **identity))]
    while reads[-1].next_offset is not None:
        reads.append(read_result(notes.call(name, offset_chars=reads[-1].next_offset, **identity)))
    return "".join(read.content for read in reads), reads
