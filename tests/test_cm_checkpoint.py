"""Checkpoints: custom compaction (spec §4, M25–M36)."""

from __future__ import annotations

import json

from cm_kit import (
    EVENT_TYPE,
    NOTES_TYPE,
    C,
    D,
    P,
    S,
    bare_tree,
    checkpoints,
    cm,
    ctx,
    customs,
    fired,
    log_records,
    machine,
    notices,
    play,
    shared,
    started,
    state,
    world,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management import generation as gen
from pictx_fsm.extensions.context_management import step
from pictx_fsm.extensions.context_management.effects import CheckpointCompaction, RequestGeneration
from pictx_fsm.extensions.context_management.notes import Note, NoteSet
from pictx_fsm.extensions.context_management.policy import GEN_TIMEOUT_MS, Budgets
from pictx_fsm.extensions.context_management.records import CHECKPOINT_KEY, notes_data
from pictx_fsm.extensions.context_management.sources import Source, pieces
from pictx_fsm.host.effects import CancelResult
from pictx_fsm.session.entries import AgentMessage, CustomEntry, MessageEntry
from pictx_fsm.session.estimate import js_length
from pictx_fsm.session.tree import SessionTree

COMPACTABLE = (P(chars=4_000), S, P(chars=20_000), S)


def test_m25_every_compaction_is_answered_with_a_checkpoint() -> None:
    # Given a session to compact
    w = play(world(), *COMPACTABLE, shared.Compact(), P(chars=200), S)
    # Then the compaction entry is the plugin's (fromHook) with its checkpoint in details
    (entry,) = checkpoints(w)
    assert CHECKPOINT_KEY in entry.details and machine(w, "notes_store") == "ready"


def test_m25_ctx_memory_compact_asks_pi_and_a_compaction_cancels_the_job() -> None:
    # Given a background job running
    w = play(world(), P(chars=4_000), S, P(chars=20_000), S)
    assert machine(w, "background_notes") == "running"
    # When /ctx-memory compact runs / Then Pi compacts, the job was cancelled first
    play(w, C(args="compact"), P(chars=200), S)
    assert checkpoints(w)
    assert "background_notes:background_notes:running:cancel:1" in fired(w)


def test_m26_a_native_summary_is_part_of_the_next_input() -> None:
    # Given a native compaction (the plugin fell back) on the branch
    w = play(world(), *COMPACTABLE, cm.Generate(reply="invalid_shape"), shared.Compact())
    play(w, *COMPACTABLE, shared.Compact())
    # Then the next checkpoint's first request carries that summary
    first = [r for r in w.generator.requests if r.kind == "compaction"][-1]
    assert first.batch == 1 and first.summary is not None and "Model-host summary" in first.summary


@settings(max_examples=50, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(["a", "é", "中", "😀"]), min_size=1, max_size=3000),
    st.integers(200, 900),
)
def test_m27_an_overlong_message_is_split_on_character_boundaries(text: str, limit: int) -> None:
    # Given one source longer than a batch allows
    source = Source(id="s1", role="user", time="t", text=text)
    parts = pieces([source], limit)
    # Then every piece keeps the source id and its UTF-16 offset, and together they are it
    assert "".join(p.text for p in parts) == text
    offset = 0
    for part in parts:
        assert part.id == "s1" and part.start == offset
        offset += js_length(part.text)


def test_m27_batches_carry_the_previous_batchs_validated_notes() -> None:
    # Given a compaction of more than one batch
    w = play(world(), P(chars=4_000), S, P(chars=60_000), S, P(chars=60_000), S, shared.Compact())
    requests = [r for r in w.generator.requests if r.kind == "compaction"]
    assert len(requests) > 1
    # Then batch n+1 carries the notes the reply to batch n produced
    assert [r.batch for r in requests] == list(range(1, len(requests) + 1))
    assert len(requests[1].notes) > len(requests[0].notes)


def test_m28_one_deadline_for_the_whole_run_and_the_code_is_checkpoint_timeout() -> None:
    # Given a compaction whose request takes 400 s
    w = play(world(), *COMPACTABLE, cm.Generate(reply="slow"), shared.Compact())
    # Then the run fails checkpoint_timeout (never aborted) and Pi compacts natively
    assert customs(w, EVENT_TYPE)[-1]["code"] == "checkpoint_timeout"
    ends = [r for r in log_records(w) if r["kind"] == "operation_end" and r["type"] == "compaction"]
    assert ends[-1]["result"] == "checkpoint_timeout" and ends[-1]["durationMs"] <= GEN_TIMEOUT_MS


def test_m28_a_reply_after_the_deadline_is_a_timeout() -> None:
    # Given a run whose reply arrives at its deadline (the pure step, without a host)
    tree = bare_tree()
    for i, role in enumerate(["user", "assistant"] * 3):
        raw = {"role": role, "content": [{"type": "text", "text": f"m{i} " * 400}]}
        tree.append(
            MessageEntry(
                id=f"e{i}",
                parent_id=tree.leaf_id,
                timestamp="t",
                message=AgentMessage(role=role, raw=raw),
            )
        )
    services = ev.CmServices(tree=tree)
    s0 = started(tree)
    s1, r1 = step(s0, ev.CompactionStarting(reason="manual", first_kept="e5"), ctx(), services)
    job = next(e.request.job for e in r1.effects if isinstance(e, RequestGeneration))
    late = ctx(now=1_000_000 + GEN_TIMEOUT_MS)
    _, r2 = step(
        s1,
        ev.GenerationReplied(job=job, reply=gen.GenerationReply(kind="ok", text="{}")),
        late,
        services,
    )
    # Then the reply is not judged: the run failed on its deadline
    assert "checkpoint:checkpoint:generating:response:1" in r2.fired


def test_m29_one_repair_after_a_capacity_failure() -> None:
    # Given a first candidate over capacity, then a repaired one
    w = play(
        world(), *COMPACTABLE, cm.Generate(reply="over_capacity"), shared.Compact(), P(chars=200), S
    )
    repairs = [r for r in w.generator.requests if r.repair]
    # Then exactly one repair was asked for, with the actual value and limit, and it saved
    assert len(repairs) == 1 and repairs[0].feedback is not None
    assert repairs[0].feedback.actual > repairs[0].feedback.limit and checkpoints(w)


def test_m29_a_second_capacity_failure_saves_nothing() -> None:
    w = play(world(), *COMPACTABLE, cm.Generate(reply="stubborn"), shared.Compact())
    assert not checkpoints(w) and customs(w, EVENT_TYPE)[-1]["code"] == "notes_budget"


def test_m14_m29_a_capacity_failure_is_notes_budget_with_the_budget_type() -> None:
    # Given a compaction whose candidate and repair both exceed the notes budget
    w = play(world(), *COMPACTABLE, cm.Generate(reply="stubborn"), shared.Compact())
    # When the user asks for the status
    play(w, C(args="status"))
    # Then lastFailure's code is notes_budget and the budget names the limit it broke,
    # in the status, the persisted event and the operation's end record alike
    status = json.loads(notices(w)[-1])
    failure, event = status["lastFailure"], customs(w, EVENT_TYPE)[-1]
    end = [r for r in log_records(w) if r["kind"] == "operation_end"][-1]
    assert failure["code"] == event["code"] == end["result"] == "notes_budget"
    for budget in (failure["budget"], event["budget"], end["budget"]):
        assert budget["type"] in ("note_bytes", "note_count", "file_tracking")
        assert budget["actual"] > budget["limit"]


def _note(key: str, kind: str, status: str, sources: tuple[str, ...]) -> Note:
    return Note(key=key, kind=kind, status=status, text="t", sources=sources, inferred=False)


def _reply(kind: str, status: str, text: str) -> str:
    note = {"key": "open", "kind": kind, "status": status, "text": text, "sources": ["a"]}
    return json.dumps({"notes": [note], "throughEntryId": "b1"})


def test_m30_the_repair_may_not_resolve_what_the_first_candidate_kept_open() -> None:
    # Given a batch whose first candidate kept an open item active
    from pictx_fsm.extensions.context_management.sources import Piece

    run = gen.GenRun(
        job=1,
        kind="compaction",
        started_at=0,
        deadline=1,
        cap=16,
        start_leaf=None,
        model=None,
        note_state=0,
        batches=((Piece(id="b1", role="user", time="t", text="x"),),),
        batch=1,
        notes=NoteSet(notes=(_note("open", "open_item", "active", ("a",)),)),
        first=NoteSet(notes=(_note("open", "open_item", "active", ("a",)),)),
    )
    resolve = _reply("open_item", "resolved", "t")
    rekind = _reply("decision", "active", "t")
    keep = _reply("open_item", "active", "s")
    # Then resolving it or changing an active item's kind breaks M30; a shorter text does not
    assert gen.repair_breaks_rules(run, resolve) and gen.repair_breaks_rules(run, rekind)
    assert not gen.repair_breaks_rules(run, keep)


def test_m31_validation_codes() -> None:
    # Given candidates of each failure kind through compactions
    for kind, code in (
        ("invalid_shape", "invalid_checkpoint_shape"),
        ("bad_boundary", "invalid_checkpoint_boundary"),
        ("repair_invalid", "invalid_checkpoint_repair_transition"),
    ):
        w = play(world(), *COMPACTABLE, cm.Generate(reply=kind), shared.Compact())
        # Then the failure records its code and nothing was saved
        assert customs(w, EVENT_TYPE)[-1]["code"] == code and not checkpoints(w)


def test_m32_a_commit_holds_the_full_boundary_and_the_summed_usage() -> None:
    w = play(world(), P(chars=4_000), S, P(chars=60_000), S, P(chars=60_000), S, shared.Compact())
    (entry,) = checkpoints(w)
    end = [r for r in log_records(w) if r["kind"] == "operation_end" and r["type"] == "compaction"][
        -1
    ]
    requests = [r for r in w.generator.requests if r.kind == "compaction"]
    # Then one entry, kept boundary = Pi's, and usage summed over every request
    assert entry.first_kept_entry_id is not None and end["requests"] == len(requests) > 1
    assert end["usage"]["input"] == sum(r.size // 4 for r in requests)


def test_m33_archived_and_noted_positions_may_differ() -> None:
    # Given background notes that covered messages still in context, then a checkpoint
    w = play(world(), cm.Turn(chars=20_000), P(chars=20_000), S, shared.Compact(), P(chars=200), S)
    memory = state(w).branch
    # Then throughEntryId is the archived position, notesThroughEntryId may be later
    assert memory.through is not None and memory.notes_through is not None
    order = [e.id for e in w.session.tree.branch()]
    assert order.index(memory.notes_through) >= order.index(memory.through)


def test_m34_native_fallback_with_a_warning() -> None:
    # Given an unsupported branch summary in the archived range
    w = play(
        world(),
        *COMPACTABLE,
        cm.NavigateTo(mark="first_user", summarize=True),
        *COMPACTABLE,
        shared.Compact(),
    )
    # Then the plugin falls back to Pi's compaction with a warning
    assert any(
        n.startswith("Context memory checkpoint failed (unsupported_context)") for n in notices(w)
    )
    records = [r for r in log_records(w) if r["kind"] == "native_compaction"]
    assert records and records[-1]["result"] == "unsupported_context"


def test_m34_a_window_too_small_for_any_batch_falls_back() -> None:
    w = play(
        world(context_window=20_000, reserve_tokens=1_000, keep_recent_tokens=1_000),
        P(chars=12_000),
        S,
        P(chars=9_000),
        S,
        shared.Compact(),
    )
    assert customs(w, EVENT_TYPE)[-1]["code"] == "checkpoint_input_budget"


def test_m35_a_user_cancel_cancels_the_compaction_without_fallback() -> None:
    w = play(world(), *COMPACTABLE, cm.Generate(reply="aborted"), shared.Compact())
    assert not checkpoints(w) and not customs(w, EVENT_TYPE)
    assert "checkpoint:checkpoint:generating:response:2" in fired(w)


def test_m35_a_compaction_whose_signal_already_fired_is_cancelled() -> None:
    # Given session_before_compact with an aborted signal (the pure step)
    tree = bare_tree()
    s0 = started(tree)
    event = ev.CompactionStarting(reason="manual", first_kept=None, signal_aborted=True)
    _, result = step(s0, event, ctx(), ev.CmServices(tree=tree))
    # Then the compaction is cancelled: {cancel: true}, no request, no fallback
    assert isinstance(result.value, CancelResult)
    assert not any(isinstance(e, RequestGeneration) for e in result.effects)


def test_m36_derived_status_origin_and_cumulative_failures() -> None:
    # Given a failed checkpoint, then a successful one
    w = play(world(), *COMPACTABLE, cm.Generate(reply="invalid_shape"), shared.Compact())
    play(w, P(chars=200), S)
    assert state(w).branch.last_compaction_origin == "pi" and state(w).branch.failed_attempts == 1
    play(w, *COMPACTABLE, shared.Compact(), P(chars=200), S)
    # Then origin is plugin, failedAttempts stays 1 (never reset), and the state is ready
    memory = state(w).branch
    assert memory.last_compaction_origin == "plugin" and memory.failed_attempts == 1
    assert machine(w, "notes_store") == "ready"


def test_m36_check_the_budgets_used() -> None:
    assert Budgets(context_window=64_000).checkpoint_max_bytes == 6_400
    assert isinstance(CheckpointCompaction, type) and D is not None


def _covered_tree(count: int, covered: int | None) -> SessionTree:
    """``count`` messages, then a notes snapshot covering through message ``covered``."""
    tree = bare_tree()
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        raw = {"role": role, "content": [{"type": "text", "text": f"message {i} " * 20}]}
        message = AgentMessage(role=role, raw=raw)
        tree.append(
            MessageEntry(id=f"m{i}", parent_id=tree.leaf_id, timestamp="t", message=message)
        )
    through = None if covered is None else f"m{covered}"
    data = notes_data(NoteSet(), origin="background", through=through, state=1, retired=())
    tree.append(
        CustomEntry(
            id="n1", parent_id=tree.leaf_id, timestamp="t", custom_type=NOTES_TYPE, data=data
        )
    )
    return tree


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_m26_compaction_reuses_notes_and_processes_only_uncovered_archived_sources(
    data: st.DataObject,
) -> None:
    # Given notes covering any prefix of the branch — before, at or past Pi's kept boundary
    count = data.draw(st.integers(2, 12))
    kept = data.draw(st.integers(1, count - 1))
    covered = data.draw(st.none() | st.integers(0, count - 1))
    custom = data.draw(st.booleans())
    tree = _covered_tree(count, covered)
    # When Pi compacts, keeping the messages from ``kept`` on
    event = ev.CompactionStarting(
        reason="threshold", first_kept=f"m{kept}", custom_instructions=custom
    )
    _, result = step(started(tree), event, ctx(), ev.CmServices(tree=tree))
    # Then the model is sent only the archived sources the notes do not cover (all of them
    # with custom instructions); none uncovered means a checkpoint without a request
    start = 0 if custom or covered is None else covered + 1
    expected = [f"m{i}" for i in range(start, kept)]
    sent = [
        p.id for e in result.effects if isinstance(e, RequestGeneration) for p in e.request.pieces
    ]
    assert sent == expected
    if not expected:
        assert isinstance(result.value, CheckpointCompaction)


def test_m26_compaction_after_background_notes_sends_nothing_again() -> None:
    # Given background notes that covered the whole session
    w = play(world(automatic_compaction=False), cm.Turn(chars=4_000), cm.Turn(chars=30_000))
    assert customs(w, NOTES_TYPE)[-1]["origin"] == "background"
    # When Pi compacts / Then the checkpoint reuses them without a model request
    play(w, shared.Compact())
    assert checkpoints(w) and not [r for r in w.generator.requests if r.kind == "compaction"]
