"""notesoup's planted faults: deliberate bugs ``pictx-fsm verify --extension notesoup`` must
catch. Each changes one action, one fact, one transition of a model document or the window
scheme — the way a real regression (or the reference's own behaviour, where this port
deliberately differs) would — and names the invariant expected to report it."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

from attrs import frozen

from pictx_fsm.extensions.notesoup.lifecycle import ACTIONS, Action, Turn, load_machines
from pictx_fsm.extensions.notesoup.windows import ReferenceWindows
from pictx_fsm.extensions.shared.kit.faults import FamilyFault
from pictx_fsm.extensions.shared.machinery import Facts, MachineFamily
from pictx_fsm.extensions.shared.window_index import SchemeWindowIndex
from pictx_fsm.host.effects import CompactionDraft
from pictx_fsm.testing.kit import faults_by_name, named_fault

__all__ = ["FAULTS", "Fault", "fault_named"]


@frozen(kw_only=True)
class Fault(FamilyFault):
    windows: type[SchemeWindowIndex] | None = None
    """A window scheme the runtime sees instead of this port's."""

    def family(self) -> MachineFamily:
        return _family(self.name)

    def runtime(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The runtime's arguments with this fault planted."""
        out = {**kwargs, "family": self.family()}
        if self.windows is not None:
            out["windows"] = self.windows
        return out


@functools.cache
def _family(name: str) -> MachineFamily:
    return FAULTS[name].planted(load_machines())


def _without_checkpoint(name: str) -> Action:
    build = ACTIONS[name]

    def commit(facts: Facts, turn: Turn) -> Turn:
        built = build(facts, turn)
        drafts = tuple(d for d in built.reset if not isinstance(d, CompactionDraft))
        return built.evolve(reset=drafts)

    return commit


def _never(env: Any, facts: Facts) -> bool:
    return False


def _always(env: Any, facts: Facts) -> bool:
    return True


FAULTS: Final[Mapping[str, Fault]] = faults_by_name(
    Fault(
        name="no-checkpoint",
        description=(
            "a reset writes marker → boot → continuation without the empty native "
            "compaction before the marker (S38, S40): Pi's own projection is no longer "
            "cut, and the reset notice can never be given"
        ),
        caught_by="reset_shape",
        actions={
            name: _without_checkpoint(name)
            for name in (
                "commit_reset",
                "commit_reset_with_prompt",
                "commit_reset_stop",
                "recover_overflow",
            )
        },
    ),
    Fault(
        name="no-migration",
        description=(
            "notesoup 0.38 as released: a pi-context 0.25 marker is foreign (S133), so a "
            "resumed 0.25 session sends its whole erased transcript"
        ),
        caught_by="legacy_boots_carry_over",
        windows=ReferenceWindows,
    ),
    Fault(
        name="checkpoint-assumed",
        description=(
            "every marker window is taken for checkpoint-backed (S40 unchecked), so a "
            "window opened without a checkpoint — the refused window's recovery (Q6) or a "
            "migrated 0.25 window — is left to Pi's projection and goes out uncut (S78)"
        ),
        caught_by="no_erased_history",
        facts={"checkpoint_backed": _always},
    ),
    Fault(
        name="stop-latch-off",
        description=(
            "the stop-pending latch never cancels Pi's tool-batch follow-up (S35): a bare "
            "/clear-memory committed by the hard reserve runs on in the fresh window"
        ),
        caught_by="bare_stop_holds",
        facts={"latch_cancels": _never},
    ),
    Fault(
        name="budget-close-out-commits",
        description=(
            "a budget close-out commits at settlement and continues, as notesoup's "
            "architecture doc says (Q3), instead of being discarded (S58): a warning "
            "alone resets the window"
        ),
        caught_by="settle_resets_only_when_promised",
        model_patch=(
            "notesoup_reset_control",
            "              - {event: before_settle, target: close_out_budget, unless: active}\n"
            "              - {event: before_settle, target: none}\n",
            "              - {event: before_settle, target: close_out_budget, unless: active}\n"
            "              - {event: before_settle, target: none, cond: aborted or error_outcome or not enabled or queued}\n"  # noqa: E501
            "              - {event: before_settle, target: none, before: commit_reset}\n",
        ),
    ),
    Fault(
        name="warning-every-request",
        description=(
            "the final warning is staged again at every eligible request, not once per "
            "window (S54, S62)"
        ),
        caught_by="reminders_once_per_window",
        facts={"warning_in_window": _never},
    ),
)


def fault_named(name: str) -> Fault:
    return named_fault(FAULTS, name)
