"""The true path of one hook: every ``pictx_fsm`` module a ``turn_end`` crosses, in order.

The bridge server is run in this process and asked as Pi's extension asks it (one JSON line
per request): the session starts, a turn in which the model calls ``wipe_memory``, then the
``turn_end`` that commits the reset. The ``turn_end`` is asked twice (two sessions), the
second one traced, so that the path shows the modules that decide a hook, not those a first
call imports. ``docs/architecture.md`` lists the path this prints (tests/test_architecture.py
checks it is current).

    python scripts/hook_path.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from random import Random
from types import FrameType
from typing import Any

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime, pi_file_settings
from pictx_fsm.hosts.pi.server import BridgeSession, answer
from pictx_fsm.session.tree import SessionTree

__all__ = ["hook_path", "main"]

HEADER = {"type": "session", "version": 3, "id": "0196a1b2-0000-7000-8000-000000000000"}
HEADER |= {"timestamp": "2026-11-30T03:00:00.000Z", "cwd": "/work"}
MODEL = {"provider": "faux", "id": "faux-1", "contextWindow": 200000, "maxTokens": 16384}


def _entry(entry_id: str, parent: str | None, message: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t"} | {
        "message": dict(message)
    }


class _Pi:
    """What Pi's extension sends the server for one session, one JSON line per request."""

    def __init__(self, agent_dir: Path) -> None:
        def runtime(tree: SessionTree, ctx: Mapping[str, Any], audit: AuditLog | None) -> Any:
            settings = pi_file_settings(agent_dir)
            return LifecycleRuntime(tree, settings=settings, audit=audit, rng=Random(0))

        self.session = BridgeSession(runtime, lambda _: AuditLog())
        self.serial = 0
        self.leaf: str | None = None

    def ask(self, kind: str, name: str, event: Any, entries: list[dict[str, Any]]) -> Any:
        self.serial += 1
        self.leaf = entries[-1]["id"] if entries else self.leaf
        session: dict[str, Any] = {"entries": entries, "leaf": self.leaf}
        if self.session.tree is None:
            session["header"] = HEADER
        request = {"id": self.serial, "kind": kind, "name": name, "event": event}
        request |= {"ctx": {"cwd": "/work", "model": MODEL}, "session": session}
        reply = answer(self.session, json.dumps(request))
        if "error" in reply:
            raise RuntimeError(f"the bridge server refused {name}: {reply['error']}")
        return reply

    def wiping_turn(self) -> Callable[[], Any]:
        """Start the session and run a turn up to its ``turn_end``, which is returned."""
        root = _entry("m0", None, {"role": "user", "content": "hello", "timestamp": 1})
        self.ask("hook", "session_start", {"reason": "startup"}, [root])
        self.ask("hook", "turn_start", {"turnIndex": 0}, [])
        self.ask("tool", "wipe_memory", {"toolCallId": "call-1", "arguments": {}}, [])
        call = {"type": "toolCall", "id": "call-1", "name": "wipe_memory", "arguments": {}}
        assistant = {"role": "assistant", "content": [call], "stopReason": "toolUse"}
        result = {"role": "toolResult", "toolCallId": "call-1", "toolName": "wipe_memory"}
        result |= {"content": [{"type": "text", "text": "ok"}], "isError": False}
        entries = [
            _entry("m1", "m0", assistant | {"timestamp": 2}),
            _entry("m2", "m1", result | {"timestamp": 3}),
        ]
        event = {"message": assistant, "outcome": "completed", "entries": [], "turnIndex": 0}
        return lambda: self.ask("hook", "turn_end", event | {"pendingMessages": 0}, entries)


def _traced(call: Callable[[], Any]) -> list[str]:
    order: dict[str, None] = {}

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            if module.startswith("pictx_fsm"):
                order.setdefault(module)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return list(order)


def hook_path() -> list[str]:
    """The modules the second session's ``turn_end`` crosses, in the order first entered."""
    with tempfile.TemporaryDirectory() as home:
        _Pi(Path(home)).wiping_turn()()  # warm: imports and first-call caches
        turn_end = _Pi(Path(home)).wiping_turn()
        return _traced(turn_end)


def main() -> int:
    for number, module in enumerate(hook_path(), 1):
        print(f"{number}. {module}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
