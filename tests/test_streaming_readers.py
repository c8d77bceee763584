"""Audit and inspect stream a file into its skeleton (issue 11 item 2): the findings and the
report are exactly those of the whole entries, on every corpus file and every fixture, with
and without orjson; memory follows the number of entries, not their text."""

from __future__ import annotations

import gc
import io
import json
import tracemalloc
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from shared_paths import CORPUS

from pictx_fsm.cli.audit import session_checks
from pictx_fsm.cli.inspect import inspect_file
from pictx_fsm.conformance import audit_file, audit_tree
from pictx_fsm.conformance.structure import (
    damaged_boundaries,
    is_boundary_entry,
    problem_findings,
)
from pictx_fsm.session import lines as lines_module
from pictx_fsm.session import skeleton
from pictx_fsm.session.entries import AgentMessage, MessageEntry, entry_from_json
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.skeleton import plain_message, slim_entry, tool_call_ids
from pictx_fsm.session.tree import SessionTree, TreeNode

TESTS = Path(__file__).resolve().parent
FILES = sorted(TESTS.glob("fixtures/**/*.jsonl")) + sorted(CORPUS.glob("*/*.jsonl"))


def _whole_audit(path: Path, profile: str) -> list[str]:
    """The findings of the whole entries, read with the full reader and audited in memory."""
    checks = session_checks(profile)
    loaded = read_session(path)
    tree = SessionTree(loaded.header or skeleton.PLACEHOLDER_HEADER)
    lines: dict[int, int] = {}
    boundaries: dict[int, list[Any]] = {}
    for entry, line in zip(loaded.entries, loaded.lines, strict=True):
        node = tree.add(entry)
        if node is not None:
            lines[id(node)] = line
        if is_boundary_entry(entry, checks.boundaries):
            boundaries.setdefault(line, []).append(entry)

    def locate(node: TreeNode) -> int | None:
        return lines.get(id(node))

    structure = [
        *problem_findings(loaded.problems),
        *damaged_boundaries(loaded.problems, boundaries, checks.boundaries),
    ]
    found = sorted(structure, key=checks.sort_key)
    if loaded.is_session:
        found += audit_tree(tree, checks, locate=locate)
    return [finding.render(str(path)) for finding in found]


@pytest.mark.parametrize("orjson", [True, False], ids=["orjson", "stdlib"])
@pytest.mark.parametrize("profile", ["0.25.1", "0.25.0"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_streamed_audit_finds_exactly_what_the_whole_entries_show(
    path: Path, profile: str, orjson: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a session file (a fixture or a corpus file), read with or without orjson
    if not orjson:
        monkeypatch.setattr(skeleton, "_FAST_LOADS", None)
    # When it is audited as a stream of skeletons
    streamed = [f.render(str(path)) for f in audit_file(path, session_checks(profile)).findings]
    # Then its findings are byte for byte those of the whole entries
    assert streamed == _whole_audit(path, profile)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_inspect_reports_from_the_skeleton_what_the_whole_entries_hold(path: Path) -> None:
    # Given a session file
    loaded = read_session(path)
    # When it is inspected
    report = inspect_file(str(path)).to_json()
    # Then counts, header, problems and the active branch's lines are the whole file's
    assert report["entryCount"] == len(loaded.entries)
    assert report["problems"] == [p.to_json() for p in loaded.problems]
    if loaded.is_session:
        types = Counter(entry.type for entry in loaded.entries)
        assert report["types"] == dict(types.most_common())
        tree = SessionTree.from_entries(
            loaded.header or skeleton.PLACEHOLDER_HEADER, loaded.entries
        )
        assert report["branches"]["activeLeaf"] == tree.leaf_id
        assert [leaf["id"] for leaf in report["branches"]["leaves"]] == tree.leaves()


def test_the_skeleton_keeps_no_content() -> None:
    # Given a message with a large tool result, read whole and as a skeleton
    obj = {
        "type": "message",
        "id": "a1",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "x" * 100_000},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"p": "y" * 1000}},
            ],
            "stopReason": "toolUse",
            "usage": {"input": 1},
        },
    }
    entry, _ = entry_from_json(obj)
    slim = slim_entry(entry)
    # Then the skeleton holds the role, stop reason and tool call ids, and none of the text
    assert isinstance(slim, MessageEntry)
    assert slim.message.raw == {
        "role": "assistant",
        "stopReason": "toolUse",
        "content": [{"type": "toolCall", "id": "c1"}],
    }
    assert len(json.dumps(slim.message.raw)) < 100


message_objects = st.fixed_dictionaries(
    {"type": st.just("message")},
    optional={
        "id": st.sampled_from(["m1", "", None, 5]),
        "parentId": st.sampled_from([None, "m0", 3]),
        "timestamp": st.sampled_from(["t", 5]),
        "message": st.fixed_dictionaries(
            {},
            optional={
                "role": st.sampled_from(["assistant", "user", "toolResult", 1]),
                "content": st.lists(
                    st.fixed_dictionaries(
                        {"type": st.sampled_from(["toolCall", "text"])},
                        optional={"id": st.one_of(st.text(max_size=3), st.integers())},
                    ),
                    max_size=3,
                )
                | st.text(max_size=3),
                "stopReason": st.sampled_from(["stop", "error", "toolUse"]),
                "errorMessage": st.text(max_size=5),
                "model": st.text(max_size=3),
            },
        )
        | st.integers(),
    },
)


@given(obj=message_objects)
def test_a_plain_message_skeleton_is_the_skeleton_of_the_whole_entry(obj: dict[str, Any]) -> None:
    # Given any message object
    entry, problems = entry_from_json(obj)
    # When it is plain, its direct skeleton equals the slimmed whole entry, with no problem
    if plain_message(obj):
        assert problems == []
        direct = skeleton._slim_message(
            obj["id"],
            obj["parentId"],
            obj["timestamp"] if isinstance(obj.get("timestamp"), str) else "",
            obj["message"],
        )
        assert direct == slim_entry(entry)
    else:
        assert problems or not isinstance(entry, MessageEntry)


@given(ids=st.lists(st.one_of(st.text(max_size=4), st.integers()), max_size=4))
def test_tool_call_ids_are_those_of_tool_calls(ids: list[Any]) -> None:
    content = [{"type": "toolCall", "id": value} for value in ids] + [{"type": "text"}]
    message = AgentMessage(role="assistant", raw={"role": "assistant", "content": content})
    expected = [str(call.id) for call in message.tool_calls()]
    safe = all(not isinstance(v, int) or abs(v) <= 2**53 - 1 for v in ids)
    if safe:  # beyond 2**53 the skeleton reads a number as JavaScript does
        assert tool_call_ids(message.role, message.content) == expected


def test_audit_memory_follows_entries_not_their_text(tmp_path: Path) -> None:
    # Given two sessions of the same 300 entries, one with 20 kB tool results
    def write(path: Path, size: int) -> None:
        lines = ['{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}']
        parent = None
        for index in range(300):
            message = {"role": "toolResult", "toolCallId": "c", "content": "x" * size}
            entry = {"type": "message", "id": f"e{index}", "parentId": parent, "timestamp": "t"}
            lines.append(json.dumps({**entry, "message": message}))
            parent = f"e{index}"
        path.write_text("\n".join(lines) + "\n")

    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    write(small, 10)
    write(large, 20_000)
    peaks = []
    for path in (small, large):
        tracemalloc.start()
        audit_file(path, session_checks())
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    # Then the 6 MB file costs the audit no more than one line's worth above the tiny one
    assert large.stat().st_size > 6_000_000
    assert peaks[1] - peaks[0] < 400_000


_MESSAGE_LINES = [
    b'{"type":"message","id":"m1","parentId":null,"timestamp":"t","message":{"role":"user"}}',
    b'{"type":"message","id":"m2","parentId":"m1","timestamp":"t","message":{"role":'
    b'"assistant","content":[{"type":"toolCall","id":"c1"}],"stopReason":"toolUse"}}',
    b'{"type":"message","id":"m3","parentId":"m2","timestamp":"t","message":{"role":'
    b'"toolResult","toolCallId":"c1","content":"\\u00e9"}}',
    b'{"type":"message","id":"m2","parentId":"m9","timestamp":"t","message":{"role":"user"}}',
    b'{"type":"message","id":"m4","parentId":"m4","timestamp":"t","message":{"role":"user"}}',
    b'{"type":"message","id":"m5","parentId":"m3","timestamp":5,"message":{"role":1}}',
    b'{"type":"message","id":"m6","parentId":"m3","timestamp":"t","message":{"role":"assistant"'
    b',"stopReason":"error","errorMessage":"boom","model":"x"}}',
    b'{"type":"message","id":"\\ud83d","parentId":null,"timestamp":"t","message":{"role":"user"}}',
    b'{"type":"message","id":"m7","parentId":"m1","timestamp":"t","message":{"role":"assistant",'
    b'"content":[{"type":"toolCall","id":9007199254740993}]}}',
    b'{"type":"message","type":"session","id":"s2","timestamp":"t","cwd":"/w"}',
    b'{"type":"message","id":"m8","parentId":"m1","timestamp":"t","message":{"role":"user"}}'
    b'{"type":"message","id":"m9","parentId":"m8","timestamp":"t","message":{"role":"user"}}',
    b'{"type":"message","id":"m10","parentId":"m1","times',
    b'{"type":"message","id":"\xff","parentId":null,"timestamp":"t","message":{"role":"user"}}',
    b'{"type":"message","id":"m11","parentId":"m1","timestamp":"t","message":{"role":"user"}}\r',
    b'{"type":"message","id":"m12","parentId":"m1","timestamp":"t","message":[]}',
    b'{"type":"message"}',
    b'{"type":"custom","id":"k1","parentId":"m1","timestamp":"t","customType":"x","data":{}}',
    b"",
    b"   ",
    b"[1]",
]
_HEADER_LINE = b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}'


@given(
    header=st.booleans(),
    lines=st.lists(st.sampled_from(_MESSAGE_LINES), max_size=12),
    final_newline=st.booleans(),
)
def test_message_lines_read_from_their_bytes_give_what_the_parser_gives(
    tmp_path_factory: pytest.TempPathFactory,
    header: bool,
    lines: list[bytes],
    final_newline: bool,
) -> None:
    # Given a file of message lines, plain and damaged (blank, torn, glued, not UTF-8, a lone
    # surrogate, duplicate and self-parented ids, a type repeated as a header's)
    path = tmp_path_factory.mktemp("fast") / "s.jsonl"
    body = b"\n".join([_HEADER_LINE] * header + lines)
    path.write_bytes(body + (b"\n" if final_newline and body else b""))

    # When its skeleton is read with the message lines decoded from their bytes (orjson)
    # and again through the parser's own path only
    def read(fast: bool) -> tuple[Any, ...]:
        installed = skeleton._FAST_LOADS
        skeleton._FAST_LOADS = installed if fast else None
        try:
            reader = skeleton.SkeletonReader(path)
            seen = [(entry, line) for entry, _, line in reader.entries()]
            found = reader.skeleton()
        finally:
            skeleton._FAST_LOADS = installed
        tree = found.tree
        return seen, list(tree.entries), list(found.lines), found.problems, tree.leaf_id

    # Then both give the same entries, lines, problems and tree
    assert skeleton._FAST_LOADS is not None, "orjson is a test dependency"
    assert read(fast=True) == read(fast=False)


@given(objs=st.lists(message_objects, max_size=8))
def test_shared_message_skeletons_equal_their_own(objs: list[dict[str, Any]]) -> None:
    # Given message objects read one after the other by one reader (skeletons shared)
    shared: dict[Any, AgentMessage] = {}
    for obj in filter(plain_message, objs):
        # When each is made through the shared table and on its own
        through_table = skeleton._slim_message("m", None, "t", obj["message"], shared)
        alone = skeleton._slim_message("m", None, "t", obj["message"])
        # Then the two are equal: a shared skeleton holds exactly the kept fields
        assert through_table == alone


def test_a_skeleton_is_freed_when_dropped_not_left_to_the_cycle_collector(
    tmp_path: Path,
) -> None:
    # Given a session file read into its skeleton while the cycle collector is paused (as
    # audit_file reads)
    path = tmp_path / "s.jsonl"
    header = '{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}'
    entry = '{"type":"message","id":"m%d","parentId":%s,"timestamp":"t","message":{"role":"user"}}'
    lines = [header] + [entry % (i, "null" if i == 0 else f'"m{i - 1}"') for i in range(50)]
    path.write_text("\n".join(lines) + "\n")
    gc.disable()
    try:
        reader = skeleton.SkeletonReader(path)
        for _ in reader.entries():
            pass
        tree = weakref.ref(reader.skeleton().tree)
        assert tree() is not None
        # When the reader is dropped
        del reader
        # Then the tree is gone at once: nothing in a skeleton is held by a reference cycle
        assert tree() is None
    finally:
        gc.enable()


@given(
    data=st.binary(max_size=80).map(lambda b: b.replace(b"\x00", b"\n")),
    max_line=st.integers(min_value=1, max_value=12),
    block=st.integers(min_value=1, max_value=16),
)
def test_lines_read_a_block_at_a_time_are_those_readline_gives(
    data: bytes, max_line: int, block: int
) -> None:
    # Given any bytes (lines short and long, blank, a last line without its newline)
    def by_readline() -> list[bytes]:
        fp = io.BytesIO(data)
        return list(iter(lambda: fp.readline(max_line + 1), b""))

    # When they are read a block at a time
    fp = io.BytesIO(data)
    lines = []
    for line in lines_module.iter_line_bytes(fp, max_line, block):
        lines.append(line)
        if not line.endswith(b"\n"):  # a reader may read the rest of such a line itself
            assert fp.tell() == sum(map(len, lines))
    # Then they are exactly the pieces readline(max + 1) gives, one after the other
    assert lines == by_readline()


def test_a_line_longer_than_the_limit_is_skipped_and_the_next_entries_are_read(
    tmp_path: Path,
) -> None:
    # Given a session whose second entry is a message line longer than the reader's limit
    path = tmp_path / "s.jsonl"
    header = b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}\n'
    message = (
        b'{"type":"message","id":"m%d","parentId":null,"timestamp":"t","message":{"role":"user"}}\n'
    )
    huge = (
        b'{"type":"message","id":"big","content":"' + b"x" * lines_module.MAX_LINE_BYTES + b'"}\n'
    )
    path.write_bytes(header + message % 1 + huge + message % 2)
    # When its skeleton is read
    reader = skeleton.SkeletonReader(path)
    read = [(entry.id, line) for entry, _, line in reader.entries()]
    found = reader.skeleton()
    # Then the long line is one oversized_line problem at line 3, and the entry after it is read
    assert read == [("m1", 2), ("m2", 4)]
    assert [(p.kind.value, p.line) for p in found.problems] == [("oversized_line", 3)]
    assert found.bytes == path.stat().st_size
