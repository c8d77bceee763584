"""Pi session entries (format v3) as frozen values.

Each entry keeps its typed fields plus ``extra``: every JSON key the type does not declare, so
writing an entry back reproduces what was read. Nested payloads (messages, ``data``,
``details``) stay JSON values; typed accessors on :class:`AgentMessage` read them. Optional
keys that were absent are ``ABSENT`` (not ``None``): Pi distinguishes ``"data": null`` from a
missing ``data``, and the round trip must too.

Parsing never raises on content: :func:`entry_from_json` returns the entry and the list of
field problems; an entry whose required fields are unusable becomes an :class:`OpaqueEntry`
carrying its raw JSON, so nothing is dropped.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, ClassVar, Final, TypeAlias

import attrs
from attrs import field, frozen

from pictx_fsm.js import is_plain_object

__all__ = [
    "ABSENT",
    "ENTRY_TYPES",
    "JSON",
    "AgentMessage",
    "BaseEntry",
    "BranchSummaryEntry",
    "CompactionEntry",
    "ContextEditEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "Entry",
    "FieldProblem",
    "KnownEntry",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "OpaqueEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "ThinkingLevelChangeEntry",
    "ToolCall",
    "UsageEntry",
    "content_text",
    "entry_from_json",
    "evolve",
    "header_from_json",
]


class _Absent(enum.Enum):
    ABSENT = "ABSENT"

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent.ABSENT
"""Marks an optional key that was not present in the JSON object."""

JSON: TypeAlias = Any


def _empty_extra() -> Mapping[str, JSON]:
    return {}


@frozen(kw_only=True)
class FieldProblem:
    """A field of one JSON object that does not have the shape Pi writes."""

    field: str
    message: str


# --------------------------------------------------------------------------------------------
# Header


@frozen(kw_only=True)
class SessionHeader:
    """Line 1 of a session file. ``version`` is the version as written (``None`` for v1)."""

    id: str
    timestamp: str
    cwd: str
    version: int | None = 3
    parent_session: str | None = None
    extra: Mapping[str, JSON] = field(factory=_empty_extra)

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"type": "session"}
        if self.version is not None:
            out["version"] = self.version
        out.update(id=self.id, timestamp=self.timestamp, cwd=self.cwd)
        if self.parent_session is not None:
            out["parentSession"] = self.parent_session
        out.update(self.extra)
        return out


_HEADER_KEYS = frozenset({"type", "version", "id", "timestamp", "cwd", "parentSession"})


def header_from_json(obj: Mapping[str, JSON]) -> tuple[SessionHeader | None, list[FieldProblem]]:
    """Read a header object; ``None`` when it is not a usable session header."""
    problems: list[FieldProblem] = []
    if obj.get("type") != "session":
        return None, [FieldProblem(field="type", message="first line is not a session header")]
    sid = obj.get("id")
    if not isinstance(sid, str) or not sid:
        return None, [FieldProblem(field="id", message="session header has no string id")]
    version = obj.get("version")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
        problems.append(FieldProblem(field="version", message=f"version {version!r} is not an int"))
        version = None
    timestamp = obj.get("timestamp")
    if not isinstance(timestamp, str):
        problems.append(FieldProblem(field="timestamp", message="header timestamp is not a string"))
        timestamp = ""
    cwd = obj.get("cwd")
    if not isinstance(cwd, str):
        problems.append(FieldProblem(field="cwd", message="header cwd is not a string"))
        cwd = ""
    parent = obj.get("parentSession")
    extra = {k: v for k, v in obj.items() if k not in _HEADER_KEYS}
    if parent is not None and not isinstance(parent, str):
        extra["parentSession"] = parent
        parent = None
    header = SessionHeader(
        id=sid,
        timestamp=timestamp,
        cwd=cwd,
        version=version,
        parent_session=parent,
        extra=extra,
    )
    return header, problems


# --------------------------------------------------------------------------------------------
# Messages inside ``message`` entries


@frozen(kw_only=True)
class ToolCall:
    """One ``toolCall`` block of an assistant message; ``index`` is its position in content."""

    index: int
    id: str
    name: str
    arguments: JSON


_NO_IDS: Final[frozenset[str]] = frozenset()


@frozen(kw_only=True)
class AgentMessage:
    """A persisted ``AgentMessage``: its ``role`` plus the whole JSON object, read through
    accessors. Keeping the object whole is what makes the round trip exact for every role
    (system deltas, bash executions, provider-specific keys)."""

    role: str
    raw: Mapping[str, JSON]

    @property
    def content(self) -> JSON:
        return self.raw.get("content")

    @property
    def stop_reason(self) -> str | None:
        value = self.raw.get("stopReason")
        return value if isinstance(value, str) else None

    @property
    def error_message(self) -> str | None:
        value = self.raw.get("errorMessage")
        return value if isinstance(value, str) else None

    @property
    def provider(self) -> str | None:
        value = self.raw.get("provider")
        return value if isinstance(value, str) else None

    @property
    def model(self) -> str | None:
        value = self.raw.get("model")
        return value if isinstance(value, str) else None

    @property
    def usage(self) -> Mapping[str, JSON] | None:
        value = self.raw.get("usage")
        return value if is_plain_object(value) else None

    @property
    def tool_call_id(self) -> str | None:
        value = self.raw.get("toolCallId")
        return value if isinstance(value, str) else None

    @property
    def tool_name(self) -> str | None:
        value = self.raw.get("toolName")
        return value if isinstance(value, str) else None

    @property
    def is_error(self) -> bool:
        return self.raw.get("isError") is True

    def text(self, separator: str = "\n") -> str:
        """The text parts of the content joined (a string content is returned as is)."""
        return content_text(self.content, separator)

    def tool_call_ids(self) -> frozenset[str]:
        """The ids of :meth:`tool_calls`, without a ``ToolCall`` made per block (the audit's
        tool-pair checks ask every assistant message for them)."""
        blocks = self._tool_call_blocks()
        return frozenset([str(block.get("id", "")) for _, block in blocks]) if blocks else _NO_IDS

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(
                index=index,
                id=str(block.get("id", "")),
                name=str(block.get("name", "")),
                arguments=block.get("arguments"),
            )
            for index, block in self._tool_call_blocks()
        )

    def _tool_call_blocks(self) -> list[tuple[int, Mapping[str, Any]]]:
        """The ``toolCall`` blocks of an assistant message's content, with their indexes."""
        content = self.raw.get("content")
        if self.role != "assistant" or not isinstance(content, list):
            return []
        return [
            (index, block)
            for index, block in enumerate(content)
            if is_plain_object(block) and block.get("type") == "toolCall"
        ]


def content_text(content: JSON, separator: str = "\n") -> str:
    """Text of a Pi content value: a string, or the ``text`` blocks of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return separator.join(
            str(block.get("text", ""))
            for block in content
            if is_plain_object(block) and block.get("type") == "text"
        )
    return ""


# --------------------------------------------------------------------------------------------
# Entries


@frozen(kw_only=True)
class BaseEntry:
    """Fields every tree entry has. ``parent_id`` is ``None`` for a root."""

    TYPE: ClassVar[str] = ""
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = ()
    _FIELDS_FIRST: ClassVar[bool] = False
    """Pi spreads the extension's draft before the base keys for custom entries."""

    id: str
    parent_id: str | None
    timestamp: str
    extra: Mapping[str, JSON] = field(factory=_empty_extra)

    @property
    def type(self) -> str:
        return self.TYPE

    def to_json(self) -> dict[str, JSON]:
        """The JSON object Pi writes for this entry (key order as Pi's ``append*``)."""
        out: dict[str, JSON] = {"type": self.type}
        fields = {
            json_key: getattr(self, attr_name)
            for attr_name, json_key in self._FIELDS
            if getattr(self, attr_name) is not ABSENT
        }
        base = {"id": self.id, "parentId": self.parent_id, "timestamp": self.timestamp}
        if self._FIELDS_FIRST:
            out.update(fields)
            out.update(base)
        else:
            out.update(base)
            out.update(fields)
        out.update(self.extra)
        return out


def _fields(*pairs: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    return pairs


@frozen(kw_only=True)
class MessageEntry(BaseEntry):
    TYPE: ClassVar[str] = "message"
    message: AgentMessage

    def to_json(self) -> dict[str, JSON]:
        out = {
            "type": self.TYPE,
            "id": self.id,
            "parentId": self.parent_id,
            "timestamp": self.timestamp,
            "message": dict(self.message.raw),
        }
        out.update(self.extra)
        return out


@frozen(kw_only=True)
class CustomEntry(BaseEntry):
    """Extension state; never part of model context."""

    TYPE: ClassVar[str] = "custom"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("custom_type", "customType"), ("data", "data")
    )
    _FIELDS_FIRST: ClassVar[bool] = True
    custom_type: str
    data: JSON = ABSENT


@frozen(kw_only=True)
class CustomMessageEntry(BaseEntry):
    """An extension message; Pi sends it to the model as role ``user``."""

    TYPE: ClassVar[str] = "custom_message"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("custom_type", "customType"),
        ("content", "content"),
        ("display", "display"),
        ("details", "details"),
    )
    _FIELDS_FIRST: ClassVar[bool] = True
    custom_type: str
    content: JSON
    display: JSON = ABSENT
    details: JSON = ABSENT

    @property
    def hidden(self) -> bool:
        """``display: false`` as Pi's TUI reads it (kept out of the chat view)."""
        return self.display is False

    def text(self, separator: str = "\n") -> str:
        return content_text(self.content, separator)


@frozen(kw_only=True)
class CompactionEntry(BaseEntry):
    TYPE: ClassVar[str] = "compaction"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("summary", "summary"),
        ("first_kept_entry_id", "firstKeptEntryId"),
        ("tokens_before", "tokensBefore"),
        ("details", "details"),
        ("usage", "usage"),
        ("from_hook", "fromHook"),
        ("system_message", "systemMessage"),
    )
    summary: str
    first_kept_entry_id: JSON = ABSENT
    tokens_before: JSON = ABSENT
    details: JSON = ABSENT
    usage: JSON = ABSENT
    from_hook: JSON = ABSENT
    system_message: JSON = ABSENT

    @property
    def retains_nothing(self) -> bool:
        """``firstKeptEntryId`` is the entry itself: nothing before it survives."""
        return bool(self.first_kept_entry_id == self.id)


@frozen(kw_only=True)
class BranchSummaryEntry(BaseEntry):
    TYPE: ClassVar[str] = "branch_summary"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("from_id", "fromId"),
        ("summary", "summary"),
        ("details", "details"),
        ("usage", "usage"),
        ("from_hook", "fromHook"),
    )
    from_id: str
    summary: str
    details: JSON = ABSENT
    usage: JSON = ABSENT
    from_hook: JSON = ABSENT


@frozen(kw_only=True)
class ContextEditEntry(BaseEntry):
    """Replaces (or, with ``replacement=None``, hides) an earlier entry on this branch."""

    TYPE: ClassVar[str] = "context_edit"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("target_id", "targetId"), ("replacement", "replacement")
    )
    target_id: str
    replacement: JSON = ABSENT


@frozen(kw_only=True)
class ModelChangeEntry(BaseEntry):
    TYPE: ClassVar[str] = "model_change"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("provider", "provider"), ("model_id", "modelId")
    )
    provider: str
    model_id: str


@frozen(kw_only=True)
class ThinkingLevelChangeEntry(BaseEntry):
    TYPE: ClassVar[str] = "thinking_level_change"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("thinking_level", "thinkingLevel"),
    )
    thinking_level: str


@frozen(kw_only=True)
class LabelEntry(BaseEntry):
    TYPE: ClassVar[str] = "label"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("target_id", "targetId"), ("label", "label")
    )
    target_id: str
    label: JSON = ABSENT


@frozen(kw_only=True)
class SessionInfoEntry(BaseEntry):
    TYPE: ClassVar[str] = "session_info"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("name", "name"),
    )
    name: JSON = ABSENT


@frozen(kw_only=True)
class UsageEntry(BaseEntry):
    TYPE: ClassVar[str] = "usage"
    _FIELDS: ClassVar[tuple[tuple[str, str], ...]] = _fields(
        ("kind", "kind"),
        ("provider", "provider"),
        ("model", "model"),
        ("usage", "usage"),
        ("note", "note"),
    )
    kind: JSON = ABSENT
    provider: JSON = ABSENT
    model: JSON = ABSENT
    usage: JSON = ABSENT
    note: JSON = ABSENT


@frozen(kw_only=True)
class OpaqueEntry:
    """An entry of an unknown type, or one whose required fields are unusable: kept whole.

    It takes part in the tree when it has a string ``id`` (Pi's tree does the same), but the
    lifecycle never interprets it.
    """

    raw: Mapping[str, JSON]

    @property
    def type(self) -> str:
        value = self.raw.get("type")
        return value if isinstance(value, str) else "<missing type>"

    @property
    def id(self) -> str | None:
        value = self.raw.get("id")
        return value if isinstance(value, str) and value else None

    @property
    def parent_id(self) -> str | None:
        value = self.raw.get("parentId")
        return value if isinstance(value, str) else None

    @property
    def timestamp(self) -> str:
        value = self.raw.get("timestamp")
        return value if isinstance(value, str) else ""

    def to_json(self) -> dict[str, JSON]:
        return dict(self.raw)


KnownEntry: TypeAlias = (
    MessageEntry
    | CustomEntry
    | CustomMessageEntry
    | CompactionEntry
    | BranchSummaryEntry
    | ContextEditEntry
    | ModelChangeEntry
    | ThinkingLevelChangeEntry
    | LabelEntry
    | SessionInfoEntry
    | UsageEntry
)
Entry: TypeAlias = KnownEntry | OpaqueEntry

ENTRY_TYPES: Final[Mapping[str, type[BaseEntry]]] = {
    cls.TYPE: cls
    for cls in (
        MessageEntry,
        CustomEntry,
        CustomMessageEntry,
        CompactionEntry,
        BranchSummaryEntry,
        ContextEditEntry,
        ModelChangeEntry,
        ThinkingLevelChangeEntry,
        LabelEntry,
        SessionInfoEntry,
        UsageEntry,
    )
}

# Required fields per type: (json key, accepted python types, description).
_STR = (str,)
_REQUIRED: Final[Mapping[str, tuple[tuple[str, tuple[type, ...], str], ...]]] = {
    "custom": (("customType", _STR, "a string"),),
    "custom_message": (("customType", _STR, "a string"), ("content", (str, list), "text")),
    "compaction": (("summary", _STR, "a string"),),
    "branch_summary": (("summary", _STR, "a string"), ("fromId", _STR, "a string")),
    "context_edit": (("targetId", _STR, "a string"),),
    "model_change": (("provider", _STR, "a string"), ("modelId", _STR, "a string")),
    "thinking_level_change": (("thinkingLevel", _STR, "a string"),),
    "label": (("targetId", _STR, "a string"),),
}
_BASE_KEYS = frozenset({"type", "id", "parentId", "timestamp"})


def _check_base(obj: Mapping[str, JSON]) -> list[FieldProblem]:
    problems = []
    entry_id = obj.get("id")
    if not isinstance(entry_id, str) or not entry_id:
        problems.append(FieldProblem(field="id", message="entry has no string id"))
    parent = obj.get("parentId", ABSENT)
    if parent is ABSENT:
        problems.append(FieldProblem(field="parentId", message="entry has no parentId key"))
    elif parent is not None and not isinstance(parent, str):
        problems.append(FieldProblem(field="parentId", message="parentId is not a string or null"))
    return problems


def _check_required(obj: Mapping[str, JSON], entry_type: str) -> list[FieldProblem]:
    problems = []
    for key, kinds, description in _REQUIRED.get(entry_type, ()):
        value = obj.get(key, ABSENT)
        if value is ABSENT:
            problems.append(FieldProblem(field=key, message=f"{entry_type} entry has no {key}"))
        elif not isinstance(value, kinds):
            problems.append(
                FieldProblem(field=key, message=f"{entry_type}.{key} must be {description}")
            )
    if entry_type == "message":
        message = obj.get("message")
        if not is_plain_object(message):
            problems.append(FieldProblem(field="message", message="message entry has no object"))
        elif not isinstance(message.get("role"), str):
            problems.append(FieldProblem(field="message.role", message="message has no role"))
    return problems


def entry_from_json(obj: Mapping[str, JSON]) -> tuple[Entry, list[FieldProblem]]:
    """Build the typed entry for one JSON object, or an :class:`OpaqueEntry` with reasons."""
    entry_type = obj.get("type")
    cls = ENTRY_TYPES.get(entry_type) if isinstance(entry_type, str) else None
    problems = _check_base(obj)
    if cls is None:
        if not isinstance(entry_type, str):
            problems.append(FieldProblem(field="type", message="entry has no string type"))
        return OpaqueEntry(raw=dict(obj)), problems
    problems += _check_required(obj, cls.TYPE)
    if problems:
        return OpaqueEntry(raw=dict(obj)), problems
    return _build(cls, obj), []


def _build(cls: type[BaseEntry], obj: Mapping[str, JSON]) -> KnownEntry:
    known = set(_BASE_KEYS)
    kwargs: dict[str, JSON] = {
        "id": obj["id"],
        "parent_id": obj["parentId"],
        "timestamp": obj.get("timestamp", ""),
    }
    if not isinstance(kwargs["timestamp"], str):
        known.discard("timestamp")
        kwargs["timestamp"] = ""
    if cls is MessageEntry:
        message = obj["message"]
        kwargs["message"] = AgentMessage(role=message["role"], raw=dict(message))
        known.add("message")
    for attr_name, json_key in cls._FIELDS:
        if json_key in obj:
            kwargs[attr_name] = obj[json_key]
            known.add(json_key)
    kwargs["extra"] = {k: v for k, v in obj.items() if k not in known}
    entry: KnownEntry = cls(**kwargs)  # type: ignore[assignment]
    return entry


def evolve(entry: KnownEntry, **changes: JSON) -> KnownEntry:
    """A copy of ``entry`` with fields changed (used for re-parenting on fork/migration)."""
    return attrs.evolve(entry, **changes)
