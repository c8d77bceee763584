"""Pi's provider context for a branch (pi-host §8.5–§8.7), checked against real Pi runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from session_builders import SessionBuilder
from shared_paths import TRACES

from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.projection import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    context_messages,
    convert_to_llm,
    fold_system,
    iso_to_epoch_ms,
    project_branch,
)
from pictx_fsm.session.tree import SessionTree


def roles(messages: Any) -> list[str]:
    return [m["role"] for m in messages]


def texts(messages: Any) -> list[str]:
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append("".join(b.get("text", "") for b in content if b.get("type") == "text"))
        else:
            out.append(m.get("summary", ""))
    return out


# -- buildContextEntries ----------------------------------------------------------------------


def test_without_compaction_every_message_of_the_path_is_context() -> None:
    builder = SessionBuilder()
    builder.system()
    builder.user("q")
    builder.custom("note")  # custom entries never reach the model
    builder.assistant("a")
    assert roles(context_messages(builder.tree.branch())) == ["system", "user", "assistant"]


def test_compaction_contributes_checkpoint_and_summary_then_the_kept_range() -> None:
    # Given a compaction keeping from the second question on
    builder = SessionBuilder()
    builder.system()
    builder.user("q1")
    builder.assistant("a1")
    kept = builder.user("q2")
    builder.system({"late": "patch"})  # a system entry inside the kept range
    builder.assistant("a2")
    builder.compaction("S", first_kept=kept)
    builder.user("q3")
    # When the context is built
    messages = context_messages(builder.tree.branch())
    # Then: checkpoint, summary, kept messages without system entries, then what follows
    assert roles(messages) == ["system", "compactionSummary", "user", "assistant", "user"]
    assert texts(messages)[2:] == ["q2", "a2", "q3"]
    assert messages[0]["sections"] == {"preamble": "You are Pi (checkpoint)."}


def test_compaction_whose_first_kept_id_is_itself_retains_nothing() -> None:
    builder = SessionBuilder()
    builder.user("q1")
    builder.compaction("S")
    builder.user("q2")
    assert texts(context_messages(builder.tree.branch()))[1:] == ["S", "q2"]


def test_compaction_whose_first_kept_entry_is_not_on_the_path_keeps_nothing() -> None:
    builder = SessionBuilder()
    builder.user("q1")
    builder.compaction("S", first_kept="ffffffff")
    assert roles(context_messages(builder.tree.branch())) == ["system", "compactionSummary"]


def test_only_the_newest_compaction_contributes() -> None:
    # Given an older compaction inside the newest one's kept range
    builder = SessionBuilder()
    kept = builder.user("q1")
    builder.compaction("OLD", first_kept=kept)
    builder.user("q2")
    builder.compaction("NEW", first_kept=kept)
    messages = context_messages(builder.tree.branch())
    assert [m.get("summary") for m in messages if m["role"] == "compactionSummary"] == ["NEW"]
    assert texts(messages)[2:] == ["q1", "q2"]


# -- context edits ----------------------------------------------------------------------------


def test_edit_with_null_replacement_drops_its_target() -> None:
    builder = SessionBuilder()
    builder.user("q")
    failed = builder.assistant("", stop="error")
    builder.edit(failed, None)
    assert roles(context_messages(builder.tree.branch())) == ["user"]


def test_edit_replaces_only_the_content_and_string_becomes_a_block_on_assistant() -> None:
    builder = SessionBuilder()
    question = builder.user("q")
    answer = builder.assistant("a", total=77)
    builder.edit(question, {"content": "Q!"})
    builder.edit(answer, {"content": "A!"})
    user, assistant = context_messages(builder.tree.branch())
    assert user["content"] == "Q!"
    assert assistant["content"] == [{"type": "text", "text": "A!"}]
    assert assistant["usage"]["totalTokens"] == 77


def test_latest_edit_of_a_target_wins() -> None:
    builder = SessionBuilder()
    question = builder.user("q")
    builder.edit(question, None)
    builder.edit(question, {"content": "back"})
    assert texts(context_messages(builder.tree.branch())) == ["back"]


def test_edits_are_branch_local() -> None:
    # Given an edit on a sibling branch
    builder = SessionBuilder()
    question = builder.user("q")
    builder.edit(question, None)
    builder.tree.navigate(question)
    builder.assistant("a")
    # Then the active branch still sees its target
    assert roles(context_messages(builder.tree.branch())) == ["user", "assistant"]


def test_edit_of_a_custom_message_replaces_its_content() -> None:
    builder = SessionBuilder()
    aside = builder.custom_message("ext/aside", "old")
    builder.edit(aside, {"content": "new"})
    (message,) = context_messages(builder.tree.branch())
    assert message["role"] == "custom" and message["content"] == "new"


def test_edit_of_a_non_editable_target_changes_nothing() -> None:
    builder = SessionBuilder()
    system = builder.system()
    builder.edit(system, None)
    assert roles(context_messages(builder.tree.branch())) == ["system"]


# -- sessionEntryToContextMessages ------------------------------------------------------------


def test_custom_message_becomes_a_custom_role_message_with_its_fields() -> None:
    builder = SessionBuilder()
    builder.custom_message("ext/x", "hi", details={"k": 1}, display=True)
    (message,) = context_messages(builder.tree.branch())
    leaf = builder.tree.leaf
    assert leaf is not None
    assert message == {
        "role": "custom",
        "customType": "ext/x",
        "content": "hi",
        "display": True,
        "details": {"k": 1},
        "timestamp": iso_to_epoch_ms(leaf.entry.timestamp),
    }


def test_branch_summary_becomes_branch_summary_role_and_an_empty_one_nothing() -> None:
    builder = SessionBuilder()
    builder.branch_summary("explored", from_id="root")
    builder.branch_summary("")
    (message,) = context_messages(builder.tree.branch())
    assert message["role"] == "branchSummary"
    assert (message["summary"], message["fromId"]) == ("explored", "root")


def test_null_content_is_normalised_to_an_empty_list() -> None:
    builder = SessionBuilder()
    builder.message("assistant", content=None, usage={"totalTokens": 1}, stopReason="error")
    assert context_messages(builder.tree.branch())[0]["content"] == []


def test_iso_timestamps_convert_exactly_to_epoch_milliseconds() -> None:
    assert iso_to_epoch_ms("2026-11-30T03:04:03.785Z") == 1796007843785
    assert iso_to_epoch_ms("not a date") is None


# -- convertToLlm -----------------------------------------------------------------------------


def test_convert_to_llm_turns_custom_and_summaries_into_user_text() -> None:
    messages = [
        {"role": "custom", "customType": "x", "content": "aside", "display": False, "timestamp": 1},
        {"role": "compactionSummary", "summary": "S", "tokensBefore": 3, "timestamp": 2},
        {"role": "branchSummary", "summary": "B", "fromId": "root", "timestamp": 3},
    ]
    converted = convert_to_llm(messages)
    assert roles(converted) == ["user", "user", "user"]
    assert texts(converted) == [
        "aside",
        COMPACTION_SUMMARY_PREFIX + "S" + COMPACTION_SUMMARY_SUFFIX,
        BRANCH_SUMMARY_PREFIX + "B" + BRANCH_SUMMARY_SUFFIX,
    ]
    assert COMPACTION_SUMMARY_PREFIX.endswith("summary:\n\n<summary>\n")


def test_convert_to_llm_renders_bash_runs_and_drops_excluded_ones() -> None:
    run = {"role": "bashExecution", "command": "ls", "output": "a", "exitCode": 2}
    silent = {**run, "excludeFromContext": True}
    converted = convert_to_llm([run, silent, {"role": "mystery"}])
    assert texts(converted) == ["Ran `ls`\n```\na\n```\n\nCommand exited with code 2"]


def test_convert_to_llm_passes_system_user_assistant_and_tool_results_through() -> None:
    messages = [{"role": r, "content": []} for r in ("system", "user", "assistant", "toolResult")]
    converted = convert_to_llm(messages)
    assert all(a is b for a, b in zip(converted, messages, strict=True))


# -- the system fold --------------------------------------------------------------------------


def test_fold_system_patches_sections_and_replays_tool_changes() -> None:
    messages = [
        {
            "role": "system",
            "content": "base",
            "sections": {"a": "A", "b": "B"},
            "toolsAdded": [{"name": "read"}, {"name": "bash"}],
            "timestamp": 5,
        },
        {"role": "user", "content": "hi"},
        {
            "role": "system",
            "content": "more",
            "sections": {"a": None, "c": "C"},
            "toolsRemoved": [{"name": "read"}],
            "toolsAdded": [{"name": "edit"}],
            "timestamp": 9,
        },
    ]
    assert fold_system(messages) == {
        "role": "system",
        "content": "base\n\nmore",
        "sections": {"b": "B", "c": "C"},
        "toolsAdded": [{"name": "bash"}, {"name": "edit"}],
        "timestamp": 5,
    }


def test_fold_system_replace_starts_the_prompt_over() -> None:
    messages = [
        {"role": "system", "content": "old", "sections": {"a": "A"}, "timestamp": 1},
        {"role": "system", "content": "new", "replace": True, "timestamp": 2},
    ]
    assert fold_system(messages) == {"role": "system", "content": "new", "timestamp": 1}


def test_fold_system_without_system_messages_is_none() -> None:
    assert fold_system([{"role": "user", "content": "x"}]) is None


# -- real Pi runs -----------------------------------------------------------------------------


def trace_snapshots() -> list[Any]:
    if not TRACES.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{TRACES} is absent"))]
    params = []
    for events in sorted(TRACES.glob("*.events.jsonl")):
        for line in events.read_text().splitlines():
            record = json.loads(line)
            payload = record.get("payload")
            if record["src"] == "harness" and isinstance(payload, dict) and "llmRoles" in payload:
                label = f"{events.name.split('.')[0]}:{record['ev']}"
                params.append(pytest.param(payload, id=label))
    return params


def session_for(session_file: str) -> SessionTree:
    session_id = os.path.basename(session_file).split("_", 1)[1].removesuffix(".jsonl")
    for path in TRACES.glob("*.session.jsonl"):
        loaded = read_session(path)
        if loaded.header is not None and loaded.header.id == session_id:
            return SessionTree.from_entries(loaded.header, loaded.entries)
    raise AssertionError(f"no trace session {session_id}")


@pytest.mark.corpus
@pytest.mark.parametrize("snapshot", trace_snapshots())
def test_context_roles_equal_those_pi_built_in_the_trace(snapshot: dict[str, Any]) -> None:
    # Given the session file Pi wrote and the leaf it recorded
    tree = session_for(snapshot["sessionFile"])
    branch = tree.branch(snapshot["leaf"])
    # When the context is rebuilt from the file
    messages = project_branch(branch).messages
    # Then its roles, before and after convertToLlm, are the ones Pi recorded
    assert roles(messages) == snapshot["contextRoles"]
    assert roles(convert_to_llm(messages)) == snapshot["llmRoles"]


def provider_requests() -> list[Any]:
    if not TRACES.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"{TRACES} is absent"))]
    params = []
    for events in sorted(TRACES.glob("*.events.jsonl")):
        leaf = None
        for line in events.read_text().splitlines():
            record = json.loads(line)
            leaf = (record.get("ctx") or {}).get("leaf") or leaf
            if record["src"] == "provider" and record["ev"] == "request":
                label = f"{events.name.split('.')[0]}:{record['seq']}"
                params.append(pytest.param(leaf, record["payload"]["roles"], id=label))
    return params


@pytest.mark.corpus
@pytest.mark.parametrize(("leaf", "expected"), provider_requests())
def test_provider_request_roles_equal_the_context_at_the_last_seen_leaf(
    leaf: str, expected: list[str]
) -> None:
    # Given the leaf the extension saw just before a provider request
    tree = next(t for t in trace_trees() if leaf in t)
    # Then the converted context has the roles the faux provider received
    assert roles(convert_to_llm(project_branch(tree.branch(leaf)).messages)) == expected


_TREES: list[SessionTree] = []


def trace_trees() -> list[SessionTree]:
    if not _TREES:
        for path in sorted(Path(TRACES).glob("*.session.jsonl")):
            loaded = read_session(path)
            assert loaded.header is not None
            _TREES.append(SessionTree.from_entries(loaded.header, loaded.entries))
    return _TREES
