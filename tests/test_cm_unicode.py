"""Lone surrogates (issue 24, item 12): a cut emoji reaches Pi as half of a UTF-16 pair
(``"\\ud83d"``), and session files keep it. Wherever one arrives — a prompt, another
extension's message, a tool argument, a note, a command — the extension answers as Node
would (a lone surrogate is 3 UTF-8 bytes, ``JSON.stringify`` escapes it), never with an
exception, and a note holding one is refused with a clear error naming the field."""

from __future__ import annotations

from cm_kit import C, D, P, S, play, shared, tool_payloads, user_ids, world
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm import js
from pictx_fsm.extensions.context_management import history
from pictx_fsm.extensions.context_management.kit.world import World
from pictx_fsm.extensions.context_management.sources import Source, pieces
from pictx_fsm.extensions.context_management.texts import (
    NOTES_TOOL,
    READ_TOOL,
    SEARCH_TOOL,
    STATUS_TOOL,
)
from pictx_fsm.hosts.model import Call, Text, Tools

LONE = ("\ud83d", "\ude00", "\udbff", "\udc00")
lone_text = st.lists(
    st.one_of(st.sampled_from(LONE), st.characters(), st.sampled_from(["😀", "中", "\n", '"'])),
    min_size=1,
    max_size=40,
).map("".join)


def _calls(w: World, *calls: tuple[str, dict[str, object]]) -> None:
    """The model's next reply calls these tools, then answers in text."""
    made = tuple(Call(name=n, arguments=a, id=f"u{i}") for i, (n, a) in enumerate(calls))
    w.session.provider.push(Tools(calls=made, text=""), Text(text="ok"))


def _run(w: World, text: str) -> None:
    w.session.prompt(text)
    w.session.run_until_idle()


def _note(text: str) -> dict[str, object]:
    return {"action": "update", "key": "cut", "kind": "goal", "text": text, "sources": []}


@settings(max_examples=25, deadline=None)
@given(lone_text)
def test_unicode_a_lone_surrogate_anywhere_never_raises(text: str) -> None:
    # Given a session whose prompt, a foreign message and long history hold the text
    w = play(world(), P(chars=200), S)
    _run(w, f"prompt with {text} inside")
    w.session.send_message("other-extension", f"foreign {text}", display=True)
    user = user_ids(w)[-1]
    # When the model passes it to every tool, the user to every command, and the history
    # grows into a background job, a compaction and a handoff
    note = _note(text)
    note["sources"] = [user]
    _calls(
        w,
        (SEARCH_TOOL, {"query": text}),
        (SEARCH_TOOL, {"query": "prompt", "cursor": text}),
        (READ_TOOL, {"sourceId": user, "offset": 0}),
        (READ_TOOL, {"sourceId": text}),
        (NOTES_TOOL, note),
        (NOTES_TOOL, {"action": text}),
        (NOTES_TOOL, {"action": "read"}),
        (STATUS_TOOL, {}),
    )
    _run(w, "go")
    for args in (text, "status", "notes", "session", "session export", "session close"):
        w.session.command("ctx-memory", args)
    _run(w, (text + " ") * 4_000)
    # Then every step held the §12 invariants, among them "never throws into the host"
    play(w, D, shared.Compact(), P(chars=200), S, C(args="handoff"), D, S)
    assert all(isinstance(p, dict) for p in tool_payloads(w))


@given(lone_text.filter(lambda t: any(c in t for c in LONE)))
@settings(max_examples=40, deadline=None)
def test_unicode_a_note_with_a_lone_surrogate_is_refused_naming_the_field(text: str) -> None:
    # Given a user message to cite
    w = play(world(), P(chars=200), S)
    user = user_ids(w)[0]
    note = _note(f"keep {text}")
    note["sources"] = [user]
    # When the model writes a note whose text holds a lone surrogate
    _calls(w, (NOTES_TOOL, note))
    play(w, P(chars=200), S)
    # Then the write is refused with invalid_arguments naming the text, not an exception
    (answer,) = tool_payloads(w, NOTES_TOOL)
    assert answer["ok"] is False and answer["error"] == "invalid_arguments"
    assert answer["message"].startswith("text holds a lone surrogate")


@given(lone_text, lone_text)
@settings(max_examples=60, deadline=None)
def test_unicode_search_and_read_answer_as_node_would(text: str, query: str) -> None:
    # Given a source holding lone surrogates
    scope = history.scope_of(
        "session", "s", None, [Source(id="x", role="user", time="t", text=text)], ["x"]
    )
    # When it is read page by page and searched for anything
    offset: int | None = 0
    read: list[str] = []
    while offset is not None:
        page = history.read(scope, "x", offset, 7)
        read.append(page["text"])
        offset = page["nextOffset"]
    found = history.search(scope, query, None)
    # Then the pages join to the text as Node's Buffer holds it (two halves side by side are
    # one character to JavaScript, U+FFFD for each lone surrogate), and a hit is reported
    # exactly when JavaScript's indexOf finds the query
    held = js.from_code_units(text)
    assert "".join(read) == "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in held)
    units = text.encode("utf-16-le", "surrogatepass")
    needle = query.encode("utf-16-le", "surrogatepass")
    hit = any(units[i : i + len(needle)] == needle for i in range(0, len(units) + 1, 2))
    assert bool(found["hits"]) == hit


@given(lone_text, st.integers(40, 400))
@settings(max_examples=60, deadline=None)
def test_unicode_an_overlong_source_is_cut_within_its_json_bytes(text: str, limit: int) -> None:
    # Given any text cut into pieces of at most ``limit`` serialized JSON bytes
    parts = pieces([Source(id="s", role="user", time="t", text=text * 20)], limit)
    # Then every piece fits (a lone surrogate is written as its 6-byte escape) and the
    # pieces join to the text
    assert "".join(p.text for p in parts) == text * 20
    assert all(p.size <= limit or len(p.text) == 1 for p in parts)
