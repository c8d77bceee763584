"""The structure of a session file without its content: what ``inspect`` and ``audit`` keep.

A session's text (messages, tool results, summaries, boots) is most of its bytes, and neither
command needs it after an entry was read: the checks that look at content run once per entry
while it is read (:meth:`SkeletonReader.entries` hands each over whole), and everything after that
works on the tree. So each entry is kept as its *skeleton* (:func:`slim_entry`): the same
entry class with ids, parent, type, custom type, role, timestamp, tool-call ids, the stop
reason and error of a failed reply, a compaction's ``tokensBefore``, a branch summary's text,
the keys of extension data its readers ask for (a :class:`SkeletonKeep`: pi-context's window
ids) — and no content. Lines are kept as a compact array by file
position. Memory is then proportional to the number of entries, not to the file's size, and
a line is in memory only while it is read.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, BinaryIO, Final

import attrs
from attrs import frozen

from pictx_fsm.errors import UnreadableInputError
from pictx_fsm.fastjson import FAST_LOADS
from pictx_fsm.session.entries import (
    ABSENT,
    JSON,
    AgentMessage,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    FieldProblem,
    KnownEntry,
    MessageEntry,
    OpaqueEntry,
    SessionHeader,
    UsageEntry,
    entry_from_json,
)
from pictx_fsm.session.jsonl import SessionParser, open_regular, os_reason
from pictx_fsm.session.lines import (
    Piece,
    iter_line_bytes,
    js_number_value,
    physical_line,
    split_line,
)
from pictx_fsm.session.problems import Problem
from pictx_fsm.session.slots import slot_setters
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = [
    "NOTHING_KEPT",
    "NO_EXTRA",
    "PLACEHOLDER_HEADER",
    "Skeleton",
    "SkeletonKeep",
    "SkeletonReader",
    "is_skeleton",
    "message_object",
    "paused_collector",
    "plain_message",
    "read_skeleton",
    "slim_entry",
    "split_message_fast",
    "tool_call_ids",
]

NO_EXTRA: Final[Mapping[str, JSON]] = MappingProxyType({})
PLACEHOLDER_HEADER: Final = SessionHeader(id="", timestamp="", cwd="")
"""Stands in for a missing header so the entries still form a tree."""

_MESSAGE_KEYS: Final = ("role", "stopReason", "provider", "model", "toolCallId", "toolName")
_VOCABULARY: Final = frozenset(_MESSAGE_KEYS) - {"toolCallId"}
"""The kept message fields with few distinct values (each value held once, interned)."""
_OPAQUE_KEYS: Final = ("type", "id", "parentId", "timestamp")


# --------------------------------------------------------------------------------------------
# What extensions ask a skeleton to keep


@frozen(kw_only=True)
class SkeletonKeep:
    """The keys of extension data a skeleton keeps, for the checks that read them after the
    entry's content is gone (pi-context's markers and boots name their window): of a
    ``custom`` entry's ``data`` and a ``custom_message``'s ``details`` by custom type, and of
    a compaction's ``details``. Everything else of those objects is dropped."""

    custom_data: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    message_details: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    compaction_details: tuple[str, ...] = ()

    def merged(self, other: SkeletonKeep) -> SkeletonKeep:
        """What either keeps."""
        return SkeletonKeep(
            custom_data=_union(self.custom_data, other.custom_data),
            message_details=_union(self.message_details, other.message_details),
            compaction_details=_keys(self.compaction_details, other.compaction_details),
        )


def _keys(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*first, *second)))


def _union(
    first: Mapping[str, tuple[str, ...]], second: Mapping[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    merged = dict(first)
    for custom_type, keys in second.items():
        merged[custom_type] = _keys(merged.get(custom_type, ()), keys)
    return merged


NOTHING_KEPT: Final = SkeletonKeep()
"""Pi's own fields only."""


# --------------------------------------------------------------------------------------------
# One entry's skeleton


def slim_entry(
    entry: Entry, parent_id: str | None = None, keep: SkeletonKeep = NOTHING_KEPT
) -> Entry:
    """``entry`` without its content: what the tree, the audit's branch checks and
    ``inspect`` read of it, and nothing else (module docstring), with what ``keep`` names of
    its extension data. ``parent_id``, when given, is an equal string to share (the parent's
    own id object)."""
    parent = entry.parent_id if parent_id is None else parent_id
    slim = _SLIMMERS.get(type(entry))
    if slim is not None:
        return slim(entry, parent, keep)
    known: KnownEntry = entry  # type: ignore[assignment]  # OpaqueEntry has a slimmer
    return attrs.evolve(known, parent_id=parent, extra=NO_EXTRA)


def _intern(value: JSON) -> JSON:
    """One object for each of the few distinct roles, stop reasons, models and types."""
    return sys.intern(value) if type(value) is str else value


def _message(entry: MessageEntry, parent: str | None, keep: SkeletonKeep) -> Entry:
    return _slim_message(entry.id, parent, entry.timestamp, entry.message.raw)


def _slim_message(
    entry_id: str,
    parent: str | None,
    timestamp: str,
    raw: Mapping[str, JSON],
    shared: dict[Any, AgentMessage] | None = None,
) -> MessageEntry:
    """The skeleton of a message entry from its message object (``role`` a string).
    ``shared`` (a reader's) holds one skeleton per distinct message skeleton without tool
    calls: most replies and prompts of a session share a handful (role, model, stop), so
    such a message is looked up by its kept values before anything is built."""
    role = raw["role"]
    calls = tool_call_ids(role, raw.get("content"))
    table = None if calls or "toolCallId" in raw else shared
    key = None if table is None else _shared_key(raw)
    slim = None
    if table is not None:
        try:
            slim = table.get(key)
        except TypeError:  # an unhashable value (a model given as an object): not shared
            table = None
    if slim is None:
        slim = _new_agent_message(role, _kept(raw, calls))
        if table is not None and len(table) < _SHARED_MESSAGES:
            table[key] = slim
    return _new_message_entry(entry_id, parent, timestamp, NO_EXTRA, slim)


_set_entry_id, _set_parent_id, _set_timestamp, _set_extra, _set_message = slot_setters(
    MessageEntry, "id", "parent_id", "timestamp", "extra", "message"
)
_set_role, _set_raw = slot_setters(AgentMessage, "role", "raw")


def _new_message_entry(
    entry_id: str, parent_id: str | None, timestamp: str, extra: Mapping[str, Any], message: Any
) -> MessageEntry:
    """``MessageEntry(...)`` slot by slot (:mod:`pictx_fsm.session.slots`)."""
    entry: MessageEntry = _NEW(MessageEntry)
    _set_entry_id(entry, entry_id)
    _set_parent_id(entry, parent_id)
    _set_timestamp(entry, timestamp)
    _set_extra(entry, extra)
    _set_message(entry, message)
    return entry


def _new_agent_message(role: str, raw: Mapping[str, Any]) -> AgentMessage:
    """``AgentMessage(role=, raw=)`` slot by slot."""
    message: AgentMessage = _NEW(AgentMessage)
    _set_role(message, role)
    _set_raw(message, raw)
    return message


_NEW: Final = object.__new__


def _kept(raw: Mapping[str, JSON], calls: list[str]) -> dict[str, JSON]:
    """The fields a message skeleton keeps (module docstring), the few-valued ones
    interned."""
    kept: dict[str, JSON] = {key: raw[key] for key in _MESSAGE_KEYS if key in raw}
    for key in _VOCABULARY.intersection(kept):
        value = kept[key]
        if type(value) is str:
            kept[key] = sys.intern(value)
    if kept.get("stopReason") == "error" and "errorMessage" in raw:
        kept["errorMessage"] = raw["errorMessage"]
    if calls:
        kept["content"] = [{"type": "toolCall", "id": call_id} for call_id in calls]
    return kept


def _shared_key(raw: Mapping[str, JSON]) -> tuple[Any, ...]:
    """What :func:`_kept` keeps of a message without tool calls, as a key (``_MISSING`` for
    an absent field): equal keys, equal skeletons."""
    get = raw.get
    stop = get("stopReason", _MISSING)
    error = get("errorMessage", _MISSING) if stop == "error" else _MISSING
    return (
        get("role"),
        stop,
        get("provider", _MISSING),
        get("model", _MISSING),
        get("toolName", _MISSING),
        error,
    )


_MISSING: Final = object()
_SHARED_MESSAGES: Final = 4096
"""At most this many distinct message skeletons are shared per file (memory stays bounded)."""


def tool_call_ids(role: JSON, content: JSON) -> list[str]:
    """The ids ``AgentMessage.tool_calls()`` finds, without making a ``ToolCall`` per block
    (the same rule: an assistant message's ``toolCall`` blocks, the id as a string; a number
    as JavaScript reads it, whichever decoder read the line)."""
    if role != "assistant" or not isinstance(content, list):
        return []
    return [
        str(js_number_value(block.get("id", "")))
        for block in content
        if (type(block) is dict or isinstance(block, Mapping)) and block.get("type") == "toolCall"
    ]


def split_message_fast(text: str) -> list[Piece]:
    """:func:`split_line`, with a ``message`` line decoded by orjson where it is installed.

    orjson (2–3× faster) accepts the JSON the standard decoder accepts except lone
    surrogates, a double's overflow and more than 1024 levels, which it refuses — those lines
    take the standard path. It reads an integer beyond 64 bits as a float where the standard
    decoder keeps an int (JavaScript has a double either way); a skeleton keeps no number
    except a tool call's id, which :func:`tool_call_ids` reads as JavaScript does, the same
    from either (:func:`pictx_fsm.fastjson.loads` is the decoder that reads every text as the
    standard one)."""
    if _FAST_LOADS is not None and text.startswith(_MESSAGE_LINE):
        try:
            return [Piece(text=text, value=_FAST_LOADS(text))]
        except ValueError:
            pass
    return split_line(text)


def message_object(data: bytes) -> dict[str, Any] | None:
    """The object of a terminated ``message`` line as :func:`split_message_fast` reads it,
    decoded from its bytes (orjson refuses what is not UTF-8); ``None`` for any other line,
    or without orjson: the parser's own path reads those."""
    if _FAST_LOADS is None or not data.startswith(_MESSAGE_BYTES) or not data.endswith(b"\n"):
        return None
    try:
        value = _FAST_LOADS(data)
    except ValueError:
        return None
    return value if type(value) is dict and value.get("type") == "message" else None


_FAST_LOADS: Final = FAST_LOADS
"""orjson's decoder where installed (tests and benchmarks switch it off here)."""
_MESSAGE_LINE: Final = '{"type":"message"'
"""How Pi starts every message entry line (``JSON.stringify`` keeps the key order)."""
_MESSAGE_BYTES: Final = _MESSAGE_LINE.encode()


def plain_message(obj: Mapping[str, JSON]) -> bool:
    """A ``message`` entry object that :func:`entry_from_json` reads whole, without a field
    problem: a non-empty string id, a ``parentId`` key (null or a string), a message object
    with a string role. Such an object's skeleton is made directly (:meth:`SkeletonReader`)."""
    entry_id, parent, message = obj.get("id"), obj.get("parentId", ABSENT), obj.get("message")
    return (
        obj.get("type") == "message"
        and isinstance(entry_id, str)
        and entry_id != ""
        and (parent is None or isinstance(parent, str))
        and (type(message) is dict or isinstance(message, Mapping))
        and isinstance(message.get("role"), str)
    )


def is_skeleton(entry: Entry) -> bool:
    """Made as a skeleton already (the direct path for plain messages)."""
    return type(entry) is MessageEntry and entry.extra is NO_EXTRA


def _custom(entry: CustomEntry, parent: str | None, keep: SkeletonKeep) -> Entry:
    keys = keep.custom_data.get(entry.custom_type)
    data = _only(entry.data, keys) if keys else ABSENT
    return CustomEntry(
        id=entry.id,
        parent_id=parent,
        timestamp=entry.timestamp,
        extra=NO_EXTRA,
        custom_type=_intern(entry.custom_type),
        data=data,
    )  # not attrs.evolve, which reads the class's fields again on every call


def _custom_message(entry: CustomMessageEntry, parent: str | None, keep: SkeletonKeep) -> Entry:
    keys = keep.message_details.get(entry.custom_type)
    details = _only(entry.details, keys) if keys else ABSENT
    return CustomMessageEntry(
        id=entry.id,
        parent_id=parent,
        timestamp=entry.timestamp,
        custom_type=_intern(entry.custom_type),
        content="",
        display=entry.display if isinstance(entry.display, bool) else ABSENT,
        details=details,
        extra=NO_EXTRA,
    )


def _compaction(entry: CompactionEntry, parent: str | None, keep: SkeletonKeep) -> Entry:
    return CompactionEntry(
        id=entry.id,
        parent_id=parent,
        timestamp=entry.timestamp,
        summary="",
        first_kept_entry_id=entry.first_kept_entry_id,
        tokens_before=entry.tokens_before,
        details=_only(entry.details, keep.compaction_details),
    )


def _branch_summary(entry: BranchSummaryEntry, parent: str | None, keep: SkeletonKeep) -> Entry:
    """The summary text stays: an empty summary is told from a real one (pi-context's R75)."""
    return BranchSummaryEntry(
        id=entry.id,
        parent_id=parent,
        timestamp=entry.timestamp,
        from_id=entry.from_id,
        summary=entry.summary,
    )


def _context_edit(entry: ContextEditEntry, parent: str | None, keep: SkeletonKeep) -> Entry:
    hides_target = entry.replacement is None or entry.replacement is ABSENT
    replacement = entry.replacement if hides_target else {}
    return ContextEditEntry(
        id=entry.id,
        parent_id=parent,
        timestamp=entry.timestamp,
        extra=NO_EXTRA,
        target_id=entry.target_id,
        replacement=replacement,
    )


def _usage(entry: UsageEntry, parent: str | None, keep: SkeletonKeep) -> Entry:
    return attrs.evolve(entry, parent_id=parent, usage=ABSENT, note=ABSENT, extra=NO_EXTRA)


def _opaque(entry: OpaqueEntry, parent: str | None, keep: SkeletonKeep) -> Entry:
    return OpaqueEntry(raw={key: entry.raw[key] for key in _OPAQUE_KEYS if key in entry.raw})


def _only(value: JSON, keys: tuple[str, ...]) -> JSON:
    """The ``keys`` a mapping has, else absent: all the checks read of ``data`` and
    ``details`` after the entry was read (their shape is checked on the whole entry, while it
    is read)."""
    if not isinstance(value, Mapping):
        return ABSENT
    kept = {key: value[key] for key in keys if key in value}
    return kept if kept else ABSENT


_SLIMMERS: Final[Mapping[type[Any], Callable[[Any, str | None, SkeletonKeep], Entry]]] = {
    MessageEntry: _message,
    CustomEntry: _custom,
    CustomMessageEntry: _custom_message,
    CompactionEntry: _compaction,
    BranchSummaryEntry: _branch_summary,
    ContextEditEntry: _context_edit,
    UsageEntry: _usage,
    OpaqueEntry: _opaque,
}


# --------------------------------------------------------------------------------------------
# A file's skeleton


@frozen(kw_only=True)
class Skeleton:
    """A session file as ``inspect`` and ``audit`` keep it (module docstring)."""

    header: SessionHeader | None
    original_version: int | None
    tree: SessionTree
    """Every entry's skeleton in file order (``tree.entries``), the tree over them."""
    lines: array[int]
    """``lines[i]`` is the 1-based line of ``tree.entries[i]`` (a node's ``order``)."""
    problems: tuple[Problem, ...]
    bytes: int

    @property
    def is_session(self) -> bool:
        """Anything session-like was found: a header or at least one entry."""
        return self.header is not None or len(self.tree) > 0

    @property
    def has_defects(self) -> bool:
        return any(problem.is_defect for problem in self.problems)

    def line_of(self, node: TreeNode) -> int:
        return self.lines[node.order]


_NO_PROBLEMS: Final[tuple[FieldProblem, ...]] = ()


class _Builder:
    """Makes each entry of a :class:`SkeletonReader` (the parser's ``build``): a plain
    message straight into its skeleton, anything else whole; parents share their id
    objects with the tree's."""

    def __init__(self, *, direct_messages: bool, keep: SkeletonKeep) -> None:
        self.direct_messages = direct_messages
        self.keep = keep
        self.shared: dict[Any, AgentMessage] = {}
        self.tree: SessionTree | None = None

    def build(self, obj: Mapping[str, JSON]) -> tuple[Entry, Sequence[FieldProblem]]:
        if not (self.direct_messages and plain_message(obj)):
            return entry_from_json(obj)
        timestamp = obj.get("timestamp", "")
        parent_id = obj["parentId"]
        parent = self.tree.find(parent_id) if parent_id and self.tree is not None else None
        skeleton = _slim_message(
            obj["id"],
            parent_id if parent is None else parent.id,  # shared_parent, inline
            timestamp if type(timestamp) is str or isinstance(timestamp, str) else "",
            obj["message"],
            self.shared,
        )
        return skeleton, _NO_PROBLEMS

    def shared_parent(self, parent_id: str | None) -> str | None:
        """The parent's own id object (one string per id in memory), else ``parent_id``."""
        parent = self.tree.find(parent_id) if parent_id and self.tree is not None else None
        return parent_id if parent is None else parent.id

    def slim(self, entry: Entry) -> Entry:
        return slim_entry(entry, self.shared_parent(entry.parent_id), self.keep)


class SkeletonReader:
    """Reads one file into its skeleton: :meth:`entries` yields each whole entry with its
    node and line as it is read (``tree`` and :meth:`line_of` already answer for it), then
    :meth:`skeleton` is the result."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        whole: frozenset[str] = frozenset(),
        keep: SkeletonKeep = NOTHING_KEPT,
    ) -> None:
        """``whole``: the entry types :meth:`entries` must hand over whole (with content);
        a plain message of any other type is made straight into its skeleton. ``keep``: the
        extension data the skeletons keep."""
        self.path = os.fspath(path)
        self._builder = _Builder(direct_messages="message" not in whole, keep=keep)
        # the parser holds the builder, not this reader: no reference cycle, so the skeleton
        # is freed as soon as it is dropped (a cycle would leave a whole file's skeleton to
        # the cycle collector, which then traverses every node of it)
        self.parser = SessionParser(self.path, build=self._builder.build, split=split_message_fast)
        self.tree: SessionTree | None = None
        self._lines = array("I")
        self._bytes = 0

    def entries(self, *, messages: bool = True) -> Iterator[tuple[Entry, TreeNode | None, int]]:
        """Raises :class:`UnreadableInputError` only when the file cannot be opened or read.
        ``messages=False``: message entries join the tree without being handed over (a
        reader that reads none of them saves a hand-over per message, most of a session)."""
        try:
            with open_regular(self.path) as fp:
                yield from self._read(fp, messages)
                self._bytes = fp.tell()
        except OSError as exc:
            raise UnreadableInputError(self.path, os_reason(exc)) from exc

    def _read(self, fp: BinaryIO, messages: bool) -> Iterator[tuple[Entry, TreeNode | None, int]]:
        """Each line through the parser; a plain message line (most of a session) is decoded
        from its bytes by orjson and handed over as its object (:func:`message_object`):
        the same entry and problems, without the line's text, pieces and line records."""
        parser = self.parser
        number = 0
        started = False  # once a JSON value was read, the parser stays started
        add_line = self._lines.append
        for data in iter_line_bytes(fp):
            number += 1
            if not started:
                started = parser.started
            value = message_object(data) if started else None
            if value is None:
                for item in parser.feed(physical_line(number, data, fp)):
                    yield self._add(item.entry, item.line)
                continue
            entry = parser.feed_entry_object(number, value)
            tree = self.tree
            if tree is None or type(entry) is not MessageEntry or entry.extra is not NO_EXTRA:
                yield self._add(entry, number)
                continue
            node = tree.add(entry)  # a skeleton already (is_skeleton): :meth:`_add`, inline
            add_line(number)
            if messages:
                yield entry, node, number
        parser.close()

    def _add(self, entry: Entry, line: int) -> tuple[Entry, TreeNode | None, int]:
        tree = self.tree
        if tree is None:
            tree = self.tree = self._builder.tree = SessionTree(
                self.parser.header or PLACEHOLDER_HEADER
            )
        skeleton = type(entry) is MessageEntry and entry.extra is NO_EXTRA  # is_skeleton
        node = tree.add(entry if skeleton else self._builder.slim(entry))
        self._lines.append(line)
        return entry, node, line

    def line_of(self, node: TreeNode) -> int:
        return self._lines[node.order]

    def skeleton(self) -> Skeleton:
        header = self.parser.header
        return Skeleton(
            header=header,
            original_version=self.parser.original_version,
            tree=self.tree if self.tree is not None else SessionTree(header or PLACEHOLDER_HEADER),
            lines=self._lines,
            problems=self.parser.problems,
            bytes=self._bytes,
        )


def read_skeleton(path: str | os.PathLike[str], keep: SkeletonKeep = NOTHING_KEPT) -> Skeleton:
    """Read one file into its skeleton (see :class:`SkeletonReader`)."""
    reader = SkeletonReader(path, keep=keep)
    with paused_collector():
        for _ in reader.entries(messages=False):
            pass
    return reader.skeleton()


@contextlib.contextmanager
def paused_collector() -> Iterator[None]:
    """Pause Python's cycle collector while a skeleton is built and walked.

    A skeleton holds no reference cycles (nodes point to their parents, entries to nothing),
    so the collector finds nothing in it; but as it grows by some ten objects an entry, the
    collector would traverse it again and again (a sixth of the audit's time on a 50 MB
    file). Reference counting still frees everything else as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
