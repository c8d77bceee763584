"""Budget policy: settings, thresholds and usage arithmetic (lifecycle spec §9, R17)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.policy import (
    DEFAULT_THRESHOLDS,
    FrozenScopes,
    Policy,
    Thresholds,
    Usage,
    derive_thresholds,
    guidance_count,
    pi_context_settings,
    remaining,
    reminder_stage,
    reset_due,
    resolve_policy,
    tool_remaining,
    validate_margin,
)
from pictx_fsm.extensions.pi_context.texts import NOTICE_INVALID_MARGIN, NOTICE_SETTINGS_UNREADABLE
from pictx_fsm.host.settings import (
    FileSettingsSource,
    ModelRef,
    SettingsScopes,
    StaticSettingsSource,
    default_agent_dir,
)
from pictx_fsm.session.entries import ABSENT

MAX_SAFE = 2**53 - 1
MODEL_A = ModelRef(provider="openai", id="model-a")


def policy_of(global_settings: dict[str, Any], **kwargs: Any) -> Policy:
    return resolve_policy(StaticSettingsSource(global_settings=global_settings, **kwargs))


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


# -- R44 thresholds ---------------------------------------------------------------------------


def test_r44_defaults_are_reminder_40960_reserve_16384_warning_28672() -> None:
    # Given no settings at all
    # When the policy is resolved
    policy = policy_of({})
    # Then the default lines and automatic reset apply, silently
    assert policy.thresholds == Thresholds(reserve=16384, reminder=40960, warning=28672)
    assert policy.thresholds == DEFAULT_THRESHOLDS
    assert policy.automatic is True
    assert policy.warnings == ()


def test_r44_reminder_is_reserve_plus_margin_and_warning_is_reserve_plus_runway() -> None:
    # Given a reserve of 30000 and a margin of 20000 (T-TH@d108)
    # When the lines are derived
    thresholds = derive_thresholds(30_000, 20_000)
    # Then reminder = 50000, warning = 30000 + 12288
    assert thresholds == Thresholds(reserve=30_000, reminder=50_000, warning=42_288)


@given(reserve=st.integers(0, MAX_SAFE), margin=st.integers(1, MAX_SAFE))
def test_r44_reserve_lies_below_both_lines_for_any_positive_margin(
    reserve: int, margin: int
) -> None:
    # Given any reserve and any positive margin
    # When the lines are derived
    thresholds = derive_thresholds(reserve, margin)
    # Then the reserve is the lowest line and the runway is exactly 12288
    assert thresholds.reserve < thresholds.warning
    assert thresholds.reserve < thresholds.reminder
    assert thresholds.warning - thresholds.reserve == 12_288
    assert thresholds.reminder - thresholds.reserve == margin


# -- R43 margin validation --------------------------------------------------------------------


def test_r43_absent_margin_uses_the_default_silently() -> None:
    # Given no reminderMarginTokens key
    # When it is validated
    # Then the default applies without a warning
    assert validate_margin(ABSENT) == (24_576, None)
    assert policy_of({"pi-context": {}}).warnings == ()


@pytest.mark.parametrize(
    "raw",
    [0, -1, 1.5, True, False, "30000", None, [], {}, [30000], MAX_SAFE + 1, 1e300, math.nan],
)
def test_r43_present_invalid_margin_uses_the_default_with_one_warning(raw: object) -> None:
    # Given a present margin that is not a safe positive integer
    # When it is validated
    margin, warning = validate_margin(raw)
    # Then the default applies and the exact warning is returned
    assert margin == 24_576
    assert warning == NOTICE_INVALID_MARGIN
    assert warning == (
        "pi-context: pi-context.reminderMarginTokens must be a positive integer; "
        "using default 24576."
    )


@pytest.mark.parametrize(("raw", "expected"), [(1, 1), (30_000, 30_000), (MAX_SAFE, MAX_SAFE)])
def test_r43_safe_positive_integers_are_used_as_given(raw: int, expected: int) -> None:
    # Given a safe positive integer margin
    # When it is validated
    # Then it is used and nothing is reported
    assert validate_margin(raw) == (expected, None)


def test_r43_an_integral_json_float_is_a_valid_margin_as_in_javascript() -> None:
    # Given settings text whose margin is written "30000.0" (JSON.parse gives 30000 in JS)
    settings = json.loads('{"pi-context": {"reminderMarginTokens": 30000.0}}')
    # When the policy is resolved
    policy = policy_of(settings)
    # Then the margin is 30000 and no warning is raised
    assert policy.thresholds.reminder == 16_384 + 30_000
    assert policy.warnings == ()


def _is_safe_positive_integer(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return False
    return 0 < value <= MAX_SAFE


margins = st.one_of(
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(1, 10**6).map(float),
    st.booleans(),
    st.none(),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@given(raw=margins)
def test_r43_validation_accepts_exactly_the_safe_positive_integers(raw: object) -> None:
    # Given any JSON-shaped margin value
    # When it is validated
    margin, warning = validate_margin(raw)
    # Then it is accepted (unchanged, silently) iff it is a safe positive integer in JS terms
    if _is_safe_positive_integer(raw):
        assert (margin, warning) == (int(raw), None)  # type: ignore[call-overload]
    else:
        assert (margin, warning) == (24_576, NOTICE_INVALID_MARGIN)


def test_r43_invalid_margin_warns_through_the_resolved_policy() -> None:
    # Given a zero margin in global settings (T-BS@5a9d)
    # When the policy is resolved
    policy = policy_of({"pi-context": {"reminderMarginTokens": 0}})
    # Then the degraded reminder is 40960 and exactly one warning is reported
    assert policy.thresholds.reminder == 40_960
    assert policy.warnings == (NOTICE_INVALID_MARGIN,)


# -- R41 compaction settings --------------------------------------------------------------------


def test_r41_reserve_and_automatic_come_from_compaction_settings() -> None:
    # Given compaction.reserveTokens 24000 and compaction.enabled false
    policy = policy_of({"compaction": {"reserveTokens": 24_000, "enabled": False}})
    # Then the reserve follows and automatic reset is off
    assert policy.thresholds == derive_thresholds(24_000, 24_576)
    assert policy.automatic is False


@pytest.mark.parametrize(
    ("enabled", "automatic"), [(None, True), (0, False), ("", False), ("no", True), (1, True)]
)
def test_r41_compaction_enabled_follows_javascript_truthiness(
    enabled: object, automatic: bool
) -> None:
    # Given compaction.enabled of some JSON value (Pi reads `enabled ?? true`)
    policy = policy_of({"compaction": {"enabled": enabled}})
    # Then automatic is its JS truthiness, null counting as absent
    assert policy.automatic is automatic


def test_r41_model_specific_override_wins_over_ordinary_reserve() -> None:
    # Given an ordinary reserve and an override for openai/model-a (T-TH@d108)
    source = StaticSettingsSource(
        global_settings={
            "compaction": {
                "reserveTokens": 10_000,
                "modelOverrides": {"openai/model-a": {"reserveTokens": 30_000}},
            }
        }
    )
    # When the policy is resolved for model-a, another model and no model
    # Then only model-a gets the override
    assert resolve_policy(source, MODEL_A).thresholds.reserve == 30_000
    assert resolve_policy(source, ModelRef(provider="openai", id="model-b")).thresholds.reserve == (
        10_000
    )
    assert resolve_policy(source, None).thresholds.reserve == 10_000


def test_r41_project_settings_win_when_the_project_is_trusted() -> None:
    # Given a global and a project reserve (T-BS@5a9d)
    source = StaticSettingsSource(
        global_settings={"compaction": {"reserveTokens": 20_000}},
        project_settings={"compaction": {"reserveTokens": 50_000}},
        project_trusted=True,
    )
    # Then the project reserve applies
    assert resolve_policy(source).thresholds.reserve == 50_000


def test_r41_untrusted_project_contributes_nothing() -> None:
    # Given project settings that would change reserve, automatic and margin
    source = StaticSettingsSource(
        global_settings={"compaction": {"reserveTokens": 20_000}},
        project_settings={
            "compaction": {"reserveTokens": 50_000, "enabled": False},
            "pi-context": {"reminderMarginTokens": 1},
        },
        project_trusted=False,
    )
    # When the policy is resolved
    policy = resolve_policy(source)
    # Then only global values apply
    assert policy.thresholds == derive_thresholds(20_000, 24_576)
    assert policy.automatic is True


def test_r41_project_model_override_deep_merges_into_global_compaction() -> None:
    # Given a global override for model-a and a project that only sets keepRecentTokens there
    source = StaticSettingsSource(
        global_settings={
            "compaction": {
                "reserveTokens": 10_000,
                "modelOverrides": {"openai/model-a": {"reserveTokens": 30_000}},
            }
        },
        project_settings={
            "compaction": {"modelOverrides": {"openai/model-a": {"keepRecentTokens": 5}}}
        },
    )
    # When the policy is resolved for model-a
    # Then Pi's deep merge keeps the global model reserve
    assert resolve_policy(source, MODEL_A).thresholds.reserve == 30_000


def test_r41_file_source_reads_global_and_trusted_project_files(tmp_path: Path) -> None:
    # Given global settings in the agent dir and project settings in <cwd>/.pi (T-BS@5a9d)
    agent_dir, cwd = tmp_path / "agent", tmp_path / "work"
    write_json(agent_dir / "settings.json", {"compaction": {"reserveTokens": 16_384}})
    write_json(cwd / ".pi" / "settings.json", {"compaction": {"reserveTokens": 32_768}})
    usage = Usage(tokens=72_563, context_window=200_000)
    # When the policy is read for a trusted and for an untrusted project
    trusted = resolve_policy(FileSettingsSource(agent_dir=agent_dir, cwd=cwd, project_trusted=True))
    untrusted = resolve_policy(
        FileSettingsSource(agent_dir=agent_dir, cwd=cwd, project_trusted=False)
    )
    # Then the visible countdown uses the project reserve only when trusted
    assert tool_remaining(usage, trusted.thresholds) == 82_381
    assert tool_remaining(usage, untrusted.thresholds) == 98_765


def test_r40_file_source_reads_the_files_afresh_on_every_resolution(tmp_path: Path) -> None:
    # Given a file-backed source
    source = FileSettingsSource(agent_dir=tmp_path, cwd=tmp_path / "cwd", project_trusted=True)
    write_json(tmp_path / "settings.json", {"compaction": {"reserveTokens": 1_000}})
    first = resolve_policy(source)
    # When the global file changes
    write_json(tmp_path / "settings.json", {"compaction": {"reserveTokens": 2_000}})
    # Then the next resolution sees the change (caching is the runtime's, R55)
    assert (first.thresholds.reserve, resolve_policy(source).thresholds.reserve) == (1_000, 2_000)


def test_r41_missing_and_empty_settings_files_are_empty_scopes(tmp_path: Path) -> None:
    # Given no global file and an empty project file
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.json").write_text("", encoding="utf-8")
    source = FileSettingsSource(agent_dir=tmp_path / "agent", cwd=tmp_path, project_trusted=True)
    # When the policy is resolved
    policy = resolve_policy(source)
    # Then the defaults apply with nothing to report
    assert policy == Policy(thresholds=DEFAULT_THRESHOLDS, automatic=True)


def test_r41_a_utf8_bom_is_ignored_like_pi_does(tmp_path: Path) -> None:
    # Given a global settings file that starts with a BOM
    text = "\ufeff" + json.dumps({"compaction": {"reserveTokens": 9_000}})
    (tmp_path / "settings.json").write_text(text, encoding="utf-8")
    source = FileSettingsSource(agent_dir=tmp_path, cwd=tmp_path / "cwd", project_trusted=False)
    # Then it parses
    assert resolve_policy(source).thresholds.reserve == 9_000


def test_default_agent_dir_follows_pi_coding_agent_dir(tmp_path: Path) -> None:
    # Given the environment with and without PI_CODING_AGENT_DIR
    # Then Pi's agent dir rule applies (~ expanded)
    assert default_agent_dir({}, tmp_path) == tmp_path / ".pi" / "agent"
    assert default_agent_dir({"PI_CODING_AGENT_DIR": "/x/y"}, tmp_path) == Path("/x/y")
    assert default_agent_dir({"PI_CODING_AGENT_DIR": "~/a"}, tmp_path) == tmp_path / "a"


# -- R42 pi-context settings merge -------------------------------------------------------------


def test_r42_project_pi_context_keys_win_per_key() -> None:
    # Given global margin + dreamer and a project margin (T-TH@d108)
    scopes = SettingsScopes(
        global_settings={"pi-context": {"reminderMarginTokens": 10_000, "dreamer": "g/m"}},
        project_settings={"pi-context": {"reminderMarginTokens": 20_000}},
    )
    # When merged
    # Then the project margin wins and the global dreamer survives
    assert pi_context_settings(scopes) == {"reminderMarginTokens": 20_000, "dreamer": "g/m"}


@pytest.mark.parametrize("project_value", [[1, 2], None, "x", 5])
def test_r42_a_non_object_pi_context_value_is_ignored(project_value: object) -> None:
    # Given a project "pi-context" that is not a plain object
    source = StaticSettingsSource(
        global_settings={"pi-context": {"reminderMarginTokens": 30_000}},
        project_settings={"pi-context": project_value},
    )
    # When the policy is resolved
    policy = resolve_policy(source)
    # Then the global margin still applies, silently
    assert policy.thresholds.reminder == 16_384 + 30_000
    assert policy.warnings == ()


def test_r42_project_null_margin_overrides_global_and_warns() -> None:
    # Given a valid global margin and an explicit null in the project (shallow merge)
    source = StaticSettingsSource(
        global_settings={"pi-context": {"reminderMarginTokens": 30_000}},
        project_settings={"pi-context": {"reminderMarginTokens": None}},
    )
    # Then null wins the merge and degrades to the default with the R43 warning
    policy = resolve_policy(source)
    assert policy.thresholds.reminder == 40_960
    assert policy.warnings == (NOTICE_INVALID_MARGIN,)


# -- R45 read failure ---------------------------------------------------------------------------


def test_r45_an_invalid_reserve_degrades_to_defaults_with_the_error_text() -> None:
    # Given a reserve Pi's SettingsManager rejects
    policy = policy_of(
        {"compaction": {"reserveTokens": -5, "enabled": False}, "pi-context": {"x": 1}}
    )
    # Then the whole policy is the default one with Pi's error in the warning
    assert policy.thresholds == Thresholds(reserve=16_384, reminder=40_960, warning=28_672)
    assert policy.automatic is True
    assert policy.warnings == (
        "pi-context: could not read settings; using defaults (Error: Invalid "
        "compaction.reserveTokens setting: -5. Expected a non-negative safe integer.).",
    )


@pytest.mark.parametrize(
    ("settings", "fragment"),
    [
        ({"compaction": {"keepRecentTokens": "many"}}, "compaction.keepRecentTokens setting: many"),
        ({"compaction": {"reserveTokens": None}}, "compaction.reserveTokens setting: null"),
        (
            {"compaction": {"modelOverrides": {"openai/model-a": 7}}},
            'compaction.modelOverrides["openai/model-a"] setting: 7. Expected an object.',
        ),
        (
            {"compaction": {"modelOverrides": {"openai/model-a": {"reserveTokens": 1.5}}}},
            'compaction.modelOverrides["openai/model-a"].reserveTokens setting: 1.5.',
        ),
    ],
)
def test_r45_values_pi_rejects_degrade_to_defaults(settings: dict[str, Any], fragment: str) -> None:
    # Given a compaction value Pi 0.87 throws on
    # When the policy is resolved for model-a
    policy = resolve_policy(StaticSettingsSource(global_settings=settings), MODEL_A)
    # Then R45 applies and the warning names the value
    assert policy.thresholds == DEFAULT_THRESHOLDS
    assert len(policy.warnings) == 1
    assert fragment in policy.warnings[0]


def test_r45_a_failing_settings_source_degrades_to_defaults() -> None:
    # Given a source that raises while reading
    class Broken:
        def read(self) -> SettingsScopes:
            raise PermissionError("EACCES: permission denied")

    # When the policy is resolved
    policy = resolve_policy(Broken())
    # Then the defaults apply with String(error) in the warning
    assert policy == Policy(
        thresholds=DEFAULT_THRESHOLDS,
        automatic=True,
        warnings=(
            NOTICE_SETTINGS_UNREADABLE.format(error="PermissionError: EACCES: permission denied"),
        ),
    )


def test_r45_invalid_json_is_an_empty_scope_with_a_diagnostic_like_pi(tmp_path: Path) -> None:
    # Given an invalid global file and a valid trusted project file (T-TH@d108)
    (tmp_path / "settings.json").write_text("{ invalid settings json", encoding="utf-8")
    write_json(tmp_path / "cwd" / ".pi" / "settings.json", {"compaction": {"reserveTokens": 5}})
    source = FileSettingsSource(agent_dir=tmp_path, cwd=tmp_path / "cwd", project_trusted=True)
    # When the policy is resolved
    policy = resolve_policy(source)
    # Then Pi's behaviour holds: the project still applies, nobody is warned, the error is kept
    assert policy.thresholds.reserve == 5
    assert policy.warnings == ()
    assert len(policy.diagnostics) == 1
    assert "settings.json" in policy.diagnostics[0]


def test_r45_strict_file_source_turns_unreadable_files_into_the_r45_warning(
    tmp_path: Path,
) -> None:
    # Given an invalid global file read strictly
    (tmp_path / "settings.json").write_text("[1,", encoding="utf-8")
    source = FileSettingsSource(
        agent_dir=tmp_path, cwd=tmp_path / "cwd", project_trusted=True, strict=True
    )
    # When the policy is resolved
    policy = resolve_policy(source)
    # Then the defaults apply and the warning names the file
    assert policy.thresholds == DEFAULT_THRESHOLDS
    assert len(policy.warnings) == 1
    assert policy.warnings[0].startswith("pi-context: could not read settings; using defaults (")
    assert str(tmp_path / "settings.json") in policy.warnings[0]


@pytest.mark.parametrize("text", ["null", "5", '"text"', "NaN", '{"a": Infinity}'])
def test_r45_non_object_or_non_json_settings_text_is_unreadable(tmp_path: Path, text: str) -> None:
    # Given settings text that JSON.parse rejects or that is not an object
    (tmp_path / "settings.json").write_text(text, encoding="utf-8")
    source = FileSettingsSource(agent_dir=tmp_path, cwd=tmp_path / "cwd", project_trusted=False)
    # Then the scope is dropped with a diagnostic
    assert len(resolve_policy(source).diagnostics) == 1


# -- R49, R50 usage arithmetic --------------------------------------------------------------------


def test_r49_remaining_is_window_minus_tokens_clamped_at_zero() -> None:
    # Given known usage below and above the window, and unknown usage
    # Then remaining is clamped at zero and None when unknown
    assert remaining(Usage(tokens=170_000, context_window=200_000)) == 30_000
    assert remaining(Usage(tokens=210_000, context_window=200_000)) == 0
    assert remaining(Usage(tokens=None, context_window=200_000)) is None
    assert remaining(Usage(tokens=5, context_window=None)) is None


optional_tokens = st.none() | st.integers(0, 10**9)


@given(tokens=optional_tokens, window=optional_tokens)
def test_r49_remaining_is_never_negative_and_unknown_only_when_usage_is(
    tokens: int | None, window: int | None
) -> None:
    # Given any usage
    left = remaining(Usage(tokens=tokens, context_window=window))
    # Then remaining is None exactly when usage is unknown, and otherwise >= 0
    assert (left is None) == (tokens is None or window is None)
    assert left is None or left >= 0


def test_r50_reset_is_due_at_the_reserve_inclusive() -> None:
    # Given automatic reset with the default reserve
    def due(tokens: int) -> bool:
        return reset_due(Usage(tokens=tokens, context_window=200_000), 16_384, automatic=True)

    # Then exactly reserve tokens left is due, one more is not
    assert due(200_000 - 16_384) is True
    assert due(200_000 - 16_385) is False


def test_r50_reset_due_is_unclamped_and_needs_automatic_and_known_usage() -> None:
    # Given usage past the window, automatic off, and unknown usage
    over = Usage(tokens=250_000, context_window=200_000)
    # Then only the automatic, known case is due
    assert reset_due(over, 16_384, automatic=True) is True
    assert reset_due(over, 16_384, automatic=False) is False
    assert reset_due(Usage(tokens=None, context_window=200_000), 16_384, automatic=True) is False


@given(tokens=optional_tokens, window=optional_tokens, reserve=st.integers(0, 10**6))
def test_r50_reset_due_matches_its_definition(
    tokens: int | None, window: int | None, reserve: int
) -> None:
    # Given any usage and reserve with automatic reset on
    usage = Usage(tokens=tokens, context_window=window)
    # Then resetDue = known AND contextWindow - tokens <= reserve (unclamped)
    expected = tokens is not None and window is not None and window - tokens <= reserve
    assert reset_due(usage, reserve, automatic=True) is expected


# -- R17 visible countdown -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [(72_563, 82_381), (167_232, 0), (190_000, 0), (210_000, 0), (None, None)],
)
def test_r17_visible_countdown_ends_at_the_warning_line(
    tokens: int | None, expected: int | None
) -> None:
    # Given a project reserve of 32768 and a 200k window (T-BS@5a9d)
    thresholds = derive_thresholds(32_768, 24_576)
    # When get_context_remaining computes its value
    # Then it excludes reserve + runway (45056), clamps at zero and keeps unknown as None
    assert tool_remaining(Usage(tokens=tokens, context_window=200_000), thresholds) == expected


# -- R51, R52 staging -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("left", "stage"),
    [
        (40_961, "none"),
        (40_960, "guidance"),
        (28_673, "guidance"),
        (28_672, "warning"),
        (0, "warning"),
    ],
)
def test_r52_staging_boundaries_are_inclusive(left: int, stage: str) -> None:
    # Given the default lines
    # When remaining sits on or around a line
    # Then the line itself stages (40960 guidance, 40961 nothing)
    assert reminder_stage(left, DEFAULT_THRESHOLDS) == stage


def test_r51_unknown_usage_stages_nothing() -> None:
    # Given unknown usage
    # Then neither guidance nor warning is staged
    assert reminder_stage(None, DEFAULT_THRESHOLDS) == "none"


@given(
    left=st.integers(-(10**6), 10**6), reserve=st.integers(0, 10**5), margin=st.integers(1, 10**5)
)
def test_r51_stage_is_warning_at_or_below_warning_then_guidance_at_or_below_reminder(
    left: int, reserve: int, margin: int
) -> None:
    # Given any lines and any remaining count
    thresholds = derive_thresholds(reserve, margin)
    stage = reminder_stage(left, thresholds)
    # Then the warning wins below its line, guidance covers (warning, reminder], else none
    if left <= thresholds.warning:
        assert stage == "warning"
    elif left <= thresholds.reminder:
        assert stage == "guidance"
    else:
        assert stage == "none"


def test_r51_guidance_freezes_the_count_above_the_warning_line() -> None:
    # Given default lines
    # Then the guidance count is remaining - warning, never negative
    assert guidance_count(40_960, DEFAULT_THRESHOLDS) == 12_288
    assert guidance_count(10, DEFAULT_THRESHOLDS) == 0


# -- scopes that never change: the policy resolved once ----------------------------------------

_TOKENS = st.one_of(st.integers(-2, 60_000), st.just(2.5), st.just("x"), st.none())
_COMPACTION = st.fixed_dictionaries(
    {},
    optional={
        "reserveTokens": _TOKENS,
        "keepRecentTokens": _TOKENS,
        "enabled": st.sampled_from((True, False, 0, 1, "", None)),
        "modelOverrides": st.one_of(
            st.just([1]),
            st.dictionaries(
                st.sampled_from(("openai/model-a", "openai/model-b")),
                st.one_of(
                    st.just(3), st.fixed_dictionaries({}, optional={"reserveTokens": _TOKENS})
                ),
            ),
        ),
    },
)
_SCOPE = st.fixed_dictionaries(
    {},
    optional={
        "compaction": st.one_of(_COMPACTION, st.just([])),
        "pi-context": st.fixed_dictionaries({}, optional={"reminderMarginTokens": _TOKENS}),
    },
)


@dataclass
class _Handing:
    """A source handing out the scopes it was given (the same object on every read)."""

    scopes: SettingsScopes

    def read(self) -> SettingsScopes:
        return self.scopes


@given(
    _SCOPE,
    _SCOPE,
    st.lists(
        st.sampled_from((None, MODEL_A, ModelRef(provider="openai", id="model-b"))), max_size=4
    ),
)
def test_r40_frozen_scopes_give_the_policy_plain_scopes_give_for_every_model(
    global_settings: dict[str, Any], project_settings: dict[str, Any], models: list[Any]
) -> None:
    # Given the same settings as plain scopes and as frozen ones, read again and again
    plain = _Handing(
        SettingsScopes(global_settings=global_settings, project_settings=project_settings)
    )
    frozen = _Handing(FrozenScopes.of(global_settings, project_settings))
    for model in [*models, *models]:
        # When the policy is resolved for a model (a repeated one from what was kept)
        # Then it is the policy the plain scopes give
        assert resolve_policy(frozen, model) == resolve_policy(plain, model)


def test_r40_frozen_scopes_cannot_be_changed_under_the_policy_they_keep() -> None:
    # Given frozen scopes with a nested compaction object
    scopes = FrozenScopes.of({"compaction": {"reserveTokens": 1}}, {})
    # When anything tries to change them
    # Then neither the scope nor the object in it takes the change
    with pytest.raises(TypeError):
        scopes.global_settings["compaction"] = {}  # type: ignore[index]
    with pytest.raises(TypeError):
        scopes.global_settings["compaction"]["reserveTokens"] = 2  # type: ignore[index]
