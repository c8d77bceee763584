"""History windows and items of the active branch (lifecycle R76–R77)."""

from __future__ import annotations

import pytest
from session_builders import SESSION_ID, SessionBuilder
from shared_paths import TRACES

from pictx_fsm.extensions.pi_context.history import HistoryItem, history_items, history_windows
from pictx_fsm.extensions.pi_context.texts import GUIDANCE_TYPE
from pictx_fsm.extensions.pi_context.windows import root_window_id
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.tree import SessionTree

ROOT = root_window_id(SESSION_ID)
W1 = "pcw:01a22a68:00000001"


def only(builder: SessionBuilder) -> HistoryItem:
    (item,) = history_items(builder.tree.branch(), SESSION_ID)
    return item


# -- R76 ----------------------------------------------------------------------------------------


def test_r76_root_window_comes_first_and_each_marker_opens_a_window() -> None:
    # Given a question, a marker and a question after it
    builder = SessionBuilder()
    first = builder.user("q1")
    marker = builder.marker(W1)
    second = builder.user("q2")
    # When the history is read
    windows = history_windows(builder.tree.branch(), SESSION_ID)
    # Then the root window holds q1, the marker's window q2; the marker is no item
    assert [w.window_id for w in windows] == [ROOT, W1]
    assert [i.item_id for i in windows[0].items] == [first]
    assert [i.item_id for i in windows[1].items] == [second]
    assert windows[0].created_at is None
    assert windows[1].created_at == builder.tree.node(marker).entry.timestamp


def test_r76_compactions_and_branch_summaries_stay_system_items_of_the_window() -> None:
    builder = SessionBuilder()
    builder.user("q")
    compaction = builder.compaction("compacted")
    summary = builder.branch_summary("explored")
    windows = history_windows(builder.tree.branch(), SESSION_ID)
    assert len(windows) == 1
    items = windows[0].items
    assert [(i.item_id, i.role, i.content) for i in items[1:]] == [
        (compaction, "system", "compacted"),
        (summary, "system", "explored"),
    ]


def test_r76_a_sibling_branch_is_never_read() -> None:
    builder = SessionBuilder()
    question = builder.user("q")
    builder.marker(W1)
    builder.user("elsewhere")
    builder.tree.navigate(question)
    builder.assistant("here")
    windows = history_windows(builder.tree.branch(), SESSION_ID)
    assert [w.window_id for w in windows] == [ROOT]
    assert [i.content for i in windows[0].items] == ["q", "here"]


# -- R77 ----------------------------------------------------------------------------------------


def test_r77_assistant_text_item_is_followed_by_one_item_per_tool_call() -> None:
    # Given a reply with text, two tool calls and a thinking block between them
    builder = SessionBuilder()
    reply = builder.message(
        "assistant",
        content=[
            {"type": "text", "text": "Running"},
            {"type": "toolCall", "id": "a", "name": "echo", "arguments": {"text": "A"}},
            {"type": "thinking", "thinking": "hm"},
            {"type": "toolCall", "id": "b", "name": "read", "arguments": {"path": "x"}},
        ],
        usage={},
        stopReason="toolUse",
    )
    # Then the text item holds no tool call, and each call is its own item, numbered among calls
    items = history_items(builder.tree.branch(), SESSION_ID)
    assert [(i.item_id, i.role, i.content, i.tool_name) for i in items] == [
        (reply, "assistant", "Running", None),
        (f"{reply}#0", "tool_call", '{"text":"A"}', "echo"),
        (f"{reply}#1", "tool_call", '{"path":"x"}', "read"),
    ]


def test_r77_tool_results_are_tool_items_with_their_error_flag() -> None:
    builder = SessionBuilder()
    builder.tool_result("boom", name="bash", error=True)
    item = only(builder)
    assert (item.role, item.tool_name, item.tool_error, item.content) == (
        "tool",
        "bash",
        True,
        "boom",
    )


def test_r77_bash_run_shows_command_and_output_and_its_truncation() -> None:
    builder = SessionBuilder()
    builder.bash("make", "done", truncated=True, fullOutputPath="/tmp/out.log")
    item = only(builder)
    assert (item.role, item.tool_name, item.content) == ("tool", "bash", "make\ndone")
    assert item.output_truncated and item.full_output_path == "/tmp/out.log"


def test_r77_bash_run_without_output_shows_the_command_alone() -> None:
    builder = SessionBuilder()
    builder.bash("true", "")
    item = only(builder)
    assert item.content == "true"
    assert not item.output_truncated and item.full_output_path is None


@pytest.mark.parametrize(
    ("custom_type", "role"),
    [(GUIDANCE_TYPE, "developer"), ("pi-context/boot", "developer"), ("ext/aside", "user")],
)
def test_r77_custom_messages_are_developer_items_only_when_pi_context_wrote_them(
    custom_type: str, role: str
) -> None:
    builder = SessionBuilder()
    builder.custom_message(
        custom_type, [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    )
    item = only(builder)
    assert (item.role, item.content) == (role, "a\nb")


def test_r77_custom_role_messages_are_user_items_and_system_messages_are_not_items() -> None:
    builder = SessionBuilder()
    builder.system()
    builder.message("custom", customType="x", content="aside", display=False)
    item = only(builder)
    assert (item.role, item.content) == ("user", "aside")


def test_r77_metadata_and_custom_entries_are_not_items() -> None:
    builder = SessionBuilder()
    question = builder.user("q")
    builder.custom("note")
    builder.label(question)
    builder.edit(question, None)
    assert [i.item_id for i in history_items(builder.tree.branch(), SESSION_ID)] == [question]


def test_r77_items_carry_the_entry_timestamp() -> None:
    builder = SessionBuilder()
    builder.user("q")
    leaf = builder.tree.leaf
    assert leaf is not None and only(builder).created_at == leaf.entry.timestamp


# -- a real Pi run ------------------------------------------------------------------------------


@pytest.mark.corpus
def test_history_of_a_traced_wipe_run() -> None:
    path = TRACES / "c_wipe_turn_end.session.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    loaded = read_session(path)
    assert loaded.header is not None
    tree = SessionTree.from_entries(loaded.header, loaded.entries)
    # The recording extension's marker and boot are pi-capture/* types: no window, user role
    (window,) = history_windows(tree.branch(), loaded.header.id)
    roles = [item.role for item in window.items]
    assert roles == ["user", "assistant", "tool_call", "tool", "user", "assistant"]
