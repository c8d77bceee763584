"""The model tools (M16, M21–M24): schemas in one place, handlers over facts.

The seam: :func:`answer_tool` answers the read-only calls (search, read, notes read, status)
directly, charging the recall quota (M23); a ``context_notes`` update returns ``None`` and
the step hands it to the ``notes_store`` machine, which accepts or refuses it whole. Nothing
here calls a model or writes a file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from pictx_fsm.extensions.context_management import history
from pictx_fsm.extensions.context_management.act_notes import tool_error
from pictx_fsm.extensions.context_management.effects import Answer, Intent, update
from pictx_fsm.extensions.context_management.facts import CmFacts
from pictx_fsm.extensions.context_management.notes import KINDS, STATUSES
from pictx_fsm.extensions.context_management.policy import READ_MAX_BYTES
from pictx_fsm.extensions.context_management.sources import branch_sources
from pictx_fsm.extensions.context_management.status import context_status, recall_left
from pictx_fsm.extensions.context_management.texts import (
    NOTES_DESCRIPTION,
    NOTES_GUIDELINES,
    NOTES_TOOL,
    READ_DESCRIPTION,
    READ_TOOL,
    SEARCH_DESCRIPTION,
    SEARCH_TOOL,
    STATUS_DESCRIPTION,
    STATUS_TOOL,
)
from pictx_fsm.host.effects import ToolResult

__all__ = ["HANDOFF_UNAVAILABLE", "JSON", "TOOL_SCHEMAS", "ToolAnswers", "answer_tool"]

JSON: TypeAlias = Any
ToolAnswers: TypeAlias = Callable[[CmFacts, str], "tuple[Intent, ...] | None"]
"""What answers a tool call (:func:`answer_tool`): the intents, or ``None`` for a write."""
HANDOFF_UNAVAILABLE: Final = "handoff_source_unavailable"
_SCOPE = {"type": "string", "enum": ["session", "handoff"]}

TOOL_SCHEMAS: Final[Mapping[str, Mapping[str, JSON]]] = {
    NOTES_TOOL: {
        "description": NOTES_DESCRIPTION,
        "promptGuidelines": list(NOTES_GUIDELINES),
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["read", "update"]},
                "key": {"type": "string"},
                "kind": {"type": "string", "enum": list(KINDS)},
                "status": {"type": "string", "enum": list(STATUSES)},
                "text": {"type": "string"},
                "sources": {"type": "array", "items": {"type": "string"}},
                "inferred": {"type": "boolean"},
            },
            "required": ["action"],
        },
    },
    SEARCH_TOOL: {
        "description": SEARCH_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "cursor": {"type": "string"},
                "maxBytes": {"type": "integer", "minimum": 1},
                "scope": _SCOPE,
            },
            "required": ["query"],
        },
    },
    READ_TOOL: {
        "description": READ_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "sourceId": {"type": "string"},
                "offset": {"type": "integer", "minimum": 0},
                "maxBytes": {"type": "integer", "minimum": 1, "maximum": READ_MAX_BYTES},
                "scope": _SCOPE,
            },
            "required": ["sourceId"],
        },
    },
    STATUS_TOOL: {
        "description": STATUS_DESCRIPTION,
        "parameters": {"type": "object", "properties": {}},
    },
}


def answer_tool(f: CmFacts, name: str) -> tuple[Intent, ...] | None:
    """The intents answering a read-only call; ``None`` for a ``context_notes`` update."""
    args = f.tool_arguments
    if name == NOTES_TOOL:
        action = args.get("action")
        if action == "update":
            return None
        if action != "read":
            return (tool_error(history.INVALID_ARGUMENTS, "action must be 'read' or 'update'"),)
        return _recall(f, {"ok": True, "notes": f.state.branch.notes.to_json()})
    if name == STATUS_TOOL:
        return (Answer(value=ToolResult(payload=context_status(f))),)
    try:
        scope = _scope(f, args.get("scope", "session"))
        quota = _quota(f)
        if name == SEARCH_TOOL:
            query, cursor, most = args.get("query"), args.get("cursor"), args.get("maxBytes")
            if not isinstance(query, str) or not (cursor is None or isinstance(cursor, str)):
                raise history.RecallRefusal(
                    code=history.INVALID_ARGUMENTS, message="query must be a string"
                )
            if most is not None and not (_natural(most) and most > 0):
                raise history.RecallRefusal(
                    code=history.INVALID_ARGUMENTS, message="maxBytes must be a positive integer"
                )
            budget = quota if most is None else min(quota, most)
            return _recall(f, history.search(scope, query, cursor, budget))
        source, offset = args.get("sourceId"), args.get("offset", 0)
        limit = args.get("maxBytes", READ_MAX_BYTES)
        if not isinstance(source, str) or not _natural(offset) or not _natural(limit):
            raise history.RecallRefusal(code=history.INVALID_ARGUMENTS, message="sourceId, offset")
        return _recall(f, history.read(scope, source, offset, limit, quota))
    except history.RecallRefusal as error:
        return (tool_error(error.code, error.message),)


def _natural(value: JSON) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _quota(f: CmFacts) -> int:
    """M23: the turn's remaining recall bytes; none while usage is unknown."""
    return 0 if f.ctx.tokens is None else recall_left(f.state, f.ctx)


def _recall(f: CmFacts, payload: Mapping[str, JSON]) -> tuple[Intent, ...]:
    """M23: the call fits the turn's remaining recall bytes, or it is refused (search and
    read pages are cut to fit before; a notes read is one page)."""
    size = history.result_bytes(payload)
    if size > _quota(f):
        return (tool_error(history.RECALL_BUDGET, history.RECALL_ADVICE),)
    return (
        update(recall_used=f.state.recall_used + size),
        Answer(value=ToolResult(payload=payload)),
    )


def _scope(f: CmFacts, name: JSON) -> history.Scope:
    leaf = f.services.tree.leaf_id
    if name == "session":
        return history.scope_of("session", f.state.session_id, leaf, f.sources, list(f.branch_ids))
    if name != "handoff":
        raise history.RecallRefusal(
            code=history.INVALID_ARGUMENTS, message="scope must be 'session' or 'handoff'"
        )
    receipt = f.receipt
    if receipt is None:
        raise history.RecallRefusal(
            code=HANDOFF_UNAVAILABLE, message="this session has no handoff parent"
        )
    branch = f.captured_parent()
    if branch is None:
        raise history.RecallRefusal(
            code=HANDOFF_UNAVAILABLE, message="the parent session is missing or modified"
        )
    ids = [e.id for e in branch if e.id is not None]
    return history.scope_of(
        "handoff", receipt.parent_session, receipt.captured_leaf, branch_sources(branch), ids
    )
