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
from driven import (
    COMPARED,
    DOC,
    Act,
    differences,
    drive_model,
    expected_differences,
    listed_differences,
    run_driven,
)
from pi_versions import INSTALLS, PiInstall

from pictx_fsm.extensions.pi_context.kit.world import WorldConfig
from pictx_fsm.hosts.model import Call, Overflow, Response, Text, Tools

OVERFLOW_ERROR = "prompt is too long: 213462 tokens > 200000 maximum"
WIPE_REQUEST = "reset_control:request:none:request:1"
"""``wipe_memory`` ran and requested a reset (R29)."""
WIPE_RESET = "reset_control:request:explicit:turn_end:3"
"""The requested reset, committed at the batch's ``turn_end`` (R30)."""
ABORTED_TURN = "reset_control:request:none:turn_end:2"
"""A ``turn_end`` that is aborted, an error or an overflow: nothing committed (R21, R26)."""
ARMED = "reset_control:overflow:idle:turn_end:3"
"""An overflow arms the recovery (R24: only with nothing queued)."""
TREE = "projection:projection:watching:tree:1"
"""A navigation the projection follows (R75)."""
SUMMARY_ACROSS_RESET = "toggle:toggle:on:tree_summary:1"
"""A branch summary across a reset window is skipped (R75)."""
SUMMARY_ALLOWED = "toggle:toggle:on:tree_summary:2"
"""A branch summary inside one window goes ahead."""
INHERITED_BOOT = "boot_repair:boot_repair:standby:repair:8"
"""A session that starts on an existing reset window keeps its boot (R65)."""
BOTH = ("0.87.1", "1.6.0")


def _on(*versions: str, fired: tuple[str, ...]) -> dict[str, frozenset[str]]:
    return {version: frozenset(fired) for version in versions}


def _script_of(response: Response) -> dict[str, Any]:
    """The faux script step that stands for a model-session response."""
    if isinstance(response, Overflow):
        return {"error": OVERFLOW_ERROR}
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
    """Per Pi version, transitions the scenario must fire (proving it exercised its rule)."""
    avoids: Mapping[str, frozenset[str]] = field(factory=dict)
    """Per Pi version, transitions it must not fire."""
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

RESET = (WIPE_REQUEST, WIPE_RESET)

DRIVEN: dict[str, Driven] = {
    # The wipe_memory batch ends with `terminate` and the reset boundary asks to continue: a
    # follow-up queued during the batch is delivered *instead of* the context-only turn
    # (pi-agent-core runLoop), so two requests, not three.
    "follow-up-in-wipe-batch": Driven(
        responses=(WIPE, Text(text="Fresh, with the follow-up.")),
        acts=(Act(on="tool_call", do="follow_up", text="and then this"),),
        exercises=_on(*BOTH, fired=RESET),
    ),
    "steer-in-wipe-batch": Driven(
        responses=(WIPE, Text(text="Fresh, steered.")),
        acts=(Act(on="tool_call", do="steer", text="steer this way"),),
        exercises=_on(*BOTH, fired=RESET),
    ),
    "steer-while-streaming": Driven(
        responses=(WIPE, Text(text="Fresh, steered.")),
        acts=(Act(on="message_start:assistant", do="steer", text="steer this way"),),
        exercises=_on(*BOTH, fired=RESET),
    ),
    "follow-up-while-streaming": Driven(
        responses=(WIPE, Text(text="Fresh, with the follow-up.")),
        acts=(Act(on="message_start:assistant", do="follow_up", text="and then this"),),
        exercises=_on(*BOTH, fired=RESET),
    ),
    # An overflow with a follow-up queued while it streamed: pi-context does not arm its
    # recovery (R24); Pi hides the failed reply and runs again, then the follow-up.
    "follow-up-while-an-overflow-streams": Driven(
        responses=(
            Overflow(tokens=213_462),
            Text(text="the retry answer"),
            Text(text="the follow-up answer"),
        ),
        acts=(Act(on="message_start:assistant", do="follow_up", text="and then this"),),
        exercises=_on(*BOTH, fired=(ABORTED_TURN,)),
        avoids=_on(*BOTH, fired=(ARMED,)),
    ),
    "abort-while-streaming": Driven(
        responses=(Text(text="an answer that is cut " * 20), Text(text="after the abort")),
        commands=("please", "again"),
        acts=(Act(on="message_start:assistant", do="abort"),),
        tokens_per_second=50,
        exercises=_on(*BOTH, fired=(ABORTED_TURN,)),
    ),
    # Aborted while the wipe_memory call is being prepared: it never runs, nothing resets
    "abort-before-boundary": Driven(
        responses=(WIPE, Text(text="after the abort")),
        commands=("please", "again"),
        acts=(Act(on="tool_call", do="abort"),),
        exercises=_on(*BOTH, fired=(ABORTED_TURN,)),
        avoids=_on(*BOTH, fired=RESET),
    ),
    # Aborted when the continuation turn after a committed reset starts
    "abort-after-boundary": Driven(
        responses=(WIPE, Text(text="after the abort")),
        commands=("please", "again"),
        acts=(Act(on="turn_start", nth=2, do="abort"),),
        exercises=_on(*BOTH, fired=(*RESET, ABORTED_TURN)),
    ),
    "tree-without-summary": Driven(
        responses=(Text(text="one"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-tree user 2", "third"),
        exercises=_on(*BOTH, fired=(TREE,)),
    ),
    "tree-with-summary": Driven(
        responses=(Text(text="one"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-tree user 2 summarize", "third"),
        summaries=(2,),
        exercises=_on(*BOTH, fired=(TREE, SUMMARY_ALLOWED)),
    ),
    "tree-across-a-reset-with-summary": Driven(
        responses=(WIPE, Text(text="fresh"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-tree user 1 summarize", "third"),
        exercises=_on(*BOTH, fired=(*RESET, TREE, SUMMARY_ACROSS_RESET)),
    ),
    "fork-after-a-reset": Driven(
        responses=(WIPE, Text(text="fresh"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-fork user 2", "third"),
        exercises=_on(*BOTH, fired=(*RESET, INHERITED_BOOT)),
    ),
    "reload-after-navigation": Driven(
        responses=(Text(text="one"), Text(text="two"), Text(text="three")),
        commands=("first", "second", "/drive-tree user 2", "/drive-reload", "third"),
        exercises=_on(*BOTH, fired=(TREE,)),
    ),
    "reload-after-a-reset": Driven(
        responses=(WIPE, Text(text="fresh"), Text(text="two")),
        commands=("first", "/drive-reload", "second"),
        exercises=_on(*BOTH, fired=(*RESET, INHERITED_BOOT)),
    ),
    # wipe_memory run by another tool through ctx.executeTool() (Pi >= 0.99) is honoured
    # like a direct call (docs/decisions.md); Pi 0.87 has no nested calls.
    "nested-wipe": Driven(
        responses=(
            Tools(calls=(Call(name="call_tools", arguments={"calls": [{"name": "wipe_memory"}]}),)),
            Text(text="after the script"),
        ),
        exercises=_on("1.6.0", fired=RESET)
        | _on("0.87.1", fired=("reset_control:request:none:turn_end:4",)),
        avoids=_on("0.87.1", fired=RESET),
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
    # Then they write the same files, send the same requests and decide the same: they
    # differ exactly where docs/model-session.md lists a deliberate difference for this
    # scenario on this Pi version — a listed difference that disappears fails, as does an
    # unlisted one
    listed = listed_differences(DOC.read_text())
    expected = expected_differences(listed, name, pi_install.version)
    assert differences(model, real) == expected, (model, real)
    # And the scenario exercised its rule on this version, and nothing it must not
    assert scenario.exercises.get(pi_install.version, frozenset()) <= real.fired
    assert not scenario.avoids.get(pi_install.version, frozenset()) & real.fired


def test_every_listed_difference_names_a_compared_dimension_a_pi_version_and_real_scenarios() -> (
    None
):
    # Given the documented deliberate differences
    listed = listed_differences(DOC.read_text())
    # Then each names something a driven run compares, supported Pi versions, and scenarios
    # that exist — so that each is checked by a real run
    versions = {install.version for install in INSTALLS}
    assert listed
    for row in listed:
        assert row.compared in COMPARED
        assert row.versions and row.versions <= versions
        assert row.shown_by is None or row.shown_by <= set(DRIVEN)
    # And the structural comparisons never differ deliberately
    assert not {row.compared for row in listed} & {"files", "requests", "decisions"}
