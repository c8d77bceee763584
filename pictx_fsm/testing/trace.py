"""Trace files: an extension, a world configuration, the actions, and the decisions they
produced — for every extension the same format.

A trace replays exactly: the world is rebuilt from its configuration (seed, settings, fault)
and the actions are applied one by one. ``pictx-fsm verify`` writes a shrunk counterexample as
a trace; ``pictx-fsm replay`` re-runs one on the current code and reports the first machine
decision that differs from the recorded one, and the first invariant violation, if any.
Traces of older releases (``pictx-fsm/trace/1`` for pi-context, ``pictx-fsm/cm-trace/1`` for
pi-context-management) are read as their kit declares (:attr:`~.kit.Kit.legacy_formats`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from attrs import define, field, frozen

from pictx_fsm.json_input import read_json_file
from pictx_fsm.testing.invariants import Suite, Violation
from pictx_fsm.testing.kit import Kit, TraceFormatError, World, kit_named, kit_names

__all__ = [
    "TRACE_FORMAT",
    "Difference",
    "Trace",
    "TraceFormatError",
    "TraceRun",
    "check_decisions",
    "check_failure",
    "close_run",
    "delta_shrink",
    "first_difference",
    "kit_of_document",
    "load_trace",
    "record_trace",
    "run_actions",
    "shrink_actions",
    "trace_from_json",
]

T = TypeVar("T")

TRACE_FORMAT = "pictx-fsm/trace/2"


@frozen(kw_only=True)
class Trace:
    kit: Kit
    config: Any
    actions: tuple[Any, ...]
    decisions: tuple[Mapping[str, Any], ...] | None = None
    failure: Mapping[str, Any] | None = None

    @property
    def extension(self) -> str:
        return self.kit.name

    def to_json(self) -> dict[str, Any]:
        return {
            "format": TRACE_FORMAT,
            "extension": self.kit.name,
            **({"kit": self.kit.locator} if self.kit.locator else {}),
            "config": self.config.to_json(),
            "actions": [self.kit.action_to_json(a) for a in self.actions],
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


def kit_of_document(obj: Any, source: str = "<trace>") -> Kit:
    """The kit a parsed trace document belongs to (by its extension, or its legacy format)."""
    if not isinstance(obj, Mapping):
        raise TraceFormatError(f"{source}: a trace is a JSON object")
    form = obj.get("format")
    if form == TRACE_FORMAT:
        name = obj.get("extension")
        if not isinstance(name, str) or not name:
            raise TraceFormatError(f"{source}: field 'extension' must name an extension")
        locator = obj.get("kit")
        if name not in kit_names() and isinstance(locator, str) and ":" in locator:
            return kit_named(locator)
        return kit_named(name)
    for name in kit_names():
        kit = kit_named(name)
        if form in kit.legacy_formats:
            return kit
    raise TraceFormatError(f"{source}: field 'format' must be {TRACE_FORMAT!r}")


def trace_from_json(obj: Any, source: str = "<trace>", kit: Kit | None = None) -> Trace:
    """A trace from its JSON; the kit validates the configuration and each action."""
    kit = kit or kit_of_document(obj, source)
    actions = obj.get("actions") or []
    try:
        if not isinstance(actions, list):
            raise TraceFormatError("field 'actions' must be a list")
        return Trace(
            kit=kit,
            config=kit.config_from_json(obj.get("config") or {}),
            actions=tuple(_action(kit, a, i) for i, a in enumerate(actions)),
            decisions=check_decisions(obj.get("decisions"), kit.decision_fields),
            failure=check_failure(obj.get("failure")),
        )
    except TraceFormatError as error:
        raise TraceFormatError(f"{source}: {error}") from None


def _action(kit: Kit, obj: Any, index: int) -> Any:
    return kit.action_from_json(obj, f"actions[{index}]")


def check_decisions(
    value: Any, fields: Sequence[tuple[str, type]]
) -> tuple[Mapping[str, Any], ...] | None:
    """The recorded decisions: ``null`` or a list of objects with the kit's ``fields``
    (each of its type; ``fired`` a list of transition ids)."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise TraceFormatError(f"field 'decisions' must be a list or null, got {_show(value)}")
    for index, item in enumerate(value):
        where = f"decisions[{index}]"
        if not isinstance(item, Mapping):
            raise TraceFormatError(f"field {where!r} must be an object, got {_show(item)}")
        for key, kind in fields:
            if not isinstance(item.get(key), kind) or isinstance(item.get(key), bool):
                raise TraceFormatError(f"field '{where}.{key}' must be a {kind.__name__}")
        if not all(isinstance(fired, str) for fired in item.get("fired", ())):
            raise TraceFormatError(f"field '{where}.fired' must list transition ids")
    return tuple(value)


def check_failure(value: Any) -> Mapping[str, Any] | None:
    """The recorded failure: ``null`` or an object whose ``message`` is a string or null."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TraceFormatError(f"field 'failure' must be an object or null, got {_show(value)}")
    message = value.get("message")
    if message is not None and not isinstance(message, str):
        raise TraceFormatError(f"field 'failure.message' must be a string, got {_show(message)}")
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


@define
class TraceRun:
    """The outcome of running actions: the world, the first violation and where it happened."""

    world: World
    violation: Violation | None = None
    crash: str | None = None
    failed_at: int | None = None
    violations: list[Violation] = field(factory=list)

    @property
    def failed(self) -> bool:
        return self.violation is not None or self.crash is not None

    @property
    def invariant(self) -> str | None:
        """The broken invariant's name, ``crash`` for an exception, ``None`` when clean."""
        if self.violation is not None:
            return self.violation.invariant
        return "crash" if self.crash is not None else None

    def describe_failure(self) -> str | None:
        if self.violation is not None:
            return str(self.violation)
        return self.crash


def run_actions(
    kit: Kit, config: Any, actions: Sequence[Any], *, stop_at_failure: bool = True
) -> TraceRun:
    """Build the world and apply the actions, checking every invariant after each; then
    bring the world to rest and judge the promised outcomes (:func:`close_run`), a failure
    there counted at the last action."""
    world = kit.world(config)
    run = TraceRun(world=world)
    suite = kit.suite(config)
    last = max(0, len(actions) - 1)
    for index, action in enumerate(actions):
        try:
            world.apply(action)
        except Exception as error:
            run.crash = f"{type(error).__name__}: {error}"
            run.failed_at = index
            return run
        if _found(run, suite.check(world), index) and stop_at_failure:
            return run
    try:
        found = close_run(kit, world, suite)
    except Exception as error:
        run.crash = f"{type(error).__name__}: {error}"
        run.failed_at = last
        return run
    _found(run, found, last)
    return run


def _found(run: TraceRun, found: list[Violation], index: int) -> bool:
    if found:
        run.violations.extend(found)
        if run.violation is None:
            run.violation = found[0]
            run.failed_at = index
    return bool(found)


def close_run(kit: Kit, world: World, suite: Suite[Any]) -> list[Violation]:
    """The end of a run: the kit's closing actions (:meth:`~.kit.Kit.closing`), each checked
    like any action, then what the invariants still find owed (:meth:`Suite.finish`)."""
    for action in kit.closing(world):
        world.apply(action)
        found = suite.check(world)
        if found:
            return found
    return suite.finish(world)


def record_trace(kit: Kit, config: Any, actions: Sequence[Any]) -> tuple[Trace, TraceRun]:
    """Run the actions and return the trace with its decisions and failure (if any)."""
    run = run_actions(kit, config, actions)
    kept = tuple(actions[: run.failed_at + 1]) if run.failed_at is not None else tuple(actions)
    failure = None
    if run.failed:
        failure = {
            "at_action": run.failed_at,
            "invariant": run.invariant,
            "rule": run.violation.rule if run.violation else "",
            "message": run.describe_failure(),
        }
    trace = Trace(
        kit=kit,
        config=config,
        actions=kept,
        decisions=tuple(run.world.decisions()),
        failure=failure,
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
            where = f"runtime {d.get('runtime')} #{d.get('seq')} {d.get('hook')}"
            return f"{where}: {', '.join(d.get('fired') or ()) or '-'}"

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
    kit: Kit,
    config: Any,
    actions: Sequence[Any],
    invariant: str,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[Any]:
    """Delta-debug a failing action list (:func:`delta_shrink`) while the same invariant (or
    crash) still fails. Used for failures found outside Hypothesis."""

    def fails(candidate: list[Any]) -> bool:
        return run_actions(kit, config, candidate).invariant == invariant

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
