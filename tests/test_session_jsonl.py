"""Reading and writing Pi session JSONL (pi-host §8, failure-modes §F)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pictx_fsm.errors import SessionWriteError, UnreadableInputError
from pictx_fsm.session.entries import (
    ABSENT,
    AgentMessage,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    OpaqueEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UsageEntry,
)
from pictx_fsm.session.jsonl import (
    SessionParser,
    SessionWriter,
    dumps_entry,
    dumps_json,
    dumps_session,
    iter_session_lines,
    parse_session,
    read_session,
)
from pictx_fsm.session.problems import ProblemKind, Severity

TS = "2026-05-04T10:00:00.000Z"
HEADER = {"type": "session", "version": 3, "id": "0b1e7c2a-5f3d", "timestamp": TS, "cwd": "/w"}


def line(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def message(
    entry_id: str, parent: str | None, role: str = "user", text: str = "hi"
) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": TS,
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1},
    }


def session_text(*lines: str, final_newline: bool = True) -> str:
    return "\n".join([line(HEADER), *lines]) + ("\n" if final_newline else "")


def kinds_at(text: str) -> list[tuple[ProblemKind, int | None]]:
    return [(p.kind, p.line) for p in parse_session(text).problems]


# --------------------------------------------------------------------------------------------
# Clean files


def test_clean_v3_file_reads_header_and_entries_with_their_lines() -> None:
    # Given a header and two entries
    text = session_text(line(message("u1", None)), line(message("a1", "u1", "assistant")))
    # When it is read
    loaded = parse_session(text, source="s.jsonl")
    # Then the header, entries, lines are exact and there is no problem
    assert loaded.header is not None and loaded.header.id == "0b1e7c2a-5f3d"
    assert [e.id for e in loaded.entries] == ["u1", "a1"]
    assert loaded.lines == (2, 3)
    assert loaded.problems == ()
    assert loaded.original_version == 3
    assert loaded.source == "s.jsonl"


def test_crlf_line_endings_are_whitespace_not_junk() -> None:
    # Given a file written with CRLF line endings
    text = session_text(line(message("u1", None))).replace("\n", "\r\n")
    # When it is read / Then the entry loads and nothing is reported
    loaded = parse_session(text)
    assert [e.id for e in loaded.entries] == ["u1"]
    assert loaded.problems == ()


def test_unicode_line_separators_inside_strings_do_not_split_lines() -> None:
    # Given an entry whose text contains U+2028 and U+0085 written raw (JSON allows both)
    raw = json.dumps(message("u1", None, text="a\u2028b\u0085c"), ensure_ascii=False)
    # When it is read
    loaded = parse_session(session_text(raw))
    # Then it is one entry on line 2 with the text intact
    entry = loaded.entries[0]
    assert isinstance(entry, MessageEntry) and entry.message.text() == "a\u2028b\u0085c"
    assert loaded.lines == (2,)


def test_streaming_reader_knows_the_header_before_the_file_is_exhausted(tmp_path: Path) -> None:
    # Given a file with a header and three entries
    path = tmp_path / "s.jsonl"
    path.write_text(session_text(*(line(message(f"e{i}", None)) for i in range(3))))
    parser = SessionParser(str(path))
    with path.open("rb") as fp:
        stream = iter_session_lines(fp, parser)
        # When only the first entry has been taken
        first = next(stream)
        # Then the header and the first entry's line are known already
        assert parser.header is not None and first.line == 2
        rest = list(stream)
    assert [e.entry.id for e in rest] == ["e1", "e2"]


# --------------------------------------------------------------------------------------------
# Torn and glued lines (failure mode F20)


def test_glued_objects_on_one_line_are_both_recovered_and_reported() -> None:
    # Given an assistant message and a compaction glued on one line (a write without newline)
    compaction: dict[str, Any] = {"type": "compaction", "id": "c1", "parentId": "a1"}
    compaction |= {"timestamp": TS, "summary": "S", "firstKeptEntryId": "c1", "tokensBefore": 5}
    text = session_text(line(message("a1", None, "assistant")) + line(compaction))
    # When it is read
    loaded = parse_session(text)
    # Then both entries are there, on line 2, and the line is reported as glued (an error)
    assert [type(e) for e in loaded.entries] == [MessageEntry, CompactionEntry]
    assert loaded.lines == (2, 2)
    [problem] = loaded.problems
    assert (problem.kind, problem.line, problem.severity) == (
        ProblemKind.GLUED_OBJECTS,
        2,
        Severity.ERROR,
    )


def test_three_glued_objects_with_whitespace_between_are_all_recovered() -> None:
    # Given three entries on one line, separated by spaces
    glued = " ".join(line(message(f"e{i}", None)) for i in range(3))
    # When it is read / Then all three entries are recovered
    loaded = parse_session(session_text(glued))
    assert [e.id for e in loaded.entries] == ["e0", "e1", "e2"]
    assert kinds_at(session_text(glued)) == [(ProblemKind.GLUED_OBJECTS, 2)]


def test_torn_fragment_followed_by_complete_entry_reports_torn_and_recovers_entry() -> None:
    # Given a crash that cut an entry short and a later append glued onto the fragment
    full = line(message("a1", "u1", "assistant", text="cut short"))
    fragment = full[: full.index("short")]
    text = session_text(line(message("u1", None)), fragment + line(message("u2", "u1")))
    # When it is read
    loaded = parse_session(text)
    # Then the complete entry is recovered and the fragment is a torn line keeping its text
    assert [e.id for e in loaded.entries] == ["u1", "u2"]
    [torn] = loaded.problems
    assert (torn.kind, torn.line, torn.raw) == (ProblemKind.TORN_LINE, 3, fragment)


def test_content_block_inside_a_torn_fragment_is_not_recovered_as_an_entry() -> None:
    # Given a fragment that happens to end right after a complete content block
    full = line(message("a1", None, "assistant", text="x"))
    fragment = full[: full.index('"text":"x"}') + len('"text":"x"}')]
    text = session_text(fragment + line(message("u2", None)))
    # When it is read
    loaded = parse_session(text)
    # Then only the glued entry is recovered, the whole fragment is reported torn
    assert [e.id for e in loaded.entries] == ["u2"]
    assert [(p.kind, p.raw) for p in loaded.problems] == [(ProblemKind.TORN_LINE, fragment)]


def test_torn_unterminated_last_line_is_a_torn_line_not_a_missing_newline() -> None:
    # Given a file whose last line was cut mid-string with no final newline
    full = line(message("a1", None, "assistant"))
    text = session_text(line(message("u1", None))) + full[:30]
    # When it is read / Then only the torn line is reported, with its fragment
    loaded = parse_session(text)
    assert [(p.kind, p.line, p.raw) for p in loaded.problems] == [
        (ProblemKind.TORN_LINE, 3, full[:30])
    ]
    assert [e.id for e in loaded.entries] == ["u1"]


def test_torn_line_in_the_middle_does_not_hide_later_lines() -> None:
    # Given a torn line between two good ones
    text = session_text(
        line(message("u1", None)), '{"type":"message","id":"x', line(message("u2", "u1"))
    )
    # When it is read / Then the torn line is reported and both good entries load
    assert kinds_at(text) == [(ProblemKind.TORN_LINE, 3)]
    assert [e.id for e in parse_session(text).entries] == ["u1", "u2"]


def test_truncated_inside_a_literal_is_still_torn() -> None:
    # Given a line cut inside ``true``
    text = session_text('{"type":"message","id":"x","flag":tr')
    # When it is read / Then it is a torn line, not generic invalid JSON
    assert kinds_at(text) == [(ProblemKind.TORN_LINE, 2)]


def test_nul_byte_run_before_an_entry_is_junk_and_the_entry_is_recovered() -> None:
    # Given an interrupted append that left NUL bytes and the next append after them
    text = session_text("\x00" * 16 + line(message("u1", None)))
    # When it is read
    loaded = parse_session(text)
    # Then the entry is recovered and the NUL run is reported as invalid JSON with its text
    assert [e.id for e in loaded.entries] == ["u1"]
    [problem] = loaded.problems
    assert (problem.kind, problem.raw) == (ProblemKind.INVALID_JSON, "\x00" * 16)


# --------------------------------------------------------------------------------------------
# Invalid lines


def test_invalid_json_line_is_an_error_keeping_its_text() -> None:
    # Given a line of prose
    text = session_text("not json at all", line(message("u1", None)))
    # When it is read / Then it is reported with its text, and the next line loads
    loaded = parse_session(text)
    [problem] = loaded.problems
    assert (problem.kind, problem.line, problem.raw) == (
        ProblemKind.INVALID_JSON,
        2,
        "not json at all",
    )
    assert [e.id for e in loaded.entries] == ["u1"]


def test_nan_is_invalid_json_as_in_javascript() -> None:
    # Given an entry using the non-JSON literal NaN (JSON.parse rejects it, so does Pi)
    text = session_text('{"type":"custom","id":"c","parentId":null,"customType":"t","data":NaN}')
    # When it is read / Then the line is not an entry
    loaded = parse_session(text)
    assert loaded.entries == ()
    assert [p.kind for p in loaded.problems] == [ProblemKind.INVALID_JSON]


def test_json_value_that_is_not_an_object_is_reported() -> None:
    # Given a JSON array line
    # When it is read / Then it is "not an object" with its text kept
    [problem] = parse_session(session_text("[1,2,3]")).problems
    assert (problem.kind, problem.raw) == (ProblemKind.NOT_AN_OBJECT, "[1,2,3]")


def test_first_json_value_not_an_object_makes_the_file_headerless_as_in_pi() -> None:
    # Given a number on line 1 before the header (Pi's first parsed line is then no header)
    text = "42\n" + session_text(line(message("u1", None)))
    # When it is read
    loaded = parse_session(text)
    # Then there is no header, the later header is an extra one, the entry is kept
    assert loaded.header is None
    assert kinds_at(text) == [
        (ProblemKind.NOT_AN_OBJECT, 1),
        (ProblemKind.NOT_SESSION_HEADER, 1),
        (ProblemKind.EXTRA_HEADER, 2),
    ]
    assert [e.id for e in loaded.entries] == ["u1"]


def test_blank_line_is_info_only() -> None:
    # Given a blank line between entries
    loaded = parse_session(
        session_text(line(message("u1", None)), "   ", line(message("u2", "u1")))
    )
    # When it is read / Then it is reported as info, which is not a defect
    assert [(p.kind, p.line, p.severity) for p in loaded.problems] == [
        (ProblemKind.BLANK_LINE, 3, Severity.INFO)
    ]
    assert not loaded.has_defects


def test_missing_final_newline_is_a_warning_on_the_last_line() -> None:
    # Given a complete last entry without its newline
    text = session_text(line(message("u1", None)), final_newline=False)
    # When it is read / Then the entry loads and the missing newline is a warning at line 2
    loaded = parse_session(text)
    assert [e.id for e in loaded.entries] == ["u1"]
    assert [(p.kind, p.line, p.severity) for p in loaded.problems] == [
        (ProblemKind.MISSING_FINAL_NEWLINE, 2, Severity.WARNING)
    ]


def test_invalid_utf8_line_is_reported_with_its_bytes_and_the_rest_loads(tmp_path: Path) -> None:
    # Given a file where one line holds Latin-1 bytes inside a JSON string
    bad = line(message("u1", None, text="caf\x00")).encode().replace(b"\\u0000", b"\xe9")
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text().encode() + bad + b"\n" + line(message("u2", "u1")).encode())
    # When it is read
    loaded = read_session(path)
    # Then the line is read with a replacement character, as Node would, and reported
    assert [e.id for e in loaded.entries] == ["u1", "u2"]
    first = loaded.entries[0]
    assert isinstance(first, MessageEntry) and first.message.text() == "caf\ufffd"
    encoding = [p for p in loaded.problems if p.kind is ProblemKind.INVALID_ENCODING]
    assert [(p.line, p.raw is not None and "\\xe9" in p.raw) for p in encoding] == [(2, True)]


def test_torn_multibyte_character_at_the_end_is_torn_and_badly_encoded(tmp_path: Path) -> None:
    # Given a crash that cut a UTF-8 character in half at the end of the file
    full = json.dumps(message("u1", None, text="naïve"), ensure_ascii=False).encode()
    cut = full[: full.index("ï".encode()) + 1]
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_text().encode() + cut)
    # When it is read / Then the line is reported as badly encoded and torn
    kinds = [(p.kind, p.line) for p in read_session(path).problems]
    assert kinds == [(ProblemKind.INVALID_ENCODING, 2), (ProblemKind.TORN_LINE, 2)]


# --------------------------------------------------------------------------------------------
# Header rules (Pi: the first parsed line must be a session header with a string id)


def test_empty_text_has_a_missing_header() -> None:
    # Given nothing / When it is read / Then there is no header, no entry, one file-level error
    loaded = parse_session("")
    assert (loaded.header, loaded.entries, loaded.original_version) == (None, (), None)
    assert [(p.kind, p.line) for p in loaded.problems] == [(ProblemKind.MISSING_HEADER, None)]
    assert not loaded.is_session


def test_first_object_not_a_header_is_reported_and_entries_are_kept() -> None:
    # Given a file that starts with an entry
    text = line(message("u1", None)) + "\n" + line(message("u2", "u1")) + "\n"
    # When it is read
    loaded = parse_session(text)
    # Then there is no header, both entries are kept, and the first line is reported
    assert loaded.header is None
    assert [e.id for e in loaded.entries] == ["u1", "u2"]
    assert kinds_at(text) == [(ProblemKind.NOT_SESSION_HEADER, 1)]


def test_session_header_without_string_id_is_not_a_session_header() -> None:
    # Given a header whose id is a number
    text = line({**HEADER, "id": 7}) + "\n" + line(message("u1", None)) + "\n"
    # When it is read / Then it is not a header, and the entry is still returned
    loaded = parse_session(text)
    assert loaded.header is None
    [problem] = loaded.problems
    assert (problem.kind, problem.field, problem.raw) == (
        ProblemKind.NOT_SESSION_HEADER,
        "id",
        line({**HEADER, "id": 7}),
    )
    assert [e.id for e in loaded.entries] == ["u1"]


def test_header_after_a_torn_first_line_is_accepted_as_pi_does() -> None:
    # Given junk on line 1 and the header on line 2 (Pi skips the bad line first)
    text = '{"type":"sess\n' + line(HEADER) + "\n" + line(message("u1", None)) + "\n"
    # When it is read / Then the header is found and line 1 is torn
    loaded = parse_session(text)
    assert loaded.header is not None
    assert kinds_at(text) == [(ProblemKind.TORN_LINE, 1)]


def test_second_session_header_is_not_an_entry_and_keeps_its_text() -> None:
    # Given a header line in the middle of the file
    text = session_text(line(message("u1", None)), line(HEADER))
    # When it is read / Then it is reported and kept in raw, not among entries
    loaded = parse_session(text)
    assert [e.id for e in loaded.entries] == ["u1"]
    [problem] = loaded.problems
    assert (problem.kind, problem.line, problem.raw) == (ProblemKind.EXTRA_HEADER, 3, line(HEADER))


def test_header_version_newer_than_3_is_a_warning() -> None:
    # Given a v4 header / When it is read / Then it is read as v3 with a warning
    loaded = parse_session(line({**HEADER, "version": 4}) + "\n")
    assert loaded.original_version == 4
    assert [(p.kind, p.field) for p in loaded.problems] == [(ProblemKind.FUTURE_VERSION, "version")]


# --------------------------------------------------------------------------------------------
# Tree-level problems


def test_dangling_parent_is_reported_at_the_child_line() -> None:
    # Given an entry whose parent exists nowhere in the file
    text = session_text(line(message("u1", None)), line(message("a1", "ghost")))
    # When it is read / Then the child line is reported, naming the field, entry kept
    loaded = parse_session(text)
    [problem] = loaded.problems
    assert (problem.kind, problem.line, problem.entry_id, problem.field) == (
        ProblemKind.DANGLING_PARENT,
        3,
        "a1",
        "parentId",
    )
    assert len(loaded.entries) == 2


def test_parent_defined_later_in_the_file_is_not_dangling() -> None:
    # Given a child written before its parent (Pi's Map resolves it over the whole file)
    text = session_text(line(message("a1", "u1")), line(message("u1", None)))
    # When it is read / Then nothing is reported
    assert kinds_at(text) == []


def test_duplicate_id_reports_the_later_line_and_keeps_both_entries() -> None:
    # Given two entries with the same id
    text = session_text(
        line(message("u1", None, text="one")), line(message("u1", None, text="two"))
    )
    # When it is read
    loaded = parse_session(text)
    # Then both are kept in file order and the later one is reported as an error
    assert [e.id for e in loaded.entries] == ["u1", "u1"]
    [problem] = loaded.problems
    assert (problem.kind, problem.line, problem.severity) == (
        ProblemKind.DUPLICATE_ID,
        3,
        Severity.ERROR,
    )
    assert "line 2" in problem.message


def test_entry_that_is_its_own_parent_is_an_invalid_parent_field() -> None:
    # Given an entry pointing at itself (Pi's getBranch would loop)
    # When it is read / Then the parentId field is reported
    [problem] = parse_session(session_text(line(message("u1", "u1")))).problems
    assert (problem.kind, problem.field) == (ProblemKind.INVALID_FIELD, "parentId")


def test_entry_without_id_is_kept_opaque_and_reported() -> None:
    # Given a non-standard record without id or parentId (like a "leaf" pointer record)
    text = session_text(line(message("u1", None)), '{"type":"leaf","targetId":"u1"}')
    # When it is read
    loaded = parse_session(text)
    # Then it is kept opaque, and the missing id, missing parentId and unknown type are reported
    assert loaded.entries[1] == OpaqueEntry(raw={"type": "leaf", "targetId": "u1"})
    assert [(p.kind, p.line, p.field) for p in loaded.problems] == [
        (ProblemKind.ENTRY_WITHOUT_ID, 3, "id"),
        (ProblemKind.INVALID_FIELD, 3, "parentId"),
        (ProblemKind.UNKNOWN_ENTRY_TYPE, 3, None),
    ]


def test_unknown_entry_type_with_id_is_kept_opaque_as_info() -> None:
    # Given an entry of a type this version does not know
    raw = {"type": "future_thing", "id": "f1", "parentId": None, "timestamp": TS, "x": [1]}
    # When it is read
    loaded = parse_session(session_text(line(raw)))
    # Then it is kept whole and reported as info only
    assert loaded.entries == (OpaqueEntry(raw=raw),)
    assert [(p.kind, p.severity) for p in loaded.problems] == [
        (ProblemKind.UNKNOWN_ENTRY_TYPE, Severity.INFO)
    ]


def test_known_entry_with_a_bad_required_field_names_the_field() -> None:
    # Given a custom entry whose customType is a number
    raw = {"type": "custom", "id": "c1", "parentId": None, "timestamp": TS, "customType": 5}
    # When it is read / Then it is kept opaque and the field is named
    loaded = parse_session(session_text(line(raw)))
    assert loaded.entries == (OpaqueEntry(raw=raw),)
    [problem] = loaded.problems
    assert (problem.kind, problem.field, problem.entry_id) == (
        ProblemKind.INVALID_FIELD,
        "customType",
        "c1",
    )


def test_problem_renders_as_path_line_severity_kind_message() -> None:
    # Given a dangling parent / When rendered / Then the compiler-style format is used
    [problem] = parse_session(session_text(line(message("a1", "ghost")))).problems
    assert problem.render("s.jsonl") == (
        "s.jsonl:2: warning: dangling_parent: parentId 'ghost' names no entry in the file"
    )
    [missing] = parse_session("").problems
    assert missing.render("e.jsonl").startswith("e.jsonl: error: missing_header: ")


# --------------------------------------------------------------------------------------------
# Unreadable files


def test_missing_file_is_unreadable_input_naming_the_path(tmp_path: Path) -> None:
    # Given no file / When it is read / Then a typed error names the file and reason
    with pytest.raises(UnreadableInputError) as caught:
        read_session(tmp_path / "nope.jsonl")
    assert caught.value.path.endswith("nope.jsonl") and caught.value.reason == "no such file"


def test_directory_is_unreadable_input(tmp_path: Path) -> None:
    # Given a directory / When it is read / Then it is unreadable input
    with pytest.raises(UnreadableInputError, match="is a directory"):
        read_session(tmp_path)


# --------------------------------------------------------------------------------------------
# Writing


def test_entry_line_is_compact_with_non_ascii_kept_as_pi_writes() -> None:
    # Given an entry with non-ASCII text
    entry = CustomEntry(id="c1", parent_id=None, timestamp=TS, custom_type="t", data={"s": "é😀"})
    # When it is dumped / Then it is one compact line with the characters as is
    assert dumps_entry(entry) == (
        '{"type":"custom","customType":"t","data":{"s":"é😀"},'
        '"id":"c1","parentId":null,"timestamp":"' + TS + '"}'
    )


@pytest.mark.parametrize(
    ("value", "javascript"),
    [
        (1.3456000000000001e-05, "0.000013456000000000001"),
        (5.568e-05, "0.00005568"),
        (1e-06, "0.000001"),
        (5e-07, "5e-7"),
        (-2.5e-10, "-2.5e-10"),
        (100.0, "100"),
        (-0.0, "0"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (123.456, "123.456"),
    ],
)
def test_numbers_are_written_as_javascript_writes_them(value: float, javascript: str) -> None:
    # Given a float / When dumped / Then it reads as JSON.stringify would write it
    assert dumps_json({"n": value}) == '{"n":' + javascript + "}"


def test_integer_beyond_2_pow_53_is_read_as_the_double_javascript_reads() -> None:
    # Given an integer literal that no double holds exactly
    raw = '{"type":"custom","id":"c","parentId":null,"customType":"t","data":12345678901234567891}'
    # When it is read / Then it is the nearest double, as JSON.parse gives Pi
    [entry] = parse_session(session_text(raw)).entries
    assert isinstance(entry, CustomEntry) and entry.data == 1.2345678901234567e19
    assert isinstance(entry.data, float)


def test_lone_surrogate_is_escaped_so_the_line_stays_valid_utf8() -> None:
    # Given a string with a lone surrogate (e.g. half an emoji from a cut stream)
    entry = CustomEntry(id="c1", parent_id=None, timestamp=TS, custom_type="t", data="x\ud83d")
    # When it is dumped / Then it is escaped as JSON.stringify does, and reads back equal
    text = dumps_entry(entry)
    assert "\\ud83d" in text
    text.encode("utf-8")
    header = SessionHeader(id="s", timestamp=TS, cwd="/")
    assert parse_session(dumps_session(header, [entry])).entries == (entry,)


def test_create_writes_header_and_entries_and_refuses_an_existing_file(tmp_path: Path) -> None:
    # Given a new path
    path = tmp_path / "s.jsonl"
    header = SessionHeader(id="s1", timestamp=TS, cwd="/w")
    entry = ModelChangeEntry(id="m1", parent_id=None, timestamp=TS, provider="p", model_id="m")
    # When a session is created there
    SessionWriter(path).create(header, [entry])
    # Then the file is exactly the dumped session, and creating again fails
    assert path.read_text() == dumps_session(header, [entry])
    with pytest.raises(SessionWriteError, match="already exists"):
        SessionWriter(path).create(header)


def test_append_to_a_missing_file_is_a_write_error(tmp_path: Path) -> None:
    # Given no file / When entries are appended / Then a typed error names the file
    with pytest.raises(SessionWriteError, match="no such file"):
        SessionWriter(tmp_path / "none.jsonl").append([])


def test_append_after_a_clean_tail_reports_nothing(tmp_path: Path) -> None:
    # Given a well-terminated file
    path = tmp_path / "s.jsonl"
    path.write_text(session_text(line(message("u1", None))))
    writer = SessionWriter(path)
    # When an entry is appended
    repaired = writer.append([_user("u2", "u1")])
    # Then no repair was needed and the file reads clean
    assert repaired == () and writer.problems == ()
    assert [e.id for e in read_session(path).entries] == ["u1", "u2"]
    assert read_session(path).problems == ()


def test_append_after_an_unterminated_tail_writes_a_newline_first_and_reports_it(
    tmp_path: Path,
) -> None:
    # Given a file whose last line (line 3) was torn by a crash
    path = tmp_path / "s.jsonl"
    path.write_text(session_text(line(message("u1", None))) + '{"type":"message","id":"a')
    writer = SessionWriter(path)
    # When an entry is appended
    repaired = writer.append([_user("u2", "u1")])
    # Then the repair is reported at line 3, and the new entry is on its own line 4
    assert [(p.kind, p.line) for p in repaired] == [(ProblemKind.MISSING_FINAL_NEWLINE, 3)]
    assert writer.problems == repaired
    loaded = read_session(path)
    assert [e.id for e in loaded.entries] == ["u1", "u2"]
    assert loaded.lines == (2, 4)
    assert [(p.kind, p.line) for p in loaded.problems] == [(ProblemKind.TORN_LINE, 3)]


def test_entry_that_is_not_json_fails_the_append_with_nothing_written(tmp_path: Path) -> None:
    # Given a clean file and a batch whose second entry holds NaN
    path = tmp_path / "s.jsonl"
    path.write_text(session_text())
    bad = CustomEntry(id="c2", parent_id=None, timestamp=TS, custom_type="t", data=float("nan"))
    # When the batch is appended
    with pytest.raises(SessionWriteError, match="'c2'"):
        SessionWriter(path).append([_user("u1", None), bad])
    # Then the file is unchanged
    assert path.read_text() == session_text()


def _user(entry_id: str, parent: str | None) -> MessageEntry:
    raw = {"role": "user", "content": "hello", "timestamp": 1}
    return MessageEntry(
        id=entry_id, parent_id=parent, timestamp=TS, message=AgentMessage(role="user", raw=raw)
    )


# --------------------------------------------------------------------------------------------
# Properties: write-then-read


_BASE_KEYS = {"type", "id", "parentId", "timestamp"}
SAFE = 2**53 - 1  # JSON numbers are JavaScript doubles: larger integers are not exact
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-SAFE, SAFE)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
ids = st.text(min_size=1, max_size=12)
parents = st.none() | ids
optional = st.just(ABSENT) | json_values


def extras(*reserved: str) -> st.SearchStrategy[dict[str, Any]]:
    taken = _BASE_KEYS | set(reserved)
    keys = st.text(max_size=8).filter(lambda k: k not in taken)
    return st.dictionaries(keys, json_values, max_size=2)


def _entry(cls: type, *reserved: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.builds(
        cls, id=ids, parent_id=parents, timestamp=st.text(), extra=extras(*reserved), **fields
    )


def _agent_message() -> st.SearchStrategy[AgentMessage]:
    roles = st.sampled_from(
        ["user", "assistant", "toolResult", "system", "custom", "bashExecution"]
    )
    body = st.dictionaries(st.text().filter(lambda k: k != "role"), json_values, max_size=3)
    return st.builds(
        lambda role, raw: AgentMessage(role=role, raw={**raw, "role": role}), roles, body
    )


def _opaque() -> st.SearchStrategy[OpaqueEntry]:
    kinds = st.text(min_size=1).filter(lambda t: t not in KNOWN_AND_HEADER)
    raw = st.builds(
        lambda kind, rest: {**rest, "type": kind},
        kinds,
        st.dictionaries(st.text().filter(lambda k: k != "type"), json_values, max_size=3),
    )
    return st.builds(OpaqueEntry, raw=raw)


KNOWN_AND_HEADER = {
    "message",
    "custom",
    "custom_message",
    "compaction",
    "branch_summary",
    "context_edit",
    "model_change",
    "thinking_level_change",
    "label",
    "session_info",
    "usage",
    "session",
}

entries: st.SearchStrategy[Entry] = st.one_of(
    _entry(MessageEntry, "message", message=_agent_message()),
    _entry(CustomEntry, "customType", "data", custom_type=st.text(), data=optional),
    _entry(
        CustomMessageEntry,
        "customType",
        "content",
        "display",
        "details",
        custom_type=st.text(),
        content=st.text() | st.lists(json_values, max_size=2),
        display=optional,
        details=optional,
    ),
    _entry(
        CompactionEntry,
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "details",
        "usage",
        "fromHook",
        "systemMessage",
        summary=st.text(),
        first_kept_entry_id=optional,
        tokens_before=optional,
        details=optional,
    ),
    _entry(
        BranchSummaryEntry,
        "fromId",
        "summary",
        "details",
        "usage",
        "fromHook",
        from_id=st.text(),
        summary=st.text(),
    ),
    _entry(
        ContextEditEntry, "targetId", "replacement", target_id=st.text(), replacement=json_values
    ),
    _entry(ModelChangeEntry, "provider", "modelId", provider=st.text(), model_id=st.text()),
    _entry(ThinkingLevelChangeEntry, "thinkingLevel", thinking_level=st.text()),
    _entry(LabelEntry, "targetId", "label", target_id=st.text(), label=optional),
    _entry(SessionInfoEntry, "name", name=optional),
    _entry(UsageEntry, "kind", "provider", "model", "usage", "note", kind=optional, usage=optional),
    _opaque(),
)

_HEADER_KEYS = {"type", "version", "id", "timestamp", "cwd", "parentSession"}
headers = st.builds(
    SessionHeader,
    id=ids,
    timestamp=st.text(),
    cwd=st.text(),
    version=st.just(3),
    parent_session=st.none() | st.text(),
    extra=st.dictionaries(
        st.text(max_size=8).filter(lambda k: k not in _HEADER_KEYS), json_values, max_size=2
    ),
)


@given(header=headers, items=st.lists(entries, max_size=6))
def test_write_then_read_returns_the_same_header_and_entries(
    header: SessionHeader, items: list[Entry]
) -> None:
    # Given any header and entries of every type / When dumped and read back
    loaded = parse_session(dumps_session(header, items))
    # Then header and entries are equal, one entry per line after the header
    assert loaded.header == header
    assert list(loaded.entries) == items
    assert loaded.lines == tuple(range(2, len(items) + 2))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(
    header=headers,
    before=st.lists(entries, max_size=3),
    torn=entries,
    cut=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    new=st.lists(entries, min_size=1, max_size=3),
)
def test_append_after_a_torn_tail_never_loses_the_new_entries(
    tmp_path: Path,
    header: SessionHeader,
    before: list[Entry],
    torn: Entry,
    cut: float,
    new: list[Entry],
) -> None:
    # Given a file whose last entry was cut at any byte by a crash
    path = tmp_path / "s.jsonl"
    path.unlink(missing_ok=True)
    SessionWriter(path).create(header, before)
    torn_bytes = dumps_entry(torn).encode()
    with path.open("ab") as fp:
        fp.write(torn_bytes[: int(len(torn_bytes) * cut)])
    # When new entries are appended
    SessionWriter(path).append(new)
    # Then everything written whole is read back, the new entries last and in order
    loaded = read_session(path)
    assert loaded.header == header
    assert list(loaded.entries) == before + new


known_entries = entries.filter(lambda e: not isinstance(e, OpaqueEntry))


@given(
    header=headers,
    torn=entries,
    cut=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    glued=st.lists(known_entries, min_size=1, max_size=2),
)
def test_entries_glued_onto_a_torn_fragment_are_recovered(
    header: SessionHeader, torn: Entry, cut: float, glued: list[Entry]
) -> None:
    # Given a fragment cut at any point and whole entries glued onto it (a naive append)
    fragment = dumps_entry(torn)[: int(len(dumps_entry(torn)) * cut)]
    text = dumps_session(header) + fragment + "".join(map(dumps_entry, glued)) + "\n"
    # When it is read
    loaded = parse_session(text)
    # Then the glued entries are the last entries, in order, all on line 2
    assert list(loaded.entries[-len(glued) :]) == glued
    assert set(loaded.lines) == {2}
