"""``models/`` is the whole truth (issue 9, item 2): every action a transition names changes
what the lifecycle does, so no Python code does it silently instead.

Each case removes one action from one transition's ``before`` list in a copy of the YAML.
Either the copy no longer loads (the action is named nowhere else), or a story that fires the
transition behaves differently: the hook results (value, effects, the audit's machine steps)
or the lifecycle state after some hook differ. A mutation that changed nothing would be an
action whose work is also done by hidden code — or not needed at all.
"""

from __future__ import annotations

import functools
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from lifecycle_kit import WINDOW, Kit, audits_verify  # noqa: F401

from pictx_fsm.audit.log import step_json
from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.extensions.pi_context.kit.scenarios import SCENARIOS
from pictx_fsm.extensions.pi_context.kit.world import World, scenario_config
from pictx_fsm.extensions.pi_context.lifecycle import MACHINE_NAMES, Lifecycle, load_lifecycle
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE
from pictx_fsm.host.effects import HookResult
from pictx_fsm.host.events import AgentBeforeSettle, HookEvent, HostContext
from pictx_fsm.machines import models_dir

MODELS = models_dir() / "pi_context"
SHIPPED = load_lifecycle()

_KEY = re.compile(r"^(\s*)([A-Za-z_][\w-]*):\s*$")
_TRANSITION = re.compile(r"^\s*- \{event: (\w+),.*\}\s*$")
_BEFORE = re.compile(r", before: (\[[^\]]*\]|\w+)")

Trace = list[tuple[Any, ...]]
Story = Callable[[Lifecycle], Trace]


# -- mutations of the YAML text -----------------------------------------------------------------


@attrs.frozen
class Mutation:
    transition: str
    action: str
    document: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.transition}-{self.action}"


def _transition_lines(document: str) -> Iterator[tuple[int, str, str, int]]:
    """``(line number, source state, event, index among source+event)`` per transition line."""
    keys: list[tuple[int, str]] = []
    counts: dict[tuple[str, str], int] = {}
    for number, line in enumerate((MODELS / f"{document}.yaml").read_text().splitlines()):
        key = _KEY.match(line)
        if key:
            indent = len(key.group(1))
            keys = [(i, k) for i, k in keys if i < indent] + [(indent, key.group(2))]
            continue
        transition = _TRANSITION.match(line)
        if transition:
            source = keys[-2][1]  # the state holding `transitions:`
            event = transition.group(1)
            counts[(source, event)] = counts.get((source, event), 0) + 1
            yield number, source, event, counts[(source, event)]


def _mutations() -> list[Mutation]:
    found = []
    for document in MACHINE_NAMES:
        spec = SHIPPED.machines[document].spec
        by_place = {(t.source, t.event, t.index): t for t in spec.transitions}
        lines = (MODELS / f"{document}.yaml").read_text().splitlines()
        for number, source, event, index in _transition_lines(document):
            transition = by_place[(source, event, index)]
            for action in transition.actions:
                kept = [a for a in transition.actions if a != action]
                before = "" if not kept else f", before: [{', '.join(kept)}]"
                text = _BEFORE.sub(before, lines[number], count=1)
                assert text != lines[number], transition.id
                found.append(Mutation(transition.id, action, document, number, text))
    return found


MUTATIONS = _mutations()


def _mutated_models(mutation: Mutation, tmp_path: Path) -> Path:
    target = tmp_path / "models"
    shutil.copytree(MODELS, target)
    path = target / f"{mutation.document}.yaml"
    lines = path.read_text().splitlines(keepends=True)
    lines[mutation.line] = mutation.text + "\n"
    path.write_text("".join(lines))
    return target


# -- stories: host runs that fire transitions ---------------------------------------------------


def _observe(runtime: LifecycleRuntime, result: HookResult) -> tuple[Any, ...]:
    steps = tuple(str(step_json(step)) for step in result.steps)
    return result.hook, result.value, result.effects, steps, runtime.state


def _run(story: Callable[[Lifecycle], None], lifecycle: Lifecycle) -> Trace:
    """Run ``story`` and record every hook any runtime handled (and a hook that raised)."""
    trace: Trace = []
    original = LifecycleRuntime.handle

    def handle(self: LifecycleRuntime, event: HookEvent, ctx: HostContext | None = None) -> Any:
        result = original(self, event, ctx)
        trace.append(_observe(self, result))
        return result

    LifecycleRuntime.handle = handle  # type: ignore[method-assign]
    try:
        story(lifecycle)
    except Exception as error:  # a mutated model may refuse an event: behaviour changed
        trace.append(("raised", repr(error)))
    finally:
        LifecycleRuntime.handle = original  # type: ignore[method-assign]
    return trace


def _scenario(profile: str, name: str) -> Callable[[Lifecycle], None]:
    (scenario,) = [s for s in SCENARIOS if s.name == name]

    def story(lifecycle: Lifecycle) -> None:
        world = World(scenario_config(profile), lifecycle=lifecycle)
        for action in scenario.actions:
            world.apply(action)

    return story


def _kit(lifecycle: Lifecycle) -> Kit:
    kit = Kit.create(lifecycle=lifecycle)
    kit.start()
    kit.build.user("x")
    return kit


def _request_while_off(lifecycle: Lifecycle) -> None:
    kit = _kit(lifecycle)
    kit.tool("wipe_memory")
    kit.set_toggle("off")  # off without its clear: an embedder's host may do this
    kit.tool("wipe_memory")
    kit.wipe()


def _wipe_with_a_request(lifecycle: Lifecycle) -> None:
    kit = _kit(lifecycle)
    kit.build.assistant("calling", stop="toolUse", calls=[{"name": "wipe_memory"}])
    kit.tool("wipe_memory")
    kit.wipe()  # the leaf sits between the call and its result
    kit.build.tool_result("{}", name="wipe_memory")
    kit.wipe()


def _pending_notice_then(event: str) -> Callable[[Lifecycle], None]:
    def story(lifecycle: Lifecycle) -> None:
        kit = _kit(lifecycle)
        kit.tool_turn("wipe_memory")
        if event == "start":
            kit.start()
        else:
            kit.navigate(kit.tree.leaf_id)

    return story


def _one_of_two_resets_committed(lifecycle: Lifecycle) -> None:
    kit = _kit(lifecycle)
    kit.tool_turn("wipe_memory")  # a reset whose tail the host commits
    kit.overflow_turn()
    kit.runtime.handle(AgentBeforeSettle(), kit.ctx)  # a recovery whose drafts are dropped
    kit.settled()


def _staged_then_settled(remaining: int) -> Callable[[Lifecycle], None]:
    def story(lifecycle: Lifecycle) -> None:
        kit = _kit(lifecycle)
        kit.set_tokens(WINDOW - remaining)
        kit.context()
        kit.settled()

    return story


def _announced_then_root(lifecycle: Lifecycle) -> None:
    kit = _kit(lifecycle)
    root = kit.tree.leaf_id
    kit.build.marker("pcw:12345678:0badcafe")
    kit.project()  # no boot for the marker window: announced
    kit.tree.navigate(root)  # back to the root window, without a session_tree
    kit.project()


def _aborted_compaction(lifecycle: Lifecycle) -> None:
    kit = _kit(lifecycle)
    kit.compact(signal_aborted=True)
    kit.set_toggle("off")
    kit.compact(signal_aborted=True)


def _held_repair_then_idle(lifecycle: Lifecycle) -> None:
    kit = _kit(lifecycle)
    kit.build.edit(kit.of_type(BOOT_TYPE)[-1].id)  # the root boot hidden
    kit.start(reason="reload", idle=False)  # held mid-run: owed
    kit.start(reason="reload")  # asked again while idle: repaired now


STORIES: dict[str, Story] = {
    **{
        f"{profile}/{s.name}": functools.partial(_run, _scenario(profile, s.name))
        for profile in ("0.25.1", "0.25.0")
        for s in SCENARIOS
    },
    "request-while-off": functools.partial(_run, _request_while_off),
    "wipe-with-a-request": functools.partial(_run, _wipe_with_a_request),
    "notice-then-start": functools.partial(_run, _pending_notice_then("start")),
    "notice-then-tree": functools.partial(_run, _pending_notice_then("tree")),
    "one-of-two-resets-committed": functools.partial(_run, _one_of_two_resets_committed),
    "guidance-then-settled": functools.partial(_run, _staged_then_settled(30_000)),
    "warning-then-settled": functools.partial(_run, _staged_then_settled(10_000)),
    "announced-then-root": functools.partial(_run, _announced_then_root),
    "aborted-compaction": functools.partial(_run, _aborted_compaction),
    "held-repair-then-idle": functools.partial(_run, _held_repair_then_idle),
}


@functools.cache
def _shipped_trace(name: str) -> Trace:
    return STORIES[name](SHIPPED)


@functools.cache
def _firing() -> dict[str, list[str]]:
    """Transition id → the stories whose shipped run fires it."""
    firing: dict[str, list[str]] = {}
    for name in STORIES:
        for observed in _shipped_trace(name):
            for step in observed[3]:
                for transition in re.findall(r"'id': '([^']+)'", step):
                    if name not in firing.setdefault(transition, []):
                        firing[transition].append(name)
    return firing


# -- the rule -----------------------------------------------------------------------------------


def test_every_transition_with_actions_is_fired_by_some_story() -> None:
    # Given the stories run on the shipped models
    firing = _firing()
    # Then each transition that names an action fires in at least one of them
    silent = [m.transition for m in MUTATIONS if not firing.get(m.transition)]
    assert silent == []


@pytest.mark.parametrize("mutation", MUTATIONS, ids=str)
def test_removing_an_action_from_a_transition_changes_behaviour_or_fails_the_load(
    mutation: Mutation, tmp_path: Path
) -> None:
    # Given a copy of models/ with one action removed from one transition
    models = _mutated_models(mutation, tmp_path)
    # When it is loaded
    try:
        mutated = load_lifecycle(models)
    except ModelDocumentError as error:
        # Then either the load fails, naming the action nobody uses any more
        assert mutation.action in str(error)
        return
    # Or a story that fires the transition behaves differently
    stories = sorted(_firing().get(mutation.transition, []), key=lambda n: len(_shipped_trace(n)))
    assert stories, f"no story fires {mutation.transition}"
    changed = any(STORIES[name](mutated) != _shipped_trace(name) for name in stories)
    assert changed, f"removing {mutation.action} from {mutation.transition} changed nothing"
