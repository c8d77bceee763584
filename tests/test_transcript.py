"""Transcripts (issue 11): message lists that know their digests, system messages and the
messages an extension tags (pi-context's boots, by :func:`boot_key`), and the tree's
incremental index of Pi's projection. Whatever the incremental computation
answers, the full scan it replaces answers the same: on generated sessions (appends, edits of
near and far targets, edits written before their target, compactions, moves, duplicate ids,
unknown entries), on generated message lists, and on the real sessions in ``../shared``."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_builders import OPS, SessionBuilder, grow
from shared_paths import CORPUS, TRACES

from pictx_fsm.extensions.pi_context.reset_projection import (
    ResetProjection,
    first_boot_index,
    project_marker_window,
    project_root_window,
)
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE
from pictx_fsm.extensions.pi_context.windows import boot_key, is_boot_message
from pictx_fsm.session.digest import canonical, message_list_digest
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.projection import Message, project_branch
from pictx_fsm.session.transcript import Transcript, TranscriptIndex
from pictx_fsm.session.tree import SessionTree

ROOT = "pcw:01a22a68:root"


def scratch_digest(messages: Sequence[Message]) -> str:
    """The hash list, from its definition: sha256 of the sha256 of each canonical message."""
    parts = b"".join(hashlib.sha256(canonical(m).encode("ascii")).digest() for m in messages)
    return hashlib.sha256(parts).hexdigest()


def window_ids(messages: Sequence[Message]) -> set[str]:
    found = {ROOT, "pcw:01a22a68:absent"}
    for message in messages:
        details = message.get("details")
        if isinstance(details, dict) and isinstance(details.get("windowId"), str):
            found.add(details["windowId"])
    return found


def same_projection(fast: ResetProjection, slow: ResetProjection) -> None:
    assert tuple(fast.messages) == tuple(slow.messages)
    assert (fast.cut_index, fast.missing_boot) == (slow.cut_index, slow.missing_boot)
    assert message_list_digest(fast.messages) == message_list_digest(list(slow.messages))


def assert_known_equals_scanned(transcript: Transcript) -> None:
    """Every answer of a transcript equals the reference scan of the same messages."""
    plain = list(transcript)
    assert transcript.list_digest() == scratch_digest(plain)
    assert message_list_digest(transcript) == {"count": len(plain), "sha256": scratch_digest(plain)}
    for window_id in window_ids(plain):
        visible = any(is_boot_message(m, window_id) for m in plain)
        assert transcript.has_tagged(boot_key, window_id) is visible
        assert first_boot_index(transcript, window_id) == first_boot_index(plain, window_id)
        same_projection(
            project_marker_window(transcript, window_id), project_marker_window(plain, window_id)
        )
        same_projection(
            project_root_window(transcript, window_id), project_root_window(plain, window_id)
        )
    assert first_boot_index(transcript) == first_boot_index(plain)


def assert_index_matches_the_projection(tree: SessionTree, index: TranscriptIndex) -> None:
    reference = project_branch(tree.branch()).messages
    transcript = index.transcript()
    assert tuple(transcript) == reference
    assert transcript.list_digest() == scratch_digest(reference)
    conversation = tuple(m for m in reference if m.get("role") != "system")
    assert tuple(index.conversation()) == conversation
    assert index.conversation().list_digest() == scratch_digest(conversation)
    scanned = Transcript(reference)
    assert transcript.tagged(boot_key) == scanned.tagged(boot_key)
    assert transcript.system_messages() == scanned.system_messages()
    for window_id in window_ids(reference):
        assert transcript.first_tagged(boot_key, window_id) == scanned.first_tagged(
            boot_key, window_id
        )


# -- generated sessions -----------------------------------------------------------------------

MORE_KINDS = ["far_edit", "edit_ahead", "duplicate", "opaque", "navigate_up", "navigate_up"]
MORE_OPS = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant", "reset", "boot", "edit", "system", *MORE_KINDS]),
        st.integers(min_value=0, max_value=10_000),
    ),
    min_size=5,
    max_size=60,
)


def grow_more(builder: SessionBuilder, kind: str, pick: int, ids: list[str], serial: int) -> None:
    """:func:`grow`, plus the shapes an incremental projection finds hardest."""
    tree = builder.tree
    if kind == "far_edit" and ids:
        builder.edit(ids[pick % len(ids)], [None, {"content": "far"}][pick % 2])
    elif kind == "edit_ahead":  # the edit comes first; its target is the next entry
        builder.edit(f"{builder._serial + 2:08x}", {"content": "ahead"})
        ids.append(builder.user("edited before it existed"))
    elif kind == "duplicate" and ids:
        again = {"type": "message", "id": ids[pick % len(ids)], "parentId": tree.leaf_id}
        again |= {"timestamp": "2026-11-30T03:04:02.000Z"}
        again["message"] = {"role": "user", "content": "same id again", "timestamp": 1}
        from session_builders import entry

        tree.add(entry(again))
    elif kind == "opaque":
        ids.append(builder.add("some_future_type", payload=pick))
    elif kind == "navigate_up" and tree.leaf is not None:
        node = tree.leaf
        for _ in range(pick % 4):
            node = node.parent if node.parent is not None else node
        tree.navigate(node.id)
    else:
        grow(builder, kind, pick, ids, serial)


def replay(ops: list[tuple[str, int]], check: Any) -> None:
    builder = SessionBuilder()
    index = TranscriptIndex(builder.tree)
    index.track(boot_key)  # its transcripts know their boots from the index, not a scan
    lazy = TranscriptIndex(builder.tree)  # never asked for digests: has_tagged alone
    ids: list[str] = []
    for serial, (kind, pick) in enumerate(ops):
        grow_more(builder, kind, pick, ids, serial)
        check(builder.tree, index)
        reference = project_branch(builder.tree.branch()).messages
        for window_id in window_ids(reference):
            visible = any(is_boot_message(m, window_id) for m in reference)
            assert lazy.has_tagged(boot_key, window_id) is visible


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_property_the_incremental_projection_is_pi_projection_after_every_change(
    ops: list[tuple[str, int]],
) -> None:
    # Given any sequence of appends, edits, compactions and navigations
    # Then after every step the tree's transcripts are Pi's projection of the branch, with the
    # digests, boots and system messages a scan of that projection finds
    replay(ops, assert_index_matches_the_projection)


@settings(max_examples=200, deadline=None)
@given(MORE_OPS)
def test_property_far_edits_edits_ahead_duplicates_and_moves_keep_it_exact(
    ops: list[tuple[str, int]],
) -> None:
    replay(ops, assert_index_matches_the_projection)


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_property_r14_r67_r68_r69_from_a_transcript_equal_the_scans(
    ops: list[tuple[str, int]],
) -> None:
    # Given the transcript of any generated branch
    # Then the boot search, the window cut, the missing-boot head and the root projection
    # computed from what it knows equal the reference scans, digests included
    replay(ops, lambda tree, index: assert_known_equals_scanned(index.transcript()))


def role_tag(message: Any) -> str | None:
    """A tag no extension owns: every message by its role."""
    role = message.get("role") if isinstance(message, dict) else None
    return role if isinstance(role, str) else None


@settings(max_examples=100, deadline=None)
@given(OPS, st.integers(min_value=0, max_value=60))
def test_property_a_tag_tracked_at_any_point_knows_what_a_scan_of_the_projection_finds(
    ops: list[tuple[str, int]], start: int
) -> None:
    # Given a tree's transcript index that starts tracking a tag after some of the changes
    builder = SessionBuilder()
    index = builder.tree.transcripts
    ids: list[str] = []
    for serial, (kind, pick) in enumerate(ops):
        grow(builder, kind, pick, ids, serial)
        if serial == start:
            index.track(role_tag)
        if serial < start:
            continue
        # Then after every later change the index's transcript knows the tagged positions
        # and keys a scan of Pi's projection finds, without scanning itself
        reference = Transcript(project_branch(builder.tree.branch()).messages)
        transcript = index.transcript()
        assert role_tag in transcript._tags
        for role in (None, "user", "assistant", "system", "custom"):
            assert transcript.tagged(role_tag, role) == reference.tagged(role_tag, role)
            assert transcript.first_tagged(role_tag, role) == reference.first_tagged(role_tag, role)
            if role is not None:
                assert index.has_tagged(role_tag, role) is reference.has_tagged(role_tag, role)


# -- generated message lists ------------------------------------------------------------------

WINDOW = st.sampled_from([ROOT, "pcw:01a22a68:aaaa0001", "pcw:01a22a68:aaaa0002", 7, None])
MESSAGE = st.one_of(
    st.builds(
        lambda text, replace: {"role": "system", "content": text, "replace": replace},
        st.sampled_from(["", "a", "b"]),
        st.booleans(),
    ),
    st.builds(lambda t: {"role": "user", "content": t, "timestamp": 1}, st.text(max_size=3)),
    st.builds(
        lambda w: {
            "role": "custom",
            "customType": BOOT_TYPE,
            "content": "b",
            "details": {"windowId": w},
        },
        WINDOW,
    ),
    st.just({"role": "custom", "customType": BOOT_TYPE, "content": "no details"}),
    st.just({"role": "custom", "customType": "pi-context-guidance", "content": "g"}),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(MESSAGE, max_size=25))
def test_property_any_list_as_a_transcript_answers_as_the_scans(messages: list[Any]) -> None:
    # Given any message list wrapped as a transcript (what it knows computed on first use)
    # Then every R14/R67–R69 answer and every digest equals the scan of the plain list
    assert_known_equals_scanned(Transcript(messages))


@given(st.lists(MESSAGE, max_size=10), MESSAGE)
def test_property_an_appended_message_extends_the_digest(messages: list[Any], extra: Any) -> None:
    known = Transcript(messages)
    known.list_digest()
    longer = known.appended(extra)
    assert tuple(longer) == (*messages, extra)
    assert longer.list_digest() == scratch_digest([*messages, extra])


def test_a_transcript_is_equal_to_its_tuple_and_slices_to_plain_tuples() -> None:
    messages = ({"role": "user", "content": "a"}, {"role": "user", "content": "b"})
    transcript = Transcript(messages)
    assert transcript == messages and isinstance(transcript[:1], tuple)
    assert type(transcript[:1]) is tuple


def test_the_tree_keeps_one_index_that_follows_its_leaf() -> None:
    # Given a tree with a reset
    builder = SessionBuilder()
    builder.user("one")
    builder.marker("pcw:01a22a68:aaaa0001")
    boot = builder.boot("pcw:01a22a68:aaaa0001")
    builder.user("two")
    index = builder.tree.transcripts
    assert index is builder.tree.transcripts
    assert index.has_tagged(boot_key, "pcw:01a22a68:aaaa0001")
    # When the boot is hidden, then the leaf moves back before it
    builder.edit(boot, None)
    assert not index.has_tagged(boot_key, "pcw:01a22a68:aaaa0001")
    builder.tree.navigate(boot)
    assert index.has_tagged(boot_key, "pcw:01a22a68:aaaa0001")
    assert index.transcript() == project_branch(builder.tree.branch()).messages


# -- real sessions ----------------------------------------------------------------------------

REAL = sorted(CORPUS.glob("*/*.jsonl")) + sorted(TRACES.glob("*.session.jsonl"))


@pytest.mark.corpus
@pytest.mark.skipif(not REAL, reason="no shared corpora")
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_sessions_grown_entry_by_entry_project_as_pi_does(path: Path) -> None:
    # Given a real session file, added to a tree entry by entry
    loaded = read_session(path)
    assert loaded.header is not None
    tree = SessionTree(loaded.header)
    index = TranscriptIndex(tree)
    every = max(1, len(loaded.entries) // 40)
    for number, entry in enumerate(loaded.entries):
        tree.add(entry)
        # Then at regular points the index is Pi's projection of the branch
        if number % every == 0:
            assert_index_matches_the_projection(tree, index)
    # And so it is at every leaf of the finished tree, visited in turn
    for leaf in tree.leaves()[-10:]:
        tree.navigate(leaf)
        assert_index_matches_the_projection(tree, index)
        assert_known_equals_scanned(index.transcript())
