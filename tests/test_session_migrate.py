"""In-memory migration of v1/v2 session files to v3 (pi-host §8.2, Pi's migrateV1ToV2/V2ToV3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.session import migrate
from pictx_fsm.session.entries import CompactionEntry, MessageEntry
from pictx_fsm.session.jsonl import parse_session, read_session
from pictx_fsm.session.migrate import Migration, derived_id, migrate_file_entries, written_version
from pictx_fsm.session.problems import ProblemKind, Severity

FIXTURE = Path(__file__).parent / "fixtures" / "sessions" / "legacy-v1.jsonl"
TS = "2025-12-01T10:00:00.000Z"


def v1_file(*entries: dict[str, Any], session_id: str = "s-v1", version: int | None = None) -> str:
    header: dict[str, Any] = {"type": "session", "id": session_id, "timestamp": TS, "cwd": "/w"}
    if version is not None:
        header["version"] = version
    return "".join(json.dumps(obj) + "\n" for obj in (header, *entries))


def user(text: str = "hi") -> dict[str, Any]:
    return {"type": "message", "timestamp": TS, "message": {"role": "user", "content": text}}


def compaction(index: Any) -> dict[str, Any]:
    return {"type": "compaction", "timestamp": TS, "summary": "S", "firstKeptEntryIndex": index}


def test_v1_entries_get_ids_and_parents_in_file_order() -> None:
    # Given a v1 file of three entries without ids
    loaded = parse_session(v1_file(user("a"), user("b"), user("c")))
    # When it is read / Then each entry is the child of the previous one, the first a root
    ids = [e.id for e in loaded.entries]
    assert len(set(ids)) == 3 and all(isinstance(i, str) and len(i) == 8 for i in ids)
    assert [e.parent_id for e in loaded.entries] == [None, ids[0], ids[1]]


def test_v1_ids_are_the_same_on_every_load() -> None:
    # Given the same v1 text / When it is read twice / Then the ids are equal
    text = v1_file(user(), user())
    assert parse_session(text).entries == parse_session(text).entries


def test_v1_ids_derive_from_the_session_id_and_position() -> None:
    # Given two v1 sessions with different ids / When read / Then their ids differ
    first = parse_session(v1_file(user(), session_id="a")).entries[0].id
    second = parse_session(v1_file(user(), session_id="b")).entries[0].id
    assert first == derived_id("a", 1) and second == derived_id("b", 1) and first != second


def test_v1_first_kept_index_counts_the_header_as_index_0() -> None:
    # Given a compaction whose firstKeptEntryIndex is 2 (header 0, first entry 1, second 2)
    loaded = parse_session(v1_file(user("a"), user("b"), user("c"), compaction(2)))
    # When it is read / Then it keeps from the second entry
    kept = loaded.entries[3]
    assert isinstance(kept, CompactionEntry)
    assert kept.first_kept_entry_id == loaded.entries[1].id
    assert "firstKeptEntryIndex" not in kept.to_json()


def test_v1_first_kept_index_of_the_compaction_itself_retains_nothing() -> None:
    # Given a compaction at file index 2 whose firstKeptEntryIndex is 2
    loaded = parse_session(v1_file(user(), compaction(2)))
    # When it is read / Then firstKeptEntryId is its own id (retain none), as Pi computes
    kept = loaded.entries[1]
    assert isinstance(kept, CompactionEntry) and kept.retains_nothing


@pytest.mark.parametrize("index", [0, 9, "2", 1.5])
def test_v1_first_kept_index_naming_no_earlier_entry_sets_no_id_and_is_reported(index: Any) -> None:
    # Given a compaction whose index is the header, a later line, or not an integer
    loaded = parse_session(v1_file(user(), compaction(index)))
    # When it is read / Then no firstKeptEntryId is set and the field is reported
    kept = loaded.entries[1]
    assert isinstance(kept, CompactionEntry) and kept.to_json().get("firstKeptEntryId") is None
    fields = [(p.kind, p.line, p.field) for p in loaded.problems if p.is_defect]
    assert fields == [(ProblemKind.INVALID_FIELD, 3, "firstKeptEntryIndex")]


def test_v1_first_kept_index_as_integral_float_resolves_like_javascript() -> None:
    # Given firstKeptEntryIndex 1.0 (JavaScript has one number type)
    loaded = parse_session(v1_file(user(), compaction(1.0)))
    # When it is read / Then it names the first entry
    kept = loaded.entries[1]
    assert isinstance(kept, CompactionEntry) and kept.first_kept_entry_id == loaded.entries[0].id


def test_v2_hook_message_role_becomes_custom() -> None:
    # Given a v2 file with a hookMessage role
    hook: dict[str, Any] = {"type": "message", "id": "h1", "parentId": None, "timestamp": TS}
    hook["message"] = {"role": "hookMessage", "customType": "x", "content": "c"}
    loaded = parse_session(v1_file(hook, version=2))
    # When it is read / Then the role is custom and the v2 ids are kept
    entry = loaded.entries[0]
    assert isinstance(entry, MessageEntry) and entry.message.role == "custom"
    assert entry.message.raw["role"] == "custom" and entry.id == "h1"
    assert loaded.original_version == 2


def test_v3_file_keeps_a_hook_message_role_and_is_not_reported() -> None:
    # Given a v3 file with a hookMessage role (only v1/v2 files are migrated)
    hook: dict[str, Any] = {"type": "message", "id": "h1", "parentId": None, "timestamp": TS}
    hook["message"] = {"role": "hookMessage", "content": "c"}
    loaded = parse_session(v1_file(hook, version=3))
    # When it is read / Then nothing changes and nothing is reported
    entry = loaded.entries[0]
    assert isinstance(entry, MessageEntry) and entry.message.role == "hookMessage"
    assert loaded.problems == ()


def test_legacy_version_is_reported_as_info_and_the_header_becomes_v3() -> None:
    # Given a v1 file / When it is read
    loaded = parse_session(v1_file(user()))
    # Then the header is v3 in memory, the file version is kept, and the note is info
    assert loaded.header is not None and loaded.header.version == 3
    assert loaded.original_version == 1
    assert [(p.kind, p.line, p.severity) for p in loaded.problems] == [
        (ProblemKind.LEGACY_VERSION, 1, Severity.INFO)
    ]
    assert not loaded.has_defects


def test_v1_existing_ids_are_replaced_as_pi_does() -> None:
    # Given a v1 file whose entry already carries an id (Pi overwrites it on migration)
    entry = {**user(), "id": "keep-me", "parentId": "x"}
    # When it is read / Then the derived id and a root parent replace them
    [migrated] = parse_session(v1_file(entry)).entries
    assert (migrated.id, migrated.parent_id) == (derived_id("s-v1", 1), None)


def test_v1_id_collision_draws_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a derivation whose first attempt always collides
    real = migrate.derived_id
    monkeypatch.setattr(
        migrate,
        "derived_id",
        lambda sid, i, attempt=0: "deadbeef" if attempt == 0 else real(sid, i, attempt),
    )
    # When three entries are migrated
    migration = Migration("s", 1)
    ids = [migration.migrate(user(), i)[0]["id"] for i in (1, 2, 3)]
    # Then every id is unique
    assert ids[0] == "deadbeef" and len(set(ids)) == 3


def test_unparseable_version_is_not_migrated() -> None:
    # Given a header whose version is the string "2"
    header = {"type": "session", "version": "2", "id": "s", "timestamp": TS, "cwd": "/w"}
    text = json.dumps(header) + "\n" + json.dumps(user()) + "\n"
    # When it is read
    loaded = parse_session(text)
    # Then the version is unknown, nothing is migrated, and both facts are reported
    assert written_version(header) is None and loaded.original_version is None
    assert [(p.kind, p.field) for p in loaded.problems] == [
        (ProblemKind.INVALID_FIELD, "version"),
        (ProblemKind.ENTRY_WITHOUT_ID, "id"),
        (ProblemKind.INVALID_FIELD, "parentId"),
    ]


def test_glued_v1_line_counts_as_two_file_entries() -> None:
    # Given a v1 file where the compaction is glued onto the previous message (file index 2)
    text = v1_file(user("a")) + json.dumps(user("b")) + json.dumps(compaction(3)) + "\n"
    # When it is read
    loaded = parse_session(text)
    # Then the compaction's own index is 3, so it retains nothing (the objects were counted)
    kept = loaded.entries[2]
    assert isinstance(kept, CompactionEntry) and kept.retains_nothing
    assert loaded.lines == (2, 3, 3)


def test_fixture_v1_file_migrates_like_the_whole_list_migration() -> None:
    # Given the shipped v1 fixture
    text = FIXTURE.read_text()
    objects = [json.loads(raw) for raw in text.splitlines()]
    # When read by the streaming reader and by the whole-list migration
    streamed = [e.to_json() for e in read_session(FIXTURE).entries]
    whole = migrate_file_entries(objects)
    # Then both agree, the header is v3 and the hook message became a custom role
    assert whole[0]["version"] == 3
    assert [obj["id"] for obj in whole[1:]] == [obj["id"] for obj in streamed]
    assert streamed[1]["message"]["role"] == "custom"
    assert streamed[3]["firstKeptEntryId"] == streamed[1]["id"]


def test_whole_list_migration_leaves_v3_and_headerless_lists_unchanged() -> None:
    # Given a v3 list and a list without header / When migrated / Then they are equal copies
    v3: list[dict[str, Any]] = [{"type": "session", "version": 3}, {"type": "custom", "id": "c"}]
    headless = [{"type": "custom"}]
    assert migrate_file_entries(v3) == v3 and migrate_file_entries(headless) == headless


@given(st.lists(st.sampled_from(["message", "custom", "model_change", "compaction"]), max_size=30))
def test_v1_migration_builds_one_linear_chain_with_unique_ids(kinds: list[str]) -> None:
    # Given any v1 sequence of entries
    objects = [
        {"type": k, "timestamp": TS, "customType": "t", "summary": "s", "firstKeptEntryIndex": 1}
        for k in kinds
    ]
    # When it is read
    loaded = parse_session(v1_file(*objects))
    # Then ids are unique and each entry's parent is the previous entry
    ids = [e.id for e in loaded.entries]
    assert len(set(ids)) == len(ids) == len(kinds)
    assert [e.parent_id for e in loaded.entries] == [None, *ids][: len(ids)]
