"""Building Pi sessions in tests: entries shaped exactly as Pi 0.87 writes them.

Ids are sequential 8-hex strings and the clock advances one second per entry, so every
session is deterministic. Messages carry epoch-millisecond timestamps, entries ISO strings.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
)
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.session.entries import Entry, SessionHeader, entry_from_json, header_from_json
from pictx_fsm.session.tree import SessionTree

SESSION_ID = "01a22a68-d3ef-7474-9fd4-4c634fe3ee81"
START = datetime(2026, 11, 30, 3, 4, 2, tzinfo=UTC)


def header(session_id: str = SESSION_ID) -> SessionHeader:
    parsed, problems = header_from_json(
        {"type": "session", "version": 3, "id": session_id, "timestamp": "t", "cwd": "/w"}
    )
    assert parsed is not None and not problems
    return parsed


def entry(obj: dict[str, Any]) -> Entry:
    parsed, problems = entry_from_json(obj)
    assert not problems, problems
    return parsed


def usage(total: int) -> dict[str, Any]:
    return {
        "input": total - 10,
        "output": 10,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": total,
    }


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


class SessionBuilder:
    """Appends entries under the current leaf of a :class:`SessionTree`."""

    def __init__(self, session_id: str = SESSION_ID, tree: SessionTree | None = None) -> None:
        self.tree = tree if tree is not None else SessionTree(header(session_id))
        # Continue after the highest serial id already present: a forked tree holds a path,
        # so its length is no guide, and a reused id would make duplicate entries.
        self._serial = max(
            (int(e.id, 16) for e in self.tree.entries if e.id and _is_hex(e.id)),
            default=len(self.tree.entries),
        )

    # -- plumbing ----------------------------------------------------------------------------

    def _stamp(self) -> tuple[str, str, int]:
        self._serial += 1
        moment = START + timedelta(seconds=self._serial)
        iso = moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        return f"{self._serial:08x}", iso, int(moment.timestamp() * 1000)

    def add(self, kind: str, **fields: Any) -> str:
        entry_id, iso, _ = self._stamp()
        obj = {"type": kind, "id": entry_id, "parentId": self.tree.leaf_id, "timestamp": iso}
        obj.update(fields)
        self.tree.append(entry(obj))
        return entry_id

    def message(self, role: str, *, stamp: int | None = None, **fields: Any) -> str:
        entry_id, iso, ms = self._stamp()
        body = {"role": role, **fields, "timestamp": ms if stamp is None else stamp}
        obj = {"type": "message", "id": entry_id, "parentId": self.tree.leaf_id, "timestamp": iso}
        obj["message"] = body
        self.tree.append(entry(obj))
        return entry_id

    # -- messages ----------------------------------------------------------------------------

    def system(self, sections: dict[str, Any] | None = None, **fields: Any) -> str:
        sections = {"preamble": "You are Pi."} if sections is None else sections
        return self.message(
            "system", content=fields.pop("content", ""), sections=sections, **fields
        )

    def user(self, text: str = "hello", **fields: Any) -> str:
        return self.message("user", content=[{"type": "text", "text": text}], **fields)

    def assistant(
        self,
        text: str = "answer",
        *,
        total: int = 100,
        stop: str = "stop",
        calls: list[dict[str, Any]] | None = None,
        **fields: Any,
    ) -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for index, call in enumerate(calls or []):
            content.append({"type": "toolCall", "id": f"call_{index}", **call})
        return self.message(
            "assistant", content=content, usage=usage(total), stopReason=stop, **fields
        )

    def tool_result(self, text: str = "ok", *, name: str = "echo", error: bool = False) -> str:
        return self.message(
            "toolResult",
            toolCallId="call_0",
            toolName=name,
            content=[{"type": "text", "text": text}],
            isError=error,
        )

    def bash(self, command: str = "ls", output: str = "a\nb", **fields: Any) -> str:
        defaults: dict[str, Any] = {"exitCode": 0, "cancelled": False, "truncated": False}
        return self.message(
            "bashExecution", command=command, output=output, **{**defaults, **fields}
        )

    # -- other entries -----------------------------------------------------------------------

    def custom(self, custom_type: str = "note", data: Any = None) -> str:
        return self.add("custom", customType=custom_type, data=data or {})

    def custom_message(
        self, custom_type: str, content: Any = "text", *, details: Any = None, display: bool = False
    ) -> str:
        fields: dict[str, Any] = {"customType": custom_type, "content": content, "display": display}
        if details is not None:
            fields["details"] = details
        return self.add("custom_message", **fields)

    def marker(self, window_id: str) -> str:
        return self.custom(MARKER_TYPE, {"windowId": window_id})

    def boot(self, window_id: str, text: str = "<context_window>boot</context_window>") -> str:
        return self.custom_message(BOOT_TYPE, text, details={"windowId": window_id})

    def continuation(self, text: str = "Your memory was just erased.") -> str:
        return self.custom_message(CONTINUATION_TYPE, text)

    def compaction(
        self, summary: str = "SUMMARY", *, first_kept: str | None = None, checkpoint: bool = True
    ) -> str:
        entry_id, iso, ms = self._stamp()
        obj: dict[str, Any] = {
            "type": "compaction",
            "id": entry_id,
            "parentId": self.tree.leaf_id,
            "timestamp": iso,
            "summary": summary,
            "firstKeptEntryId": entry_id if first_kept is None else first_kept,
            "tokensBefore": 1234,
        }
        if checkpoint:
            obj["systemMessage"] = {
                "role": "system",
                "content": "",
                "sections": {"preamble": "You are Pi (checkpoint)."},
                "timestamp": ms,
            }
        self.tree.append(entry(obj))
        return entry_id

    def branch_summary(self, summary: str = "We explored.", from_id: str = "root") -> str:
        return self.add("branch_summary", fromId=from_id, summary=summary)

    def edit(self, target: str, replacement: Any = None) -> str:
        return self.add("context_edit", targetId=target, replacement=replacement)

    def label(self, target: str, label: str = "here") -> str:
        return self.add("label", targetId=target, label=label)


# -- generated sessions (property tests of the incremental indexes) -------------------------

KINDS = (
    ["user", "assistant", "tool", "edit"] * 3
    + ["failed", "system", "reset", "reset", "marker", "boot", "guidance"]
    + ["compaction", "navigate", "bash", "summary", "early", "future"]
)
OPS = st.lists(
    st.tuples(st.sampled_from(KINDS), st.integers(min_value=0, max_value=10_000)),
    min_size=10,
    max_size=80,
)


def grow(builder: SessionBuilder, kind: str, pick: int, ids: list[str], serial: int) -> None:
    """One generated change of a session: an append of ``kind``, an edit or a move."""
    tree = builder.tree
    window = WindowIndex.of(tree).current_window.window_id
    if kind == "user":
        ids.append(builder.user("u" * (pick % 60)))
    elif kind == "assistant":
        calls = [{"name": "echo", "arguments": {"x": pick}}] if pick % 3 == 0 else None
        ids.append(builder.assistant("a" * (pick % 50), total=pick % 700, calls=calls))
    elif kind == "failed":
        ids.append(builder.assistant("", total=pick, stop="error" if pick % 2 else "aborted"))
    elif kind == "tool":
        ids.append(builder.tool_result("r" * (pick % 30), error=pick % 5 == 0))
    elif kind == "system":
        content = "extra" if pick % 7 == 0 else ""
        ids.append(builder.system({f"s{pick % 3}": "p" * (pick % 20)}, content=content))
    elif kind == "marker":
        ids.append(builder.marker(f"pcw:01a22a68:{serial:08x}"))
    elif kind == "reset":
        ids.append(builder.marker(f"pcw:01a22a68:{serial:08x}"))
        ids.append(builder.boot(f"pcw:01a22a68:{serial:08x}", "b" * (pick % 40)))
        ids.append(builder.continuation())
    elif kind == "boot":
        ids.append(builder.boot(window, "b" * (pick % 40)))
    elif kind == "guidance":
        ids.append(builder.custom_message(GUIDANCE_TYPE, "g" * (pick % 40)))
    elif kind == "edit" and ids:
        target = ids[-1 - pick % min(len(ids), 6)]
        replacement = [None, {"content": "edited"}, {"content": [{"type": "text", "text": "e"}]}]
        ids.append(builder.edit(target, replacement[pick % 3]))
    elif kind == "compaction" and ids:
        kept = ids[-1 - pick % len(ids)] if pick % 2 else None
        ids.append(builder.compaction(first_kept=kept, checkpoint=pick % 4 != 0))
    elif kind == "navigate" and ids:
        tree.navigate(ids[pick % len(ids)])
    elif kind == "bash":
        ids.append(builder.bash(output="o" * (pick % 20), excludeFromContext=pick % 4 == 0))
    elif kind == "summary":
        ids.append(builder.branch_summary("s" * (pick % 30)))
    elif kind == "early":
        ids.append(builder.user("out of order", stamp=pick))
    elif kind == "future":
        ids.append(builder.user("from the future", stamp=10**13 + pick))


# -- the shared corpora ---------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
