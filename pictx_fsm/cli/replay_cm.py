"""``pictx-fsm replay`` for pi-context-management traces (``pictx-fsm/cm-trace/1``).

Re-runs the trace's actions in a fresh world of the recorded configuration, reports the
first machine decision that differs from the recorded ones and whether the recorded
violation reproduces. Exit codes as ``replay``: 0 when decisions match and every invariant
holds, 1 when a decision differs or an invariant is violated, 2 on a malformed trace.
"""

from __future__ import annotations

import argparse
import json

from pictx_fsm.testing.cm.trace import CmTrace, run_cm_actions
from pictx_fsm.testing.trace import first_difference


def replay_cm(args: argparse.Namespace, trace: CmTrace) -> int:
    run = run_cm_actions(trace.config, trace.actions)
    decisions = run.world.decisions()
    difference = None if trace.decisions is None else first_difference(trace.decisions, decisions)
    failure = run.describe_failure()
    recorded = (trace.failure or {}).get("message")
    if args.json:
        print(
            json.dumps(
                {
                    "trace": args.trace,
                    "extension": "context-management",
                    "actions": len(trace.actions),
                    "decisions": len(decisions),
                    "first_difference": None
                    if difference is None
                    else {
                        "index": difference.index,
                        "recorded": difference.expected,
                        "now": difference.actual,
                    },
                    "violation": failure,
                    "reproduces_recorded_failure": recorded is not None and failure == recorded,
                },
                indent=1,
            )
        )
    else:
        fault = f" · planted fault {trace.config.fault}" if trace.config.fault else ""
        print(f"replay {args.trace}: {len(trace.actions)} actions, context-management{fault}")
        if trace.decisions is None:
            print("decisions      none recorded in the trace")
        elif difference is None:
            print(f"decisions      all {len(decisions)} match the recorded ones")
        else:
            print(f"decisions      first difference at decision {difference.index}")
        if failure is None:
            print("invariants     all held")
        else:
            same = " (reproduces the recorded failure)" if failure == recorded else ""
            print(f"invariants     violated at action {run.failed_at}{same}")
            print(f"  {failure}")
    return 1 if (failure is not None or difference is not None) else 0
