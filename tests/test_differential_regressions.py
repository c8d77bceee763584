"""The runs on which the generated differential found the model session differing from the
real Pi, shrunk and kept as regression scenarios (``tests/fixtures/differential/``, one trace
per finding, as ``pictx-fsm differential`` writes it, with what the real Pi did).

Offline, the model session must now do exactly what the recorded real Pi did on each; with
Pi installed, each run is carried out again on every supported Pi version and must agree.
``docs/model-session.md`` ("Generated differential runs") lists each finding and its fix.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pi_versions import PiInstall

from pictx_fsm.hosts.pi.offline import OfflinePi
from pictx_fsm.testing.differential.batch import compare
from pictx_fsm.testing.differential.model import run_model
from pictx_fsm.testing.differential.portable import local_message, portable_message
from pictx_fsm.testing.differential.runs import normalize, plan_of
from pictx_fsm.testing.trace import trace_from_json

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "differential"
FOUND = sorted(FIXTURES.glob("*.json"))


def _found(path: Path) -> tuple[Any, Any, tuple[Any, ...], dict[str, Any]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    trace = trace_from_json(document, str(path))
    kit = trace.kit.differential()
    assert kit is not None
    recorded = document["differential"]
    return kit, trace.config, normalize(trace.actions, kit.category), recorded


def test_every_finding_is_kept_with_what_the_real_pi_did() -> None:
    # Given the kept findings
    # Then there are some, each says what it found and holds the real Pi's observation
    assert len(FOUND) >= 7
    for path in FOUND:
        _, _, actions, recorded = _found(path)
        assert actions and recorded["finding"] and recorded["real"]["decisions"]


@pytest.mark.parametrize("path", FOUND, ids=[p.stem for p in FOUND])
def test_the_model_session_now_does_what_the_real_pi_did_on_each_found_run(path: Path) -> None:
    # Given a shrunk run on which the model session once differed from the real Pi, and what
    # the real Pi did on it (files, requests, decisions) with the system message it sent
    kit, config, actions, recorded = _found(path)
    config = kit.config_for(config, recorded["host_profile"])
    known = plan_of(kit, config, actions).known
    # When the model session runs it in that Pi version's host profile
    model = run_model(kit, config, actions, known, local_message(recorded["system_message"]))
    # Then it writes the same files, sends the same requests and decides the same
    assert model.observed.to_json() == recorded["real"]


@pytest.mark.real_pi
@pytest.mark.parametrize("path", FOUND, ids=[p.stem for p in FOUND])
def test_each_found_run_agrees_with_every_supported_pi(
    path: Path, tmp_path: Path, pi_install: PiInstall
) -> None:
    # Given a kept finding
    kit, config, actions, _ = _found(path)
    program = OfflinePi(node_modules=pi_install.home).program
    # When it runs on this Pi and on the model session in its host profile
    config = kit.config_for(config, pi_install.host_profile)
    outcome = compare(kit, program, config, actions, tmp_path)
    # Then they agree in every compared dimension
    assert outcome.differences == (), outcome


def test_a_kept_finding_names_no_path_of_the_machine_that_recorded_it() -> None:
    # Given every kept finding's system message, as the real Pi sent it then made portable
    for path in FOUND:
        message = json.loads(path.read_text(encoding="utf-8"))["differential"]["system_message"]
        text = json.dumps(message)
        # Then no absolute path of the recording machine is in it
        assert not re.search(r"/(work|tmp|root|home)/", text), path.name
        # And the message read back has the lengths the real Pi's had (estimates count them)
        assert local_message(message) == local_message(portable_message(local_message(message)))


def test_a_machine_path_is_kept_as_its_length_and_read_back_at_that_length() -> None:
    # Given a system message naming Pi's install and the working directory
    sent = {"sections": {"cwd": "<cwd>\n/tmp/tmp708r414b/ws\n</cwd>", "n": 3}}
    # When it is made portable and read back
    kept = portable_message(sent)
    read = local_message(kept)
    # Then the path is gone, and every string has its original length
    assert kept["sections"]["cwd"] == "<cwd>\n<path:19>\n</cwd>"
    assert len(read["sections"]["cwd"]) == len(sent["sections"]["cwd"])
    assert read["sections"]["n"] == 3
