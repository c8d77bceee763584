"""Pi's provider context for a branch: what the model would be sent (pi-host §8.5–§8.7).

Reproduces Pi 0.87's ``buildContextEntries`` → ``buildSessionProjection`` →
``sessionEntryToContextMessages`` → ``convertToLlm``, plus pi-ai's ``getCurrentSystemMessage``
(here :func:`fold_system`), because pi-context's reset projection (R67) cuts *this* list and
its usage (R48) counts *this* list. Sources: pi-host.md §8.7 (authoritative); the wrappers
and ``bashExecutionToText`` from ``packages/coding-agent/src/core/messages.ts`` (pi-mono);
the compaction/kept-range walk from ``buildSessionContext`` in ``session-manager.ts``
(pi-mono, where a ``firstKeptEntryId`` that is not on the path keeps nothing and an empty
branch summary contributes nothing); the system-message fold, including ``replace``, from
pi-ai ``utils/transcript.ts`` as re-implemented for Pi 0.85 (``replace`` clears the
accumulated prompt, sections and tools before the message applies).

Messages are plain JSON objects in Pi's ``AgentMessage`` shape. A ``message`` entry's object
is returned as persisted (not copied): treat every returned message as read-only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC
from typing import Any, Final, TypeAlias

from attrs import frozen

from pictx_fsm.js import is_plain_object
from pictx_fsm.js_date import parse_date_ms
from pictx_fsm.session.entries import (
    ABSENT,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
    OpaqueEntry,
)

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "EDITABLE_ROLES",
    "Message",
    "Projection",
    "bash_execution_text",
    "branch_summary_of",
    "build_context_entries",
    "compaction_summary_of",
    "context_messages",
    "convert_message",
    "convert_to_llm",
    "custom_message_of",
    "edited_message",
    "entry_contribution",
    "entry_id",
    "entry_messages",
    "fold_system",
    "is_editable",
    "is_system_message_entry",
    "iso_to_epoch_ms",
    "latest_compaction_index",
    "latest_edits",
    "message_of",
    "project_branch",
    "project_entries",
    "system_content_text",
]

Message: TypeAlias = Mapping[str, Any]
"""One ``AgentMessage`` (or LLM message) as a JSON object; read-only by convention."""

COMPACTION_SUMMARY_PREFIX: Final = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX: Final = "\n</summary>"
BRANCH_SUMMARY_PREFIX: Final = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX: Final = "</summary>"

EDITABLE_ROLES: Final = frozenset({"user", "assistant", "toolResult"})
"""Roles of ``message`` entries a ``context_edit`` may target (plus ``custom_message``)."""
_BLOCK_ROLES: Final = frozenset({"assistant", "toolResult"})
_LLM_ROLES: Final = frozenset({"system", "user", "assistant", "toolResult"})


def entry_id(entry: Entry) -> str | None:
    return entry.id


def iso_to_epoch_ms(text: object) -> int | None:
    """``new Date(iso).getTime()`` for an entry timestamp; ``None`` where JS gives NaN.
    Pi writes ``toISOString()``; any other text is read as V8 reads it, a wall time without
    offset as UTC (a session file does not say the host's zone)."""
    if not isinstance(text, str) or not text:
        return None
    return _epoch_ms(text)


@functools.lru_cache(maxsize=1 << 12)
def _epoch_ms(text: str) -> int | None:
    """Cached: every projection of a window reads its entries' timestamps again."""
    return parse_date_ms(text, UTC)


# --------------------------------------------------------------------------------------------
# buildContextEntries


def is_system_message_entry(entry: Entry) -> bool:
    return isinstance(entry, MessageEntry) and entry.message.role == "system"


def latest_compaction_index(branch: Sequence[Entry]) -> int | None:
    for index in range(len(branch) - 1, -1, -1):
        if isinstance(branch[index], CompactionEntry):
            return index
    return None


def build_context_entries(branch: Sequence[Entry]) -> list[Entry]:
    """The entries that contribute to context: the whole path, or, after the latest compaction
    C, ``[C] + kept range (firstKeptEntryId … C, no system message entries) + after C``."""
    index = latest_compaction_index(branch)
    if index is None:
        return list(branch)
    compaction = branch[index]
    assert isinstance(compaction, CompactionEntry)
    return [compaction, *_kept_range(branch, index, compaction), *branch[index + 1 :]]


def _kept_range(branch: Sequence[Entry], index: int, compaction: CompactionEntry) -> list[Entry]:
    first = compaction.first_kept_entry_id
    if first == compaction.id:
        return []
    start = next((i for i in range(index) if branch[i].id == first), None)
    if start is None:
        return []
    return [entry for entry in branch[start:index] if not is_system_message_entry(entry)]


# --------------------------------------------------------------------------------------------
# context edits


def latest_edits(entries: Iterable[Entry]) -> dict[str, ContextEditEntry]:
    """The latest ``context_edit`` per target among ``entries`` (edits are branch-local)."""
    edits: dict[str, ContextEditEntry] = {}
    for entry in entries:
        if isinstance(entry, ContextEditEntry):
            edits[entry.target_id] = entry
    return edits


def is_editable(entry: Entry) -> bool:
    if isinstance(entry, CustomMessageEntry):
        return True
    return isinstance(entry, MessageEntry) and entry.message.role in EDITABLE_ROLES


def edited_message(message: Message, replacement: Any) -> Message | None:
    """Apply one edit to an editable target's message: ``None`` drops it, ``{content}``
    replaces only the content (a string becomes a text block on assistant/toolResult).

    A replacement of any other shape leaves the message unchanged (Pi rejects such an edit
    when it is appended; a file can still carry one).
    """
    if replacement is None or replacement is ABSENT:
        return None
    if not is_plain_object(replacement) or "content" not in replacement:
        return message
    content = replacement["content"]
    if isinstance(content, str) and message.get("role") in _BLOCK_ROLES:
        content = [{"type": "text", "text": content}]
    return {**message, "content": content}


# --------------------------------------------------------------------------------------------
# sessionEntryToContextMessages


def message_of(entry: MessageEntry) -> Message:
    """The persisted ``AgentMessage``; a null or missing content becomes ``[]``."""
    raw = entry.message.raw
    if raw.get("content") is None:
        return {**raw, "content": []}
    return raw


def custom_message_of(entry: CustomMessageEntry) -> Message:
    """``createCustomMessage``: role ``custom``; absent optional keys stay absent."""
    message: dict[str, Any] = {"role": "custom", "customType": entry.custom_type}
    message["content"] = entry.content
    if entry.display is not ABSENT:
        message["display"] = entry.display
    if entry.details is not ABSENT:
        message["details"] = entry.details
    message["timestamp"] = iso_to_epoch_ms(entry.timestamp)
    return message


def branch_summary_of(entry: BranchSummaryEntry) -> Message:
    return {
        "role": "branchSummary",
        "summary": entry.summary,
        "fromId": entry.from_id,
        "timestamp": iso_to_epoch_ms(entry.timestamp),
    }


def compaction_summary_of(entry: CompactionEntry) -> Message:
    message: dict[str, Any] = {"role": "compactionSummary", "summary": entry.summary}
    if entry.tokens_before is not ABSENT:
        message["tokensBefore"] = entry.tokens_before
    message["timestamp"] = iso_to_epoch_ms(entry.timestamp)
    return message


def entry_messages(entry: Entry, *, newest_compaction: bool = False) -> list[Message]:
    """What one selected entry contributes. A compaction contributes its system checkpoint and
    summary only when it is the newest one (the head of the selected entries)."""
    if isinstance(entry, MessageEntry):
        return [message_of(entry)]
    if isinstance(entry, CustomMessageEntry):
        return [custom_message_of(entry)]
    if isinstance(entry, BranchSummaryEntry):
        return [branch_summary_of(entry)] if entry.summary else []
    if isinstance(entry, CompactionEntry) and newest_compaction:
        checkpoint = entry.system_message
        head = [checkpoint] if is_plain_object(checkpoint) else []
        return [*head, compaction_summary_of(entry)]
    return []


# --------------------------------------------------------------------------------------------
# buildSessionProjection


@frozen(kw_only=True)
class Projection:
    """Pi's context for a branch. ``sources[i]`` is the id of the entry ``messages[i]`` came
    from (a compaction gives two messages with its id)."""

    entries: tuple[Entry, ...]
    messages: tuple[Message, ...]
    sources: tuple[str, ...]


def entry_contribution(
    entry: Entry, edit: ContextEditEntry | None, *, newest_compaction: bool
) -> list[Message]:
    """The messages one selected entry puts in the context, its latest edit applied (none for
    an entry without an id or of an unknown type)."""
    if isinstance(entry, OpaqueEntry) or entry.id is None:
        return []
    produced = entry_messages(entry, newest_compaction=newest_compaction)
    if edit is not None and produced and is_editable(entry):
        edited = edited_message(produced[0], edit.replacement)
        produced = [] if edited is None else [edited]
    return produced


def project_entries(selected: Sequence[Entry]) -> Projection:
    """Messages of already-selected entries with their latest edits applied."""
    edits = latest_edits(selected)
    messages: list[Message] = []
    sources: list[str] = []
    newest = bool(selected) and isinstance(selected[0], CompactionEntry)
    for position, entry in enumerate(selected):
        edit = edits.get(entry.id) if entry.id is not None else None
        produced = entry_contribution(entry, edit, newest_compaction=newest and position == 0)
        messages.extend(produced)
        sources.extend(str(entry.id) for _ in produced)
    return Projection(entries=tuple(selected), messages=tuple(messages), sources=tuple(sources))


def project_branch(branch: Sequence[Entry]) -> Projection:
    """``buildSessionProjection`` for the path root → leaf."""
    return project_entries(build_context_entries(branch))


def context_messages(branch: Sequence[Entry]) -> list[Message]:
    """``buildSessionContext().messages`` (the agent messages, before ``convertToLlm``)."""
    return list(project_branch(branch).messages)


# --------------------------------------------------------------------------------------------
# convertToLlm


def bash_execution_text(message: Message) -> str:
    """``bashExecutionToText``: the user text Pi sends for a ``!command`` run."""
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _user_text(text: str, message: Message) -> Message:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "timestamp": message.get("timestamp"),
    }


def convert_message(message: Message) -> Message | None:
    """One message through ``convertToLlm``; ``None`` when Pi drops it."""
    role = message.get("role")
    if role in _LLM_ROLES:
        return message
    if role == "custom":
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        return {"role": "user", "content": content, "timestamp": message.get("timestamp")}
    if role == "compactionSummary":
        summary = str(message.get("summary", ""))
        return _user_text(COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX, message)
    if role == "branchSummary":
        summary = str(message.get("summary", ""))
        return _user_text(BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX, message)
    if role == "bashExecution" and not message.get("excludeFromContext"):
        return _user_text(bash_execution_text(message), message)
    return None


def convert_to_llm(messages: Iterable[Message]) -> list[Message]:
    """``convertToLlm``: custom and summaries become user text; excluded bash runs and unknown
    roles are dropped; system/user/assistant/toolResult pass through unchanged."""
    converted = (convert_message(message) for message in messages)
    return [message for message in converted if message is not None]


# --------------------------------------------------------------------------------------------
# getCurrentSystemMessage


def system_content_text(content: Any) -> str:
    """pi-ai ``contentText``: a string as is, else the text blocks joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(block.get("text", ""))
        for block in content
        if is_plain_object(block) and block.get("type") == "text"
    )


def fold_system(messages: Iterable[Message]) -> Message | None:
    """The current system message of a message prefix: every system message replayed in order
    (content appended, ``sections`` patched with ``null`` removing, ``toolsRemoved`` then
    ``toolsAdded`` by name, ``replace`` starting over). The timestamp is the first non-null
    one. ``None`` when there is no system message (or, as in pi-ai, when none has a timestamp,
    content or tools)."""
    contents: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[str, Any] = {}
    timestamp: Any = None
    for message in messages:
        if message.get("role") != "system":
            continue
        if message.get("replace") is True:
            contents.clear()
            sections.clear()
            tools.clear()
        if timestamp is None:
            timestamp = message.get("timestamp")
        _apply_system(message, contents, sections, tools)
    if timestamp is None and not tools and not contents:
        return None
    return _folded(contents, sections, tools, timestamp)


def _apply_system(
    message: Message, contents: list[str], sections: dict[str, Any], tools: dict[str, Any]
) -> None:
    text = system_content_text(message.get("content"))
    if text:
        contents.append(text)
    patch = message.get("sections")
    if is_plain_object(patch):
        for name, value in patch.items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    for tool in _list(message.get("toolsRemoved")):
        if is_plain_object(tool):
            tools.pop(str(tool.get("name")), None)
    for tool in _list(message.get("toolsAdded")):
        if is_plain_object(tool):
            tools[str(tool.get("name"))] = tool


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _folded(
    contents: list[str], sections: dict[str, Any], tools: dict[str, Any], timestamp: Any
) -> Message:
    folded: dict[str, Any] = {"role": "system", "content": "\n\n".join(contents)}
    if sections:
        folded["sections"] = dict(sections)
    if tools:
        folded["toolsAdded"] = list(tools.values())
    folded["timestamp"] = 0 if timestamp is None else timestamp
    return folded
