"""Boot-repair tail classification (``pictx_fsm.extensions.pi_context.repair``, R64–R65, D4): the
decision table,
and two properties over every tail — repair is idempotent and it is narrow."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import Kit, audits_verify  # noqa: F401

from pictx_fsm.extensions.pi_context.repair import (
    TailKind,
    TailVerdict,
    classify_tail,
    repaired_tail,
    tail_kind,
)
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE, CONTINUATION_TYPE, Profile
from pictx_fsm.host.effects import SendMessage
from pictx_fsm.session.entries import entry_from_json

K = TailKind
V = TailVerdict
W = "pcw:12345678:0e0e0e0e"
CONVERSATION = {K.MESSAGE, K.OTHER_CUSTOM_MESSAGE, K.SUMMARY, K.MARKER}
KINDS = st.lists(st.sampled_from(list(TailKind)), max_size=6)
PROFILES = st.sampled_from(list(Profile))


# -- tail_kind --------------------------------------------------------------------------------


def _entry(obj: dict[str, Any]) -> Any:
    base = {"id": "00000001", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z"}
    entry, problems = entry_from_json({**base, **obj})
    assert not problems
    return entry


@pytest.mark.parametrize(
    ("obj", "kind"),
    [
        ({"type": "custom_message", "customType": BOOT_TYPE, "content": "b", "display": False,
          "details": {"windowId": W}}, K.BOOT),
        ({"type": "custom_message", "customType": BOOT_TYPE, "content": "b", "display": False,
          "details": {"windowId": "pcw:12345678:other000"}}, K.OTHER_CUSTOM_MESSAGE),
        ({"type": "custom_message", "customType": CONTINUATION_TYPE, "content": "c",
          "display": False}, K.CONTINUATION),
        ({"type": "custom", "customType": "pi-context/reset-marker", "data": {"windowId": "x"}},
         K.MARKER),
        ({"type": "custom", "customType": "pi-context/reset-marker", "data": {"windowId": ""}},
         K.METADATA),
        ({"type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}},
         K.MESSAGE),
        ({"type": "custom_message", "customType": "other/x", "content": "o", "display": True},
         K.OTHER_CUSTOM_MESSAGE),
        ({"type": "compaction", "summary": "s", "firstKeptEntryId": "00000001",
          "tokensBefore": 1}, K.SUMMARY),
        ({"type": "branch_summary", "fromId": "root", "summary": "s"}, K.SUMMARY),
        ({"type": "model_change", "provider": "p", "modelId": "m"}, K.METADATA),
        ({"type": "thinking_level_change", "thinkingLevel": "off"}, K.METADATA),
        ({"type": "label", "targetId": "00000001", "label": "l"}, K.METADATA),
        ({"type": "context_edit", "targetId": "00000001", "replacement": None}, K.METADATA),
        ({"type": "custom", "customType": "other/state", "data": {}}, K.METADATA),
    ],
)  # fmt: skip
def test_tail_kind_reduces_each_entry_to_its_role(obj: dict[str, Any], kind: TailKind) -> None:
    assert tail_kind(_entry(obj), W) is kind


# -- the decision table ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kinds", "v0", "v1"),
    [
        ([], V.NEEDS_BOOT, V.NEEDS_BOTH),
        ([K.METADATA], V.NEEDS_BOOT, V.NEEDS_BOTH),
        ([K.BOOT], V.REFUSED, V.NEEDS_CONTINUATION),
        ([K.BOOT, K.METADATA, K.CONTINUATION], V.REFUSED, V.INTACT),
        ([K.CONTINUATION], V.REFUSED, V.REFUSED),
        ([K.CONTINUATION, K.BOOT], V.REFUSED, V.REFUSED),
        ([K.BOOT, K.BOOT], V.REFUSED, V.REFUSED),
        ([K.BOOT, K.CONTINUATION, K.CONTINUATION], V.REFUSED, V.REFUSED),
        ([K.BOOT, K.CONTINUATION, K.MARKER], V.REFUSED, V.REFUSED),
        ([K.MESSAGE], V.REFUSED, V.REFUSED),
        ([K.OTHER_CUSTOM_MESSAGE], V.REFUSED, V.REFUSED),
        ([K.SUMMARY], V.REFUSED, V.REFUSED),
    ],
)
def test_classify_tail_decision_table(
    kinds: list[TailKind], v0: TailVerdict, v1: TailVerdict
) -> None:
    # 0.25.0 (R65) judges the raw tail when no boot is visible; 0.25.1 (D4) always
    assert classify_tail(kinds, Profile.V0_25_0) is v0
    assert classify_tail(kinds, Profile.V0_25_1) is v1


@given(kinds=KINDS)
def test_0_25_0_a_visible_boot_ends_repair(kinds: list[TailKind]) -> None:
    # R64 step 2 precedes the tail rules in 0.25.0
    assert classify_tail(kinds, Profile.V0_25_0, boot_visible=True) is V.INTACT


# -- properties ---------------------------------------------------------------------------------


def _second_pass(kinds: list[TailKind], profile: Profile) -> TailVerdict:
    first = classify_tail(kinds, profile)
    # a boot the first pass appended is visible to Pi's projection (what 0.25.0 checks)
    return classify_tail(repaired_tail(kinds, first), profile, boot_visible=first.needs_boot)


@settings(max_examples=300)
@given(kinds=KINDS, profile=PROFILES)
def test_repair_is_idempotent(kinds: list[TailKind], profile: Profile) -> None:
    # Given any tail: after one repair, a second repair appends nothing
    second = _second_pass(kinds, profile)
    assert not (second.needs_boot or second.needs_continuation)
    # and refuses exactly what the first refused
    assert (second is V.REFUSED) == (classify_tail(kinds, profile) is V.REFUSED)


@settings(max_examples=300)
@given(kinds=KINDS, profile=PROFILES)
def test_repair_is_narrow(kinds: list[TailKind], profile: Profile) -> None:
    verdict = classify_tail(kinds, profile)
    appends = verdict.needs_boot or verdict.needs_continuation
    # Never after later conversation, a summary or another marker
    if CONVERSATION & set(kinds):
        assert not appends
    # Never a second boot or a second continuation
    if verdict.needs_boot:
        assert K.BOOT not in kinds
    if verdict.needs_continuation:
        assert K.CONTINUATION not in kinds
        assert kinds.count(K.BOOT) == 1 or verdict.needs_boot
    # 0.25.0 never writes a continuation (R3) and never completes a tail holding one
    if profile is Profile.V0_25_0:
        assert not verdict.needs_continuation
        assert not (appends and K.CONTINUATION in kinds)
    # What is appended, in order, is the suffix of boot → continuation that was missing
    added = repaired_tail(kinds, verdict)[len(kinds) :]
    assert added in ([], [K.BOOT], [K.CONTINUATION], [K.BOOT, K.CONTINUATION])


# -- end to end through the runtime -------------------------------------------------------------

_BUILD = {
    K.BOOT: lambda b: b.boot(W),
    K.CONTINUATION: lambda b: b.continuation(),
    K.MESSAGE: lambda b: b.user("later"),
    K.OTHER_CUSTOM_MESSAGE: lambda b: b.custom_message("other/x", "o"),
    K.SUMMARY: lambda b: b.branch_summary(),
    K.METADATA: lambda b: b.custom("other/state"),
}


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(sorted(_BUILD, key=lambda k: k.value)), max_size=5),
    profile=PROFILES,
)
def test_the_runtime_appends_what_the_classification_says_once(
    kinds: list[TailKind], profile: Profile
) -> None:
    # Given a marker followed by a tail of these kinds
    kit = Kit.create(profile=profile.value)
    kit.build.marker(W)
    for kind in kinds:
        _BUILD[kind](kit.build)
    expected = repaired_tail(kinds, classify_tail(kinds, profile))[len(kinds) :]
    # When the session starts, then reloads
    first = [e for e in kit.start().effects if isinstance(e, SendMessage)]
    second = [e for e in kit.start("reload").effects if isinstance(e, SendMessage)]
    # Then the first start sends what was missing (boot, then continuation) and the reload nothing
    names = {K.BOOT: BOOT_TYPE, K.CONTINUATION: CONTINUATION_TYPE}
    assert [s.custom_type for s in first] == [names[k] for k in expected]
    assert second == []


@settings(max_examples=300)
@given(kinds=KINDS, visible=st.booleans())
def test_d4_0_25_1_never_repairs_a_boot_alone(kinds: list[TailKind], visible: bool) -> None:
    # Given any tail under 0.25.1, where a continuation counts only after the window's boot
    # When repair classifies it
    verdict = classify_tail(kinds, Profile.V0_25_1, boot_visible=visible)
    # Then a missing boot always comes with a missing continuation: the 'needs boot' row of
    # boot_repair is 0.25.0's alone (models/pi_context/coverage-exemptions.toml, profile 0.25.1)
    assert verdict is not V.NEEDS_BOOT
