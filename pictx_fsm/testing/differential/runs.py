"""A differential run in its canonical form, and its plan for the real Pi.

A run is a list of actions in verify's language. Its canonical form (:func:`normalize`) is what
both hosts run — the generator draws canonical runs, and every candidate of a shrink is made
canonical before it runs:

    run      := (reply | idle-op settle | prompt stop* settle)*
    stop     := advance_to(hook, n) act+

Replies are scripted while idle; a prompt's run is stopped at hooks, acted on there and
settled; idle operations (tree, fork, resume, ``/reload``, ``/compact``, commands) are settled
too. Whatever does not fit is dropped where the model session would do nothing with it (a
steer while idle, a stop outside a run, an act with no stop before it) and a run is closed
where the next action needs an idle session.

The plan (:func:`plan_of`) is the same run for the real Pi: replies appended to the scripted
model's file before the next command, each idle action as an RPC command, each prompt with its
stops as a driver episode (``driver.mjs``), and every stop's acts in both forms — the
driver's, and the idle command that does what the model session does with them when the run
settled before the stop was reached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from attrs import frozen

from pictx_fsm.hosts.model import LengthStop, Overflow, ProviderError, Response, Text, Tools
from pictx_fsm.testing.actions import AdvanceTo, Prompt, Script, Settle, filler, response_of
from pictx_fsm.testing.differential.kit import (
    Category,
    DifferentialKit,
    Realised,
    prompt,
)

__all__ = [
    "Episode",
    "NotRealisable",
    "Plan",
    "Release",
    "Run",
    "Stop",
    "normalize",
    "plan_of",
    "reply_step",
]

JSON: TypeAlias = Any


class NotRealisable(ValueError):
    """An action the differential cannot carry out on the real Pi."""


def normalize(
    actions: Sequence[Any], category: Callable[[Any], Category | None]
) -> tuple[Any, ...]:
    """The canonical form of a run (see the module); raises :class:`NotRealisable` for an
    action without a category."""
    out: list[Any] = []
    in_run = False
    stopped = False

    def close() -> None:
        nonlocal in_run, stopped
        if in_run:
            out.append(Settle())
        in_run = stopped = False

    for action in actions:
        kind = category(action)
        if kind is None:
            raise NotRealisable(f"action {type(action).KIND!r} cannot be realised on the real Pi")
        if kind is Category.SETTLE:
            close()
        elif kind is Category.SCRIPT:
            close()
            out.append(action)
        elif kind is Category.PROMPT:
            close()
            out.append(action)
            in_run = True
        elif kind is Category.STOP:
            if in_run:
                out.append(action)
                stopped = True
        elif kind is Category.ACT:
            if in_run and stopped:
                out.append(action)
        elif kind is Category.EITHER and in_run:
            if stopped:
                out.append(action)
        else:  # IDLE, or EITHER while idle
            close()
            out.extend((action, Settle()))
    close()
    return tuple(out)


@frozen(kw_only=True)
class Release:
    """A reply appended to the scripted model's file."""

    step: Mapping[str, JSON]


@frozen(kw_only=True)
class Stop:
    """Run on until ``on`` has fired ``count`` more times, then do ``acts``."""

    on: str
    count: int
    acts: tuple[Realised, ...]

    def to_json(self) -> dict[str, JSON]:
        acts = [dict(act.act) for act in self.acts if act.act is not None]
        return {"on": self.on, "count": self.count, "acts": acts}


@frozen(kw_only=True)
class Episode:
    """A prompt's run: its key in the driver's plan and its stops."""

    key: str
    stops: tuple[Stop, ...]


@frozen(kw_only=True)
class Run:
    """One RPC command while idle, then Pi's settling; a prompt carries its episode."""

    rpc: Mapping[str, JSON]
    episode: Episode | None = None


Operation: TypeAlias = Release | Run


@frozen(kw_only=True)
class Plan:
    operations: tuple[Operation, ...]
    known: tuple[str, ...]
    """Every text the run writes into the conversation."""

    def driver_plan(self, boundary: Mapping[str, JSON]) -> dict[str, JSON]:
        episodes = {
            op.episode.key: [stop.to_json() for stop in op.episode.stops]
            for op in self.operations
            if isinstance(op, Run) and op.episode is not None
        }
        return {"episodes": episodes, "boundary": dict(boundary)}


def reply_step(response: Response) -> dict[str, JSON]:
    """The scripted model's reply (``scripted-model.mjs``) for a ScriptedProvider response."""
    if isinstance(response, Overflow):
        return {"overflow": True}
    if isinstance(response, ProviderError):
        return {"error": response.message}
    if isinstance(response, LengthStop):
        return {"length": response.text}
    if isinstance(response, Tools):
        tools = [{"name": c.name, "args": dict(c.arguments)} for c in response.calls]
        return {"tools": tools, **({"text": response.text} if response.text else {})}
    if isinstance(response, Text):
        return {"text": response.text}
    raise NotRealisable(f"no scripted reply stands for {type(response).__name__}")


def plan_of(kit: DifferentialKit, config: Any, actions: Sequence[Any]) -> Plan:
    """The real Pi's plan for a canonical run (serials are positions in ``actions``, as the
    model session's world numbers them)."""
    operations: list[Operation] = []
    known: list[str] = []
    episode: tuple[Prompt, int, list[Stop]] | None = None

    def finish() -> None:
        nonlocal episode
        if episode is not None:
            start, serial, stops = episode
            text = filler(f"prompt-{serial}", start.chars)
            run = Episode(key=str(serial), stops=tuple(stops))
            operations.append(Run(rpc=prompt(text), episode=run))
            episode = None

    for serial, action in enumerate(actions):
        kind = kit.category(action)
        known.extend(kit.texts(action, serial))
        if kind is Category.SCRIPT:
            steps = kit.script_steps(action, serial)
            if steps is None:
                assert isinstance(action, Script)
                steps = (reply_step(response_of(action, serial)),)
            operations.extend(Release(step=step) for step in steps)
        elif kind is Category.PROMPT:
            episode = (action, serial, [])
        elif kind is Category.STOP:
            assert isinstance(action, AdvanceTo) and episode is not None
            episode[2].append(Stop(on=action.step, count=action.count, acts=()))
        elif kind is Category.SETTLE:
            finish()
        elif episode is not None:
            stops = episode[2]
            last = stops[-1]
            acts = (*last.acts, kit.realise(action, serial, config))
            stops[-1] = Stop(on=last.on, count=last.count, acts=acts)
        else:
            realised = kit.realise(action, serial, config)
            if realised.idle is not None:
                operations.append(Run(rpc=realised.idle))
    finish()
    return Plan(operations=tuple(operations), known=tuple(known))
