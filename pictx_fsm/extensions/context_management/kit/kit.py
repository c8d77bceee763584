"""pi-context-management's kit: what the generic exploration, traces, coverage and replay
need of it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from pictx_fsm.extensions.context_management.kit import actions as cm
from pictx_fsm.extensions.context_management.kit.boundary import LINES, hits
from pictx_fsm.extensions.context_management.kit.faults import FAULTS
from pictx_fsm.extensions.context_management.kit.invariants_handoff import (
    INVARIANT_TYPES,
    WorldSuite,
)
from pictx_fsm.extensions.context_management.kit.scenarios import configured
from pictx_fsm.extensions.context_management.kit.world import World, WorldConfig
from pictx_fsm.extensions.context_management.machines import (
    MACHINE_NAMES,
    build_machines,
    load_machines,
)
from pictx_fsm.testing.boundaries import TALLY as BOUNDARY_TALLY
from pictx_fsm.testing.kit import Kit, KitOption, Machinery, TraceFormatError

if TYPE_CHECKING:
    from pictx_fsm.testing.kit import CoverageVerdict, Draw, ExploreSettings, Scenario

__all__ = ["KIT", "ContextManagementKit"]

ALONE = "none"
COMPANION_HELP = (
    "context-management alone (none) and/or after pi-context on the same host (default: both)"
)


class ContextManagementKit(Kit):
    name = "context-management"
    machinery = Machinery(MACHINE_NAMES, load_machines, build_machines)
    legacy_formats = ("pictx-fsm/cm-trace/1",)
    options = (KitOption("companion", (ALONE, "pi-context"), COMPANION_HELP),)
    invariant_types = tuple(INVARIANT_TYPES)
    decision_fields = (("runtime", int), ("event", str), ("fired", list))

    name_patterns = (r"\bcm_\d+\b",)
    """Beyond the host's names: the call ids of the extension's tool calls."""

    def config_from_json(self, obj: Any) -> WorldConfig:
        if not isinstance(obj, Mapping):
            raise TraceFormatError("field 'config' must be an object")
        try:
            config = WorldConfig.from_json(obj)
        except (TypeError, ValueError, AttributeError) as error:
            raise TraceFormatError(f"field 'config': {error}") from None
        if config.fault is not None and config.fault not in FAULTS:
            raise TraceFormatError(f"field 'config.fault': no planted fault {config.fault!r}")
        return config

    world_type = World
    suite_type = WorldSuite

    def scenario_configs(
        self, scenario: Scenario, number: int, settings: ExploreSettings
    ) -> Iterator[WorldConfig]:
        for companion in settings.variants["companion"]:
            base = WorldConfig(
                seed=settings.seed, companions=_companions(companion), fault=settings.fault
            )
            yield configured(scenario, base)

    def configs(self, settings: ExploreSettings) -> Any:
        from pictx_fsm.extensions.context_management.kit.strategies import world_configs

        companions = tuple(_companions(c) for c in settings.variants["companion"])
        return world_configs(companions, settings.fault)

    def generate(self, draw: Draw, world: World, settings: ExploreSettings) -> Iterator[Any]:
        from pictx_fsm.extensions.context_management.kit.strategies import rounds
        from pictx_fsm.testing.explore import drawn_rounds

        yield from drawn_rounds(draw, settings.steps, rounds)

    def closing(self, world: World) -> Sequence[Any]:
        """Every run ends at rest: runs settled, every reply, deadline and idle wait the
        host owes delivered."""
        return (cm.Rest(),)

    def boundary_names(self) -> tuple[str, ...]:
        return tuple(line.name for line in LINES)

    def tally(self, world: World, tallies: dict[str, Counter[str]]) -> None:
        tallies.setdefault("companion_transitions", Counter()).update(world.companion_counts())
        steps = [step for step in world.journal.steps if not step.rolled_back]
        tallies.setdefault(BOUNDARY_TALLY, Counter()).update(hits(steps))

    def coverage(self, counts: Mapping[str, int], settings: ExploreSettings) -> CoverageVerdict:
        """Judged with the extension alone: loaded after pi-context, its resets and
        compaction cancellation pre-empt some transitions (docs/context-management.md)."""
        verdict = super().coverage(counts, settings)
        if ALONE in settings.variants["companion"]:
            return verdict
        return attrs.evolve(
            verdict,
            judged=False,
            note="coverage is judged with the extension alone: loaded after pi-context, its "
            "resets and compaction cancellation pre-empt these transitions "
            "(docs/context-management.md)",
        )

    def differential(self) -> Any:
        from pictx_fsm.extensions.context_management.kit.differential import DIFFERENTIAL

        return DIFFERENTIAL

    def describe(self, config: WorldConfig) -> str:
        after = f" · after {', '.join(config.companions)}" if config.companions else ""
        fault = f" · planted fault {config.fault}" if config.fault else ""
        return f"{self.name}{after}{fault}"


def _companions(choice: str) -> tuple[str, ...]:
    return () if choice == ALONE else (choice,)


KIT = ContextManagementKit()
