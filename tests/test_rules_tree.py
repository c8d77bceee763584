"""Lifecycle §14 through the runtime: branch summaries across a reset window (R75)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import Kit, audits_verify  # noqa: F401

from pictx_fsm.extensions.pi_context.texts import MARKER_TYPE, NOTICE_TREE_SUMMARY_SKIPPED
from pictx_fsm.host.effects import Notify, TreeSummaryResult

SKIPPED = Notify(message=NOTICE_TREE_SUMMARY_SKIPPED, level="info")


def _two_branches(*, marker_here: bool, marker_there: bool) -> tuple[Kit, str]:
    """A fork point with two branches; the leaf is on the first, the second's tip returned."""
    kit = Kit.create()
    kit.start()
    fork = kit.build.user("question")
    if marker_there:
        kit.build.marker("pcw:12345678:7e7e7e7e")
    there = kit.build.assistant("branch two")
    kit.tree.navigate(fork)
    if marker_here:
        kit.build.marker("pcw:12345678:5a5a5a5a")
    kit.build.assistant("branch one")
    return kit, there


@settings(max_examples=30, deadline=None)
@given(wants=st.booleans(), here=st.booleans(), there=st.booleans(), enabled=st.booleans())
def test_r75_summary_is_skipped_iff_wanted_and_a_marker_is_on_either_branch(
    wants: bool, here: bool, there: bool, enabled: bool
) -> None:
    # Given markers on the current and/or destination branch, pi-context on or off
    kit, target = _two_branches(marker_here=here, marker_there=there)
    if not enabled:
        kit.toggle("off")
    kit.take_notices()
    # When the user navigates asking (or not) for a summary
    result = kit.before_tree(target, wants_summary=wants)
    # Then an empty summary bypasses Pi's summarizer, with one info notice, iff suppressed
    suppressed = wants and (here or there)
    assert (result.value == TreeSummaryResult(summary="")) is suppressed
    assert result.notices == ((SKIPPED,) if suppressed else ())
    if not suppressed:
        assert result.value is None


def test_r75_the_result_is_the_empty_summary_and_nothing_is_written() -> None:
    kit, target = _two_branches(marker_here=True, marker_there=False)
    entries = len(kit.tree.entries)
    result = kit.before_tree(target)
    assert result.value is not None and result.value.to_json() == {"summary": {"summary": ""}}
    assert [type(e).__name__ for e in result.effects] == ["Notify"]
    assert len(kit.tree.entries) == entries


def test_r75_an_invalid_marker_on_the_destination_does_not_count() -> None:
    kit, _ = _two_branches(marker_here=False, marker_there=False)
    kit.build.add("custom", customType=MARKER_TYPE, data={"windowId": ""})
    target = kit.build.assistant("tip")
    kit.tree.navigate(kit.tree.branch()[1].id)
    assert kit.before_tree(target).value is None


def test_r75_an_unknown_destination_counts_as_no_marker() -> None:
    kit, _ = _two_branches(marker_here=False, marker_there=False)
    assert kit.before_tree("ffffffff").value is None
