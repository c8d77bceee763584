"""Record again what the real Pi does on each kept differential finding.

A finding (``tests/fixtures/differential/*.json``) keeps the real Pi's observation of its
shrunk run — files, requests and fired transitions. When the lifecycle's transitions change
(a guard added renumbers a transition id), the real Pi, which runs the same lifecycle through
the bridge, now fires the new ids: this runs each finding again on the Pi version it names and
stores that observation, but only where the model session agrees with it on every dimension
(a run that differs is printed and left as it was).

    python scripts/rerecord_findings.py [GLOB]   # from the repository root, Pis installed
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from pictx_fsm.hosts.pi.offline import OfflinePi
from pictx_fsm.testing.differential.batch import compare
from pictx_fsm.testing.differential.portable import portable_message
from pictx_fsm.testing.differential.runs import normalize
from pictx_fsm.testing.trace import trace_from_json

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
FINDINGS = ROOT / "tests" / "fixtures" / "differential"
HOMES = {
    "0.87.1": ROOT / ".pi-node" / "node_modules",
    "1.6.0": ROOT / ".pi-node-1.6" / "node_modules",
}
"""Where ``.ci/run`` installs each supported Pi (``tests/pi_versions.py``)."""


def main(pattern: str = "*.json") -> int:
    differing = 0
    for path in sorted(FINDINGS.glob(pattern)):
        document = json.loads(path.read_text(encoding="utf-8"))
        trace = trace_from_json(document, str(path))
        kit = trace.kit.differential()
        assert kit is not None
        recorded = document["differential"]
        config = kit.config_for(trace.config, recorded["host_profile"])
        program = OfflinePi(node_modules=HOMES[recorded["pi"]]).program
        with tempfile.TemporaryDirectory(prefix="pictx-finding-") as work:
            outcome = compare(
                kit, program, config, normalize(trace.actions, kit.category), Path(work)
            )
        print(f"{path.stem} (Pi {recorded['pi']}): differs in {list(outcome.differences)}")
        if outcome.differences:
            differing += 1
            continue
        recorded["real"] = outcome.real.to_json()
        recorded["system_message"] = portable_message(outcome.system_message)
        path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
