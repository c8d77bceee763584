"""The extension's whole state for one instance: one frozen, hashable value.

:class:`CmState` holds the five machines' configurations and every variable their guards
read (spec §11): the branch's note memory (replayed from entries, M15), the background
scheduler's cooldowns and retry keys, the automatic-handoff setting and baseline, the
running generation and handoff. ``step`` maps one state to the next; nothing else changes
it, so a trace replays exactly and the state can be compared, hashed and explored.
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import evolve, field, frozen

from pictx_fsm.extensions.context_management.generation import GenRun
from pictx_fsm.extensions.context_management.records import AutoSetting, BranchMemory, Failure
from pictx_fsm.machines import Configuration

__all__ = ["BackgroundVars", "CmState", "Flags", "HandoffRun", "Observation", "Trigger"]


@frozen(kw_only=True)
class Flags:
    """M1, M3: the child-session environment and the two command-line flags."""

    child: bool = False
    no_background: bool = False
    no_auto_handoff: bool = False


@frozen(kw_only=True)
class BackgroundVars:
    """Spec §11.3's variables; ``tries`` and ``blocked`` are keyed by the retry key (M43)."""

    last_success_at: int | None = None
    last_failure_at: int | None = None
    tries: tuple[tuple[str, int], ...] = ()
    blocked: frozenset[str] = frozenset()
    last_codes: tuple[str, ...] = ()
    last_usage: tuple[int, int] | None = None

    def tries_of(self, key: str) -> int:
        return dict(self.tries).get(key, 0)

    def tried(self, key: str) -> BackgroundVars:
        counts = dict(self.tries)
        counts[key] = counts.get(key, 0) + 1
        return evolve(self, tries=tuple(sorted(counts.items())))


@frozen(kw_only=True)
class Observation:
    """One reply-end usage observation (M53) that a forecast may use as its baseline (M55)."""

    session_id: str
    model: str | None
    compactions: int
    tokens: int


@frozen(kw_only=True)
class Trigger:
    """What scheduled an automatic handoff (M54, M57): re-checked after waitForIdle."""

    reason: str
    tokens: int
    context_window: int
    growth: int | None
    projected: int | None
    session_id: str
    model: str | None
    compactions: int
    leaf: str | None
    turns: int


@frozen(kw_only=True)
class HandoffRun:
    """One handoff in the source session: mode, what it captured, and its package."""

    mode: str
    started_at: int
    model: str | None
    leaf: str | None
    compactions: int
    turns: int
    package: str = ""
    """The package as canonical JSON (hashable)."""
    display: str = ""
    target: str | None = None
    failure: str | None = None


@frozen(kw_only=True)
class CmState:
    """One instance of pi-context-management (a fresh one per Pi runtime, like Pi's factory)."""

    configs: tuple[tuple[str, Configuration], ...]
    flags: Flags
    loaded_at: int
    session_id: str = ""
    branch: BranchMemory = field(factory=BranchMemory)
    seen_entries: int = 0
    pending_bytes: int = 0
    """Bytes of source after the coverage position, kept incrementally (M38)."""
    turns: int = 0
    """Turns started in this instance (user input since a trigger or a handoff, M57)."""
    turn_started_at: int | None = None
    run_aborted: bool = False
    """The foreground run was aborted: its settle is no reply end (M6, M41)."""
    gen_owner: str | None = None
    """Who asked for the next generation run (its kind), read by ``open_generation``."""
    compactions: int = 0
    """Compactions observed by this instance (baselines and triggers compare it, M55)."""
    model: str | None = None
    auto: AutoSetting = field(factory=AutoSetting)
    baseline: Observation | None = None
    trigger: Trigger | None = None
    background: BackgroundVars = field(factory=BackgroundVars)
    generation: GenRun | None = None
    next_job: int = 1
    handoff: HandoffRun | None = None
    receipt_package: str | None = None
    receipt_verified: bool = False
    takeover_sent: bool = False
    recall_used: int = 0
    storage_failed: bool = False
    last_failure: Failure | None = None
    status: str = ""
    panel_open: bool = False
    tool_key: str = ""
    """M66: the per-instance key of tool-call fingerprints; held in memory, never stored."""

    def config(self, machine: str) -> Configuration:
        return dict(self.configs)[machine]

    def state_of(self, machine: str) -> str:
        return self.config(machine).states[0][1]

    def with_config(self, machine: str, config: Configuration) -> CmState:
        configs = tuple((name, config if name == machine else c) for name, c in self.configs)
        return evolve(self, configs=configs)

    def machine_states(self) -> Mapping[str, str]:
        return {name: config.states[0][1] for name, config in self.configs}
