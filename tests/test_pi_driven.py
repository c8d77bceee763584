"""Driven differential tests: what print and RPC mode cannot place — steer and follow-up
during a tool batch and while streaming, abort before and after a reset boundary, ``/tree``
with and without a summary, fork, reload, nested tool calls — on the real Pi (through the
bridge, with the driver extension acting at exact hooks, see ``driven``) and on the model
session in the matching host profile, on every supported Pi version. Both must write the same
session files (entry kinds and parents), send the same agent requests (roles and known
texts) and take the same lifecycle decisions; each scenario names transitions it must fire.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from attrs import field, frozen
from driven import Act, drive_model, run_driven
from pi_versions import PiInstall

from pictx_fsm.hosts.model import Call, Response, Text, Tools
from pictx_fsm.testing.world import WorldConfig

pytestmark = pytest.mark.real_pi

WIPE_RESET = "reset_control:request:explicit:turn_end:3"
"""The reset a ``wipe_memory`` call requests, committed at the batch's ``turn_end`` (R30)."""


def _script_of(response: Response) -> dict[str, Any]:
    """The faux script step that stands for a model-session response."""
    if isinstance(response, Tools):
        tools = [{"name": c.name, "args": dict(c.arguments)} for c in response.calls]
        return {"tools": tools, **({"text": response.text} if response.text else {})}
    assert isinstance(response, Text)
    return {"text": response.text}


@frozen(kw_only=True)
class Driven:
    """One scenario: the model's replies (the faux script follows them, plus ``summaries``
    answering the real Pi's summarization requests at the given positions), the commands,
    the acts, and per Pi version the transitions it must fire."""

    responses: tuple[Response, ...]
    commands: tuple[str, ...] = ("please",)
    acts: tuple[Act, ...] = ()
    summaries: tuple[int, ...] = ()
    """Script positions of the summary replies Pi's ``/tree`` summarization asks for."""
    exercises: Mapping[str, frozenset[str]] = field(factory=dict)
    tokens_per_second: int | None = None
    """Slows the real Pi's faux stream (an abort while streaming must find it streaming)."""

    def script(self) -> list[dict[str, Any]]:
        steps = [_script_of(r) for r in self.responses]
        for position in self.summaries:
            steps.insert(position, {"text": "## Goal\nbranch summary"})
        return steps

    def known(self) -> frozenset[str]:
        texts = {c for c in self.commands if not c.startswith("/")}
        texts |= {a.text for a in self.acts if a.text}
        texts |= {r.text for r in self.responses if isinstance(r, Text | Tools) and r.text}
        return frozenset(texts)


WIPE = Tools(calls=(Call(name="wipe_memory"),))

DRIVEN: dict[str, Driven] = {
    # The wipe_memory batch ends with `terminate`, and the reset boundary asks to continue:
    # a follow-up queued during the batch is delivered *instead of* the context-only turn
    # (pi-agent-core runLoop), so two requests, not three.
    "follow-up-in-wipe-batch": Driven(
        responses=(WIPE, Text(text="Fresh, with the follow-up.")),
        acts=(Act(on="tool_call", do="follow_up", text="and then this"),),
    ),
    "steer-in-wipe-batch": Driven(
        responses=(WIPE, Text(text="Fresh, steered.")),
        acts=(Act(on="tool_call", do="steer", text="steer this way"),),
    ),
    "steer-while-streaming": Driven(
        responses=(Text(text="first answer"), Text(text="steered answer")),
        acts=(Act(on="message_start:assistant", do="steer", text="steer this way"),),
    ),
    "follow-up-while-streaming": Driven(
        responses=(Text(text="first answer"), Text(text="follow-up answer")),
        acts=(Act(on="message_start:assistant", do="follow_up", text="and then this"),),
    ),
    "abort-while-streaming": Driven(
        responses=(Text(text="an answer that is cut " * 20), Text(text="after the abort")),
        commands=("please", "again"),
        acts=(Act(on="message_start:assistant", do="abort"),),
        tokens_per_second=50,
    ),
    # Aborted while the wipe_memory call is being prepared: the call never runs
    "abort-before-boundary": Driven(
        responses=(WIPE, Text(text="after the abort")),
        commands=("please", "again"),
        acts=(Act(on="tool_call", do="abort"),),
    ),
    # Aborted when the continuation turn after a committed reset starts
    "abort-after-boundary": Driven(
        responses=(WIPE, Text(text="after the abort")),
        commands=("please", "again"),
        acts=(Act(on="turn_start", nth=2, do="abort"),),
    ),
    "tree-without-summary": Driven(
        responses=(Text(text="one"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-tree user 2", "third"),
    ),
    "tree-with-summary": Driven(
        responses=(Text(text="one"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-tree user 2 summarize", "third"),
        summaries=(2,),
    ),
    "tree-across-a-reset-with-summary": Driven(
        responses=(WIPE, Text(text="fresh"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-tree user 1 summarize", "third"),
    ),
    "fork-after-a-reset": Driven(
        responses=(WIPE, Text(text="fresh"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-fork user 2", "third"),
    ),
    "reload-after-navigation": Driven(
        responses=(Text(text="one"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-tree user 2", "/drive-reload", "third"),
    ),
    "reload-after-a-reset": Driven(
        responses=(WIPE, Text(text="fresh"), Text(text="two")),
        commands=("first", "/drive-reload", "second"),
    ),
    "nested-wipe": Driven(
        responses=(
            Tools(calls=(Call(name="call_tools", arguments={"calls": [{"name": "wipe_memory"}]}),)),
            Text(text="after the script"),
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(DRIVEN))
def test_model_session_agrees_with_the_real_pi_at_exact_hooks(
    name: str, tmp_path: Path, pi_install: PiInstall
) -> None:
    # Given one scenario on both hosts, the model session in the Pi version's host profile
    scenario = DRIVEN[name]
    config = WorldConfig(
        host=pi_install.host_profile,
        context_window=200_000,
        max_tokens=16_384,
        reserve_tokens=16_384,
        reminder_margin=24_576,
        usage="faux",
    )
    known = scenario.known()
    # When both run it
    _, model = drive_model(config, scenario.responses, scenario.commands, scenario.acts, known)
    real = run_driven(
        tmp_path,
        scenario.script(),
        scenario.commands,
        scenario.acts,
        known,
        scenario.tokens_per_second,
    )
    # Then they write the same files, send the same requests and decide the same
    assert model.files == real.files
    assert model.requests == real.requests
    assert model.decisions == real.decisions
    # And the scenario exercised its rule on this version
    assert scenario.exercises.get(pi_install.version, frozenset()) <= real.fired
