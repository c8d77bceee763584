"""Spec §12 invariants 11–20 (automatic handoff and the handoff flow), judged from the
host's switch and takeover journal, the persisted auto-handoff entries and the steps."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeAlias

from attrs import field

from pictx_fsm import js
from pictx_fsm.extensions.context_management.effects import RequestGeneration
from pictx_fsm.extensions.context_management.events import CommandIssued
from pictx_fsm.extensions.context_management.kit.checks import (
    JournalInvariant,
    appended,
    budgets,
    logs,
)
from pictx_fsm.extensions.context_management.kit.contents import CONTENT_INVARIANTS
from pictx_fsm.extensions.context_management.kit.invariants import NOTES_INVARIANTS
from pictx_fsm.extensions.context_management.kit.outcomes import OUTCOME_INVARIANTS
from pictx_fsm.extensions.context_management.kit.world import StepRecord, SwitchRecord, World
from pictx_fsm.extensions.context_management.policy import (
    AUTO_COOLDOWN_MS,
    AUTO_MAX_PER_HOUR,
    HOUR_MS,
)
from pictx_fsm.extensions.context_management.records import (
    AUTO_TYPE,
    HANDOFF_TYPE,
    auto_from_json,
    read_session,
)
from pictx_fsm.extensions.context_management.sizes import json_text_bytes
from pictx_fsm.session.entries import CustomEntry
from pictx_fsm.testing.invariants import InvariantSuite, Violation, remembering

__all__ = [
    "HANDOFF_INVARIANTS",
    "INVARIANT_TYPES",
    "JSON",
    "AutoOnKeepsLimits",
    "CooldownRespected",
    "FlagsRespected",
    "ForecastBaseline",
    "HourlyLimit",
    "NoSwitchAfterInput",
    "PauseBeforeRequest",
    "PausePersists",
    "SwitchOnlyWhenComplete",
    "TakeoverOnce",
    "WorldSuite",
]

JSON: TypeAlias = Any
_PREPARE = "auto_handoff:auto_handoff:pending:idle_reached:1"
_ADOPT = "handoff:handoff:initializing:init_checked:1"


def _persisted_pause(record: StepRecord) -> bool | None:
    """The latest persisted ``paused``: the file, then this step's own auto entries."""
    session = read_session(record.tree.entries[: record.size])
    setting = session.auto or (session.receipt.auto if session.receipt is not None else None)
    paused = None if setting is None else setting.paused
    for data in appended(record, AUTO_TYPE):
        paused = bool(data.get("paused"))
    return paused


@remembering
class HourlyLimit(JournalInvariant):
    """§12.11: at most 3 automatic handoffs (preparations started, Q5) in any rolling hour,
    across the inherited session chain (every runtime of the world)."""

    name, rule = "hourly_limit", "§12.11 M56"

    starts: list[int] = field(init=False, factory=list)

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        if _PREPARE not in record.result.fired:
            return []
        now = record.ctx.now
        self.starts.append(now)
        recent = [t for t in self.starts if now - t < HOUR_MS]
        if len(recent) > AUTO_MAX_PER_HOUR:
            return [self.violation(f"automatic handoff #{len(recent)} within one hour", record)]
        return []


@remembering
class CooldownRespected(JournalInvariant):
    """§12.12: no automatic handoff starts within 5 minutes of the last verified target."""

    name, rule = "cooldown_respected", "§12.12 M60"

    verified: int | None = field(init=False, default=None)

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        if _ADOPT in record.result.fired:
            receipt = read_session(record.tree.entries).receipt
            if receipt is not None and receipt.mode == "automatic":
                self.verified = record.ctx.now
        if _PREPARE in record.result.fired and self.verified is not None:
            gap = record.ctx.now - self.verified
            if gap < AUTO_COOLDOWN_MS:
                return [self.violation(f"an automatic handoff {gap} ms after the last one", record)]
        return []


class FlagsRespected(JournalInvariant):
    """§12.13: no automatic handoff with the flag; nothing at all in a child session."""

    name, rule = "flags_respected", "§12.13 M1 M3"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        if world.config.no_auto_handoff and record.after.state_of("auto_handoff") in (
            "pending",
            "preparing",
        ):
            return [self.violation("automatic handoff scheduled despite the flag", record)]
        return []

    def check_world(self, world: World) -> list[Violation]:
        if not world.config.child:
            return []
        if world.runtimes or world.extension.tools or world.extension.hooks:
            return [self.violation("the child session registered hooks, tools or a runtime")]
        return []


class PauseBeforeRequest(JournalInvariant):
    """§12.14: ``paused=true`` is persisted before an automatic preparation's first request."""

    name, rule = "pause_before_request", "§12.14 M58"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        setting = read_session(record.tree.entries[: record.size]).auto
        current = None if setting is None else setting.paused
        for effect in record.result.effects:
            data = getattr(effect, "data", None)
            if getattr(effect, "custom_type", None) == AUTO_TYPE and isinstance(data, Mapping):
                current = bool(data.get("paused"))
            request = effect.request if isinstance(effect, RequestGeneration) else None
            first = request is not None and request.batch == 1 and not request.repair
            if first and request is not None and request.kind == "handoff_auto" and not current:
                message = "an automatic preparation asked the model before pausing"
                return [self.violation(message, record)]
        return []


class PausePersists(JournalInvariant):
    """§12.15: a paused scheduler is persisted paused; only ``auto on`` or a verified target
    clears a persisted pause."""

    name, rule = "pause_persists", "§12.15 M61"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        paused = _persisted_pause(record)
        found = []
        if record.after.state_of("auto_handoff") == "paused" and paused is not True:
            found.append(self.violation("paused in memory, not in the session", record))
        cleared = any(not d.get("paused") for d in appended(record, AUTO_TYPE))
        before = record.before.auto
        allowed = isinstance(record.event, CommandIssued) and record.event.args.split() == [
            "auto",
            "on",
        ]
        allowed = allowed or _ADOPT in record.result.fired
        if cleared and before.paused and not allowed:
            found.append(
                self.violation(f"the pause was cleared by {type(record.event).__name__}", record)
            )
        return found


class AutoOnKeepsLimits(JournalInvariant):
    """§12.16: ``auto on`` never resets the attempts or ``nextEligibleAt``."""

    name, rule = "auto_on_keeps_limits", "§12.16 M52"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        event = record.event
        if not isinstance(event, CommandIssued) or event.args.split() != ["auto", "on"]:
            return []
        before = record.before.auto
        for data in appended(record, AUTO_TYPE):
            after = auto_from_json(data)
            if (
                after.attempts != before.attempts
                or after.next_eligible_at != before.next_eligible_at
            ):
                return [self.violation("auto on reset the counters", record)]
        return []


@remembering
class _PerSwitch(JournalInvariant):
    """Judges every forward handoff switch of the host's journal once."""

    cursors = frozenset({"_seen", "_switches"})

    _switches: int = field(init=False, default=0)

    def check_world(self, world: World) -> list[Violation]:
        found: list[Violation] = []
        for switch in world.journal.switches[self._switches :]:
            if not switch.returning:
                found.extend(self.check_switch(world, switch))
        self._switches = len(world.journal.switches)
        return found

    def check_switch(self, world: World, switch: SwitchRecord) -> list[Violation]:
        raise NotImplementedError


class NoSwitchAfterInput(_PerSwitch):
    """§12.17: never a switch while user input is pending or after input arrived since the
    handoff began."""

    name, rule = "no_switch_after_input", "§12.17 M48 M57"

    def check_switch(self, world: World, switch: SwitchRecord) -> list[Violation]:
        if not (switch.pending_input or switch.turns_since_begin):
            return []
        message = (
            f"{switch.mode} handoff switched with input pending={switch.pending_input}, "
            f"{switch.turns_since_begin} turn(s) since it began (action {switch.action})"
        )
        return [self.violation(message)]


class SwitchOnlyWhenComplete(_PerSwitch):
    """§12.18: a switch only after a saved package — which only a successful generation
    produces — with package and display text within ``HANDOFF_MAX_BYTES``."""

    name, rule = "switch_only_when_complete", "§12.18 M46 M48"

    def check_switch(self, world: World, switch: SwitchRecord) -> list[Violation]:
        packages = [
            e.data
            for e in switch.source_entries
            if isinstance(e, CustomEntry) and e.custom_type == HANDOFF_TYPE
        ]
        if not packages:
            return [self.violation(f"switched without a saved package (action {switch.action})")]
        last = packages[-1]
        text = json.dumps(
            last.get("package"), separators=(",", ":"), sort_keys=True, ensure_ascii=False
        )
        size = json_text_bytes(text)
        display = js.utf8_length(str(last.get("display", "")))
        limit = budgets(world.journal.steps[-1]).handoff_max_bytes if world.journal.steps else 0
        if size > limit or display > limit:
            message = f"switched with a {size}/{display}-byte package (limit {limit})"
            return [self.violation(message)]
        return []


class ForecastBaseline(JournalInvariant):
    """§12.19: a trigger needs known usage; a forecast a baseline of the same session and
    model with no compaction in between."""

    name, rule = "forecast_baseline", "§12.19 M53 M55"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        found = []
        for trigger in logs(record, "auto_trigger"):
            if record.ctx.tokens is None:
                found.append(self.violation("a trigger on unknown usage", record))
            if trigger.get("reason") != "forecast":
                continue
            base = record.before.baseline
            valid = base is not None and (base.session_id, base.model, base.compactions) == (
                record.before.session_id,
                record.ctx.model,
                record.before.compactions,
            )
            if not valid:
                found.append(self.violation("a forecast without a valid baseline", record))
        return found


class TakeoverOnce(JournalInvariant):
    """§12.20: at most one takeover prompt per new session, never on reopen."""

    name, rule = "takeover_once", "§12.20 M50"

    def residual(self, world: World) -> object:
        """The sessions that already had their takeover prompt (a second is a violation)."""
        return frozenset(path for path, _ in world.journal.takeovers)

    def check_world(self, world: World) -> list[Violation]:
        counts: dict[str, int] = {}
        for path, _ in world.journal.takeovers:
            counts[path] = counts.get(path, 0) + 1
        return [
            self.violation(f"{n} takeover prompts in {path}") for path, n in counts.items() if n > 1
        ]


HANDOFF_INVARIANTS: tuple[type[JournalInvariant], ...] = (
    HourlyLimit,
    CooldownRespected,
    FlagsRespected,
    PauseBeforeRequest,
    PausePersists,
    AutoOnKeepsLimits,
    NoSwitchAfterInput,
    SwitchOnlyWhenComplete,
    ForecastBaseline,
    TakeoverOnce,
)
INVARIANT_TYPES: tuple[type[JournalInvariant], ...] = (
    *NOTES_INVARIANTS,
    *HANDOFF_INVARIANTS,
    *OUTCOME_INVARIANTS,
    *CONTENT_INVARIANTS,
)


class WorldSuite(InvariantSuite[World]):
    """Every invariant of the extension for one world, then each companion's own."""

    def __init__(self) -> None:
        super().__init__(INVARIANT_TYPES)

    def check(self, world: World) -> list[Violation]:
        found = super().check(world)
        for companion in world.companions:
            found.extend(companion.check(world))
        return found

    def finish(self, world: World) -> list[Violation]:
        found = super().finish(world)
        for companion in world.companions:
            found.extend(companion.finish(world))
        return found
