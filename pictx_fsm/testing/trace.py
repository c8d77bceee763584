"""Trace files: a world configuration, the host actions, and the decisions they produced.

A trace replays exactly: the world is rebuilt from its configuration (seed, profile, settings,
fault) and the actions are applied one by one. ``pictx-fsm verify`` writes the shrunk
counterexample as a trace; ``pictx-fsm replay`` re-runs one on the current runtime and model
session and reports the first machine decision that differs from the recorded one, and the
first invariant violation, if any.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from attrs import define, field, frozen

from pictx_fsm.json_input import read_json_file
from pictx_fsm.testing.actions import Action, action_to_json
from pictx_fsm.testing.invariants import InvariantSuite, Violation
from pictx_fsm.testing.trace_input import (
    TraceFormatError,
    check_action,
    check_config,
    check_decisions,
    check_failure,
)
from pictx_fsm.testing.world import World, WorldConfig

T = TypeVar("T")

TRACE_FORMAT = "pictx-fsm/trace/1"


@frozen(kw_only=True)
class Trace:
    config: WorldConfig
    actions: tuple[Action, ...]
    decisions: tuple[Mapping[str, Any], ...] | None = None
    failure: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": TRACE_FORMAT,
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


def load_trace(path: str | Path) -> Trace:
    """Read a trace file; every problem names the file and the field at fault."""
    source = str(path)
    return trace_from_json(read_json_file(source), source)


def trace_from_json(obj: Any, source: str = "<trace>") -> Trace:
    """A trace from its JSON; each field is validated (:mod:`.trace_input`) before use."""
    if not isinstance(obj, Mapping) or obj.get("format") != TRACE_FORMAT:
        raise TraceFormatError(f"{source}: field 'format' must be {TRACE_FORMAT!r}")
    actions = obj.get("actions") or []
    try:
        if not isinstance(actions, list):
            raise TraceFormatError("field 'actions' must be a list")
        return Trace(
            config=check_config(obj.get("config") or {}),
            actions=tuple(check_action(a, f"actions[{i}]") for i, a in enumerate(actions)),
            decisions=check_decisions(obj.get("decisions")),
            failure=check_failure(obj.get("failure")),
        )
    except TraceFormatError as error:
        raise TraceFormatError(f"{source}: {error}") from None


@define
class TraceRun:
    """The outcome of running a trace: the world, the first violation and where it happened."""

    world: World
    violation: Violation | None = None
    crash: str | None = None
    failed_at: int | None = None
    violations: list[Violation] = field(factory=list)

    @property
    def failed(self) -> bool:
        return self.violation is not None or self.crash is not None

    def describe_failure(self) -> str | None:
        if self.violation is not None:
            return str(self.violation)
        return self.crash


def run_actions(
    config: WorldConfig, actions: Sequence[Action], *, stop_at_failure: bool = True
) -> TraceRun:
    """Build the world and apply the actions, checking every invariant after each."""
    world = World(config)
    run = TraceRun(world=world)
    suite = InvariantSuite()
    for index, action in enumerate(actions):
        try:
            world.apply(action)
        except Exception as error:
            run.crash = f"{type(error).__name__}: {error}"
            run.failed_at = index
            return run
        found = suite.check(world)
        if found:
            run.violations.extend(found)
            if run.violation is None:
                run.violation = found[0]
                run.failed_at = index
            if stop_at_failure:
                return run
    return run


def record_trace(config: WorldConfig, actions: Sequence[Action]) -> tuple[Trace, TraceRun]:
    """Run the actions and return the trace with its decisions and failure (if any)."""
    run = run_actions(config, actions)
    kept = tuple(actions[: run.failed_at + 1]) if run.failed_at is not None else tuple(actions)
    failure = None
    if run.failed:
        failure = {
            "at_action": run.failed_at,
            "invariant": run.violation.invariant if run.violation else "crash",
            "guards": run.violation.guards if run.violation else "",
            "message": run.describe_failure(),
        }
    trace = Trace(
        config=config, actions=kept, decisions=tuple(run.world.decisions()), failure=failure
    )
    return trace, run


@frozen(kw_only=True)
class Difference:
    index: int
    expected: Mapping[str, Any] | None
    actual: Mapping[str, Any] | None

    def describe(self) -> str:
        def show(d: Mapping[str, Any] | None) -> str:
            if d is None:
                return "(none)"
            return f"runtime {d['runtime']} #{d['seq']} {d['hook']}: {', '.join(d['fired']) or '-'}"

        return f"decision {self.index}: recorded {show(self.expected)}; now {show(self.actual)}"


def first_difference(
    expected: Sequence[Mapping[str, Any]], actual: Sequence[Mapping[str, Any]]
) -> Difference | None:
    for index in range(max(len(expected), len(actual))):
        left = expected[index] if index < len(expected) else None
        right = actual[index] if index < len(actual) else None
        if left is None or right is None or dict(left) != dict(right):
            return Difference(index=index, expected=left, actual=right)
    return None


def shrink_actions(
    config: WorldConfig,
    actions: Sequence[Action],
    invariant: str,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[Action]:
    """Delta-debug a failing action list (:func:`delta_shrink`) while the same invariant (or
    crash) still fails. Used for failures found outside Hypothesis."""

    def fails(candidate: list[Action]) -> bool:
        run = run_actions(config, candidate)
        name = run.violation.invariant if run.violation else ("crash" if run.crash else None)
        return name == invariant

    return delta_shrink(actions, fails, deadline, clock)


def delta_shrink(
    actions: Sequence[T],
    fails: Callable[[list[T]], bool],
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[T]:
    """Drop chunks, then single actions, while ``fails`` still holds; stops with the shortest
    failing list so far once ``clock()`` passes ``deadline`` (the time budget bounds
    shrinking too)."""
    current = list(actions)
    chunk = max(1, len(current) // 2)
    while chunk >= 1:
        index = 0
        while index < len(current) and (deadline is None or clock() < deadline):
            candidate = current[:index] + current[index + chunk :]
            if candidate and fails(candidate):
                current = candidate
            else:
                index += chunk
        chunk //= 2
    return current
