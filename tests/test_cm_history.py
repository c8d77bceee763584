"""History retrieval (spec §3, M19–M24)."""

from __future__ import annotations

import pytest
from cm_kit import C, P, S, cm, play, shared, tool, tool_payloads, user_ids, world
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.extensions.context_management import history
from pictx_fsm.extensions.context_management.policy import (
    EXCERPT_MAX_BYTES,
    READ_MAX_BYTES,
    Budgets,
)
from pictx_fsm.extensions.context_management.sources import Source, source_of
from pictx_fsm.extensions.context_management.texts import (
    NOTES_TOOL,
    READ_TOOL,
    SEARCH_TOOL,
    STATUS_TOOL,
)
from pictx_fsm.hosts.model import Call, Text, Tools
from pictx_fsm.session.entries import (
    AgentMessage,
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    MessageEntry,
)


def _scope(*texts: str, leaf: str | None = "m9") -> history.Scope:
    sources = [Source(id=f"m{i}", role="user", time="t", text=t) for i, t in enumerate(texts)]
    ids = [s.id for s in sources] + ["m9"]
    return history.scope_of("session", "sess", leaf, sources, ids)


def test_m19_sibling_branches_are_never_searched() -> None:
    # Given a prompt on one branch, then navigation back to before it and another prompt
    w = play(
        world(), P(chars=300), S, P(chars=300), S, shared.Navigate(index=3), *tool(tool="search")
    )
    # Then the search sees only this branch's prompts (each hit is a source on the branch)
    hits = tool_payloads(w, SEARCH_TOOL)[-1]["hits"]
    branch = {e.id for e in w.session.tree.branch()}
    assert hits and all(h["sourceId"] in branch for h in hits)
    assert len(w.generator.requests) == 0  # search never calls the model


def _message(role: str, content: object, **extra: object) -> MessageEntry:
    raw = {"role": role, "content": content, **extra}
    return MessageEntry(
        id="e1", parent_id=None, timestamp="t", message=AgentMessage(role=role, raw=raw)
    )


def test_m20_what_is_indexed_and_what_is_not() -> None:
    # Given entries of every kind
    user = _message("user", [{"type": "text", "text": "hi"}, {"type": "image", "data": "..."}])
    thinking = _message(
        "assistant", [{"type": "thinking", "thinking": "secret"}, {"type": "text", "text": "ok"}]
    )
    shell = _message("toolResult", "output", excludeFromContext=True)
    foreign = CustomMessageEntry(
        id="c", parent_id=None, timestamp="t", custom_type="other", content="note", display=False
    )
    plain = CustomEntry(id="p", parent_id=None, timestamp="t", custom_type="other", data={})
    summary = BranchSummaryEntry(id="b", parent_id=None, timestamp="t", from_id="x", summary="s")
    # Then user text (not pixels), assistant text (not thinking) and hidden foreign custom
    # messages are sources; shell output, plain custom entries and branch summaries are not
    assert source_of(user).text == "hi"
    assert source_of(thinking).text == "ok"
    assert source_of(foreign).role == "custom"
    assert source_of(shell) is None and source_of(plain) is None and source_of(summary) is None


def test_m21_search_is_a_case_sensitive_literal_with_short_excerpts() -> None:
    # Given sources with a path, CJK text and a different case
    scope = _scope(
        "read /src/a.py now", "中文路径 /src/a.py", "READ /SRC/A.PY", "x" * 5000 + "/src/a.py"
    )
    # When searching the literal
    page = history.search(scope, "/src/a.py", None)
    # Then exact matches only, each with id, role, time and an excerpt within 1100 bytes
    assert [h["sourceId"] for h in page["hits"]] == ["m0", "m1", "m3"]
    assert all(len(h["excerpt"].encode()) <= EXCERPT_MAX_BYTES for h in page["hits"])
    assert "/src/a.py" in page["hits"][2]["excerpt"]


def test_m21_cursors_page_survive_appends_and_go_stale_on_change() -> None:
    # Given more hits than one page
    scope = _scope(*(f"hit {i}" for i in range(12)))
    first = history.search(scope, "hit", None)
    assert len(first["hits"]) == 8 and first["cursor"] is not None
    # When the branch grows (same leaf still an ancestor) / Then the cursor continues
    grown = history.scope_of("session", "sess", "m20", scope.sources, [*scope.ancestors, "m20"])
    second = history.search(grown, "hit", first["cursor"])
    assert [h["sourceId"] for h in second["hits"]] == [f"m{i}" for i in range(8, 12)]
    # When the query or branch changed / Then stale_scope
    moved = history.scope_of("session", "sess", "m5", scope.sources, ["m0", "m5"])
    for scope_, query in ((scope, "hit 1"), (moved, "hit")):
        with pytest.raises(history.RecallRefusal) as error:
            history.search(scope_, query, first["cursor"])
        assert error.value.code == "stale_scope"


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "é", "中", "😀", "\n"]), min_size=1, max_size=4000))
def test_m22_read_pages_never_split_a_character(text: str) -> None:
    # Given any text read page by page from offset 0
    scope = history.scope_of(
        "session", "s", None, [Source(id="x", role="user", time="t", text=text)], ["x"]
    )
    offset: int | None = 0
    pieces = []
    while offset is not None:
        page = history.read(scope, "x", offset)
        # Then each page is at most 3000 bytes and nextOffset continues it exactly
        assert len(page["text"].encode()) <= READ_MAX_BYTES
        pieces.append(page["text"])
        offset = page["nextOffset"]
    assert "".join(pieces) == text


def test_m22_an_unknown_source_is_source_not_found() -> None:
    w = play(world(), P(chars=200), S, *tool(tool="read", source="missing"))
    assert tool_payloads(w, READ_TOOL)[-1]["error"] == "source_not_found"


def test_m23_recall_is_bounded_per_turn_and_paused_without_usage() -> None:
    # Given a turn's quota: min(4000, 5 % of W, W - tokens - margin)
    budgets = Budgets(context_window=64_000)
    assert budgets.recall_turn_bytes(1_000) == 3_200
    assert budgets.recall_turn_bytes(50_000) == 0
    assert budgets.recall_turn_bytes(None) == 0
    # When a session's context leaves no safe space / Then recall answers recall_budget
    w = play(world(), P(chars=200), S, *tool(tool="notes_read"))
    assert tool_payloads(w, NOTES_TOOL)[-1]["ok"] is True
    play(w, *(P(chars=50_000), S) * 4, *tool(tool="notes_read"))
    assert tool_payloads(w, NOTES_TOOL)[-1]["error"] == "recall_budget"
    play(w, *tool(tool="status"))
    status = tool_payloads(w, STATUS_TOOL)[-1]
    assert set(status) >= {"tokens", "contextWindow", "checkpointState", "recallQuotaRemaining"}


def test_m24_handoff_scope_reads_the_captured_parent_only() -> None:
    # Given a handoff target whose parent got more messages after the capture
    w = play(world(), P(chars=300), S, C(args="handoff"), cm.Drain(), S)
    parent = w.session.files[w.journal.switches[0].source]
    play(w, *tool(tool="search", handoff=True))
    hits = tool_payloads(w, SEARCH_TOOL)[-1]["hits"]
    # Then hits come from the parent's captured branch (its ids appear in the package)
    parent_ids = {e.id for e in parent.tree.entries}
    assert hits and all(h["sourceId"] in parent_ids for h in hits)
    # When the parent file cannot be read / Then the handoff scope is refused
    play(w, cm.HideParent(on=True), *tool(tool="search", handoff=True))
    assert tool_payloads(w, SEARCH_TOOL)[-1]["error"] == "handoff_source_unavailable"


def test_m24_a_session_without_parent_has_no_handoff_scope() -> None:
    w = play(world(), P(chars=200), S, *tool(tool="search", handoff=True))
    assert tool_payloads(w, SEARCH_TOOL)[-1]["error"] == "handoff_source_unavailable"


def test_m20_another_extensions_message_shows_its_extension_type() -> None:
    # Given another extension's message on the branch, then a long reply (background notes)
    w = play(world(), P(chars=200), S, cm.ForeignMessage(chars=300), cm.Turn(chars=12_000))
    foreign = next(e for e in w.session.tree.branch() if isinstance(e, CustomMessageEntry))
    # When the model searches for it and reads it
    calls = (
        Call(name=SEARCH_TOOL, arguments={"query": "foreign-"}, id="q1"),
        Call(name=READ_TOOL, arguments={"sourceId": foreign.id}, id="r1"),
    )
    w.session.provider.push(Tools(calls=calls, text=""), Text(text="ok"))
    play(w, P(chars=200), S)
    # Then the hit, the read and the generation input name its role and extension type
    hits = tool_payloads(w, SEARCH_TOOL)[-1]["hits"]
    (hit,) = [h for h in hits if h["sourceId"] == foreign.id]
    read = tool_payloads(w, READ_TOOL)[-1]
    sources = [p for r in w.generator.requests for p in r.payload()["sources"]]
    sent = [p for p in sources if p["id"] == foreign.id]
    for shown in (hit, read, *sent):
        assert (shown["role"], shown["customType"]) == ("custom", "other-extension")
    assert sent


def _long_scope(sizes: list[tuple[int, bool]]) -> history.Scope:
    texts = [("x" * size) + (" needle " if match else " ") + ("y" * size) for size, match in sizes]
    return _scope(*texts)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2_000), st.booleans()), min_size=1, max_size=9),
    st.integers(500, 4_000),
)
def test_m21_m23_search_pages_fit_the_quota_and_together_find_every_hit(
    sizes: list[tuple[int, bool]], budget: int
) -> None:
    # Given sources of any size, some holding the query, and a fresh quota for each page
    scope = _long_scope(sizes)
    cursor: str | None = None
    found: list[str] = []
    pages = 0
    while pages == 0 or cursor is not None:
        # When the model pages through the results
        page = history.search(scope, "needle", cursor, budget)
        pages += 1
        # Then each page fits the quota and moves on
        assert history.result_bytes(page) <= budget
        assert page["hits"] or page["cursor"] is None
        assert all("needle" in hit["excerpt"] for hit in page["hits"])
        found += [hit["sourceId"] for hit in page["hits"]]
        cursor = page["cursor"]
    # And together the pages hold every matching source once, in branch order
    assert found == [s.id for s in scope.sources if "needle" in s.text]


def test_m23_a_quota_too_small_for_any_hit_is_recall_budget() -> None:
    scope = _long_scope([(2_000, True)])
    with pytest.raises(history.RecallRefusal) as error:
        history.search(scope, "needle", None, 40)
    assert error.value.code == "recall_budget"


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(["a", "é", "中", "😀", "\n", '"']), min_size=1, max_size=4000),
    st.integers(200, 4_000),
)
def test_m22_m23_read_pages_fit_the_quota(text: str, budget: int) -> None:
    # Given any source read page by page with a fresh quota for each page
    scope = history.scope_of(
        "session", "s", None, [Source(id="x", role="user", time="t", text=text)], ["x"]
    )
    offset: int | None = 0
    pieces = []
    while offset is not None:
        page = history.read(scope, "x", offset, READ_MAX_BYTES, budget)
        # Then each page fits the quota, and the pages join to the source
        assert history.result_bytes(page) <= budget
        pieces.append(page["text"])
        offset = page["nextOffset"]
    assert "".join(pieces) == text


def test_m21_m23_large_results_page_within_the_quota() -> None:
    # Given four long prompts that all hold the query: 8 full excerpts exceed the quota
    w = play(world(), *(P(chars=3_000), S) * 4)
    quota = Budgets(context_window=64_000).recall_turn_bytes(0)  # the most a turn gets
    # When the model searches, then follows the cursor in the next turns
    pages = []
    play(w, *tool(tool="search"))
    pages.append(tool_payloads(w, SEARCH_TOOL)[-1])
    while pages[-1].get("cursor"):
        call = Call(name=SEARCH_TOOL, arguments={"query": "prompt-", "cursor": pages[-1]["cursor"]})
        w.session.provider.push(Tools(calls=(call,), text=""), Text(text="ok"))
        play(w, P(chars=200), S)
        pages.append(tool_payloads(w, SEARCH_TOOL)[-1])
    # Then no page was refused, each fits the turn's quota, and they found every prompt
    assert all("hits" in page and history.result_bytes(page) <= quota for page in pages)
    found = {hit["sourceId"] for page in pages for hit in page["hits"]}
    assert set(user_ids(w)[:4]) <= found and len(pages) > 1


def test_m21_search_can_ask_for_a_smaller_page() -> None:
    # Given long prompts holding the query
    w = play(world(), *(P(chars=3_000), S) * 3)
    # When the model asks for pages of at most 400 bytes
    call = Call(name=SEARCH_TOOL, arguments={"query": "prompt-", "maxBytes": 400})
    w.session.provider.push(Tools(calls=(call,), text=""), Text(text="ok"))
    play(w, P(chars=200), S)
    # Then the page fits, with at least one (shortened) hit and a cursor for the rest
    page = tool_payloads(w, SEARCH_TOOL)[-1]
    assert history.result_bytes(page) <= 400 and page["hits"] and page["cursor"]
    assert "prompt-" in page["hits"][0]["excerpt"]
