"""pi-context's window index over a session tree (issue 23 item 1): the window facts a node
once carried as fields are pi-context's own index, kept in step with the tree entry by entry;
an index made at any point knows what one made first knows, and both know what the path says.
The tree itself knows no window."""

from __future__ import annotations

import gc
import sys
import weakref
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st
from session_builders import OPS, SessionBuilder, entry, grow

from pictx_fsm.extensions.pi_context.texts import CONTINUATION_TYPE, GUIDANCE_TYPE
from pictx_fsm.extensions.pi_context.windows import (
    WindowFacts,
    WindowIndex,
    boot_window_id,
    root_window_id,
    window_id_of_marker,
)
from pictx_fsm.session.entries import CustomMessageEntry, MessageEntry
from pictx_fsm.session.tree import SessionTree, TreeNode


def facts_of_path(tree: SessionTree, node: TreeNode) -> tuple[Any, ...]:
    """The facts of ``node`` by their definition, from a scan of its path (R8–R14, D1)."""
    window, marker, depth = root_window_id(tree.session_id), None, 0
    types: set[str] = set()
    boot: str | None = None
    continued = False
    for step in node.path():
        opened = window_id_of_marker(step.entry)
        if opened is not None:
            window, marker, depth = opened, step.id, depth + 1
            types, boot, continued = set(), None, False
            continue
        if boot is None and marker is not None and boot_window_id(step.entry) == window:
            boot = step.id
        elif boot is not None and getattr(step.entry, "custom_type", None) == CONTINUATION_TYPE:
            continued = True
        if isinstance(step.entry, CustomMessageEntry):
            types.add(step.entry.custom_type)
    return window, marker, depth, frozenset(types), boot, continued


def known(facts: WindowFacts) -> tuple[Any, ...]:
    window = facts.window
    return (
        window.window_id,
        window.marker_id,
        window.depth,
        facts.message_types,
        facts.boot_id,
        facts.continued,
    )


def every_node(tree: SessionTree) -> list[TreeNode]:
    """Every node, those a later duplicate id shadows included (their children name them)."""
    found: dict[int, TreeNode] = {}
    for node in tree.nodes():
        for ancestor in node.ancestors():
            found.setdefault(id(ancestor), ancestor)
    return sorted(found.values(), key=lambda n: n.order)


def add_duplicate(builder: SessionBuilder, ids: list[str], pick: int) -> None:
    """An entry under the leaf reusing an earlier id (Pi's Map keeps the later)."""
    obj = {"type": "message", "id": ids[pick % len(ids)], "parentId": builder.tree.leaf_id}
    obj |= {"timestamp": "2026-11-30T03:04:02.000Z"}
    obj["message"] = {"role": "user", "content": "same id again", "timestamp": 1}
    builder.tree.add(entry(obj))


@settings(max_examples=120, deadline=None)
@given(OPS, st.integers(min_value=0, max_value=80), st.sets(st.integers(0, 80), max_size=4))
def test_property_an_index_made_at_any_point_knows_every_node_as_its_path_says(
    ops: list[tuple[str, int]], start: int, duplicates: set[int]
) -> None:
    # Given a tree followed by its window index from the first entry on
    builder = SessionBuilder()
    first = WindowIndex.of(builder.tree)
    late: WindowIndex | None = None
    ids: list[str] = []
    for serial, (kind, pick) in enumerate(ops):
        grow(builder, kind, pick, ids, serial)
        if serial in duplicates and ids:
            add_duplicate(builder, ids, pick)
        if serial == start:  # And a second index made later, told of the nodes already there
            late = WindowIndex(builder.tree)
            builder.tree.subscribe(late)
    tree = builder.tree
    # Then both know, of every node (shadowed ones too), what a scan of its path finds
    for node in every_node(tree):
        assert known(first.at(node)) == facts_of_path(tree, node)
        if late is not None:
            assert known(late.at(node)) == facts_of_path(tree, node)
    # And the leaf's questions are those of the leaf's node
    leaf = tree.leaf
    assert first.current_window.window_id == (
        facts_of_path(tree, leaf)[0] if leaf else root_window_id(tree.session_id)
    )
    if leaf is not None:
        assert first.has_window_message(GUIDANCE_TYPE) == (
            GUIDANCE_TYPE in first.at(leaf).message_types
        )


def test_a_plain_message_shares_its_parents_window_facts() -> None:
    # Given a reset window with a guidance, then plain messages
    builder = SessionBuilder()
    windows = WindowIndex.of(builder.tree)
    builder.marker("pcw:01a22a68:00000001")
    builder.boot("pcw:01a22a68:00000001")
    guidance = builder.custom_message(GUIDANCE_TYPE, "low")
    user = builder.user()
    reply = builder.assistant()
    # Then a message adds nothing to its window: its facts are its parent's, one value
    tree = builder.tree
    assert isinstance(tree.node(user).entry, MessageEntry)
    assert windows.at(tree.node(user)) is windows.at(tree.node(guidance))
    assert windows.at(tree.node(reply)) is windows.at(tree.node(guidance))


def test_the_tree_has_one_index_per_type_and_its_nodes_carry_no_extensions_facts() -> None:
    # Given a tree
    builder = SessionBuilder()
    builder.user()
    # Then an index type gives one index per tree, told of every later entry
    windows = WindowIndex.of(builder.tree)
    assert builder.tree.index(WindowIndex) is windows
    builder.marker("pcw:01a22a68:00000001")
    assert windows.current_window.window_id == "pcw:01a22a68:00000001"
    # And a node is Pi's: entry, id, parent, depth and place in the file, nothing else
    assert [field.name for field in attrs.fields(TreeNode)] == [
        "entry",
        "id",
        "parent",
        "depth",
        "order",
    ]


def test_a_tree_and_its_window_index_are_freed_when_dropped_not_left_to_the_cycle_collector() -> (
    None
):
    # Given a tree with its window index (as an audit's skeleton gets one), the cycle
    # collector paused (as audit_file runs)
    gc.disable()
    try:
        builder = SessionBuilder()
        builder.user()
        builder.marker("pcw:01a22a68:00000001")
        windows = WindowIndex.of(builder.tree)
        tree = weakref.ref(builder.tree)
        # When the tree is dropped
        del builder
        # Then it is gone at once (the index holds it weakly), the index with it
        assert tree() is None
        assert sys.getrefcount(windows) == 2  # this name and getrefcount's argument
    finally:
        gc.enable()
