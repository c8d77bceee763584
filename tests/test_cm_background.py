"""Background incremental notes (spec §5, M37–M44)."""

from __future__ import annotations

import pytest
from cm_kit import (
    NOTES_TYPE,
    C,
    D,
    P,
    S,
    T,
    cm,
    customs,
    fired,
    machine,
    notices,
    play,
    shared,
    state,
    tool,
    tool_payloads,
    wait,
    world,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.extensions.context_management.policy import BG_SELECT_BYTES
from pictx_fsm.extensions.context_management.sources import Source, closed_prefix
from pictx_fsm.extensions.context_management.texts import (
    NOTES_TOOL,
    NOTICE_STORAGE_FAILED,
    STATUS_REOPEN,
)

START = "background_notes:background_notes:idle:reply_end:1"


def _starts(w: object) -> int:
    return fired(w).count(START)  # type: ignore[arg-type]


def test_m37_background_notes_run_at_reply_ends_independently_of_compaction() -> None:
    # Given compaction disabled in Pi's settings and a long reply
    w = play(world(automatic_compaction=False), T(chars=12_000))
    # Then a background job started at the reply end and committed notes
    assert _starts(w) == 1 and customs(w, NOTES_TYPE)[-1]["origin"] == "background"


def test_m38_no_job_below_the_threshold_or_inside_a_cooldown() -> None:
    # Given a short reply (below min(16384, 10 % of W) bytes of new source)
    w = play(world(), P(chars=2_000), S)
    assert _starts(w) == 0
    # When a long one follows, commits, and another long one ends within 60 s
    play(w, T(chars=12_000), T(chars=12_000))
    # Then only the first started; after 60 s the next reply end starts one
    assert _starts(w) == 1
    play(w, wait(1.1), P(chars=200), S)
    assert _starts(w) == 2


def test_m38_an_unreconciled_native_summary_defers_background_notes() -> None:
    # Given a native compaction after the coverage position
    w = play(world(), P(chars=4_000), S, P(chars=20_000), S, cm.Generate(reply="invalid_shape"))
    play(w, shared.Compact(), P(chars=200), S)
    assert state(w).branch.unreconciled_native is not None
    # When a long reply ends / Then no background job starts (the compaction path reconciles)
    before = _starts(w)
    play(w, wait(1.1), P(chars=12_000), S)
    assert _starts(w) == before


def _source(i: int, size: int, calls: tuple[str, ...] = (), answers: str | None = None) -> Source:
    return Source(
        id=f"s{i}",
        role="assistant" if calls else "tool" if answers else "user",
        time="t",
        text="x" * size,
        tool_calls=calls,
        tool_call_id=answers,
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40_000), st.booleans()), min_size=1, max_size=20))
def test_m39_the_prefix_never_separates_a_call_from_its_result(
    shape: list[tuple[int, bool]],
) -> None:
    # Given sources where some assistant messages call a tool answered by the next source
    sources: list[Source] = []
    for i, (size, calls) in enumerate(shape):
        if calls:
            sources += [
                _source(2 * i, size, calls=(f"c{i}",)),
                _source(2 * i + 1, 10, answers=f"c{i}"),
            ]
        else:
            sources.append(_source(2 * i, size))
    prefix = closed_prefix(sources, BG_SELECT_BYTES)
    # Then the prefix is closed, starts at the first source and is about 64 KiB
    open_calls = {c for s in prefix for c in s.tool_calls} - {s.tool_call_id for s in prefix}
    assert not open_calls and prefix == sources[: len(prefix)]
    assert prefix  # at least the first closed unit
    if len(prefix) > 2:
        assert sum(s.size for s in prefix[:-2]) <= BG_SELECT_BYTES


def test_m40_the_job_is_asynchronous_capped_and_advances_coverage() -> None:
    # Given a job started at a reply end
    w = play(world(), P(chars=12_000), S)
    assert machine(w, "background_notes") == "running"
    # When the foreground continues before the reply arrives
    play(w, P(chars=200), S, D)
    # Then the job committed on its own, with ≤ 4 requests, and coverage moved to its end
    requests = [r for r in w.generator.requests if r.kind == "background"]
    assert 1 <= len(requests) <= 4
    data = customs(w, NOTES_TYPE)[-1]
    assert (
        data["origin"] == "background"
        and data["notesThroughEntryId"] == state(w).branch.notes_through
    )


@pytest.mark.parametrize(
    ("cause", "actions", "transition"),
    [
        ("a note write", tool(tool="notes_update"), "running:cancel:1"),
        ("/ctx-memory cancel", (C(args="cancel"),), "running:cancel:1"),
        ("navigation", (cm.NavigateTo(mark="first_user"),), "running:cancel:1"),
        ("a compaction", (P(chars=20_000), S, shared.Compact()), "running:cancel:1"),
        ("a reload", (shared.Reload(),), "running:shutdown:1"),
    ],
)
def test_m41_a_running_job_is_cancelled_by(
    cause: str, actions: tuple[object, ...], transition: str
) -> None:
    # Given a running job
    w = play(world(), P(chars=12_000), S)
    assert machine(w, "background_notes") == "running"
    # When <cause> happens / Then the job ends, nothing of it is saved
    play(w, *actions)
    assert f"background_notes:background_notes:{transition}" in fired(w), cause
    assert not [d for d in customs(w, NOTES_TYPE) if d["origin"] == "background"]


def test_m41_foreground_abort_cancels_background_notes_job() -> None:
    # Given a background job running while the user starts another run
    w = play(world(), P(chars=12_000), S)
    assert machine(w, "background_notes") == "running"
    # When the user aborts that foreground run, and the job's reply would arrive later
    play(w, P(chars=200), shared.AdvanceTo(step="turn_start"), shared.Abort(), S, D)
    # Then the foreground's abort cancelled the job, the aborted run's settle started none
    # (it is no reply end), and nothing of the job was saved
    assert "background_notes:background_notes:running:cancel:1" in fired(w)
    assert _starts(w) == 1
    assert machine(w, "background_notes") == "idle"
    assert not [d for d in customs(w, NOTES_TYPE) if d["origin"] == "background"]


def test_m42_a_job_whose_model_changed_is_discarded() -> None:
    # Given a running job and a model switch before its reply
    w = play(world(), P(chars=12_000), S, cm.SwitchModel(index=1), D)
    # Then it is discarded at commit, nothing saved
    assert "background_notes:background_notes:running:succeeded:2" in fired(w)
    assert not customs(w, NOTES_TYPE)


def test_m43_two_tries_per_key_for_transient_failures() -> None:
    # Given a full ≈64 KiB prefix (so later replies do not change it) that keeps failing
    w = play(world(), *(cm.Generate(reply="failing"),) * 3)
    play(w, P(chars=70_000), S, D, wait(1.1), P(chars=200), S, D, wait(1.1), P(chars=200), S, D)
    # Then the same key was tried twice, then never again
    assert _starts(w) == 2


def test_m43_a_capacity_failure_blocks_the_key_at_once() -> None:
    w = play(
        world(), cm.Generate(reply="stubborn"), P(chars=70_000), S, D, wait(1.1), P(chars=200), S
    )
    assert _starts(w) == 1 and state(w).background.blocked


def test_m44_a_disk_failure_is_explicit_and_asks_to_reopen() -> None:
    # Given a job whose commit cannot be written
    w = play(world(), P(chars=12_000), S, cm.FailDisk(on=True), D)
    # Then the user is told, the status bar asks to reopen, and nothing was saved
    assert NOTICE_STORAGE_FAILED in notices(w) and w.extension.status == STATUS_REOPEN
    assert not customs(w, NOTES_TYPE)
    # When the disk works again / Then writes stay refused until the session is reopened
    play(w, cm.FailDisk(on=False), *tool(tool="notes_update"))
    assert tool_payloads(w, NOTES_TOOL)[-1]["error"] == "storage_failed"
    play(w, shared.Reload(), *tool(tool="notes_update"))
    assert tool_payloads(w, NOTES_TOOL)[-1]["ok"] is True
