"""Shared set-up for the pydantic-ai host tests: a session, a scripted model, an agent."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from pydantic_ai import Agent

from pictx_fsm.hosts.pydantic_ai import LifecycleSettings, PiContext, PiSession
from pictx_fsm.hosts.pydantic_ai.history import is_envelope
from pictx_fsm.hosts.pydantic_ai.scripted import Reply, ScriptedModel
from pictx_fsm.session.entries import CustomEntry, CustomMessageEntry, Entry, MessageEntry

WINDOW = 100_000
"""With the default reserve (16384): guidance at ≥ 59040 tokens, warning at ≥ 71328, the
automatic reset at ≥ 83616 (R44, R50)."""


def new_session(path: Path | None = None, seed: int = 7, **options: Any) -> PiSession:
    """A session on the wall clock: pydantic-ai stamps its messages with it, and the
    lifecycle's entries must share that time line (Pi's estimator compares timestamps).
    Its notes home is a fresh directory (never the developer's ``$PI_NOTES_HOME``)."""
    options.setdefault("config", LifecycleSettings(notes_home=fresh_notes_home()))
    return PiSession.create(path, rng=random.Random(seed), **options)


def lifecycle(**options: Any) -> LifecycleSettings:
    """Settings with a fresh notes home (never the developer's ``$PI_NOTES_HOME``)."""
    return LifecycleSettings(notes_home=fresh_notes_home(), **options)


def fresh_notes_home() -> Path:
    return Path(tempfile.mkdtemp(prefix="pictx-pydantic-notes-")) / "notes"


def agent_for(
    session: PiSession, *replies: Reply, window: int | None = WINDOW, capability: Any = None
) -> tuple[Agent[None, str], ScriptedModel]:
    model = ScriptedModel(replies, session)
    cap = capability or PiContext(session, context_window=window, max_tokens=4096)
    echo_agent: Agent[None, str] = Agent(model.model, capabilities=[cap])

    @echo_agent.tool_plain
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo:{text}"

    return echo_agent, model


def conversation(session: PiSession) -> list[Entry]:
    """The active branch without the envelopes pydantic-ai completed after the fact."""
    return [entry for entry in session.tree.branch() if not is_envelope(entry)]


def kinds(entries: list[Entry]) -> list[str]:
    """A message's role, a custom entry's customType (a request's completed envelope, which
    is pydantic-ai's bookkeeping, left out)."""
    out = []
    for entry in entries:
        if is_envelope(entry):
            continue
        if isinstance(entry, CustomEntry | CustomMessageEntry):
            out.append(entry.custom_type)
        elif isinstance(entry, MessageEntry):
            out.append(entry.message.role)
        else:
            out.append(entry.type)
    return out


def texts(messages: tuple[Any, ...]) -> list[str]:
    """Every text a provider request carried (content blocks and plain strings)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "text":
                out.append(block["text"])
    return out
