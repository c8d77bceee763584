"""``pictx-fsm differential --extension context-management``: pi-context-management's generated
runs on a real Pi and on the model session.

Offline: the generator draws only actions the differential realises, a notes call is the same
request on both hosts, the real side's rest is judged by the machines' states, and the docs
list every action kind verify draws. With Pi: a divergence planted in the model session makes
a batch fail with a run shrunk to a few actions, written as a trace that replays. The
fixed-seed batches of 100 runs per Pi version are ``.ci/run``'s; their figures are in
``docs/model-session.md``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from pi_versions import INSTALLS

from pictx_fsm.cli import main
from pictx_fsm.extensions.context_management.kit import actions as cm
from pictx_fsm.extensions.context_management.kit.differential import (
    DIFFERENTIAL,
    ENTRY_AT_THE_LEAFS_PARENT,
    WAITING,
    notes_reply,
)
from pictx_fsm.extensions.context_management.kit.differential import (
    _targets as targets,
)
from pictx_fsm.extensions.context_management.kit.differential import (
    _waiting as waiting,
)
from pictx_fsm.extensions.context_management.kit.differential_runs import differential_runs
from pictx_fsm.extensions.context_management.kit.world import WorldConfig
from pictx_fsm.extensions.context_management.texts import NOTES_TOOL
from pictx_fsm.testing import actions as shared
from pictx_fsm.testing.differential.batch import generated_runs
from pictx_fsm.testing.differential.model import run_model
from pictx_fsm.testing.differential.runs import normalize, plan_of

DOCS = Path(__file__).resolve().parents[1] / "docs" / "model-session.md"
MAX_ACTIONS = 8
RUNS = 12
A_FEW_ACTIONS = 4


@pytest.mark.parametrize("host", ["pi-0.87", "pi-1.6"])
def test_cm_runs_are_canonical_and_every_action_is_realised_on_the_real_pi(host: str) -> None:
    @settings(max_examples=40, deadline=None, database=None)
    @given(differential_runs(host, 16))
    def check(run: tuple[WorldConfig, tuple[object, ...]]) -> None:
        # Given a generated run
        config, actions = run
        # Then it is in the Pi version's profile, canonical, and every action has a category
        assert config.host == host and config.usage == "faux"
        assert normalize(actions, DIFFERENTIAL.category) == actions
        assert all(DIFFERENTIAL.category(action) is not None for action in actions)
        # And its plan for the real Pi knows every prompt's and closing reply's text
        known = plan_of(DIFFERENTIAL, config, actions).known
        writing = [a for a in actions if isinstance(a, shared.Prompt | cm.CmTool)]
        assert len(known) >= len(writing)

    check()


def test_a_notes_call_cites_the_latest_message_of_its_role_when_the_request_is_answered() -> None:
    # Given a notes update citing the user, and one citing a message that does not exist
    cites_user = cm.CmTool(tool="notes_update", source="user", key=1, then="read")
    cites_nothing = cm.CmTool(tool="notes_update", source="missing")
    # When each becomes the model's replies
    tools, closing = notes_reply(cites_user, 3)
    missing, _ = notes_reply(cites_nothing, 4)
    # Then the call names its source by role and position, resolved on either host when the
    # request is answered, then the model closes with a text of its own
    first, then = tools.calls
    assert first.name == NOTES_TOOL
    assert first.arguments["sources"] == [{cm.SOURCE_REF: ["user", -2]}]
    assert then.arguments["sourceId"] == {cm.SOURCE_REF: ["user", -2]}
    assert missing.calls[0].arguments["sources"] == ["0000dead"]
    assert closing.text == "done-3"
    # And the real Pi's scripted model gets exactly these replies
    steps = DIFFERENTIAL.script_steps(cites_user, 3)
    assert steps is not None
    assert steps[0]["tools"][0]["args"]["sources"] == [{cm.SOURCE_REF: ["user", -2]}]
    assert steps[1] == {"text": "done-3"}


def _line(log: str, event: str, *fired: str) -> dict[str, object]:
    return {"log": log, "event": event, "fired": list(fired)}


def test_the_real_side_rests_only_when_no_live_session_waits_for_pi() -> None:
    # Given the machines' transitions
    known = targets()
    start = "auto_handoff:auto_handoff:unloaded:session_start:4"
    scheduled = "auto_handoff:auto_handoff:armed:reply_end:2"
    assert known[scheduled] == ("auto_handoff", "pending") and "pending" in WAITING["auto_handoff"]
    # Then a session whose automatic handoff waits for idle has not come to rest
    started = _line("a", "SessionStarted", start)
    assert waiting([started, _line("a", "ReplyEnded", scheduled)], known)
    # Nor has Pi when every session has ended (the next one is starting)
    assert waiting([_line("a", "SessionStarted", start), _line("a", "SessionEnding")], known)
    # While a session at rest, and a waiting session that ended beside a live one, have
    assert not waiting([_line("a", "SessionStarted", start)], known)
    assert not waiting(
        [
            _line("a", "ReplyEnded", scheduled),
            _line("a", "SessionEnding"),
            _line("b", "SessionStarted", start),
        ],
        known,
    )


def test_the_docs_list_every_action_kind_verify_draws_for_cm() -> None:
    # Given the action kinds verify draws for pi-context-management
    kinds = {*cm.CM_ACTION_TYPES, *cm.SHARED_KINDS}
    # When the docs' table of what the differential realises is read
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("**pi-context-management.**") :]
    cells = re.findall(r"^\| ([^|]+) \|", section, flags=re.MULTILINE)
    listed = {kind for cell in cells for kind in re.findall(r"`([a-z_]+)`", cell)}
    # Then every kind is there (realised, or with the reason it is not)
    assert kinds <= listed, sorted(kinds - listed)


def _batch_exercising(host_profile: str) -> tuple[int, int]:
    """The first seed whose batch holds a run the planted divergence changes on the model
    session alone, and how many runs reach it."""
    plant = ENTRY_AT_THE_LEAFS_PARENT.plant
    for seed in range(64):
        runs = generated_runs(DIFFERENTIAL, host_profile, RUNS, seed, MAX_ACTIONS)
        for number, (config, actions) in enumerate(runs, start=1):
            known = plan_of(DIFFERENTIAL, config, actions).known
            faithful = run_model(DIFFERENTIAL, config, actions, known, None).observed
            planted = run_model(DIFFERENTIAL, config, actions, known, None, plant).observed
            if planted != faithful:
                return seed, number
    raise AssertionError("no batch exercises the planted divergence")


def test_a_planted_divergence_fails_the_cm_batch_with_a_shrunk_run_of_a_few_actions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the oldest supported Pi, and the model session planted to append the extension's
    # entries (its notes commits) at the leaf's parent, with a seed whose batch exercises it
    install = INSTALLS[0]
    if not install.available():
        pytest.skip(install.skip_reason())
    seed, runs = _batch_exercising(install.host_profile)
    out = tmp_path / "out"
    common = ["differential", "--extension=context-management", "--pi", str(install.home)]
    plant = f"--plant={ENTRY_AT_THE_LEAFS_PARENT.name}"
    # When the batch runs with the divergence planted
    code = main(
        [
            *common,
            f"--runs={runs}",
            f"--seed={seed}",
            f"--max-actions={MAX_ACTIONS}",
            plant,
            f"--out={out}",
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    # Then it fails, shrunk to a few actions and written as a trace
    assert code == 1, summary
    assert summary["differences"] == 1 and summary["found"]["differs_in"], summary
    assert summary["found"]["shrunk_actions"] <= A_FEW_ACTIONS, summary
    trace = Path(summary["trace"])
    assert len(json.loads(trace.read_text())["actions"]) == summary["found"]["shrunk_actions"]
    # And the trace replays: still differing with the divergence, agreeing without it
    assert main([*common, f"--replay={trace}", plant]) == 1
    assert main([*common, f"--replay={trace}"]) == 0
    assert "differences  none" in capsys.readouterr().out
