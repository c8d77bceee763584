"""What a differential run compares between the real Pi and the model session, in a form both
sides produce: every session file's entries (kind and parent), every agent request the provider
received (roles, and which of the run's own texts each message carried), and every lifecycle
decision (each audited hook with the transitions it fired, in order).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from attrs import frozen

from pictx_fsm.hosts.pi.connection import MACHINE as CONNECTION_MACHINE
from pictx_fsm.session.entries import Entry

__all__ = [
    "COMPARED",
    "KNOWN_PREFIX",
    "SKIPPED_ENTRIES",
    "Decisions",
    "Observed",
    "Request",
    "Shape",
    "decisions",
    "differences",
    "entry_kind",
    "known_texts",
    "labelled",
    "leading_text",
    "shape",
]

JSON: TypeAlias = Any
Shape: TypeAlias = tuple[tuple[str, int | None], ...]
"""A session file as compared: each entry's kind and its parent's index (``None``: a root)."""
Request: TypeAlias = tuple[tuple[str, str], ...]
"""An agent request as compared: each message's role and the known text it leads with."""
Decisions: TypeAlias = tuple[tuple[str, tuple[str, ...]], ...]
"""Each audited hook with the transition ids it fired, in order."""
SKIPPED_ENTRIES = ("model_change", "thinking_level_change")
"""Entries the model session does not write for a fixed model (both hosts agree otherwise)."""
KNOWN_PREFIX = 200
"""How much of a message's text the request logs keep (and known texts are compared by)."""
COMPARED = ("files", "requests", "decisions")
"""The compared dimensions of every differential run."""


@frozen(kw_only=True)
class Observed:
    """What one side did, in comparable form."""

    files: tuple[Shape, ...]
    requests: tuple[Request, ...]
    decisions: Decisions

    @property
    def fired(self) -> set[str]:
        return {transition for _, fired in self.decisions for transition in fired}

    def to_json(self) -> dict[str, JSON]:
        return {
            "files": [[list(pair) for pair in file] for file in self.files],
            "requests": [[list(pair) for pair in request] for request in self.requests],
            "decisions": [[hook, list(fired)] for hook, fired in self.decisions],
        }


def differences(model: Observed, real: Observed) -> tuple[str, ...]:
    """The compared dimensions in which the model session and the real Pi disagree."""
    return tuple(name for name in COMPARED if getattr(model, name) != getattr(real, name))


def entry_kind(entry: Any) -> str:
    """A message's role, a custom entry's customType, else the entry type."""
    custom = getattr(entry, "custom_type", None)
    if custom:
        return str(custom)
    return str(entry.message.role) if entry.type == "message" else str(entry.type)


def shape(entries: Iterable[Entry]) -> Shape:
    """Kinds and parents of a file's entries, without the model/thinking bookkeeping."""
    entries = list(entries)
    parents = {e.id: e.parent_id for e in entries}
    kept = [e for e in entries if e.type not in SKIPPED_ENTRIES]
    index = {e.id: i for i, e in enumerate(kept)}
    out = []
    for entry in kept:
        parent = entry.parent_id
        while parent is not None and parent not in index:
            parent = parents.get(parent)
        out.append((entry_kind(entry), None if parent is None else index[parent]))
    return tuple(out)


def leading_text(message: Mapping[str, JSON]) -> str:
    """The text blocks of a message, joined, cut to :data:`KNOWN_PREFIX` characters (what the
    faux request log records)."""
    content = message.get("content")
    if isinstance(content, str):
        return content[:KNOWN_PREFIX]
    blocks = content if isinstance(content, list) else ()
    texts = (
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )
    return "\n".join(texts)[:KNOWN_PREFIX]


def labelled(messages: Iterable[Mapping[str, JSON]], known: frozenset[str]) -> Request:
    """Each message's role, with its text when the text is one the run wrote."""
    return tuple(
        (str(m["role"]), text if (text := str(m["text"])) in known else "") for m in messages
    )


def decisions(records: Iterable[Mapping[str, JSON]]) -> Decisions:
    """Each audited lifecycle hook with the transition ids it fired, in order (the bridge's
    own connection records are left out: the model session has no bridge)."""
    return tuple(
        (str(r["hook"]), tuple(t["id"] for s in r["steps"] for t in s["transitions"]))
        for r in records
        if r["hook"] != CONNECTION_MACHINE
    )


def known_texts(texts: Sequence[str]) -> frozenset[str]:
    """The run's own texts as the request logs show them."""
    return frozenset(text[:KNOWN_PREFIX] for text in texts if text)
