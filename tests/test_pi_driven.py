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
    "follow-up-in-wipe-batch": Driven(
        responses=(WIPE, Text(text="Fresh, with the follow-up.")),
        acts=(Act(on="tool_call", do="follow_up", text="and then this"),),
    ),
}


@pytest.mark.parametrize("name", sorted(DRIVEN))
def test_model_session_agrees_with_the_real_pi_at_exact_hooks(
    name: str, tmp_path: Path, pi_install: PiInstall
) -> None:
    # Given one scenario on both hosts, the model session in the Pi version's host profile
    scenario = DRIVEN[name]
    config = WorldConfig(
        context_window=200_000,
        max_tokens=16_384,
        reserve_tokens=16_384,
        reminder_margin=24_576,
        usage="faux",
    )
    known = scenario.known()
    # When both run it
    _, model = drive_model(config, scenario.responses, scenario.commands, scenario.acts, known)
    real = run_driven(tmp_path, scenario.script(), scenario.commands, scenario.acts, known)
    # Then they write the same files, send the same requests and decide the same
    assert model.files == real.files
    assert model.requests == real.requests
    assert model.decisions == real.decisions
    # And the scenario exercised its rule on this version
    assert scenario.exercises.get(pi_install.version, frozenset()) <= real.fired
