"""Lifecycle §9 through the runtime: settings and thresholds (R40–R46), usage of the active
window (R47–R50), guidance and warning staging, commit and notices (R51–R57)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import MODEL, WINDOW, Kit, audits_verify  # noqa: F401

from pictx_fsm.extensions.pi_context.runtime import pi_file_settings
from pictx_fsm.extensions.pi_context.texts import (
    GUIDANCE_TYPE,
    MARKER_TYPE,
    NOTICE_GUIDANCE_RECORDED,
    NOTICE_INVALID_MARGIN,
    NOTICE_WARNING_RECORDED,
    WARNING_CONTENT,
    WARNING_TYPE,
    guidance_content,
)
from pictx_fsm.extensions.pi_context.usage import window_tokens_of
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.host.effects import BoundaryResult, MessagesResult, Notify
from pictx_fsm.host.events import ContextUsage, ModelInfo
from pictx_fsm.host.settings import SettingsScopes, StaticSettingsSource
from pictx_fsm.session.estimate import TiktokenCounter
from pictx_fsm.session.tree import SessionTree

RESERVE, REMINDER, WARNING = 16_384, 40_960, 28_672


def _kit(remaining: int | None = None, **kw: Any) -> Kit:
    tokens = None if remaining is None else WINDOW - remaining
    kit = Kit.create(tokens=tokens, **kw)
    kit.start()
    kit.build.user("task")
    return kit


def _staged(kit: Kit, **ctx: Any) -> str | None:
    """Raise ``context`` then ``turn_end``; the reminder type committed, if any."""
    kit.context(**ctx)
    value = kit.turn_end("ok", **ctx).value
    if not isinstance(value, BoundaryResult):
        return None
    kinds = [d.custom_type for d in value.entries if d.custom_type in (GUIDANCE_TYPE, WARNING_TYPE)]  # type: ignore[union-attr]
    assert len(kinds) <= 1
    return kinds[0] if kinds else None


def _expected_stage(remaining: int, reminder: int = REMINDER, warning: int = WARNING) -> str | None:
    if remaining <= warning:
        return WARNING_TYPE
    if remaining <= reminder:
        return GUIDANCE_TYPE
    return None


@attrs.define
class CountingSource:
    """An injected settings manager that counts reads and can be changed between them."""

    settings: dict[str, Any]
    reads: int = 0

    def read(self) -> SettingsScopes:
        self.reads += 1
        return SettingsScopes(global_settings=self.settings, project_settings={})


class FailingSource:
    def read(self) -> SettingsScopes:
        raise RuntimeError("settings.json is a directory")


# -- R40 -----------------------------------------------------------------------------------------


def test_r40_an_injected_settings_manager_is_read_live_on_every_decision() -> None:
    # Given an injected manager
    source = CountingSource(settings={})
    kit = _kit(remaining=100_000, settings=source)
    reads = source.reads
    # When its reserve changes between two turns
    assert kit.turn_end("a").value is None
    source.settings = {"compaction": {"reserveTokens": 150_000}}
    # Then the very next decision uses it
    assert kit.turn_end("b").value is not None
    assert source.reads >= reads + 2


def test_r40_the_file_backed_policy_is_cached_until_a_transition(tmp_path: Path) -> None:
    # Given Pi's settings files read from ctx.cwd and the agent dir
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    (project / ".pi").mkdir(parents=True)
    (agent / "settings.json").write_text("{}")
    kit = Kit.create(tokens=WINDOW - 100_000, settings=pi_file_settings(agent))
    kit.ctx = attrs.evolve(kit.ctx, cwd=str(project), project_trusted=True)
    kit.start()
    kit.build.user("x")
    # When the global reserve changes on disk
    (agent / "settings.json").write_text(json.dumps({"compaction": {"reserveTokens": 150_000}}))
    # Then the cached policy still applies, until a transition (model_select) re-reads it
    assert kit.turn_end("a").value is None
    kit.model_select()
    assert kit.turn_end("b").value is not None


def test_r40_file_backed_project_settings_count_only_for_a_trusted_project(tmp_path: Path) -> None:
    # Given a project whose settings lower the reserve trigger (reserve 150000)
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text(
        json.dumps({"compaction": {"reserveTokens": 150_000}})
    )
    for trusted in (False, True):
        kit = Kit.create(tokens=WINDOW - 100_000, settings=pi_file_settings(agent))
        kit.ctx = attrs.evolve(kit.ctx, cwd=str(project), project_trusted=trusted)
        kit.start()
        # Then the project's reserve applies only when ctx says the project is trusted
        assert (kit.turn_end("x").value is not None) is trusted


# -- R41 -----------------------------------------------------------------------------------------


def test_r41_reserve_comes_from_compaction_reserve_tokens() -> None:
    # Given reserveTokens 50000 and usage leaving 45000
    kit = _kit(
        45_000,
        settings=StaticSettingsSource(global_settings={"compaction": {"reserveTokens": 50_000}}),
    )
    # Then the turn resets (45000 ≤ 50000)
    assert kit.turn_end("x").value is not None


def test_r41_a_model_override_wins_for_the_active_model_only() -> None:
    # Given a global reserve of 50000 overridden to 1000 for faux/faux-1
    compaction = {
        "reserveTokens": 50_000,
        "modelOverrides": {"faux/faux-1": {"reserveTokens": 1_000}},
    }
    source = StaticSettingsSource(global_settings={"compaction": compaction})
    # Then faux-1 leaving 45000 does not reset, another model does
    assert _kit(45_000, settings=source).turn_end("x").value is None
    other = ModelInfo(provider="faux", id="faux-2", context_window=WINDOW)
    kit = _kit(45_000, settings=source)
    assert kit.turn_end("x", model=other).value is not None


def test_r41_an_untrusted_project_contributes_nothing() -> None:
    # Given an untrusted project that would raise the reserve
    source = StaticSettingsSource(
        global_settings={},
        project_settings={"compaction": {"reserveTokens": 150_000}},
        project_trusted=False,
    )
    # Then the global default reserve applies
    assert _kit(100_000, settings=source).turn_end("x").value is None


def test_r41_compaction_disabled_turns_automatic_resets_off() -> None:
    source = StaticSettingsSource(global_settings={"compaction": {"enabled": False}})
    kit = _kit(1_000, settings=source)
    assert kit.turn_end("x").value is None and kit.of_type(MARKER_TYPE) == []


# -- R42 -----------------------------------------------------------------------------------------


def test_r42_pi_context_settings_merge_per_key_with_the_project_winning() -> None:
    # Given a global margin of 5000 and a project margin of 40000
    source = StaticSettingsSource(
        global_settings={"pi-context": {"reminderMarginTokens": 5_000, "dreamer": True}},
        project_settings={"pi-context": {"reminderMarginTokens": 40_000}},
    )
    # Then the reminder line is reserve + 40000: 50000 remaining stages guidance
    assert _staged(_kit(50_000, settings=source)) == GUIDANCE_TYPE


@pytest.mark.parametrize("section", [[1, 2], None, "x", 5])
def test_r42_a_non_object_pi_context_section_is_ignored(section: Any) -> None:
    # Given a project whose "pi-context" is not a plain object
    source = StaticSettingsSource(
        global_settings={"pi-context": {"reminderMarginTokens": 40_000}},
        project_settings={"pi-context": section},
    )
    # Then the global section applies alone, silently
    kit = _kit(50_000, settings=source)
    assert _staged(kit) == GUIDANCE_TYPE and kit.notices == []


# -- R43, R46 ------------------------------------------------------------------------------------

_INVALID_MARGINS = st.one_of(
    st.integers(max_value=0),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer() or f <= 0),
    st.text(max_size=5),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.just(2**53),
)


@settings(max_examples=40, deadline=None)
@given(margin=_INVALID_MARGINS)
def test_r43_an_invalid_margin_falls_back_to_the_default_with_one_warning(margin: Any) -> None:
    # Given an invalid reminderMarginTokens
    source = StaticSettingsSource(global_settings={"pi-context": {"reminderMarginTokens": margin}})
    # When the session starts (the policy is resolved at once, R55)
    kit = _kit(REMINDER, settings=source)
    # Then exactly one warning is shown and the default margin applies
    assert kit.notices == [Notify(message=NOTICE_INVALID_MARGIN, level="warning")]
    assert _staged(kit) == GUIDANCE_TYPE
    assert kit.notices == [Notify(message=NOTICE_INVALID_MARGIN, level="warning")]


@pytest.mark.parametrize("margin", [1, 30_000, 30_000.0])
def test_r43_a_valid_or_absent_margin_is_silent(margin: Any) -> None:
    source = StaticSettingsSource(global_settings={"pi-context": {"reminderMarginTokens": margin}})
    kit = _kit(RESERVE + 30_000, settings=source)
    assert kit.notices == []
    assert _staged(kit) == (GUIDANCE_TYPE if margin == 30_000 else None)
    assert _kit(REMINDER).notices == []


def test_r46_each_warning_is_shown_once_until_the_next_transition() -> None:
    # Given an invalid margin read live by many decisions
    source = StaticSettingsSource(global_settings={"pi-context": {"reminderMarginTokens": 0}})
    kit = _kit(100_000, settings=source, cache_policy=False)
    for _ in range(3):
        kit.context()
        kit.turn_end("x")
        kit.turn_start()
    assert kit.notice_texts() == [NOTICE_INVALID_MARGIN]
    # When a transition happens, the warning may be shown once more
    kit.navigate(kit.tree.leaf_id)
    kit.context()
    assert kit.notice_texts() == [NOTICE_INVALID_MARGIN] * 2


# -- R44 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("remaining", "stage"),
    [(40_000, GUIDANCE_TYPE), (40_001, None), (22_288, WARNING_TYPE), (22_289, GUIDANCE_TYPE)],
)
def test_r44_reminder_is_reserve_plus_margin_warning_is_reserve_plus_12288(
    remaining: int, stage: str | None
) -> None:
    # Given reserve 10000 and margin 30000: reminder 40000, warning 22288
    source = StaticSettingsSource(
        global_settings={
            "compaction": {"reserveTokens": 10_000},
            "pi-context": {"reminderMarginTokens": 30_000},
        }
    )
    assert _staged(_kit(remaining, settings=source)) == stage


# -- R45 -----------------------------------------------------------------------------------------


def test_r45_a_settings_read_failure_uses_defaults_and_warns() -> None:
    # Given a settings authority that throws
    kit = _kit(REMINDER, settings=FailingSource())
    # Then the defaults apply and the warning names the error
    assert kit.notice_texts() == [
        "pi-context: could not read settings; using defaults (RuntimeError: settings.json is a "
        "directory)."
    ]
    assert _staged(kit) == GUIDANCE_TYPE


def test_r45_pi_rejecting_a_compaction_value_is_a_read_failure() -> None:
    source = StaticSettingsSource(global_settings={"compaction": {"reserveTokens": -1}})
    kit = _kit(REMINDER, settings=source)
    (notice,) = kit.notices
    assert notice.message.startswith("pi-context: could not read settings; using defaults (")
    assert _staged(kit) == GUIDANCE_TYPE


def test_r45_unreadable_settings_files_are_diagnostics_never_notices(tmp_path: Path) -> None:
    # Given a global settings.json Pi cannot parse (Pi treats it as {} and queues a diagnostic)
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text("{ not json")
    kit = Kit.create(tokens=WINDOW - REMINDER, settings=pi_file_settings(agent))
    kit.start()
    kit.build.user("x")
    # Then pi-context shows nothing and the defaults apply
    assert kit.notices == []
    assert _staged(kit) == GUIDANCE_TYPE


# -- R47–R50 -------------------------------------------------------------------------------------


def test_r47_root_window_usage_is_the_host_s_and_may_be_unknown() -> None:
    # Given the host reporting tokens: null (right after a compaction)
    kit = _kit(None)
    # Then nothing is staged and the remaining count is null
    assert _staged(kit) is None
    assert kit.tool_payload("get_context_remaining") == {"remaining_tokens": None}


def _marker_window(kit: Kit) -> None:
    kit.wipe()
    kit.build.user("next")
    kit.build.assistant("big", total=WINDOW - 35_000)


def test_r48_marker_window_usage_is_the_projected_window_estimate() -> None:
    # Given a reset window whose own last reply used 165000 tokens, while the host reports 0
    kit = _kit(WINDOW)
    _marker_window(kit)
    # When the remaining count is asked
    payload = kit.tool_payload(
        "get_context_remaining", usage=ContextUsage(tokens=0, context_window=WINDOW)
    )
    # Then it is computed from the window's own estimate
    tokens = window_tokens_of(
        kit.tree.branch(), WindowIndex.of(kit.tree).current_window, TiktokenCounter()
    )
    assert tokens is not None and tokens >= WINDOW - 35_000
    assert payload == {"remaining_tokens": max(0, WINDOW - tokens - WARNING)}


def test_r48_model_context_window_wins_over_the_host_s() -> None:
    # Given a reset window, model window 180000, host window 200000
    kit = _kit()
    _marker_window(kit)
    small = attrs.evolve(MODEL, context_window=180_000)
    tokens = window_tokens_of(
        kit.tree.branch(), WindowIndex.of(kit.tree).current_window, TiktokenCounter()
    )
    assert tokens is not None
    # Then the model's window is used; without a model window the host's; without both, unknown
    assert kit.tool_payload("get_context_remaining", model=small)["remaining_tokens"] == 0
    no_window = attrs.evolve(MODEL, context_window=None)
    assert kit.tool_payload("get_context_remaining", model=no_window) == {
        "remaining_tokens": max(0, WINDOW - tokens - WARNING)
    }
    assert kit.tool_payload("get_context_remaining", model=no_window, usage=None) == {
        "remaining_tokens": None
    }


def test_r48_a_marker_window_without_its_boot_has_unknown_usage() -> None:
    # Given a marker whose boot is missing, while the host reports near-full usage
    kit = Kit.create(tokens=WINDOW - 100)
    kit.build.marker("pcw:12345678:abcdef00")
    kit.build.user("x")
    # Then usage is unknown: no reminder, no reset, remaining null
    assert _staged(kit) is None
    assert kit.tool_payload("get_context_remaining") == {"remaining_tokens": None}


def test_r49_remaining_is_clamped_at_zero_past_the_window() -> None:
    kit = _kit(-5_000)
    assert kit.tool_payload("get_context_remaining") == {"remaining_tokens": 0}
    assert _staged(kit) == WARNING_TYPE


def test_r50_reset_due_requires_automatic_and_known_usage() -> None:
    # Given usage past the reserve: due when automatic; never when automatic is off
    assert _kit(RESERVE).turn_end("x").value is not None
    assert _kit(RESERVE + 1).turn_end("x").value is None
    off = StaticSettingsSource(global_settings={"compaction": {"enabled": False}})
    assert _kit(RESERVE, settings=off).turn_end("x").value is None


# -- R51, R52 ------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(remaining=st.integers(min_value=0, max_value=60_000))
def test_r52_staging_boundaries_are_inclusive(remaining: int) -> None:
    # Given any remaining count at default settings
    kit = _kit(remaining)
    # Then warning iff ≤ 28672, else guidance iff ≤ 40960 (a due reset may follow, R27)
    assert _staged(kit) == _expected_stage(remaining)


def test_r52_the_spec_boundary_examples() -> None:
    assert _staged(_kit(40_960)) == GUIDANCE_TYPE
    assert _staged(_kit(40_961)) is None


def test_r51_the_warning_is_injected_into_the_current_request_after_every_message() -> None:
    # Given usage below the warning line and a request's messages
    kit = _kit(20_000)
    messages = ({"role": "user", "content": "a"}, {"role": "assistant", "content": []})
    # When the context hook runs
    value = kit.context(messages).value
    # Then the warning is appended after every message, hidden, with the warning content
    assert isinstance(value, MessagesResult)
    assert value.messages[:2] == messages
    assert value.messages[2] == {
        "role": "custom",
        "customType": WARNING_TYPE,
        "content": WARNING_CONTENT,
        "display": False,
        "timestamp": 1_796_000_000_000,
    }


def test_r51_guidance_is_staged_silently_with_the_frozen_count() -> None:
    # Given remaining 35000 (guidance band)
    kit = _kit(35_000)
    # When the context hook runs, the request is unchanged
    assert kit.context().value is None
    # Then turn_end commits guidance stating max(0, 35000 − 28672) tokens, frozen at staging
    value = kit.turn_end(
        "x", usage=ContextUsage(tokens=WINDOW - 30_000, context_window=WINDOW)
    ).value
    assert isinstance(value, BoundaryResult)
    assert value.entries[0].content == guidance_content(35_000 - WARNING)  # type: ignore[union-attr]


def test_r51_nothing_when_disabled_or_usage_unknown() -> None:
    kit = _kit(20_000)
    kit.toggle("off")
    assert kit.context().value is None
    assert _kit(20_000).context(usage=None).value is None


def test_r51_a_warning_staged_or_persisted_in_the_window_blocks_everything() -> None:
    # Given a warning persisted in this window
    kit = _kit(20_000)
    assert _staged(kit) == WARNING_TYPE
    kit.turn_start()
    # Then later requests inject nothing and stage nothing (not even guidance)
    assert kit.context().value is None
    assert kit.turn_end("y").value is None


def test_r51_a_persisted_guidance_is_not_staged_again_but_the_warning_still_is() -> None:
    kit = _kit(35_000)
    assert _staged(kit) == GUIDANCE_TYPE
    kit.turn_start()
    assert _staged(kit) is None
    kit.turn_start()
    kit.set_tokens(WINDOW - 20_000)
    assert _staged(kit) == WARNING_TYPE


def test_r51_at_the_warning_line_the_warning_supersedes_the_guidance() -> None:
    # Given a committed guidance, and a later request below the warning line
    kit = _kit(35_000)
    assert _staged(kit) == GUIDANCE_TYPE
    kit.turn_start()
    kit.set_tokens(WINDOW - 20_000)
    # When that request is staged
    kit.context()
    value = kit.turn_end("x").value
    # Then only the warning commits (no second guidance)
    assert isinstance(value, BoundaryResult)
    assert [getattr(d, "custom_type", None) for d in value.entries] == [WARNING_TYPE]


# -- R53 -----------------------------------------------------------------------------------------


def test_r53_turn_end_takes_the_staging_and_clears_it() -> None:
    # Given a committed guidance
    kit = _kit(35_000)
    assert _staged(kit) == GUIDANCE_TYPE
    # Then staging is empty: the next turn (its request's guidance is persisted) commits nothing
    kit.turn_start()
    assert kit.turn_end("again").value is None
    assert len(kit.of_type(GUIDANCE_TYPE)) == 1


# -- R54 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("remaining", "notice"), [(35_000, NOTICE_GUIDANCE_RECORDED), (20_000, NOTICE_WARNING_RECORDED)]
)
@pytest.mark.parametrize("when", ["turn_start", "settled"])
def test_r54_a_committed_reminder_is_announced_once(remaining: int, notice: str, when: str) -> None:
    # Given a committed reminder
    kit = _kit(remaining)
    _staged(kit)
    kit.take_notices()
    # When the next turn starts (or the run settles)
    getattr(kit, when)()
    # Then the human is told once, at warning level
    assert kit.take_notices() == [Notify(message=notice, level="warning")]
    kit.turn_start()
    kit.settled()
    assert kit.notices == []


def test_r54_an_aborted_reminder_is_never_announced() -> None:
    kit = _kit(35_000)
    kit.context()
    kit.turn_end("x", stop="aborted")
    kit.turn_start()
    kit.settled()
    assert kit.notices == [] and kit.of_type(GUIDANCE_TYPE) == []


def test_r54_a_reminder_committed_with_a_reset_is_not_announced() -> None:
    # Given a warning committed in the same boundary as a due reset
    kit = _kit(10_000)
    kit.context()
    kit.turn_end("x")
    assert len(kit.of_type(WARNING_TYPE)) == 1 and len(kit.of_type(MARKER_TYPE)) == 1
    # When the next turn starts in the new window
    kit.turn_start()
    # Then only the reset is announced
    assert [n.message.split(" · ")[0] for n in kit.notices] == ["pi-context: memory cleared"]


# -- R55 -----------------------------------------------------------------------------------------

TRANSITIONS: dict[str, Callable[[Kit], Any]] = {
    "session_start": lambda k: k.start("reload"),
    "session_tree": lambda k: k.navigate(k.tree.leaf_id),
    "model_select": lambda k: k.model_select(),
    "pi_context_off_on": lambda k: (k.toggle("off"), k.toggle("on")),
    "agent_settled": lambda k: k.settled(),
}


@pytest.mark.parametrize("name", sorted(TRANSITIONS))
def test_r55_transitions_and_settlement_discard_staged_reminders(name: str) -> None:
    # Given a staged guidance
    kit = _kit(35_000)
    kit.context()
    # When a transition (or settlement before turn_end) happens
    TRANSITIONS[name](kit)
    # Then the staged guidance is gone: the next turn_end commits nothing
    kit.take_notices()
    assert kit.turn_end("x", usage=ContextUsage(tokens=0, context_window=WINDOW)).value is None


@pytest.mark.parametrize(
    "name", ["session_start", "session_tree", "model_select", "pi_context_off_on"]
)
def test_r55_transitions_forget_pending_reminder_notices(name: str) -> None:
    # Given a committed guidance not yet announced
    kit = _kit(35_000)
    _staged(kit)
    # When a transition happens before the next turn_start
    TRANSITIONS[name](kit)
    kit.take_notices()
    kit.turn_start()
    # Then no reminder notice is given
    assert NOTICE_GUIDANCE_RECORDED not in kit.notice_texts()


def test_r55_shutdown_clears_staging() -> None:
    kit = _kit(35_000)
    kit.context()
    kit.shutdown()
    kit.start()
    assert kit.turn_end("x", usage=ContextUsage(tokens=0, context_window=WINDOW)).value is None


# -- R56 -----------------------------------------------------------------------------------------


def test_r56_reload_from_the_same_entries_does_not_duplicate_a_reminder() -> None:
    # Given a session that persisted a guidance
    kit = _kit(35_000)
    assert _staged(kit) == GUIDANCE_TYPE
    # When a fresh runtime reloads the same entries
    tree = SessionTree.from_entries(kit.tree.header, kit.tree.entries)
    reloaded = Kit.create(tokens=WINDOW - 35_000)
    reloaded.tree = tree
    reloaded.runtime = type(kit.runtime)(tree, audit=reloaded.audit)
    reloaded.build.tree = tree
    reloaded.start()
    # Then no second guidance is staged
    assert _staged(reloaded) is None


def test_r56_a_sibling_branch_without_the_reminder_gets_its_own() -> None:
    kit = _kit(35_000)
    fork = kit.tree.leaf_id
    assert _staged(kit) == GUIDANCE_TYPE
    kit.navigate(fork)
    kit.build.user("other path")
    assert _staged(kit) == GUIDANCE_TYPE
    assert len(kit.of_type(GUIDANCE_TYPE)) == 1


def test_r56_toggling_off_and_on_does_not_revive_a_persisted_warning() -> None:
    kit = _kit(20_000)
    assert _staged(kit) == WARNING_TYPE
    kit.toggle("off")
    kit.toggle("on")
    kit.turn_start()
    assert kit.context().value is None and _staged(kit) is None


# -- R57 -----------------------------------------------------------------------------------------


def test_r57_an_ignored_warning_resets_nothing_until_the_reserve_is_reached() -> None:
    # Given a committed warning and usage still above the reserve
    kit = _kit(20_000)
    assert _staged(kit) == WARNING_TYPE
    kit.turn_start()
    # When the model ignores it for a few turns
    for _ in range(3):
        assert kit.turn_end("ignoring").value is None
    # Then only reaching the reserve resets
    kit.set_tokens(WINDOW - RESERVE)
    value = kit.turn_end("now").value
    assert isinstance(value, BoundaryResult) and value.continue_
    assert len(kit.of_type(MARKER_TYPE)) == 1
