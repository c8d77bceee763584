"""pi-context-management traces: a world configuration, the actions, the decisions.

``pictx-fsm verify`` writes a shrunk counterexample as a trace (format
``pictx-fsm/cm-trace/1``); ``pictx-fsm replay`` recognises the format and re-runs it on the
current machines and model session, reporting the first differing decision and whether the
recorded violation reproduces.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import define, field, frozen

from pictx_fsm.errors import PictxError
from pictx_fsm.json_input import read_json_file
from pictx_fsm.testing.cm.actions import Action, action_from_json, action_to_json
from pictx_fsm.testing.cm.checks import CmViolation
from pictx_fsm.testing.cm.invariants_handoff import CmInvariantSuite
from pictx_fsm.testing.cm.world import CmWorld, CmWorldConfig
from pictx_fsm.testing.trace import delta_shrink

CM_TRACE_FORMAT = "pictx-fsm/cm-trace/1"


class CmTraceError(PictxError):
    """A trace file that cannot be used; names the file and the field."""


@frozen(kw_only=True)
class CmTrace:
    config: CmWorldConfig
    actions: tuple[Action, ...]
    decisions: tuple[Mapping[str, Any], ...] | None = None
    failure: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": CM_TRACE_FORMAT,
            "config": self.config.to_json(),
            "actions": [action_to_json(a) for a in self.actions],
            "decisions": None if self.decisions is None else list(self.decisions),
            "failure": None if self.failure is None else dict(self.failure),
        }

    def save(self, path: str | Path) -> Path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        return target


def is_cm_trace(obj: Any) -> bool:
    """Whether a parsed trace document is a pi-context-management trace."""
    return isinstance(obj, Mapping) and obj.get("format") == CM_TRACE_FORMAT


def load_cm_trace(path: str | Path) -> CmTrace:
    """Read a trace file (bounded, hostile JSON refused by :func:`read_json_file`)."""
    source = str(path)
    return cm_trace_from_json(read_json_file(source), source)


def cm_trace_from_json(obj: Any, source: str) -> CmTrace:
    """A parsed trace document; every problem names the file and the field at fault."""
    if not is_cm_trace(obj):
        raise CmTraceError(f"{source}: field 'format' must be {CM_TRACE_FORMAT!r}")
    try:
        config = CmWorldConfig.from_json(obj.get("config") or {})
    except (TypeError, ValueError, AttributeError) as error:
        raise CmTraceError(f"{source}: field 'config': {error}") from None
    raw_actions = obj.get("actions") or ()
    if not isinstance(raw_actions, list):
        raise CmTraceError(f"{source}: field 'actions' must be a list")
    actions = []
    for index, item in enumerate(raw_actions):
        try:
            actions.append(action_from_json(item))
        except (ValueError, AttributeError, TypeError, KeyError) as error:
            raise CmTraceError(f"{source}: field 'actions[{index}]': {error}") from None
    decisions = obj.get("decisions")
    if decisions is not None and not isinstance(decisions, list):
        raise CmTraceError(f"{source}: field 'decisions' must be a list")
    failure = obj.get("failure")
    if failure is not None and not isinstance(failure, Mapping):
        raise CmTraceError(f"{source}: field 'failure' must be an object")
    return CmTrace(
        config=config,
        actions=tuple(actions),
        decisions=None if decisions is None else tuple(decisions),
        failure=failure,
    )


@define
class CmRun:
    world: CmWorld
    violation: CmViolation | None = None
    crash: str | None = None
    failed_at: int | None = None
    violations: list[CmViolation] = field(factory=list)

    @property
    def failed(self) -> bool:
        return self.violation is not None or self.crash is not None

    def describe_failure(self) -> str | None:
        return str(self.violation) if self.violation is not None else self.crash

    @property
    def invariant(self) -> str | None:
        if self.violation is not None:
            return self.violation.invariant
        return "crash" if self.crash is not None else None


def run_cm_actions(config: CmWorldConfig, actions: Sequence[Action]) -> CmRun:
    """Build the world and apply the actions, checking every invariant after each."""
    world = CmWorld(config)
    run = CmRun(world=world)
    suite = CmInvariantSuite()
    extra = _lifecycle_suite(config)
    for index, action in enumerate(actions):
        try:
            world.apply(action)
        except Exception as error:
            run.crash, run.failed_at = f"{type(error).__name__}: {error}", index
            return run
        found: list[Any] = suite.check(world)
        if extra is not None:
            found += [_as_cm(v) for v in extra.check(world)]
        if found:
            run.violations.extend(found)
            run.violation, run.failed_at = found[0], index
            return run
    return run


def _lifecycle_suite(config: CmWorldConfig) -> Any:
    """With pi-context loaded, its own invariants are checked too (both extensions on one
    host must each keep their guarantees)."""
    if not config.pi_context:
        return None
    from pictx_fsm.testing.invariants import InvariantSuite

    return InvariantSuite()


def _as_cm(violation: Any) -> CmViolation:
    return CmViolation(
        invariant=f"pi-context:{violation.invariant}",
        rule=violation.guards,
        message=violation.message,
    )


def record_cm_trace(config: CmWorldConfig, actions: Sequence[Action]) -> tuple[CmTrace, CmRun]:
    run = run_cm_actions(config, actions)
    kept = tuple(actions[: run.failed_at + 1]) if run.failed_at is not None else tuple(actions)
    failure = None
    if run.failed:
        failure = {
            "at_action": run.failed_at,
            "invariant": run.invariant,
            "message": run.describe_failure(),
        }
    trace = CmTrace(
        config=config, actions=kept, decisions=tuple(run.world.decisions()), failure=failure
    )
    return trace, run


def shrink_cm_actions(
    config: CmWorldConfig,
    actions: Sequence[Action],
    invariant: str,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[Action]:
    """Delta-debug (:func:`~pictx_fsm.testing.trace.delta_shrink`) while the same invariant
    still fails, until ``clock()`` passes ``deadline``."""

    def fails(candidate: list[Action]) -> bool:
        return run_cm_actions(config, candidate).invariant == invariant

    return delta_shrink(actions, fails, deadline, clock)
