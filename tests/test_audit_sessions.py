"""The session audit (``pictx_fsm.conformance``): each finding kind against its rule, on
every branch, once; the fixtures in ``tests/fixtures/audit``; generated histories."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_builders import SessionBuilder, header

from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import Finding, audit_file, audit_tree
from pictx_fsm.conformance.findings import OUT_OF_BAND_FORK
from pictx_fsm.extensions.pi_context.adapter import LifecycleExtension
from pictx_fsm.extensions.pi_context.conformance import kinds as K
from pictx_fsm.extensions.pi_context.conformance.storms import EPISODE_GAP_SECONDS, is_empty_summary
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import (
    CONTINUATION_0_24,
    CONTINUATION_0_25_1,
    GUIDANCE_TYPE,
    WARNING_CONTENT,
    WARNING_TYPE,
    Profile,
    guidance_content,
)
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.hosts.model import (
    Call,
    ModelSession,
    Overflow,
    Response,
    ScriptedProvider,
    Text,
    Tools,
)
from pictx_fsm.session.problems import Severity
from pictx_fsm.session.tree import SessionTree

FIXTURES = Path(__file__).parent / "fixtures" / "audit"
ROOT = "pcw:01a22a68:root"
W1, W2, W3 = "pcw:01a22a68:11111111", "pcw:01a22a68:22222222", "pcw:01a22a68:33333333"
OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum"
BOTH = (Profile.V0_25_0, Profile.V0_25_1)


class History(SessionBuilder):
    """Pi-shaped histories with pi-context resets (0.25.1 texts)."""

    def __init__(self, tree: SessionTree | None = None) -> None:
        super().__init__(tree=tree)
        self.calls = 0

    def start(self) -> History:
        self.add("model_change", provider="faux", modelId="faux-1")
        self.user("start")
        self.boot(ROOT)
        self.assistant("hello")
        return self

    def turn(self, text: str = "next") -> str:
        self.user(text)
        return self.assistant(f"done: {text}")

    def call(self, *names: str) -> tuple[str, list[str]]:
        ids = []
        for _ in names:
            self.calls += 1
            ids.append(f"call_{self.calls}")
        calls = [
            {"name": name, "id": cid, "arguments": {}} for name, cid in zip(names, ids, strict=True)
        ]
        content = [{"type": "text", "text": "calling"}, *[{"type": "toolCall", **c} for c in calls]]
        usage = {"input": 90, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 100}
        entry_id = self.message("assistant", content=content, usage=usage, stopReason="toolUse")
        return entry_id, ids

    def result(self, call_id: str, name: str = "echo") -> str:
        return self.message(
            "toolResult",
            toolCallId=call_id,
            toolName=name,
            content=[{"type": "text", "text": "ok"}],
            isError=False,
        )

    def tools(self, *names: str) -> str:
        _, ids = self.call(*names)
        last = ""
        for call_id, name in zip(ids, names, strict=True):
            last = self.result(call_id, name)
        return last

    def cont(self) -> str:
        return self.continuation(CONTINUATION_0_25_1)

    def reset(self, window: str, *, continuation: bool = True) -> str:
        self.marker(window)
        last = self.boot(window)
        return self.cont() if continuation else last

    def overflow(self) -> str:
        return self.assistant("", stop="error", errorMessage=OVERFLOW)

    def guidance(self) -> str:
        return self.custom_message(GUIDANCE_TYPE, guidance_content(30000))

    def warning(self) -> str:
        return self.custom_message(WARNING_TYPE, WARNING_CONTENT)

    def wait(self, seconds: int) -> None:
        """Advance the builder's clock (one second per entry otherwise)."""
        self._serial += seconds

    def at(self, entry_id: str) -> History:
        self.tree.navigate(entry_id)
        return self


def kinds(findings: list[Finding]) -> list[str]:
    return sorted(f.name for f in findings)


def defects(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.is_defect]


def audit(history: History, profile: Profile = Profile.V0_25_1) -> list[Finding]:
    return audit_tree(history.tree, session_checks(profile))


# --------------------------------------------------------------------------------------------
# The fixtures: one per finding kind


FIXTURE_FILES = sorted(FIXTURES.glob("*.jsonl"))
PROFILE_0_25_1_ONLY = {"continuation_missing", "tail_incomplete", "text_mismatch"}


def test_there_is_a_fixture_for_every_finding_kind_and_a_clean_one() -> None:
    # Given the fixture folder
    names = {path.stem for path in FIXTURE_FILES}
    # Then every kind has its file, and so does the clean session
    assert names == {kind.name for kind in session_checks().catalogue} | {"clean"}


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_each_fixture_produces_exactly_its_finding(path: Path) -> None:
    # Given a fixture named after a finding kind (or "clean")
    # When it is audited in the default profile
    report = audit_file(path, session_checks())
    # Then it yields that kind once and nothing else (a glued boundary needs its glued line)
    expected = {
        "clean": [],
        "structure": ["structure/dangling_parent"],
        "boundary_on_damaged_line": ["boundary_on_damaged_line", "structure/glued_objects"],
    }.get(path.stem, [path.stem])
    assert kinds(list(report.findings)) == expected
    assert report.exit_code == (0 if all(not f.is_defect for f in report.findings) else 1)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_profile_0_25_0_relaxes_only_continuation_and_text_rules(path: Path) -> None:
    # Given every fixture
    # When it is audited as written by pi-context 0.25.0
    report = audit_file(path, session_checks(Profile.V0_25_0))
    # Then the 0.25.1-only kinds vanish (§2.4, R59) and every other fixture is unchanged
    if path.stem in PROFILE_0_25_1_ONLY:
        assert report.findings == ()
    else:
        assert kinds(list(report.findings)) == kinds(
            list(audit_file(path, session_checks()).findings)
        )


def test_every_kind_names_a_rule_or_failure_mode_and_has_its_own_name() -> None:
    catalogue = session_checks().catalogue
    for kind in catalogue:
        assert kind.rule.startswith(("R", "D", "FM", "M", "pi-host")), kind
    assert len({kind.name for kind in catalogue}) == len(catalogue)


def test_findings_carry_entry_ids_and_source_lines() -> None:
    # Given the tail_interrupted fixture (a user message at line 10 between marker and boot)
    report = audit_file(FIXTURES / "tail_interrupted.jsonl", session_checks())
    # Then the finding names the intruder and the boot with their lines
    [finding] = report.findings
    assert [(ref.id, ref.line) for ref in finding.entries] == [("a0000009", 10), ("a000000a", 11)]
    assert (finding.line, finding.severity, finding.rule) == (10, Severity.ERROR, "D4")


# --------------------------------------------------------------------------------------------
# The reset tail (R2, R3, R65, D1–D4)


def test_d1_a_complete_running_reset_is_clean_in_both_profiles() -> None:
    # Given a wipe_memory tool batch followed by marker, boot and continuation, then a turn
    h = History().start()
    h.tools("wipe_memory")
    h.reset(W1)
    h.assistant("back")
    # Then neither profile finds anything
    for profile in BOTH:
        assert audit(h, profile) == []


def test_r59_a_0_25_0_wipe_without_continuation_is_clean_only_in_0_25_0() -> None:
    # Given /wipe-memory as 0.25.0 writes it: marker and boot, then the user's next prompt
    h = History().start()
    h.reset(W1, continuation=False)
    h.turn("after the wipe")
    # Then 0.25.0 accepts it and 0.25.1 misses the continuation (D2)
    assert audit(h, Profile.V0_25_0) == []
    assert kinds(audit(h)) == ["continuation_missing"]


def test_d4_a_branch_ending_after_the_marker_is_repairable_not_broken() -> None:
    # Given a branch that ends right after a marker and some metadata
    h = History().start()
    h.marker(W1)
    h.custom("note", {"x": 1})
    # Then the tail is incomplete (a warning), in both profiles
    for profile in BOTH:
        [finding] = audit(h, profile)
        assert (finding.kind, finding.severity) == (K.TAIL_INCOMPLETE, Severity.WARNING)


def test_r68_a_second_marker_before_the_boot_means_the_window_never_booted() -> None:
    # Given two markers in a row, the first without its boot
    h = History().start()
    h.marker(W1)
    h.reset(W2)
    h.turn()
    # Then the first window's boot is missing (R65 refuses repair after a later marker)
    found = audit(h)
    assert kinds(found) == ["boot_missing"]
    assert found[0].entries[0].id == h.tree.branch()[4].id


def test_d4_a_continuation_whose_boot_never_comes_is_reported_with_the_missing_boot() -> None:
    # Given a marker, a continuation and then conversation, without a boot
    h = History().start()
    h.marker(W1)
    h.cont()
    h.turn()
    # Then both the orphan continuation and the missing boot are reported
    assert kinds(audit(h)) == ["boot_missing", "continuation_without_boot"]


def test_r69_a_second_root_boot_is_only_a_warning() -> None:
    # Given two boots for the root window
    h = History().start()
    h.boot(ROOT)
    h.turn()
    # Then it is a duplicate boot, tolerated by the root projection: a warning
    [finding] = audit(h)
    assert (finding.kind, finding.severity) == (K.DUPLICATE_BOOT, Severity.WARNING)


def test_r8_a_marker_with_an_empty_window_id_opens_no_window() -> None:
    # Given a marker-typed entry with an empty id, then ordinary conversation
    h = History().start()
    h.custom("pi-context/reset-marker", {"windowId": ""})
    h.turn()
    # Then only the invalid marker is reported: no tail is expected after it
    assert kinds(audit(h)) == ["invalid_marker"]


# --------------------------------------------------------------------------------------------
# Every branch, once


def test_a_defect_on_an_abandoned_sibling_branch_is_found() -> None:
    # Given a clean active branch and an abandoned sibling whose reset lost its boot
    h = History().start()
    fork = h.tools("wipe_memory")
    h.marker(W1)
    h.turn("conversation without a boot")
    h.at(fork).reset(W2)
    h.assistant("the active branch is fine")
    # Then the sibling's missing boot is reported although the leaf is elsewhere
    [finding] = audit(h)
    assert finding.kind is K.BOOT_MISSING
    assert finding.entries[0].id not in {e.id for e in h.tree.branch()}


def test_a_defect_shared_by_several_branches_is_reported_once() -> None:
    # Given a tail interrupted before a fork point, and three branches below it
    h = History().start()
    h.marker(W1)
    h.user("too early")
    h.boot(W1)
    shared = h.cont()
    for text in ("a", "b", "c"):
        h.at(shared).turn(text)
    # Then the interruption is one finding
    assert kinds(audit(h)) == ["tail_interrupted"]


def test_window_end_findings_of_sibling_leaves_are_deduplicated_by_marker() -> None:
    # Given a marker whose boot never comes, and two branches of conversation below it
    h = History().start()
    marker = h.marker(W1)
    h.turn("a")
    h.at(marker).turn("b")
    # Then the missing boot is reported once, at the marker
    found = audit(h)
    assert kinds(found) == ["boot_missing"]
    assert found[0].entries[0].id == marker


# --------------------------------------------------------------------------------------------
# Window identity (R12, R14, R66)


def test_r66_a_copied_root_boot_followed_by_the_new_root_boot_is_explained() -> None:
    # Given a root boot of another session, then this session's own root boot (ensureBoot
    # after a fork), and no parentSession in the header
    h = History()
    h.user("start")
    h.boot("pcw:9f86d081:root")
    h.assistant("copied")
    h.boot(ROOT)
    h.turn()
    # Then it is an inherited root boot, info only
    [finding] = audit(h)
    assert (finding.kind, finding.severity) == (K.INHERITED_ROOT_BOOT, Severity.INFO)


def test_r66_a_foreign_root_boot_without_fork_evidence_is_stray() -> None:
    # Given a root boot of another session, no parentSession, no own root boot after it
    h = History()
    h.user("start")
    h.boot("pcw:9f86d081:root")
    h.turn()
    # Then it is stray
    assert kinds(audit(h)) == ["stray_boot"]


def test_r14_a_boot_for_the_root_inside_a_reset_window_is_in_the_wrong_window() -> None:
    h = History().start()
    h.reset(W1)
    h.assistant("back")
    h.boot(ROOT)
    assert kinds(audit(h)) == ["boot_wrong_window"]


def test_r14_a_boot_before_its_marker_is_stray() -> None:
    # Given a boot for W1 written before W1's marker (then a proper reset to W1)
    h = History().start()
    h.boot(W1)
    h.reset(W1)
    h.assistant("back")
    # Then the early boot matches no marker before it
    found = audit(h)
    assert kinds(found) == ["stray_boot"]


# --------------------------------------------------------------------------------------------
# Turns and budget (R30, R51, R56)


def test_r30_two_wipe_memory_commands_in_a_row_then_a_prompt_are_not_one_turn() -> None:
    # Given two /wipe-memory resets while idle, then the user's next prompt
    h = History().start()
    h.reset(W1)
    h.reset(W2)
    h.turn("prompt after two wipes")
    # Then no reset-per-turn finding
    assert audit(h) == []


def test_r56_a_sibling_branch_may_receive_its_own_guidance() -> None:
    # Given guidance on one branch and, on a sibling branch of the same window, guidance again
    h = History().start()
    fork = h.turn("fork point")
    h.guidance()
    h.turn("a")
    h.at(fork).guidance()
    h.turn("b")
    # Then nothing is repeated: each branch has it once
    assert audit(h) == []


def test_r51_guidance_after_the_warning_of_the_window_is_reported() -> None:
    h = History().start()
    h.warning()
    h.turn()
    h.guidance()
    h.turn()
    [finding] = audit(h)
    assert (finding.kind, finding.rule) == (K.BUDGET_MESSAGE_REPEATED, "R51")


def test_r56_each_window_may_have_its_own_warning() -> None:
    h = History().start()
    h.warning()
    h.tools("wipe_memory")
    h.reset(W1)
    h.assistant("back")
    h.warning()
    h.turn()
    assert audit(h) == []


# --------------------------------------------------------------------------------------------
# Native boundaries, legacy resets (R6, R62, R75)


def test_r62_compaction_on_an_unmarked_branch_is_native_behaviour() -> None:
    h = History().start()
    h.turn()
    h.compaction("## Goal\nFix the parser.")
    h.turn()
    assert audit(h) == []


def test_r75_an_empty_branch_summary_across_a_reset_is_a_warning() -> None:
    # Given a reset window and a navigation with an empty summary inside it
    h = History().start()
    h.reset(W1)
    target = h.assistant("back")
    old = h.turn()
    h.at(target).branch_summary("", from_id=old)
    h.turn("on the new branch")
    # Then it is reported, as a warning (Pi writes no entry for an empty summary)
    [finding] = audit(h)
    assert (finding.kind, finding.severity) == (K.BRANCH_SUMMARY_ACROSS_RESET, Severity.WARNING)


def test_r75_a_summary_of_a_marked_branch_landing_on_an_unmarked_one_is_reported() -> None:
    # Given a branch that reset, and a navigation back before the reset with a summary
    h = History().start()
    before = h.turn()
    h.tools("wipe_memory")
    h.reset(W1)
    old = h.assistant("in the new window")
    h.at(before).branch_summary("The user reset and continued.", from_id=old)
    h.turn()
    # Then the summary carries erased history across the reset
    [finding] = audit(h)
    assert (finding.kind, finding.severity) == (K.BRANCH_SUMMARY_ACROSS_RESET, Severity.ERROR)


def test_r8_a_legacy_reset_v2_compaction_is_neither_a_marker_nor_a_native_compaction() -> None:
    # Given a reset-v2 compaction followed by conversation, and later a real reset
    h = History().start()
    h.add(
        "compaction",
        summary="<context_window>old</context_window>",
        firstKeptEntryId="00000000",
        tokensBefore=1000,
        details={"piContext": "reset-v2", "windowId": "pcw:01a22a68:c0ffee00"},
    )
    h.turn()
    h.tools("wipe_memory")
    h.reset(W1)
    h.assistant("back")
    # Then only the legacy note, no tail and no native-compaction finding
    assert kinds(audit(h)) == ["legacy_reset_compaction"]


# --------------------------------------------------------------------------------------------
# Tool pairs and out-of-band forks (FM19)


def test_fm19_results_in_any_order_with_foreign_custom_entries_between_are_fine() -> None:
    # Given two calls answered in reverse order with an extension's custom entry between
    h = History().start()
    _, (first, second) = h.call("echo", "echo")
    h.result(second)
    h.custom("openclaw:prompt-error", {"error": "aborted"})
    h.result(first)
    h.assistant("done")
    assert audit(h) == []


def test_fm19_a_boundary_after_all_results_is_fine_and_one_between_them_is_not() -> None:
    # Given a batch of two calls with a continuation after the first result
    h = History().start()
    call, (first, second) = h.call("echo", "echo")
    h.result(first)
    h.cont()
    h.result(second)
    h.assistant("done")
    # Then the continuation splits the pair (and has no boot: it is in the root window)
    found = audit(h)
    assert kinds(found) == ["boundary_splits_tool_pair", "continuation_without_boot"]
    split = next(f for f in found if f.kind is K.BOUNDARY_SPLITS_TOOL_PAIR)
    assert split.entries[1].id == call


def test_fm19_a_user_branch_from_a_tool_call_that_goes_on_is_not_out_of_band() -> None:
    # Given a navigation to a toolUse message and a new prompt from there that is answered
    h = History().start()
    call, (call_id,) = h.call("echo")
    h.result(call_id)
    h.assistant("done")
    h.at(call).turn("a new direction")
    # Then no out-of-band fork: the sibling is not an abandoned leaf
    assert audit(h) == []


def test_fm19_a_mirror_message_left_as_a_leaf_beside_the_results_is_out_of_band() -> None:
    h = History().start()
    call, (call_id,) = h.call("message")
    mirror = h.assistant("mirrored delivery", model="delivery-mirror")
    h.at(call).result(call_id, "message")
    h.assistant("sent")
    [finding] = audit(h)
    assert finding.kind is OUT_OF_BAND_FORK
    assert [ref.id for ref in finding.entries] == [mirror, call]


# --------------------------------------------------------------------------------------------
# Overflow storms (FM1, FM5)


def overflow_recovery(h: History, tokens: int) -> str:
    h.overflow()
    h.edit(h.tree.leaf_id or "")
    return h.add(
        "compaction",
        summary="## Goal\nKeep going.",
        firstKeptEntryId="00000000",
        tokensBefore=tokens,
    )


def test_fm1_one_recovery_that_fails_again_is_pi_behaviour_not_a_storm() -> None:
    # Given the e2 trace's shape: overflow, recovery, the retry overflows, the run settles
    h = History().start()
    h.user("big")
    overflow_recovery(h, 50000)
    h.overflow()
    # Then nothing (one compact-and-retry per overflow)
    assert audit(h) == []


def test_fm1_two_recoveries_without_a_reply_are_a_storm() -> None:
    h = History().start()
    h.user("big")
    overflow_recovery(h, 50000)
    overflow_recovery(h, 40000)
    h.assistant("finally")
    [finding] = audit(h)
    assert finding.kind is K.OVERFLOW_STORM
    assert "2 overflow errors and 2 recoveries" in finding.message


def test_fm1_a_manual_compaction_after_an_overflow_is_not_a_recovery() -> None:
    # Given an overflow, a later user prompt and a manual compaction (not right after the
    # overflow), then another overflow and its recovery
    h = History().start()
    h.user("big")
    h.overflow()
    h.user("please compact")
    h.compaction("## Goal\nManual.")
    h.user("again")
    overflow_recovery(h, 40000)
    h.assistant("ok")
    # Then a single recovery: no storm
    assert audit(h) == []


def test_fm1_recoveries_further_apart_than_the_episode_gap_are_repeated_not_a_storm() -> None:
    # Given two recoveries with no reply between them but an hour apart
    h = History().start()
    h.user("big")
    overflow_recovery(h, 50000)
    h.wait(int(EPISODE_GAP_SECONDS) + 60)
    overflow_recovery(h, 40000)
    h.assistant("ok")
    # Then they are separate episodes: a repeated recovery, not a storm
    assert kinds(audit(h)) == ["repeated_overflow_recovery"]


def test_fm1_a_recovery_compaction_that_does_not_shrink_is_ineffective() -> None:
    h = History().start()
    h.user("big")
    overflow_recovery(h, 50000)
    overflow_recovery(h, 50000)
    h.assistant("ok")
    assert kinds(audit(h)) == ["ineffective_compaction", "overflow_storm"]


def test_fm1_pi_context_resets_count_as_recoveries_too() -> None:
    # Given overflow → reset → overflow → reset with no successful reply
    h = History().start()
    h.user("big")
    h.overflow()
    h.reset(W1)
    h.overflow()
    h.reset(W2)
    h.overflow()
    # Then a storm
    assert kinds(audit(h)) == ["overflow_storm"]


@pytest.mark.parametrize(
    ("summary", "empty"),
    [
        ("", True),
        ("  \n", True),
        (
            "## Goal\n(none)\n## Done\n- (none)\n## Blocked\n- (none)\n## Risks\n- (none)\n"
            "## Next\n1. Await input",
            True,
        ),
        ("## Goal\n(none)\n## Done\n- (none)\n## Next\n1. Await input", False),
        ("## Goal\nFix the parser\n\n## Progress\n- (none)", False),
        ("SUMMARY", False),
        ("## Goal\nN/A\n## Done\n- none\n## Blocked\n- -", True),
    ],
)
def test_fm1_empty_template_summaries(summary: str, empty: bool) -> None:
    assert is_empty_summary(summary) is empty


# --------------------------------------------------------------------------------------------
# Texts and shapes (R1–R7, D1)


def test_d1_text_checks_apply_only_in_0_25_1() -> None:
    h = History().start()
    h.tools("wipe_memory")
    h.marker(W1)
    h.boot(W1, text="You wake up.\n<context_window>\n</context_window>")
    h.continuation(CONTINUATION_0_24)
    h.assistant("back")
    assert kinds(audit(h)) == ["text_mismatch", "text_mismatch"]
    assert audit(h, Profile.V0_25_0) == []


def test_r3_a_continuation_with_details_has_the_wrong_shape() -> None:
    h = History().start()
    h.tools("wipe_memory")
    h.marker(W1)
    h.boot(W1)
    h.custom_message("pi-context/continuation", CONTINUATION_0_25_1, details={"x": 1})
    h.assistant("back")
    [finding] = audit(h)
    assert (finding.kind, finding.rule) == (K.ENTRY_SHAPE, "R3")


# --------------------------------------------------------------------------------------------
# Generated histories


Step = Callable[[History, Profile, list[str]], None]


def _text_turn(h: History, profile: Profile, windows: list[str]) -> None:
    h.turn()


def _tool_turn(h: History, profile: Profile, windows: list[str]) -> None:
    h.tools("echo", "read")
    h.assistant("read both")


def _running_reset(h: History, profile: Profile, windows: list[str]) -> None:
    h.tools("wipe_memory", "wipe_memory")  # R30: two calls, one reset
    h.reset(_mint(windows))
    h.assistant("continuing in the new window")


def _wipe_command(h: History, profile: Profile, windows: list[str]) -> None:
    h.reset(_mint(windows), continuation=profile.wipe_sends_continuation)
    h.turn("prompt after the wipe")


def _budget(h: History, profile: Profile, windows: list[str]) -> None:
    node = h.tree.leaf
    seen = WindowIndex.of(h.tree).at(node).message_types if node is not None else frozenset()
    if WARNING_TYPE in seen:
        return
    h.warning() if GUIDANCE_TYPE in seen else h.guidance()
    h.turn("after the reminder")


def _overflow_recovered(h: History, profile: Profile, windows: list[str]) -> None:
    h.user("a big request")
    h.overflow()
    h.reset(_mint(windows))
    h.assistant("recovered")


def _branch(h: History, profile: Profile, windows: list[str]) -> None:
    assistants = [e.id for e in h.tree.branch() if getattr(e, "message", None) is not None]
    target = assistants[len(assistants) // 2]
    assert target is not None
    h.at(target).turn("another direction")


def _mint(windows: list[str]) -> str:
    window = f"pcw:01a22a68:{len(windows) + 1:08x}"
    windows.append(window)
    return window


CLEAN_STEPS: tuple[Step, ...] = (
    _text_turn,
    _tool_turn,
    _running_reset,
    _wipe_command,
    _budget,
    _overflow_recovered,
    _branch,
)


def clean_history(steps: list[int], profile: Profile) -> History:
    h = History().start()
    windows: list[str] = []
    for index in steps:
        CLEAN_STEPS[index](h, profile, windows)
    return h


steps_lists = st.lists(st.integers(min_value=0, max_value=len(CLEAN_STEPS) - 1), max_size=25)


@settings(max_examples=150, deadline=None)
@given(steps=steps_lists, profile=st.sampled_from(BOTH))
def test_a_generated_clean_reset_history_audits_clean(steps: list[int], profile: Profile) -> None:
    # Given any history of turns, tool batches, running resets, /wipe-memory commands,
    # once-per-window reminders, recovered overflows and tree branches, as pi-context writes it
    h = clean_history(steps, profile)
    # When it is audited in the profile that wrote it
    found = audit(h, profile)
    # Then there is nothing to report but, at most, the note that overflows recur
    assert {f.kind for f in found} <= {K.REPEATED_OVERFLOW_RECOVERY}
    assert defects(found) == []


BOUNDARIES: dict[str, Callable[[History], Any]] = {
    "marker": lambda h: h.marker(W3),
    "boot": lambda h: h.boot(ROOT),
    "continuation": lambda h: h.cont(),
    "compaction": lambda h: h.compaction("## Goal\nSomething."),
    "guidance": lambda h: h.guidance(),
}


@settings(max_examples=100, deadline=None)
@given(
    steps=steps_lists,
    batch=st.integers(min_value=1, max_value=3),
    answered=st.integers(min_value=0, max_value=2),
    boundary=st.sampled_from(sorted(BOUNDARIES)),
)
def test_fm19_a_boundary_inserted_between_a_tool_call_and_its_result_is_always_reported(
    steps: list[int], batch: int, answered: int, boundary: str
) -> None:
    # Given a clean history, then a tool batch with some of its results written
    h = clean_history(steps, Profile.V0_25_1)
    call, ids = h.call(*["echo"] * batch)
    for call_id in ids[: min(answered, batch - 1)]:
        h.result(call_id)
    # When a boundary entry is appended before the remaining results
    inserted = BOUNDARIES[boundary](h)
    for call_id in ids[min(answered, batch - 1) :]:
        h.result(call_id)
    h.assistant("done")
    # Then the split is reported at the inserted entry, naming the tool call
    splits = [f for f in audit(h) if f.kind is K.BOUNDARY_SPLITS_TOOL_PAIR]
    assert [[ref.id for ref in f.entries] for f in splits] == [[inserted, call]]


DEFECTS: tuple[Callable[[History], Any], ...] = (
    lambda h: h.marker(W3),
    lambda h: h.cont(),
    lambda h: h.boot("pcw:01a22a68:deadbeef"),
    lambda h: h.overflow(),
    lambda h: h.compaction("(none)"),
    lambda h: h.guidance(),
    lambda h: h.turn(),
)


@settings(max_examples=80, deadline=None)
@given(
    actions=st.lists(
        st.tuples(st.integers(0, len(DEFECTS) - 1), st.integers(0, 10_000)), max_size=30
    ),
    profile=st.sampled_from(BOTH),
)
def test_auditing_the_tree_equals_auditing_each_branch_alone(
    actions: list[tuple[int, int]], profile: Profile
) -> None:
    # Given a random tree of defects and conversation (each append under a random entry)
    h = History().start()
    for kind, position in actions:
        entries = [str(e.id) for e in h.tree.entries]
        h.at(entries[position % len(entries)])
        DEFECTS[kind](h)
    tree = h.tree
    # When the tree is audited, and each root→leaf branch is audited as a linear session
    whole = {
        f.key for f in audit_tree(tree, session_checks(profile)) if f.kind is not OUT_OF_BAND_FORK
    }
    per_branch: set[tuple[str, str, int | None]] = set()
    for leaf in tree.leaves():
        linear = tree.fork(leaf, header())
        per_branch |= {f.key for f in audit_tree(linear, session_checks(profile))}
    # Then the tree's findings are exactly the union of its branches' findings
    assert whole == per_branch


def test_audit_tree_reports_severities_from_the_kind_table() -> None:
    h = History().start()
    h.custom("pi-context/reset-marker", {"windowId": 7})
    [finding] = audit(h)
    assert finding.severity is K.INVALID_MARKER.severity
    assert defects([finding]) == [finding]


# --------------------------------------------------------------------------------------------
# Sessions written by the runtime on the model session


@pytest.mark.parametrize("profile", BOTH, ids=lambda p: p.value)
def test_a_session_produced_by_the_runtime_on_the_model_session_audits_clean(
    profile: Profile,
) -> None:
    # Given pi-context's runtime on the model session: a wipe_memory reset, a batch with two
    # wipe_memory calls, an overflow, /wipe-memory, a tree branch, a reload and a fork
    extension = LifecycleExtension(
        lambda tree: LifecycleRuntime(tree, rng=random.Random(1), profile=profile)
    )
    script: list[Response] = [
        Tools(calls=[Call(name="wipe_memory")]),
        Text(text="fresh start"),
        Tools(calls=[Call(name="echo"), Call(name="wipe_memory"), Call(name="wipe_memory")]),
        Text(text="after the parallel batch"),
        Overflow(),
        Text(text="recovered"),
    ]
    session = ModelSession([extension], provider=ScriptedProvider(script))
    for text in ("task", "more", "big"):
        session.prompt(text)
        session.run_until_idle()
    session.command("wipe-memory")
    session.prompt("after the wipe")
    session.run_until_idle()
    assistants = [e.id for e in session.entries if getattr(e, "message", None) is not None]
    session.navigate(str(assistants[len(assistants) // 2]))
    session.prompt("another branch")
    session.run_until_idle()
    session.reload()
    prompts = [
        e.id for e in session.entries if getattr(e, "message", None) and e.message.role == "user"
    ]
    session.fork(str(prompts[len(prompts) // 2]))  # Pi forks before a user message only
    session.prompt("in the fork")
    session.run_until_idle()
    # When every file of the model session is audited in the runtime's profile
    trees = [store.tree for store in session.files.values()]
    found = [f for tree in trees for f in audit_tree(tree, session_checks(profile))]
    # Then nothing is a defect (a fork's copied root boot is an info note)
    assert defects(found) == []
    assert {f.kind for f in found} <= {K.INHERITED_ROOT_BOOT}
    markers = sum(1 for tree in trees for e in tree.entries if "reset-marker" in str(e.to_json()))
    assert markers >= 3
