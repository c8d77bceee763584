"""The extension's fail-closed projection equals the lifecycle's (R67–R69), by construction.

``failclosed.mjs`` answers provider requests when Python cannot. It finds the window by a
scan from the leaf and cuts the request itself; these tests run it under Node on every branch
tip of every corpus session and real Pi trace and on generated sessions (markers, boots of
this, other and forked windows, compactions, summaries, hidden boots, navigation), and check
it against ``project_reset`` on the tree's current window, and against the Python twin
(:mod:`pictx_fsm.hosts.pi.failclosed`) the model session uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from generated_sessions import STEPS, W, build_session
from hypothesis import HealthCheck, given, settings
from node_batch import NodeBatch, json_normal
from shared_paths import CORPUS, TRACES

from pictx_fsm.extensions.pi_context.reset_projection import project_reset
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.hosts.pi.failclosed import fail_closed, marker_on_path, scan_window
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.projection import context_messages
from pictx_fsm.session.tree import SessionTree


def _case(tree: SessionTree) -> tuple[dict[str, Any], list[Any]]:
    messages = context_messages(tree.branch())
    request = {
        "op": "project",
        "sessionId": tree.session_id,
        "entries": [e.to_json() for e in tree.entries],
        "leaf": tree.leaf_id,
        "messages": messages,
    }
    return request, messages


def assert_js_equals_python(node: NodeBatch, tree: SessionTree) -> None:
    """JS == the lifecycle's projection == the Python twin, for the tree's current leaf."""
    request, messages = _case(tree)
    answer = node.ask(request)
    window = WindowIndex.of(tree).current_window
    expected = project_reset(messages, window)
    twin = fail_closed(messages, scan_window(tree))
    assert answer["window"] == {"windowId": window.window_id, "markerId": window.marker_id}
    assert answer["messages"] == json_normal(list(expected.messages))
    assert answer["missingBoot"] == expected.missing_boot
    assert answer["cutIndex"] == expected.cut_index
    assert json_normal(list(twin.messages)) == answer["messages"]
    assert twin.missing_boot == expected.missing_boot


def _sessions() -> list[Path]:
    found = sorted(CORPUS.glob("*/*.jsonl")) + sorted(TRACES.glob("*.session.jsonl"))
    return [path for path in found if path.is_file()]


def _tips(tree: SessionTree) -> list[str | None]:
    """Every branch tip, and every entry where a window opens or its boot is written."""
    interesting = {
        e.id
        for e in tree.entries
        if e.id and (getattr(e, "custom_type", None) or e.type in ("compaction",))
    }
    return [*tree.leaves(), *sorted(interesting)]


@pytest.mark.corpus
def test_r67_r69_js_projection_equals_python_on_every_corpus_session_and_trace(
    node: NodeBatch,
) -> None:
    # Given every real session file and every real Pi 0.87.1 trace
    sessions = _sessions()
    if not sessions:
        pytest.skip(f"no shared corpora at {CORPUS.parent} (see tests/shared_paths.py)")
    checked = 0
    for path in sessions:
        loaded = read_session(path)
        if loaded.header is None:
            continue
        tree = SessionTree.from_entries(loaded.header, loaded.entries)
        # When the leaf is put at every branch tip and interesting entry in turn
        for tip in _tips(tree):
            tree.navigate(tip)
            # Then the JS projection is the lifecycle's, and the twin's
            assert_js_equals_python(node, tree)
            checked += 1
    assert checked >= len(sessions)


# -- generated branches --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_r67_r69_js_projection_equals_python_on_generated_branches(
    node: NodeBatch, steps: list[tuple[Any, ...]]
) -> None:
    # Given a generated session (any mix of windows, boots, compactions and navigation)
    tree = build_session(steps)
    # Then, at its leaf, the JS projection is the lifecycle's and the twin's
    assert_js_equals_python(node, tree)
    # And for every entry, JS and Python agree whether its path holds a marker (what the
    # fallback answers to a native compaction or a branch summary, R62/R75)
    request, _ = _case(tree)
    ids = [e.id for e in tree.entries if e.id]
    marked = node.ask({**request, "paths": ids})["marked"]
    assert marked == {i: marker_on_path(tree, i) for i in ids}


def test_r68_a_reset_window_without_its_boot_keeps_only_the_system_head(node: NodeBatch) -> None:
    # Given a window whose boot another extension hid from the context
    tree = build_session(
        [
            ("system", "a", False, "You are Pi."),
            ("user", 1),
            ("marker", W[0]),
            ("boot", W[0]),
            ("hide_last_boot",),
        ]
    )
    request, _ = _case(tree)
    # When the extension projects the next request alone
    answer = node.ask(request)
    # Then it asks for an abort, and only the folded system message would be sent
    assert answer["missingBoot"] is True
    assert [m["role"] for m in answer["messages"]] == ["system"]


def test_r67_the_scan_finds_the_marker_from_the_leaf_not_from_a_sibling_branch(
    node: NodeBatch,
) -> None:
    # Given a marker on a branch the leaf has left (navigation back before it)
    tree = build_session([("user", 1), ("assistant", 2), ("marker", W[1]), ("boot", W[1])])
    first = tree.entries[1].id
    assert first is not None
    tree.navigate(first)
    request, _ = _case(tree)
    # When projected / Then the leaf is in the root window again
    assert node.ask(request)["window"]["markerId"] is None
    assert_js_equals_python(node, tree)
