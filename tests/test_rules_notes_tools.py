"""The five notes tools, rule by rule (notes spec N1–N37)."""

from __future__ import annotations

import json
import os
from datetime import UTC, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from tools_kit import PROJECT, SESSION, Notes, read_result

from pictx_fsm import js_date
from pictx_fsm.extensions.pi_context.tools import (
    TOOL_SPECS,
    ToolContext,
    decode_address,
    default_notes_home,
    tool_spec,
)
from pictx_fsm.extensions.pi_context.tools.address import INVALID_ADDRESS
from pictx_fsm.extensions.pi_context.tools.frontmatter import (
    parse_note,
    serialize_note,
    split_frontmatter,
    strip_leading_frontmatter,
)
from pictx_fsm.extensions.pi_context.tools.homes import (
    agent_slug,
    migrate_legacy_homes,
    model_slug,
    slugify,
)

NOTES_TOOLS = ("notes_write", "notes_edit", "notes_read", "notes_list", "notes_search")


@pytest.fixture
def notes(tmp_path: Path) -> Notes:
    return Notes(root=tmp_path / "notes")


def note_text(notes: Notes, relative: str) -> str:
    return (notes.root / relative).read_text(encoding="utf-8")


# -- N1–N5 registration and result envelope ---------------------------------------------------


def test_n1_the_five_notes_tools_register_in_order_with_labels_and_no_legacy_names() -> None:
    # Given the registered tools
    names = [spec.name for spec in TOOL_SPECS]
    # Then the five notes tools come last, in order, after the history tools
    assert names[-5:] == list(NOTES_TOOLS)
    assert names.index("history_search") < names.index("notes_write")
    assert [tool_spec(name).label for name in NOTES_TOOLS] == [
        "Notes write",
        "Notes edit",
        "Notes read",
        "Notes list",
        "Notes search",
    ]
    legacy = {"notes_write_file", "notes_append_to_file", "notes_read_file"}
    legacy |= {"notes_search_contents", "notes_list_files"}
    assert not legacy & set(names)


def test_n2_write_and_edit_run_sequentially_the_others_in_parallel() -> None:
    modes = {name: tool_spec(name).execution_mode for name in NOTES_TOOLS}
    assert modes == {
        "notes_write": "sequential",
        "notes_edit": "sequential",
        "notes_read": "parallel",
        "notes_list": "parallel",
        "notes_search": "parallel",
    }


def test_n3_json_results_are_pretty_printed_with_two_spaces_and_no_details(notes: Notes) -> None:
    # When a note is written
    outcome = notes.call("notes_write", address="a.md", content="x")
    # Then the text is JSON.stringify(value, null, 2) and details stay undefined
    assert outcome.text == '{\n  "address": "a.md",\n  "written": true\n}'
    assert "details" not in outcome.to_json()
    assert outcome.to_json()["isError"] is False


def test_n4_a_store_refusal_is_json_and_a_thrown_error_is_an_error_result(notes: Notes) -> None:
    # Given a note whose anchor occurs twice
    notes.ok("notes_write", address="a.md", content="x\nx")
    # When an edit is ambiguous (a NoteError) and an address is invalid (thrown)
    refusal = notes.call("notes_edit", address="a.md", edits=[{"oldText": "x", "newText": "y"}])
    thrown = notes.call("notes_write", address="../invalid.md", content="x")
    # Then the refusal is an ordinary result with error, line_numbers, edit_index (in order)
    assert refusal.status == "refusal" and not refusal.is_error
    assert list(json.loads(refusal.text)) == ["error", "line_numbers", "edit_index"]
    # And the thrown error is an error result whose text is the message (details {} as Pi)
    assert thrown.to_json() == {
        "content": [{"type": "text", "text": "path contains an unsupported component"}],
        "details": {},
        "isError": True,
    }
    assert "code" not in refusal.text


def test_n5_execute_has_no_schema_validation_so_the_origin_guard_is_reachable(
    notes: Notes,
) -> None:
    # When notes_write gets an origin outside the schema
    refusal = notes.refusal("notes_write", address="a.md", content="x", origin="robot")
    # Then the store's own guard answers, as a JSON refusal
    assert refusal == {"error": 'origin must be one of user, self, external (got "robot")'}


# -- N6–N16 homes, addresses, layout ----------------------------------------------------------


def test_n6_the_notes_root_is_the_resolved_pi_notes_home_or_agents_notes(tmp_path: Path) -> None:
    assert default_notes_home({}, tmp_path) == tmp_path / ".agents" / "notes"
    assert default_notes_home({"PI_NOTES_HOME": ""}, tmp_path) == tmp_path / ".agents" / "notes"
    relative = default_notes_home({"PI_NOTES_HOME": "rel/notes"}, tmp_path)
    assert relative == Path(os.path.abspath("rel/notes"))


def test_n6_n9_a_host_context_reads_the_environment_and_model_on_every_call(
    tmp_path: Path,
) -> None:
    # Given the environment and model of two successive calls
    env = {"PI_NOTES_HOME": str(tmp_path / "n"), "PI_NOTES_AGENT": "Faye Valentine"}
    first = ToolContext.for_host(
        env=env, user_home=tmp_path, cwd=tmp_path, session_id="s", model_id="x/Claude-3.5"
    )
    second = ToolContext.for_host(
        env={}, user_home=tmp_path, cwd=tmp_path, session_id="s", model_id=None
    )
    # Then each context names its own root, agent and model
    assert (first.notes_root, first.identity.agent, first.identity.model) == (
        tmp_path / "n",
        "faye-valentine",
        "claude-3-5",
    )
    assert (second.notes_root, second.identity.agent, second.identity.model) == (
        tmp_path / ".agents" / "notes",
        "root",
        "default",
    )


def test_n7_the_five_homes_are_directories_under_the_root(notes: Notes) -> None:
    # Given one note written to each home
    for address in ("a/b.md", "@project/p.md", "@human/h.md", "@self/s.md", "@model/m.md"):
        notes.ok("notes_write", address=address, content="x")
    # Then each file lands in its home directory
    assert notes.files() == [
        "agents/root/s.md",
        "human/h.md",
        "models/default/m.md",
        f"pi/session/{SESSION}/a/b.md",
        f"project/{PROJECT}/p.md",
    ]


def test_n8_the_project_key_names_the_main_checkout_of_a_worktree(tmp_path: Path) -> None:
    # Given a main checkout and a linked worktree whose .git file points into it
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main}/.git/worktrees/wt\n", encoding="utf-8")
    # Then both share the key of the main checkout
    context = ToolContext.for_host(
        env={}, user_home=tmp_path, cwd=worktree / "sub", session_id="s", model_id=None
    )
    import hashlib

    digest = hashlib.sha1(str(main).encode("utf-8")).hexdigest()[:8]
    assert context.identity.project_key == f"main-{digest}"


@pytest.mark.parametrize(
    ("value", "slug"),
    [("Faye Valentine", "faye-valentine"), ("--", "root"), ("", "root"), ("A_b.C", "a-b-c")],
)
def test_n9_slugify_lowercases_and_joins_runs_with_dashes(value: str, slug: str) -> None:
    assert slugify(value) == slug


def test_n9_agent_and_model_slugs() -> None:
    assert agent_slug(None) == "root"
    assert model_slug("anthropic/claude-sonnet-4.5") == "claude-sonnet-4-5"
    assert model_slug("") == "default"
    assert model_slug("vendor/") == "root"


@pytest.mark.parametrize(
    ("address", "decoded"),
    [
        ("a/b.md", ("session", "a/b.md", None)),
        ("@project/x", ("project", "x", None)),
        ("@human/x/y", ("human", "x/y", None)),
        ("@self/x", ("agent", "x", None)),
        ("@model/x", ("model", "x", None)),
        ("@agents/faye/x", ("agent", "x", "faye")),
        ("@models/gpt-5/x.md", ("model", "x.md", "gpt-5")),
    ],
)
def test_n10_addresses_decode_to_a_home_a_path_and_an_optional_name(
    address: str, decoded: tuple[str, str, str | None]
) -> None:
    result = decode_address(address)
    assert (result.scope, result.path, result.who) == decoded


@pytest.mark.parametrize(
    "address",
    [
        "@glboal/same.md",
        "bad@name.md",
        "@project/a@b",
        "@project",
        "@project/",
        "@human/",
        "@self",
        "@self/",
        "@model/",
        "@agents/Faye/x",
        "@agents/faye-/x",
        "@agents/faye\n/x",
        "@agents",
        "@",
        "@faye/x",
    ],
)
def test_n10_illegal_addresses_are_thrown_with_the_legal_prefixes(
    notes: Notes, address: str
) -> None:
    # When any tool that takes an address gets it
    for tool in ("notes_write", "notes_edit", "notes_read"):
        text = notes.error(tool, address=address, content="x", stale=True)
        # Then the call is an error result naming the legal forms, and nothing is created
        assert text == (
            "invalid note address: legal prefixes are @project/, @human/, @self/, "
            "@agents/<name>/, @model/, and @models/<name>/; bare names are the session home"
        )
    assert not notes.root.exists()


def test_n10_a_named_home_without_a_path_fails_the_empty_path_check(notes: Notes) -> None:
    assert notes.error("notes_read", address="@agents/faye") == (
        "path must be a non-empty virtual relative path"
    )
    assert notes.error("notes_write", address=7, content="x") == INVALID_ADDRESS


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("", "path must be a non-empty virtual relative path"),
        ("/abs.md", "path must be a safe virtual relative path"),
        ("a\\b.md", "path must be a safe virtual relative path"),
        ("a\0b.md", "path must be a safe virtual relative path"),
        ("../evil", "path contains an unsupported component"),
        ("a//b", "path contains an unsupported component"),
        ("a/./b", "path contains an unsupported component"),
        ("a/", "path contains an unsupported component"),
        ("@human/../x", "path contains an unsupported component"),
    ],
)
def test_n11_virtual_paths_reject_empty_unsafe_and_dot_segments(
    notes: Notes, address: str, message: str
) -> None:
    assert notes.error("notes_write", address=address, content="x") == message
    assert not notes.root.exists()


def test_n11_unicode_spaces_dotfiles_and_any_extension_are_legal(notes: Notes) -> None:
    for address in ("进度 notes.txt", ".hidden", "a\tb", "emoji-😀"):
        notes.ok("notes_write", address=address, content="x")
    assert sorted(p.name for p in notes.session_dir().iterdir()) == sorted(
        [".hidden.md", "a\tb.md", "emoji-😀.md", "进度 notes.txt.md"]
    )


def test_n12_a_path_with_and_without_md_is_one_file_case_sensitively(notes: Notes) -> None:
    notes.ok("notes_write", address="a/b", content="one")
    notes.ok("notes_write", address="a/b.md", content="two")
    notes.ok("notes_write", address="a/b.MD", content="three")
    assert sorted(p.name for p in (notes.session_dir() / "a").iterdir()) == ["b.MD.md", "b.md"]
    assert note_text(notes, f"pi/session/{SESSION}/a/b.md").endswith("\n\ntwo")


def test_n13_listings_show_canonical_addresses_and_writes_echo_the_given_one(
    notes: Notes,
) -> None:
    # Given notes written through the relative @self and @model forms
    assert notes.ok("notes_write", address="@self/s", content="x")["address"] == "@self/s"
    notes.ok("notes_write", address="@model/m", content="x")
    # Then listings name the resolved homes, always with the physical .md path
    addresses = {row["address"] for row in notes.ok("notes_list")["files"]}
    assert addresses == {"@agents/root/s.md", "@models/default/m.md"}


def test_n14_named_homes_of_others_are_read_only_own_ones_writable(notes: Notes) -> None:
    # Given the agent faye running on model m
    notes.agent, notes.model = "faye", "m"
    # Then her own homes are writable by name; others are refused, as JSON
    assert notes.ok("notes_write", address="@agents/faye/a", content="x")["written"]
    assert notes.refusal("notes_edit", address="@models/m/a", stale=True) == {
        "error": "note not found"
    }
    for address, home in (("@agents/spike/a", "@agents/spike/"), ("@models/x/a", "@models/x/")):
        message = (
            f"{home} is not your home: writable homes are this session, @project/, @human/, "
            "@self/, and the current @model/ home"
        )
        assert notes.refusal("notes_write", address=address, content="x") == {"error": message}
        assert notes.refusal("notes_edit", address=address, stale=True) == {"error": message}
    # And reading another agent's note is allowed
    (notes.root / "agents" / "spike").mkdir(parents=True)
    (notes.root / "agents" / "spike" / "a.md").write_text("hello", encoding="utf-8")
    assert read_result(notes.call("notes_read", address="@agents/spike/a")).content.endswith(
        "hello"
    )


def test_n15_path_bytes_and_serialized_size_are_capped_before_writing(notes: Notes) -> None:
    # Given a 513-byte path and a body that serializes past 1,000,000 bytes
    long_path = "é" * 256 + "a"
    too_big = "x" * 1_000_000
    # Then both writes are refused as JSON and nothing is written
    assert notes.refusal("notes_write", address=long_path, content="x") == {
        "error": "note path exceeds 512 UTF-8 bytes (got 513)"
    }
    refusal = notes.refusal("notes_write", address="big.md", content=too_big)
    assert refusal["error"].startswith("note exceeds 1000000 UTF-8 bytes (serialized 10001")
    assert not notes.root.exists()
    # And an edit that would grow past the cap leaves the note byte-identical
    notes.ok("notes_write", address="n.md", content="seed")
    before = note_text(notes, f"pi/session/{SESSION}/n.md")
    edit = [{"oldText": "seed", "newText": too_big}]
    assert "note exceeds" in notes.refusal("notes_edit", address="n.md", edits=edit)["error"]
    assert note_text(notes, f"pi/session/{SESSION}/n.md") == before


def test_n15_reads_are_uncapped_by_the_path_limit(notes: Notes) -> None:
    long_path = "a" * 600
    assert notes.refusal("notes_read", address=long_path) == {
        "error": "note not found",
        "address": long_path,
    }


def test_n16_legacy_personal_home_is_renamed_once_and_never_merged(tmp_path: Path) -> None:
    # Given a legacy personal/ home
    (tmp_path / "personal").mkdir()
    (tmp_path / "personal" / "a.md").write_text("x", encoding="utf-8")
    # When the host activates, it becomes human/
    assert migrate_legacy_homes(tmp_path) is None
    assert (tmp_path / "human" / "a.md").exists() and not (tmp_path / "personal").exists()
    # And with both present nothing moves and the warning names the conflict
    (tmp_path / "personal").mkdir()
    assert migrate_legacy_homes(tmp_path) == (
        "pi-context: both personal/ and human/ exist under the notes home; migrate by hand, "
        "no automatic merge"
    )
    assert (tmp_path / "personal").is_dir()


# -- N17–N21 file format ----------------------------------------------------------------------


def test_n17_known_keys_in_order_then_others_and_scope_is_dropped() -> None:
    meta = {
        "zeta": "z",
        "scope": "human",
        "access_count": 2,
        "origin": "user",
        "tags": ["a", 1],
        "stale": False,
        "created_at": 0,
        "status": "active",
        "updated_at": 1000,
        "last_accessed": 1000,
        "title": "yes",
        "path": "a b",
    }
    assert serialize_note(meta, "body", UTC) == (
        "---\norigin: user\nstatus: active\nstale: false\n"
        "created_at: 1970-01-01T00:00:00.000+00:00\nupdated_at: 1970-01-01T00:00:01.000+00:00\n"
        "last_accessed: 1970-01-01T00:00:01.000+00:00\naccess_count: 2\n"
        'zeta: z\ntags: ["a",1]\ntitle: "yes"\npath: "a b"\n---\n\nbody'
    )


@pytest.mark.parametrize(
    ("zone", "text"),
    [
        (UTC, "2023-11-14T22:13:20.123+00:00"),
        (timezone(timedelta(hours=8)), "2023-11-15T06:13:20.123+08:00"),
        (ZoneInfo("America/St_Johns"), "2023-11-14T18:43:20.123-03:30"),
    ],
)
def test_n18_local_iso_uses_the_zone_offset_and_never_z(zone: timezone, text: str) -> None:
    assert js_date.local_iso(1_700_000_000_123, zone) == text
    assert js_date.parse_date_ms(text) == 1_700_000_000_123


@pytest.mark.parametrize(
    ("raw", "fields", "body"),
    [
        ("no frontmatter\r\n", {}, "no frontmatter\r\n"),
        ("---\nunclosed: 1\n", {}, "---\nunclosed: 1\n"),
        ("\ufeff---\r\na: 1\r\n---\r\n\r\nx\r\ny", {"a": 1}, "x\ny"),
        ("---\na: 1\na: 2\n---\nbody", {"a": 2}, "body"),
        ("---\nlist:\n  - one\n  - 2\nother: x\n---\n", {"list": ["one", 2], "other": "x"}, ""),
        ("---\nq: 'single'\nd: \"dq\nbad line\n---\n\n\nb", {"q": "single", "d": '"dq'}, "\nb"),
        (
            "---\nn: 12345678901234567890\nnan: NaN\n---\n",
            {"n": 1.2345678901234567e19, "nan": "NaN"},
            "",
        ),
    ],
)
def test_n19_parsing_is_lenient_and_never_fails(
    raw: str, fields: dict[str, object], body: str
) -> None:
    assert split_frontmatter(raw) == (fields, body)


def test_n20_defaults_after_parsing() -> None:
    meta, _ = parse_note(
        "---\norigin: robot\nstatus: done\nstale: yes\nupdated_at: nonsense\n"
        "created_at: 2026-01-01\naccess_count: many\nextra: 1\n---\nb",
        now_ms=42,
    )
    assert meta == {
        "origin": "self",
        "status": "active",
        "stale": False,
        "updated_at": 42,
        "created_at": 1_767_225_600_000,
        "access_count": 0,
        "extra": 1,
        "last_accessed": 42,
    }


def test_n21_a_leading_frontmatter_block_in_written_content_never_reaches_the_file(
    notes: Notes,
) -> None:
    notes.ok("notes_write", address="a.md", content="---\norigin: user\n---\n\nthe body")
    text = note_text(notes, f"pi/session/{SESSION}/a.md")
    assert text.endswith("---\n\nthe body") and "origin: self" in text
    assert strip_leading_frontmatter("---\nmeant as body\n") == "---\nmeant as body\n"


# -- N22–N27 shared texts, notes_write --------------------------------------------------------

ADDR = (
    "Address forms are bare `<vpath>` for this session, `@project/<vpath>` for this project, "
    "`@human/<vpath>` for the human's cross-project home, `@self/<vpath>` / "
    "`@agents/<name>/<vpath>` for agent homes, and `@model/<vpath>` / `@models/<name>/<vpath>` "
    "for model homes. `@self` and `@model` mean the current agent/model; the `<name>` forms "
    "name one absolutely. The word after `@` is always one of the reserved home names — names "
    "live at the second level, never `@faye/`. `@` means leaving home. Any other `@` prefix, "
    "or `@` inside a vpath, is a hard error. There is no cross-home fallback. Paths reject "
    "`..`, absolute paths, and backslashes. Homes you do not own (`@agents/<other>/`, "
    "`@models/<other>/`) are read-only."
)


def test_n22_every_notes_description_embeds_the_address_text() -> None:
    for name in NOTES_TOOLS:
        assert ADDR in tool_spec(name).description


def test_n23_shared_parameter_pieces() -> None:
    write = tool_spec("notes_write").parameters["properties"]
    listing = tool_spec("notes_list").parameters["properties"]
    search = tool_spec("notes_search").parameters["properties"]
    assert write["origin"] == {
        "anyOf": [
            {"type": "string", "const": "user"},
            {"type": "string", "const": "self"},
            {"type": "string", "const": "external"},
        ],
        "description": "Where the note's content came from. user: written or dictated by the "
        "human. self: written by you, the agent (default). external: anything else — "
        "third-party text, tool output, fetched material.",
    }
    assert listing["cursor"] == {
        "type": "integer",
        "minimum": 0,
        "description": "Continuation cursor: pass the previous next_cursor back unchanged, "
        "with the same filters and ordering. Omit to start. next_cursor is null only when the "
        "set is exhausted.",
    }
    assert listing["pattern"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert listing["max_results"] == {"type": "integer", "minimum": 1}
    assert search["query"] == {
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]
    }
    for name in NOTES_TOOLS:
        parameters = tool_spec(name).parameters
        assert parameters["additionalProperties"] is False
        assert "scope" not in parameters["properties"]


def test_n24_notes_write_parameters_and_description() -> None:
    spec = tool_spec("notes_write")
    assert spec.parameters["required"] == ["address", "content"]
    assert list(spec.parameters["properties"]) == ["address", "content", "origin", "stale"]
    assert spec.parameters["properties"]["stale"] == {"type": "boolean"}
    assert spec.description == (
        "Create or replace a note as a real markdown file, and name it for what it holds: a "
        "fresh window sees only an index entry, never the note itself. " + ADDR + " Keep notes "
        "small and split by topic — by what the note is about, never by who said it (authorship "
        "is origin's job); a rewrite replaces the body whole while preserving created_at and "
        "every other frontmatter key. stale: true marks the note closed so it leaves the boot "
        "index but stays readable and searchable."
    )


def test_n25_write_checks_address_then_path_bytes_then_home_then_origin(notes: Notes) -> None:
    long_other = "@agents/spike/" + "a" * 600
    assert notes.error("notes_write", address="../" + "a" * 600, content="x").startswith("path")
    assert "512" in notes.refusal("notes_write", address=long_other, content="x")["error"]
    refusal = notes.refusal("notes_write", address="@agents/spike/a", content="x", origin="x")
    assert "is not your home" in refusal["error"]
    # A null origin is an omitted one (`params.origin ?? "self"`)
    assert notes.ok("notes_write", address="b", content="x", origin=None)["written"]


def test_n26_a_rewrite_replaces_the_body_keeps_created_at_and_unknown_keys(notes: Notes) -> None:
    # Given a note that has been read (access bump), closed and annotated by hand
    notes.ok("notes_write", address="a.md", content="old", origin="user", stale=True)
    notes.call("notes_read", address="a.md")
    path = notes.session_dir() / "a.md"
    path.write_text(path.read_text(encoding="utf-8").replace("---\n\n", "topic: x\n---\n\n"))
    first, _ = parse_note(path.read_text(encoding="utf-8"), 0)
    # When it is rewritten without origin or stale
    notes.ok("notes_write", address="a.md", content="new")
    meta, body = parse_note(path.read_text(encoding="utf-8"), 0)
    # Then the body is replaced; origin resets to self, stale revives, status is active
    assert body == "new"
    assert (meta["origin"], meta["stale"], meta["status"]) == ("self", False, "active")
    # And created_at, last_accessed, access_count and the unknown key are kept
    for key in ("created_at", "last_accessed", "access_count", "topic"):
        assert meta[key] == first[key]
    assert meta["updated_at"] > first["updated_at"]


def test_n27_write_success_has_exactly_address_and_written(notes: Notes) -> None:
    assert notes.ok("notes_write", address="@human/x", content="x") == {
        "address": "@human/x",
        "written": True,
    }
