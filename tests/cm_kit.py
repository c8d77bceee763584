"""Helpers for pi-context-management's rule tests: a world on the model session, the
actions of :mod:`pictx_fsm.extensions.context_management.kit.actions`, and readings of what it
persisted, logged
and showed."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from attrs import evolve

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management import initial_state, step
from pictx_fsm.extensions.context_management.kit import actions as cm
from pictx_fsm.extensions.context_management.kit.invariants_handoff import WorldSuite
from pictx_fsm.extensions.context_management.kit.world import World, WorldConfig
from pictx_fsm.extensions.context_management.records import (
    AUTO_TYPE,
    EVENT_TYPE,
    HANDOFF_TYPE,
    NOTES_TYPE,
    RECEIPT_TYPE,
    TAKEOVER_TYPE,
)
from pictx_fsm.extensions.context_management.state import CmState, Flags
from pictx_fsm.host.effects import ToolResult
from pictx_fsm.session.entries import CompactionEntry, CustomEntry, MessageEntry
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing import actions as shared

P = shared.Prompt
S = shared.Settle()
D = cm.Drain()
T = cm.Turn
C = cm.CtxMemory
MINUTE = 60_000
__all__ = [
    "AUTO_TYPE",
    "EVENT_TYPE",
    "HANDOFF_TYPE",
    "NOTES_TYPE",
    "RECEIPT_TYPE",
    "TAKEOVER_TYPE",
    "C",
    "D",
    "P",
    "S",
    "T",
    "cm",
    "shared",
]


def world(**config: Any) -> World:
    return World(WorldConfig(**config))


def play(w: World, *actions: Any, check: bool = True) -> World:
    """Apply ``actions``; with ``check`` every §12 invariant must hold after each."""
    suite = WorldSuite()
    for action in actions:
        w.apply(action)
        if check:
            found = suite.check(w)
            assert not found, f"after {action}: {found[0]}"
    return w


def tool(**fields: Any) -> tuple[Any, ...]:
    """The model calls one of the extension's tools in reply to the next prompt."""
    return (cm.CmTool(**fields), P(chars=200), S)


def wait(minutes: float) -> cm.Wait:
    return cm.Wait(ms=int(minutes * MINUTE))


def fill(rounds: int, chars: int = 60_000) -> tuple[Any, ...]:
    out: list[Any] = []
    for _ in range(rounds):
        out += [T(chars=chars), wait(1.1)]
    return tuple(out)


def state(w: World) -> CmState:
    return w.runtimes[-1].state


def machine(w: World, name: str) -> str:
    return state(w).state_of(name)


def customs(w: World, custom_type: str, path: str | None = None) -> list[Any]:
    tree = w.session.files[path].tree if path else w.session.tree
    return [
        e.data for e in tree.entries if isinstance(e, CustomEntry) and e.custom_type == custom_type
    ]


def checkpoints(w: World) -> list[CompactionEntry]:
    return [e for e in w.session.tree.entries if isinstance(e, CompactionEntry) and e.from_hook]


def notices(w: World) -> list[str]:
    return [n.message for n in w.session.log.notices]


def fired(w: World) -> list[str]:
    return [t for r in w.journal.steps for t in r.result.fired]


def tool_payloads(w: World, name: str | None = None) -> list[Mapping[str, Any]]:
    """What each tool call answered (a call whose write failed answers from the
    ``StorageFailed`` step that replaced it)."""
    out = []
    called: str | None = None
    for record in w.journal.steps:
        event, value = record.event, record.result.value
        if isinstance(event, ev.ToolCalled):
            called = event.name
        if record.rolled_back or not isinstance(value, ToolResult):
            continue
        if isinstance(event, ev.ToolCalled | ev.StorageFailed) and name in (None, called):
            out.append(value.payload)
    return out


def log_records(w: World, path: str | None = None) -> list[dict[str, Any]]:
    file = (path or w.session.session_file) + ".ctxlog.jsonl"
    data = w.extension.files.read(file) or b""
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def user_ids(w: World) -> list[str]:
    return w.message_ids()["user"]


def messages(w: World, role: str) -> list[MessageEntry]:
    return [
        e for e in w.session.tree.branch() if isinstance(e, MessageEntry) and e.message.role == role
    ]


# -- the pure step, without a host ---------------------------------------------------------------


def bare_tree() -> SessionTree:
    from pictx_fsm.session.entries import SessionHeader

    return SessionTree(
        SessionHeader(id="s0000000-0000", timestamp="2026-01-01T00:00:00.000Z", cwd="/w")
    )


def started(tree: SessionTree, *, now: int = 1_000_000, flags: Flags | None = None) -> CmState:
    """A fresh instance after ``session_start`` on ``tree``."""
    state0 = initial_state(flags or Flags(), now)
    state1, _ = step(state0, ev.SessionStarted(), ctx(now), ev.CmServices(tree=tree))
    return state1


def ctx(now: int = 1_000_000, **fields: Any) -> ev.CmContext:
    base = ev.CmContext(
        now=now, tokens=1_000, context_window=64_000, model="faux/faux-1", session_file="/s.jsonl"
    )
    return evolve(base, **fields)


def each(items: Iterable[Any]) -> list[Any]:
    return list(items)
