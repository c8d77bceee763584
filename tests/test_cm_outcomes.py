"""pi-context-management's promised outcomes, exact recall answers and boundary lines (issue
27): each invariant reports a planted bug of its class and holds on the extension as built;
the lines are read from the policy constants the deciding code imports, and an aim lands
the next reply end on one."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

import pytest

from pictx_fsm.extensions.context_management import policy
from pictx_fsm.extensions.context_management.events import ReplyEnded
from pictx_fsm.extensions.context_management.kit import actions as cm
from pictx_fsm.extensions.context_management.kit.boundary import LINES, _lines, hits
from pictx_fsm.extensions.context_management.kit.contents import recall_budget
from pictx_fsm.extensions.context_management.kit.kit import KIT
from pictx_fsm.extensions.context_management.kit.scenarios import SCENARIOS, configured
from pictx_fsm.extensions.context_management.kit.world import World, WorldConfig
from pictx_fsm.testing import actions as shared
from pictx_fsm.testing.trace import run_actions


def _caught(story: Sequence[Any], fault: str | None = None) -> str | None:
    """The invariant the story breaks (run to rest), ``None`` when every one holds."""
    return run_actions(KIT, WorldConfig(fault=fault), story).invariant


def _scenario(name: str) -> tuple[Any, ...]:
    scenario = next(s for s in SCENARIOS if s.name == name)
    assert configured(scenario, WorldConfig()) == WorldConfig()
    return scenario.actions


def test_m48_a_handoff_that_never_switches_leaves_its_phase_owed() -> None:
    story = [cm.CtxMemory(args="handoff")]
    assert _caught(story) is None
    assert _caught(story, "switch-never-requested") == "operations_end"


def test_m28_m64_a_generation_that_reaches_its_deadline_logs_its_end() -> None:
    story = [cm.Generate(reply="over_capacity", repair="slow"), shared.Prompt(chars=9_000)]
    assert _caught(story) is None
    assert _caught(story, "timeout-never-ends-the-operation") == "operations_end"


def test_m54_usage_exactly_at_80_percent_starts_an_automatic_handoff() -> None:
    story = _scenario("usage exactly at 80 % of the window starts an automatic handoff")
    assert _caught(story) is None
    assert _caught(story, "threshold-strict") == "auto_handoff_when_due"


def test_m56_a_handoff_is_due_at_next_eligible_at_itself() -> None:
    story = _scenario("a handoff due the very millisecond its cooldown ends")
    assert _caught(story) is None
    assert _caught(story, "cooldown-ends-late") == "auto_handoff_when_due"


def test_m23_context_status_reports_the_quota_left_after_this_turns_recall() -> None:
    story = [cm.CmTool(tool="search", then="status"), shared.Prompt(chars=200)]
    assert _caught(story) is None
    assert _caught(story, "status-quota-ignores-use") == "exact_recall_answers"


def test_m22_a_read_page_ends_where_the_next_one_starts() -> None:
    story = [cm.Turn(chars=9_000), cm.CmTool(tool="read", source="user"), shared.Prompt(chars=200)]
    assert _caught(story) is None
    assert _caught(story, "read-skips-a-byte") == "exact_recall_answers"


@pytest.mark.parametrize(
    ("tokens", "window", "expected"),
    [
        (None, 64_000, 0),  # unknown usage: none
        (267, 64_000, 3_200),  # W×5 % under the 4 000 cap
        (46_000, 64_000, 1_616),  # the safe room: 64 000 − 46 000 − 16 384
        (50_000, 64_000, 0),  # no safe room left
        (700_000, 1_000_000, 4_000),  # the cap; the margin is W×20 % here
    ],
)
def test_m23_the_recall_budget_is_the_spec_arithmetic(
    tokens: int | None, window: int, expected: int
) -> None:
    budgets = policy.Budgets(context_window=window)
    assert recall_budget(tokens, window) == expected == budgets.recall_turn_bytes(tokens)


# -- the lines and the aims --------------------------------------------------------------------


def test_the_lines_are_the_policy_constants_the_deciding_code_compares() -> None:
    names = {line.name for line in LINES}
    # The spec's lines (§0.1): the 80/65/90 % triggers, the cooldowns, the deadline, the
    # rolling hour, the page sizes of the recall tools
    assert {
        "AUTO_THRESHOLD",
        "AUTO_FORECAST_FLOOR",
        "AUTO_FORECAST_TARGET",
        "AUTO_COOLDOWN_MS",
        "BG_SUCCESS_COOLDOWN_MS",
        "BG_FAILURE_COOLDOWN_MS",
        "GEN_TIMEOUT_MS",
        "HOUR_MS",
        "READ_MAX_BYTES",
        "EXCERPT_MAX_BYTES",
    } <= names
    # And a constant the deciding code starts to import becomes a line, with its unit
    module = ModuleType("guard_of_tomorrow")
    module.LOG_MAX_BYTES = policy.LOG_MAX_BYTES  # type: ignore[attr-defined]
    module.AUTO_MAX_PER_HOUR = policy.AUTO_MAX_PER_HOUR  # type: ignore[attr-defined]
    module.NOT_POLICY_MS = 5  # type: ignore[attr-defined]
    (line,) = _lines([module])
    assert (line.name, line.unit, line.value) == ("LOG_MAX_BYTES", "bytes", policy.LOG_MAX_BYTES)


@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_an_aim_lands_the_next_reply_end_on_a_token_line(offset: int) -> None:
    world = World(WorldConfig())
    world.apply(cm.AimAt(line="AUTO_THRESHOLD", offset=offset))
    world.apply(cm.Turn(chars=200))
    ends = [s for s in world.journal.steps if isinstance(s.event, ReplyEnded)]
    assert ends[0].ctx.tokens == int(0.8 * 64_000) + offset
    assert hits(world.journal.steps)[f"AUTO_THRESHOLD:{offset}"] == 1


@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_an_aim_lands_the_next_reply_end_a_duration_after_a_moment(offset: int) -> None:
    world = World(WorldConfig())
    world.apply(cm.Turn(chars=200))
    moment = max(s.ctx.now for s in world.journal.steps)
    world.apply(cm.AimAt(line="BG_SUCCESS_COOLDOWN_MS", offset=offset))
    world.apply(cm.Turn(chars=200))
    ends = [s for s in world.journal.steps if isinstance(s.event, ReplyEnded)]
    assert ends[-1].ctx.now == moment + 60_000 + offset
    assert hits(world.journal.steps)[f"BG_SUCCESS_COOLDOWN_MS:{offset}"] >= 1
