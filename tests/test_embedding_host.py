"""What a host of one's own needs besides the runtime (issue 9, item 4): entries written with
minted ids and clock times, one ``apply`` for results, and the model host's embedding knobs
(usage figures, aborted replies, project trust, one compaction setting, seeding from entries,
notes derived from the session, the policy's diagnostics)."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import Kit, audits_verify  # noqa: F401
from session_builders import header

from pictx_fsm import LifecycleRuntime, SessionTree, SessionWriter, StaticSettingsSource, apply
from pictx_fsm.extensions.pi_context.adapter import LifecycleExtension
from pictx_fsm.extensions.pi_context.notes import FileNotesSource
from pictx_fsm.host.effects import (
    AbortRun,
    AppendEntry,
    BoundaryResult,
    CompactionDraft,
    ContextEditDraft,
    CustomDraft,
    CustomMessageDraft,
    HookResult,
    Notify,
    SendMessage,
)
from pictx_fsm.host.events import AgentBeforeSettle
from pictx_fsm.host.settings import CompactionSettings as PolicyCompactionSettings
from pictx_fsm.hosts.model import (
    Aborted,
    CompactionSettings,
    HostSettings,
    ModelSession,
    ScriptedProvider,
    Text,
)
from pictx_fsm.session.entries import CompactionEntry, MessageEntry
from pictx_fsm.session.writer import iso


def _writer(seed: int = 0) -> SessionWriter:
    ticks = iter(range(1_796_000_000_000, 1_796_000_100_000, 1_000))
    return SessionWriter(SessionTree(header()), ids=random.Random(seed), clock=lambda: next(ticks))


# -- SessionWriter -----------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(count=st.integers(min_value=1, max_value=40), seed=st.integers(0, 2**16))
def test_every_appended_entry_gets_a_fresh_id_the_leaf_as_parent_and_the_clock_time(
    count: int, seed: int
) -> None:
    # Given a writer over an empty session
    writer = _writer(seed)
    parents, ids = [], []
    # When entries are appended without ids or times
    for n in range(count):
        parents.append(writer.tree.leaf_id)
        entry = writer.message({"role": "user", "content": f"m{n}"})
        ids.append(entry.id)
    # Then ids are unique 8-hex strings, each a child of the previous leaf
    assert len(set(ids)) == count and all(len(i) == 8 for i in ids)
    assert [e.parent_id for e in writer.tree.entries] == parents
    first = writer.tree.entries[0]
    assert isinstance(first, MessageEntry)
    assert first.message.raw["timestamp"] == 1_796_000_000_000  # the message is made first
    assert first.timestamp == iso(1_796_000_001_000)  # then appended


def test_the_same_random_source_and_clock_write_the_same_session() -> None:
    one, two = _writer(3), _writer(3)
    for writer in (one, two):
        writer.message({"role": "user", "content": "x"})
        writer.custom("note", {"a": 1})
    assert [e.to_json() for e in one.tree.entries] == [e.to_json() for e in two.tree.entries]


# -- apply -------------------------------------------------------------------------------------


def test_apply_writes_appended_and_sent_entries_at_once_and_reports_notices_and_abort() -> None:
    writer = _writer()
    result = HookResult(
        hook="command",
        effects=(
            Notify(message="hello", level="info"),
            AppendEntry(custom_type="pi-context/reset-marker", data={"windowId": "w"}),
            SendMessage(custom_type="pi-context/boot", content="boot", display=False),
            AbortRun(),
        ),
    )
    applied = apply(result, writer)
    assert [e.type for e in writer.tree.branch()] == ["custom", "custom_message"]
    assert applied.notices == (Notify(message="hello", level="info"),)
    assert applied.aborted and not applied.trigger_turn and applied.appended


def test_apply_commits_boundary_drafts_in_order_or_the_incoming_ones_when_undefined() -> None:
    writer = _writer()
    marker = CustomDraft(custom_type="m", data={"windowId": "w"})
    boot = CustomMessageDraft(custom_type="b", content="boot", display=False)
    returned = HookResult(
        hook="agent_before_settle",
        value=BoundaryResult(entries=(marker, boot), continue_=True),
    )
    applied = apply(returned, writer, AgentBeforeSettle())
    assert applied.continue_ and [e.type for e in applied.appended] == ["custom", "custom_message"]
    # When the handler returned undefined, the host's incoming drafts are committed unchanged
    target = writer.tree.leaf_id
    assert target is not None
    incoming = (
        ContextEditDraft(target_id=target),
        CompactionDraft(summary="s", first_kept_entry_id=None),
    )
    undefined = apply(
        HookResult(hook="agent_before_settle"), writer, AgentBeforeSettle(entries=incoming)
    )
    assert [e.type for e in undefined.appended] == ["context_edit", "compaction"]
    compaction = undefined.appended[1]
    assert isinstance(compaction, CompactionEntry) and compaction.retains_nothing


# -- the model host ----------------------------------------------------------------------------


def test_a_scripted_reply_reports_its_usage_figure() -> None:
    session = ModelSession(provider=ScriptedProvider([Text(text="hi", usage=123_456)]))
    session.prompt("hello")
    session.run_until_idle()
    reply = session.tree.branch()[-1]
    assert isinstance(reply, MessageEntry)
    assert reply.message.raw["usage"]["input"] == 123_456


def test_an_aborted_reply_ends_the_turn_as_pi_records_it() -> None:
    session = ModelSession(provider=ScriptedProvider([Aborted(text="half")]))
    session.prompt("hello")
    session.run_until_idle()
    reply = session.tree.branch()[-1]
    assert isinstance(reply, MessageEntry)
    assert reply.message.raw["stopReason"] == "aborted"
    assert reply.message.raw["errorMessage"] == "Request was aborted"
    turn_end = [r for r in session.log.events if r.name == "turn_end"]
    assert turn_end


def test_the_model_host_says_whether_the_project_is_trusted() -> None:
    seen = []
    extension = LifecycleExtension(lambda tree: _Recorder(seen))
    ModelSession([extension], settings=HostSettings(project_trusted=True))
    assert seen and all(ctx.project_trusted for ctx in seen)


class _Recorder:
    def __init__(self, seen: list) -> None:  # type: ignore[type-arg]
        self.seen = seen

    def handle(self, event, ctx=None):  # type: ignore[no-untyped-def]
        self.seen.append(ctx)
        return HookResult(hook=type(event).HOOK)


def test_host_and_policy_read_one_compaction_setting() -> None:
    # Given host settings with automatic compaction off and a small reserve
    compaction = CompactionSettings(enabled=False, reserve_tokens=2_000, keep_recent_tokens=1_000)
    host = HostSettings(
        compaction=compaction, extension_settings={"pi-context": {"reminderMarginTokens": 4_000}}
    )
    # Then the runtime's policy reads the very same values
    assert CompactionSettings is PolicyCompactionSettings
    runtime = LifecycleRuntime(SessionTree(header()), settings=host.settings_source())
    policy = runtime.policy()
    assert not policy.automatic and policy.thresholds.reserve == 2_000
    assert policy.thresholds.reminder == 2_000 + 4_000  # reserve + reminderMarginTokens


def test_a_model_session_continues_a_tree_of_entries() -> None:
    # Given a session built elsewhere from entries
    writer = _writer()
    writer.message({"role": "user", "content": "earlier"})
    tree = SessionTree.from_entries(writer.tree.header, writer.tree.entries)
    # When the model session opens it and runs a prompt
    session = ModelSession(tree=tree)
    session.prompt("again")
    session.run_until_idle()
    # Then it continued that tree
    assert session.tree is tree and tree.entries[0].id == writer.tree.entries[0].id
    assert len(tree.entries) > 1


def test_the_notes_of_a_session_need_no_hand_built_identity(tmp_path: Path) -> None:
    notes = FileNotesSource.for_session("s-1", tmp_path, home=tmp_path / "notes", model="a/b")
    assert notes.identity.session_id == "s-1" and notes.identity.model == "b"
    assert notes.home_dir("session") == tmp_path / "notes" / "pi" / "session" / "s-1"


def test_the_policy_diagnostics_are_readable_from_the_runtime(tmp_path: Path) -> None:
    # Given an unreadable global settings file (Pi keeps the error as a diagnostic)
    (tmp_path / "settings.json").write_text("{not json")
    from pictx_fsm import HostContext
    from pictx_fsm.extensions.pi_context.lifecycle import pi_file_settings

    runtime = LifecycleRuntime(SessionTree(header()), settings=pi_file_settings(tmp_path))
    policy = runtime.policy(HostContext(cwd=str(tmp_path)))
    # Then the runtime tells, and the defaults apply
    assert policy.diagnostics and policy.automatic
    assert StaticSettingsSource(global_settings={}).read().diagnostics == ()
