"""The history tools over the active branch (lifecycle spec R78–R80; R76–R77 in test_history)."""

from __future__ import annotations

from pathlib import Path

import pytest
from session_builders import SESSION_ID, SessionBuilder
from tools_kit import Notes, follow_reads, read_result

from pictx_fsm.extensions.pi_context.tools import tool_spec
from pictx_fsm.extensions.pi_context.tools.context import NO_SESSION
from pictx_fsm.extensions.pi_context.tools.output import page, result_text

ROOT = f"pcw:{SESSION_ID[:8]}:root"
SECOND = f"pcw:{SESSION_ID[:8]}:0000beef"


@pytest.fixture
def builder() -> SessionBuilder:
    """Two windows: the root window (a question, a tool call and its error result, a bash run)
    and, after a reset marker, a boot and an answer."""
    session = SessionBuilder()
    session.user("find the needle")
    session.assistant("looking", calls=[{"name": "grep", "arguments": {"q": "needle"}}])
    session.tool_result("needle not found", name="grep", error=True)
    session.bash("ls", "big output", truncated=True, fullOutputPath="/tmp/out.txt")
    session.marker(SECOND)
    session.boot(SECOND)
    session.assistant("Café needle again")
    return session


@pytest.fixture
def notes(tmp_path: Path, builder: SessionBuilder) -> Notes:
    return Notes(root=tmp_path / "notes", history=builder.tree)


def ids(items: list[dict[str, object]]) -> list[object]:
    return [(item["window_id"], item["role"]) for item in items]


# -- registration ------------------------------------------------------------------------------


def test_r18_history_tools_register_before_the_notes_tools_with_their_labels() -> None:
    labels = {
        name: tool_spec(name).label
        for name in ("history_windows", "history_list", "history_read", "history_search")
    }
    assert labels == {
        "history_windows": "History list windows",
        "history_list": "History list items",
        "history_read": "History read item",
        "history_search": "History search",
    }
    read = tool_spec("history_read").parameters
    assert read["required"] == ["item_id", "window_id"]
    assert read["properties"]["limit_chars"]["maximum"] == 50000
    assert "minimum" not in read["properties"]["offset_chars"]
    assert tool_spec("history_search").parameters["required"] == ["query"]


def test_history_tools_without_the_session_answer_with_an_error_result(tmp_path: Path) -> None:
    # Given a host that gave the tools no session
    outcome = Notes(root=tmp_path).call("history_windows")
    # Then the call is an error result naming what is missing, nothing is raised
    assert outcome.status == "error" and outcome.text == NO_SESSION


# -- R78 history_windows -------------------------------------------------------------------------


def test_r78_windows_are_newest_first_unless_recent_first_is_false(notes: Notes) -> None:
    assert notes.ok("history_windows") == {
        "windows": [
            {"window_id": SECOND, "item_count": 2},
            {"window_id": ROOT, "item_count": 5},
        ]
    }
    oldest = notes.ok("history_windows", recent_first=False, limit=1)
    assert oldest == {"windows": [{"window_id": ROOT, "item_count": 5}]}
    assert notes.ok("history_windows", recent_first=None)["windows"][0]["window_id"] == SECOND


# -- R79 history_list ----------------------------------------------------------------------------


def test_r79_items_are_newest_first_and_views_carry_their_tool_facts(notes: Notes) -> None:
    items = notes.ok("history_list", recent_first=False)["items"]
    assert ids(items) == [
        (ROOT, "user"),
        (ROOT, "assistant"),
        (ROOT, "tool_call"),
        (ROOT, "tool"),
        (ROOT, "tool"),
        (SECOND, "developer"),
        (SECOND, "assistant"),
    ]
    call, failed, bash = items[2], items[3], items[4]
    assert call["tool_name"] == "grep" and call["truncated_content"] == '{"q":"needle"}'
    assert call["item_id"] == f"{items[1]['item_id']}#0"
    assert list(failed) == [
        "window_id",
        "item_id",
        "role",
        "tool_name",
        "tool_error",
        "truncated",
        "total_chars",
        "truncated_content",
    ]
    assert (bash["output_truncated"], bash["full_output_path"]) == (True, "/tmp/out.txt")
    assert bash["truncated_content"] == "ls\nbig output"
    assert items[0]["tool_name"] is None
    newest = notes.ok("history_list")["items"]
    assert newest == list(reversed(items))


def test_r79_filters_by_window_role_and_tool_name(notes: Notes) -> None:
    assert ids(notes.ok("history_list", window_id=SECOND)["items"]) == [
        (SECOND, "assistant"),
        (SECOND, "developer"),
    ]
    assert len(notes.ok("history_list", role="tool")["items"]) == 2
    assert len(notes.ok("history_list", role="tool", tool_name="grep")["items"]) == 1
    assert notes.ok("history_list", role="nonsense")["items"] == []


def test_r79_a_vacuous_role_and_tool_name_and_an_unknown_window_are_refused(notes: Notes) -> None:
    assert notes.refusal("history_list", role="user", tool_name="grep") == {
        "error": 'tool_name is only set on "tool_call" and "tool" items; role "user" never '
        "carries one",
        "role": "user",
        "tool_name": "grep",
    }
    assert notes.refusal("history_search", window_id="pcw:nope", query="x") == {
        "error": 'unknown window_id "pcw:nope"',
        "window_id": "pcw:nope",
        "known_windows": [ROOT, SECOND],
    }
    # The refusals are decided before the query is validated
    assert notes.refusal("history_search", role="user", tool_name="grep", query=[])["role"]


def test_r79_previews_are_plain_code_point_prefixes_with_honest_counts(notes: Notes) -> None:
    (item,) = notes.ok("history_list", window_id=SECOND, role="assistant", max_chars_per_item=4)[
        "items"
    ]
    assert (item["truncated"], item["total_chars"], item["truncated_content"]) == (
        True,
        17,
        "Café",
    )
    (short,) = notes.ok("history_list", window_id=SECOND, role="assistant")["items"]
    assert (short["truncated"], short["truncated_content"]) == (False, "Café needle again")


def test_r79_pages_stay_within_32_kib_and_cursors_reach_every_item(tmp_path: Path) -> None:
    # Given a long history of large messages
    builder = SessionBuilder()
    for index in range(60):
        builder.user(f"message {index} " + "x" * 3000)
    notes = Notes(root=tmp_path, history=builder.tree)
    # When it is listed from the start, following next_cursor
    pages = list(notes.pages("history_list", recent_first=False, max_chars_per_item=3000))
    # Then every item appears once, in order, and the final cursor is null
    seen = [item["truncated_content"].split(" ")[1] for p in pages for item in p["items"]]
    assert seen == [str(index) for index in range(60)] and len(pages) > 1
    limited = [p["next_cursor"] for p in notes.pages("history_list", limit=25)]
    assert limited[:2] != [None, None] and limited[-1] is None


def test_r79_an_item_too_big_alone_is_shrunk_to_a_content_prefix_then_tool_name() -> None:
    from pictx_fsm.extensions.pi_context.tools.history_tools import _fit_item

    item = {
        "window_id": "w",
        "item_id": "i",
        "role": "tool",
        "tool_name": "t" * 40_000,
        "truncated": False,
        "total_chars": 40_000,
        "truncated_content": "c" * 40_000,
    }
    result = page([item, item], 0, "items", None, _fit_item)
    (fitted,) = result["items"]
    assert result["next_cursor"] == 1
    assert fitted["truncated"] is True and fitted["total_chars"] == 40_000
    assert "…[truncated " in fitted["tool_name"]
    assert len(result_text(result).encode()) <= 32 * 1024
    small_name = {**item, "tool_name": "grep"}
    (cut,) = page([small_name], 0, "items", None, _fit_item)["items"]
    assert cut["tool_name"] == "grep" and "c" * 30_000 in cut["truncated_content"]


# -- R79 history_search --------------------------------------------------------------------------


def test_r79_search_is_literal_or_of_queries_each_item_once(notes: Notes) -> None:
    found = notes.ok("history_search", query=["needle", "Café"], recent_first=False)["items"]
    assert ids(found) == [
        (ROOT, "user"),
        (ROOT, "tool_call"),
        (ROOT, "tool"),
        (SECOND, "assistant"),
    ]
    assert [item["match_offset_chars"] for item in found] == [9, 6, 0, 0]
    assert list(found[0])[-1] == "match_offset_chars"
    assert notes.ok("history_search", query="NEEDLE")["items"] == []
    assert notes.ok("history_search", query="needle") == notes.ok(
        "history_search", query=["needle"]
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ([], "query must be a string or a non-empty array of strings"),
        (None, "query must be a string or a non-empty array of strings"),
        (["a", 7], "query array elements must be strings"),
        ("", "query strings must be non-empty: an empty query matches everything"),
    ],
)
def test_r79_bad_queries_are_thrown(notes: Notes, query: object, message: str) -> None:
    assert notes.error("history_search", query=query) == message


# -- R80 history_read ----------------------------------------------------------------------------


def test_r80_reads_an_item_as_a_read_window(notes: Notes) -> None:
    (item,) = notes.ok("history_list", window_id=SECOND, role="assistant")["items"]
    read = read_result(notes.call("history_read", window_id=SECOND, item_id=item["item_id"]))
    assert read.header == (
        f"--- READ WINDOW ---\nwindow_id: {SECOND}\nitem_id: {item['item_id']}\n"
        "chars: [0,17) of 17\nnext_offset_chars: null\n"
    )
    assert read.content == "Café needle again"
    assert read.details == {
        "window_id": SECOND,
        "item_id": item["item_id"],
        "offset_chars": 0,
        "total_chars": 17,
        "next_offset_chars": None,
    }
    tail = read_result(
        notes.call("history_read", window_id=SECOND, item_id=item["item_id"], offset_chars=-5)
    )
    assert (tail.start, tail.content) == (12, "again")


def test_r80_unknown_items_and_offsets_past_the_end_are_refused(notes: Notes) -> None:
    (item,) = notes.ok("history_list", window_id=SECOND, role="assistant")["items"]
    assert notes.refusal("history_read", window_id=ROOT, item_id=item["item_id"]) == {
        "error": "unknown item_id or window_id"
    }
    refusal = notes.refusal(
        "history_read", window_id=SECOND, item_id=item["item_id"], offset_chars=18
    )
    assert refusal == {
        "error": "offset_chars 18 is past the end: the item has 17 chars; the largest legal "
        "offset is 17 (an empty end-read)",
        "window_id": SECOND,
        "item_id": item["item_id"],
        "offset_chars": 18,
        "total_chars": 17,
    }


def test_r80_following_next_offset_chars_reconstructs_a_large_item(tmp_path: Path) -> None:
    builder = SessionBuilder()
    text = "".join(f"line {index} 😀 é\n" for index in range(20_000))
    entry_id = builder.user(text)
    notes = Notes(root=tmp_path, history=builder.tree)
    served, reads = follow_reads(notes, "history_read", window_id=ROOT, item_id=entry_id)
    assert served == text and len(reads) > 2
    assert [read.start for read in reads[1:]] == [read.end for read in reads[:-1]]
