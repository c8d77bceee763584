"""pi-context's kit: what the generic exploration, traces, coverage and replay need of it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pictx_fsm.extensions.pi_context.kit import actions as pi_actions
from pictx_fsm.extensions.pi_context.kit.actions import LINE_NAMES
from pictx_fsm.extensions.pi_context.kit.boundary import hits
from pictx_fsm.extensions.pi_context.kit.companion import PiContextCompanion
from pictx_fsm.extensions.pi_context.kit.invariants import INVARIANT_TYPES, InvariantSuite
from pictx_fsm.extensions.pi_context.kit.trace_input import (
    DECISION_FIELDS,
    check_action,
    check_config,
)
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig, scenario_config
from pictx_fsm.extensions.pi_context.lifecycle import (
    MACHINE_NAMES,
    build_lifecycle,
    load_lifecycle,
)
from pictx_fsm.extensions.pi_context.texts import DEFAULT_PROFILE, Profile
from pictx_fsm.extensions.shared.kit.notes_sandbox import HOME_PATTERN
from pictx_fsm.hosts.model.profiles import HOST_PROFILES
from pictx_fsm.testing.boundaries import TALLY as BOUNDARY_TALLY
from pictx_fsm.testing.coverage import EXEMPTIONS_FILE, coverage_of
from pictx_fsm.testing.kit import CoverageVerdict, Kit, KitOption, Machinery

if TYPE_CHECKING:
    from pictx_fsm.testing.kit import Draw, ExploreSettings, Scenario

__all__ = ["KIT", "PiContextKit"]

PROFILES = tuple(p.value for p in Profile)
HOSTS = tuple(HOST_PROFILES)
PROFILE_HELP = "pi-context profile(s) to explore (default: both)"
HOST_HELP = "Pi version(s) the model session behaves as (default: all)"


class PiContextKit(Kit):
    name = "pi-context"
    machinery = Machinery(MACHINE_NAMES, load_lifecycle, build_lifecycle)
    legacy_formats = ("pictx-fsm/trace/1",)
    options = (
        KitOption("profile", PROFILES, PROFILE_HELP, preferred=DEFAULT_PROFILE.value),
        KitOption("host", HOSTS, HOST_HELP, flag="--host-profile"),
    )
    invariant_types = tuple(INVARIANT_TYPES)
    decision_fields = DECISION_FIELDS
    contract_modules = (
        "pictx_fsm.extensions.pi_context.repair",
        "pictx_fsm.extensions.shared.repair",
        "pictx_fsm.extensions.shared.windows",
        "pictx_fsm.extensions.pi_context.policy",
        "pictx_fsm.extensions.shared.policy",
        "pictx_fsm.host.overflow",
        "pictx_fsm.host.effects",
    )

    name_patterns = (
        r"\bsettle-follow-up-\d+\b",
        HOME_PATTERN,
    )
    """Beyond the host's names: the noise's queued follow-ups and the world's notes home."""

    def check_configs(self, settings: ExploreSettings) -> list[WorldConfig]:
        """The seed scenarios' world, in each profile and host explored."""
        return [
            scenario_config(profile, settings.seed, settings.fault, host)
            for profile in settings.variants["profile"]
            for host in settings.variants["host"]
        ]

    def config_from_json(self, obj: Any) -> WorldConfig:
        return check_config(obj)

    def action_from_json(self, obj: Any, where: str = "action") -> Any:
        return check_action(obj, where)

    world_type = World
    suite_type = InvariantSuite

    def scenario_configs(
        self, scenario: Scenario, number: int, settings: ExploreSettings
    ) -> Iterator[WorldConfig]:
        """One run per profile; the hosts alternate, so each scenario meets every host over
        the profiles while the phase costs one run per scenario and profile."""
        hosts = settings.variants["host"]
        for index, profile in enumerate(settings.variants["profile"]):
            host = hosts[(number + index) % len(hosts)]
            yield scenario_config(profile, settings.seed, settings.fault, host)

    def configs(self, settings: ExploreSettings) -> Any:
        from pictx_fsm.extensions.pi_context.kit.strategies import world_configs

        return world_configs(
            settings.variants["profile"], settings.fault, settings.variants["host"]
        )

    def generate(self, draw: Draw, world: World, settings: ExploreSettings) -> Iterator[Any]:
        """A swarm run: its action groups, its length, then every action; it ends settled."""
        from pictx_fsm.extensions.pi_context.kit.strategies import SWARMS, swarm_moves
        from pictx_fsm.testing.explore import drawn_rounds

        swarm = tuple(group for group in draw(SWARMS) if group not in settings.without)
        yield from drawn_rounds(
            draw, settings.steps, lambda: swarm_moves(swarm, world.session.is_idle)
        )
        yield pi_actions.Settle()

    def closing(self, world: World) -> Sequence[Any]:
        """Pi runs every run to its end: nothing is left mid-flight when outcomes are judged."""
        return (pi_actions.Settle(),)

    def boundary_names(self) -> tuple[str, ...]:
        return LINE_NAMES

    def tally(self, world: World, tallies: dict[str, Counter[str]]) -> None:
        tallies.setdefault("tool_outcomes", Counter()).update(world.tool_outcomes())
        records = [record for log in world.audits for record in log.records]
        tallies.setdefault(BOUNDARY_TALLY, Counter()).update(hits(records))

    def coverage(self, counts: Mapping[str, int], settings: ExploreSettings) -> CoverageVerdict:
        lifecycle = self.machines()
        coverage = coverage_of(lifecycle, counts, settings.variants["profile"], PROFILES)
        return CoverageVerdict(
            coverage=coverage, exemptions_file=f"{lifecycle.directory.name}/{EXEMPTIONS_FILE}"
        )

    def report_lines(
        self, tallies: Mapping[str, Counter[str]], failed: bool
    ) -> tuple[list[str], bool]:
        """The notes and history tools' outcome coverage (ok / refusal / error per tool)."""
        from pictx_fsm.extensions.pi_context.kit.tool_coverage import tool_outcome_coverage

        tools = tool_outcome_coverage(
            tallies.get("tool_outcomes", Counter()), self.machines().directory
        )
        lines = list(tools.lines())
        if failed:
            return lines, False
        return [*lines, *tools.problems()], not tools.complete

    def describe(self, config: WorldConfig) -> str:
        fault = f" · planted fault {config.fault}" if config.fault else ""
        return f"profile {config.profile}{fault}"

    def differential(self) -> Any:
        from pictx_fsm.extensions.pi_context.kit.differential import DIFFERENTIAL

        return DIFFERENTIAL

    def companion(self) -> PiContextCompanion:
        return PiContextCompanion()


KIT = PiContextKit()
