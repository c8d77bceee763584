"""notesoup's kit: what the generic exploration, traces, coverage and replay need of it
(``pictx-fsm verify --extension notesoup``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from pictx_fsm.extensions.notesoup.kit.faults import FAULTS
from pictx_fsm.extensions.notesoup.kit.invariants import INVARIANT_TYPES, InvariantSuite
from pictx_fsm.extensions.notesoup.kit.legacy import TAILS, LegacyHistory
from pictx_fsm.extensions.notesoup.kit.world import NotesoupConfig, NotesoupWorld, scenario_config
from pictx_fsm.extensions.notesoup.lifecycle import MACHINE_NAMES, build_machines, load_machines
from pictx_fsm.extensions.shared.kit.notes_sandbox import HOME_PATTERN
from pictx_fsm.testing import actions as host
from pictx_fsm.testing.kit import (
    Draw,
    ExploreSettings,
    Kit,
    Machinery,
    Scenario,
    TraceFormatError,
)

__all__ = ["KIT", "NotesoupKit"]

MAX_COUNT: Final = 1_000_000
_INTEGERS: Final = (
    "seed",
    "context_window",
    "max_tokens",
    "reserve_tokens",
    "reminder_margin",
    "keep_recent_tokens",
)


class NotesoupKit(Kit):
    name = "notesoup"
    invariant_types = tuple(INVARIANT_TYPES)
    machinery = Machinery(MACHINE_NAMES, load_machines, build_machines)
    contract_modules = (
        "pictx_fsm.extensions.shared.repair",
        "pictx_fsm.extensions.shared.windows",
        "pictx_fsm.extensions.shared.policy",
    )

    name_patterns = (HOME_PATTERN,)
    """Beyond the host's names: the world's notes home."""

    def config_from_json(self, obj: Any) -> NotesoupConfig:
        return _config(obj)

    def world(self, config: NotesoupConfig) -> NotesoupWorld:
        return NotesoupWorld(config)

    def suite(self, config: NotesoupConfig) -> InvariantSuite:
        return InvariantSuite()

    def scenario_configs(
        self, scenario: Scenario, number: int, settings: ExploreSettings
    ) -> Iterator[NotesoupConfig]:
        config = scenario_config(settings.seed, settings.fault)
        yield scenario.world(config) if scenario.world is not None else config

    def configs(self, settings: ExploreSettings) -> Any:
        from pictx_fsm.extensions.notesoup.kit.strategies import world_configs

        return world_configs(settings.fault)

    def generate(
        self, draw: Draw, world: NotesoupWorld, settings: ExploreSettings
    ) -> Iterator[Any]:
        from pictx_fsm.extensions.notesoup.kit.strategies import SWARMS, swarm_moves
        from pictx_fsm.testing.explore import run_lengths

        swarm = tuple(group for group in draw(SWARMS) if group not in settings.without)
        count = draw(run_lengths(settings.steps))
        done = 0
        while done < count:
            for action in draw(swarm_moves(swarm, world.session.is_idle)):
                done += 1
                yield action
        yield host.Settle()

    def closing(self, world: NotesoupWorld) -> Sequence[Any]:
        """Pi runs every run to its end (a shrunk or replayed run too): nothing is left
        mid-flight when the promised outcomes are judged."""
        return (host.Settle(),)

    def describe(self, config: NotesoupConfig) -> str:
        parts = ["notesoup"]
        if config.legacy is not None:
            parts.append("resuming a pi-context 0.25 session")
        if config.fault:
            parts.append(f"planted fault {config.fault}")
        return " · ".join(parts)


def _config(obj: Any) -> NotesoupConfig:
    """A configuration from a trace; every field typed, the fault a known one."""
    if not isinstance(obj, Mapping):
        raise TraceFormatError("field 'config' must be an object")
    known = {f.name for f in attrs.fields(NotesoupConfig)}
    unknown = sorted(set(obj) - known, key=str)
    if unknown:
        raise TraceFormatError(f"field 'config' has unknown field(s): {unknown}")
    values: dict[str, Any] = {}
    for name in _INTEGERS:
        if name in obj:
            value = obj[name]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**9:
                raise TraceFormatError(f"field 'config.{name}' must be an integer ≥ 0")
            values[name] = value
    if "automatic" in obj:
        if not isinstance(obj["automatic"], bool):
            raise TraceFormatError("field 'config.automatic' must be true or false")
        values["automatic"] = obj["automatic"]
    fault = obj.get("fault")
    if fault is not None and fault not in FAULTS:
        raise TraceFormatError(f"field 'config.fault': no planted fault {fault!r}")
    values["fault"] = fault
    values["legacy"] = _legacy(obj.get("legacy"))
    config = NotesoupConfig(**values)
    if config.reserve_tokens >= config.context_window:
        raise TraceFormatError(
            "field 'config.reserve_tokens' must be below 'config.context_window'"
        )
    return config


def _legacy(obj: Any) -> LegacyHistory | None:
    if obj is None:
        return None
    if not isinstance(obj, Mapping):
        raise TraceFormatError("field 'config.legacy' must be an object or null")
    try:
        history = LegacyHistory(**dict(obj))
    except TypeError as error:
        raise TraceFormatError(f"field 'config.legacy': {error}") from None
    for name in ("windows", "turns", "chars"):
        value = getattr(history, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
            raise TraceFormatError(f"field 'config.legacy.{name}' must be an integer ≥ 0")
    if history.tail not in TAILS:
        raise TraceFormatError(f"field 'config.legacy.tail' must be one of {list(TAILS)}")
    if not isinstance(history.warning, bool):
        raise TraceFormatError("field 'config.legacy.warning' must be true or false")
    return history


KIT = NotesoupKit()
