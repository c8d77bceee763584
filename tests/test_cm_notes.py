"""The notes model and store (spec §2, M8–M18)."""

from __future__ import annotations

from cm_kit import (
    NOTES_TYPE,
    C,
    D,
    P,
    S,
    cm,
    customs,
    machine,
    play,
    shared,
    state,
    tool,
    tool_payloads,
    world,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.extensions.context_management.notes import (
    BudgetFailure,
    FileRecord,
    Fitted,
    Note,
    NoteSet,
    fit,
    kind_change_refused,
    note_bytes,
    over_budget,
)
from pictx_fsm.extensions.context_management.policy import NOTE_MAX_ITEMS, Budgets
from pictx_fsm.extensions.context_management.texts import (
    GENERATION_POLICY_TEXT,
    NOTES_GUIDELINES,
    NOTES_TOOL,
)
from pictx_fsm.extensions.context_management.tools import TOOL_SCHEMAS

BUDGETS = Budgets(context_window=64_000)


def _note(key: str, *, kind: str = "decision", status: str = "active", size: int = 10) -> Note:
    return Note(key=key, kind=kind, status=status, text="x" * size, sources=("a",), inferred=False)


def _set(*notes: Note) -> NoteSet:
    out = NoteSet()
    for note in notes:
        out = out.put(note)
    return out


def test_m8_updating_a_key_keeps_a_version_relation() -> None:
    # Given a note written twice under one key
    w = play(
        world(),
        P(chars=200),
        S,
        *tool(tool="notes_update", key=1),
        *tool(tool="notes_update", key=1, chars=80),
    )
    # Then the second snapshot holds revision 2 of the key, with its kind, status and sources
    note = customs(w, NOTES_TYPE)[-1]["notes"][0]
    assert note["key"] == "k1" and note["revision"] == 2
    assert set(note) == {"key", "kind", "status", "text", "sources", "inferred", "revision"}


def test_m9_sources_must_be_messages_of_this_branch() -> None:
    # Given a write citing an id that is not on the branch
    w = play(world(), P(chars=200), S, *tool(tool="notes_update", source="missing"))
    # Then it is refused and nothing is stored
    assert tool_payloads(w, NOTES_TOOL)[-1]["error"] == "invalid_sources"
    assert not customs(w, NOTES_TYPE)


def test_m9_an_explicit_constraint_must_cite_a_user_message() -> None:
    # Given an explicit (non-inferred) constraint citing only an assistant reply
    w = play(
        world(), P(chars=200), S, *tool(tool="notes_update", kind="constraint", source="assistant")
    )
    # Then it is refused; citing the user's message is accepted
    assert tool_payloads(w, NOTES_TOOL)[-1]["error"] == "invalid_sources"
    play(w, *tool(tool="notes_update", kind="constraint", source="user"))
    assert tool_payloads(w, NOTES_TOOL)[-1]["ok"] is True


def test_m9_notes_citing_a_summary_are_inferred() -> None:
    # Given a branch with a compaction summary and a note citing it
    w = play(world(), P(chars=4_000), S, P(chars=20_000), S, shared.Compact(), P(chars=200), S)
    summary = next(e.id for e in w.session.tree.branch() if e.type == "compaction")
    from pictx_fsm.extensions.context_management.events import ToolCalled

    runtime = w.runtimes[-1]
    args = {"action": "update", "key": "s", "kind": "decision", "text": "t", "sources": [summary]}
    result = runtime.handle(ToolCalled(name=NOTES_TOOL, arguments=args))
    # Then the stored note is marked inferred
    assert result.value is not None and result.value.payload["ok"] is True
    assert state(w).branch.notes.get("s").inferred is True


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.sampled_from(["active", "resolved"]), st.integers(1, 900)),
        max_size=45,
    )
)
def test_m10_after_every_accepted_write_the_set_fits(writes: list[tuple[int, str, int]]) -> None:
    # Given any sequence of writes judged by fit
    notes = NoteSet()
    for key, status, size in writes:
        candidate = notes.put(_note(f"k{key}", status=status, size=size))
        result = fit(candidate, (f"k{key}",), FileRecord(), BUDGETS)
        # Then an accepted write fits count and bytes; a refused one names a limit
        if isinstance(result, Fitted):
            notes = result.notes
            assert len(notes) <= NOTE_MAX_ITEMS and note_bytes(notes) <= BUDGETS.note_max_bytes
        else:
            assert result.type in ("note_count", "note_bytes", "file_tracking")


def test_m10_the_file_list_competes_only_near_the_checkpoint_cap() -> None:
    # Given notes within their budget and a long file-operation list
    notes = _set(_note("a", size=2_000))
    files = FileRecord(read=tuple(f"/src/file{i}.py" for i in range(400)))
    # Then the whole checkpoint breaks the file-tracking limit, not the notes' limits
    failure = over_budget(notes, files, BUDGETS)
    assert isinstance(failure, BudgetFailure) and failure.type == "file_tracking"
    assert over_budget(notes, FileRecord(), BUDGETS) is None


def test_m11_retirement_removes_resolved_ordinary_notes_oldest_first() -> None:
    # Given resolved decisions, an active note, a resolved constraint, and a full budget
    notes = _set(
        _note("old", status="resolved", size=700),
        _note("kept", status="resolved", kind="constraint", size=700),
        _note("newer", status="resolved", size=700),
        _note("active", size=200),
    )
    candidate = notes.put(_note("new", size=700))
    assert over_budget(candidate, FileRecord(), BUDGETS) is not None
    # When the write is fitted
    result = fit(candidate, ("new",), FileRecord(), BUDGETS)
    # Then only the oldest resolved ordinary note left; constraints and active notes stay
    assert isinstance(result, Fitted) and result.retired == ("old",)
    assert {n.key for n in result.notes.notes} == {"kept", "newer", "active", "new"}


def test_m11_the_note_being_written_is_never_retired() -> None:
    # Given a resolved ordinary note that is itself being rewritten over the budget
    candidate = _set(_note("self", status="resolved", size=3_300))
    # Then it is refused rather than retired
    result = fit(candidate, ("self",), FileRecord(), BUDGETS)
    assert isinstance(result, BudgetFailure) and result.type == "note_bytes"


def test_m12_resolving_a_note_frees_no_space() -> None:
    # Given 32 notes, one resolved
    notes = _set(
        *(_note(f"n{i}", size=1) for i in range(31)), _note("done", status="resolved", size=1)
    )
    wide = Budgets(context_window=200_000)
    # Then the resolved note still counts toward 32 until a write needs its room
    assert len(notes) == NOTE_MAX_ITEMS and over_budget(notes, FileRecord(), wide) is None
    result = fit(notes.put(_note("more", size=1)), ("more",), FileRecord(), wide)
    assert isinstance(result, Fitted) and result.retired == ("done",)


def test_m13_a_constraint_keeps_its_kind() -> None:
    # Given a stored constraint
    w = play(world(), P(chars=200), S, *tool(tool="notes_update", key=1, kind="constraint"))
    # When a write changes its kind / Then it is refused
    play(w, *tool(tool="notes_update", key=1, kind="goal"))
    assert tool_payloads(w, NOTES_TOOL)[-1]["error"] == "protected_kind"
    assert kind_change_refused(state(w).branch.notes, "k1", "goal")
    assert not kind_change_refused(state(w).branch.notes, "k1", "constraint")


def test_m14_a_write_over_budget_is_refused_with_the_numbers() -> None:
    # Given a note far over the byte budget
    w = play(world(), P(chars=200), S, *tool(tool="notes_update", chars=4_000))
    payload = tool_payloads(w, NOTES_TOOL)[-1]
    # Then the refusal carries {type, actual, limit}, lastFailure.budget too, and the log
    # only the numbers
    assert payload["error"] == "notes_budget"
    assert payload["budget"]["type"] == "note_bytes" and payload["budget"]["limit"] == 3_200
    assert state(w).last_failure is not None and state(w).last_failure.budget is not None
    play(w, C(args="status"))
    assert '"budget"' in w.session.log.notices[-1].message
    from cm_kit import log_records

    record = next(r for r in log_records(w) if r["kind"] == "note_write")
    assert set(record["budget"]) == {"type", "actual", "limit"}


def test_m15_notes_live_on_the_branch_and_a_reload_restores_them() -> None:
    # Given an accepted note
    w = play(world(), P(chars=200), S, *tool(tool="notes_update", key=1))
    before = state(w).branch.notes.to_json()
    # When the session is reloaded from its file
    play(w, shared.Reload())
    # Then the new instance has the same notes, replayed from the custom entry
    assert state(w).branch.notes.to_json() == before and machine(w, "notes_store") == "notes_only"


def test_m15_a_failed_write_leaves_the_state_unchanged() -> None:
    # Given a failing disk
    w = play(world(), P(chars=200), S, cm.FailDisk(on=True), *tool(tool="notes_update", key=1))
    # Then the write reports storage_failed and the notes are unchanged
    assert tool_payloads(w, NOTES_TOOL)[-1]["error"] == "storage_failed"
    assert not state(w).branch.notes and not customs(w, NOTES_TYPE)


def test_m16_a_tool_write_answers_ok_keeps_coverage_and_cancels_the_job() -> None:
    # Given a background job running after a long reply
    w = play(world(), P(chars=12_000), S)
    assert machine(w, "background_notes") == "running"
    through = state(w).branch.notes_through
    # When the model writes a note
    play(w, *tool(tool="notes_update", key=1))
    # Then ok=true, coverage did not move, and the job was cancelled
    assert tool_payloads(w, NOTES_TOOL)[-1]["ok"] is True
    assert customs(w, NOTES_TYPE)[0]["notesThroughEntryId"] == through
    assert "background_notes:background_notes:running:cancel:1" in [
        t for r in w.journal.steps for t in r.result.fired
    ]


def test_m17_the_wrap_up_rule_travels_in_the_tool_prompt_hints() -> None:
    # Given context_notes' declaration / Then its prompt guidelines carry the wrap-up rule
    hints = TOOL_SCHEMAS[NOTES_TOOL]["promptGuidelines"]
    assert list(hints) == list(NOTES_GUIDELINES)
    text = " ".join(hints)
    for phrase in ("original key", "ok=true", "do not write", "to be verified", "stop retrying"):
        assert phrase in text


def test_m18_generation_requests_carry_the_prompt_policy() -> None:
    # Given a background generation
    w = play(world(), P(chars=12_000), S, D)
    request = w.generator.requests[0]
    # Then its payload states the priorities and never-rewrite policy
    policy = request.payload()["policy"]
    assert policy == GENERATION_POLICY_TEXT
    for phrase in (
        "current goal",
        "active constraints",
        "pending approvals",
        "freshness to be verified",
    ):
        assert phrase in policy
