"""``pictx-fsm replay TRACE``: re-run a trace on the current code and model session.

Works for every extension's traces (the trace names its extension). Reports the first machine
decision that differs from the one recorded in the trace (a changed model, guard or action
shows up here) and whether the recorded invariant violation is reproduced. Exit 0 when the
decisions match and no invariant is violated; 1 when a decision differs or an invariant is
violated (a counterexample reproduces); 2 on an unreadable or malformed trace.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.audit.store import write_sealed
from pictx_fsm.errors import UsageError
from pictx_fsm.json_input import read_json_file
from pictx_fsm.session.jsonl import os_reason
from pictx_fsm.testing.trace import first_difference, run_actions, trace_from_json

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace written by pictx-fsm verify")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--audit-dir",
        help="write each runtime's audit log here (runtime-<n>.audit.jsonl), e.g. for "
        "`pictx-fsm diagram --trace`",
    )


def _write_audits(directory: Path, audits: Sequence[AuditLog]) -> None:
    """One sealed file per runtime: each is its own hash chain (Pi re-creates the extension)."""
    directory.mkdir(parents=True, exist_ok=True)
    for index, log in enumerate(audits):
        write_sealed(directory / f"runtime-{index}.audit.jsonl", log.records)


def run(args: argparse.Namespace) -> int:
    trace = trace_from_json(read_json_file(args.trace), args.trace)
    outcome = run_actions(trace.kit, trace.config, trace.actions)
    decisions = outcome.world.decisions()
    difference = None
    if trace.decisions is not None:
        difference = first_difference(trace.decisions, decisions)
    failure = outcome.describe_failure()
    recorded = (trace.failure or {}).get("message")
    if args.audit_dir:
        try:
            _write_audits(Path(args.audit_dir), outcome.world.audits)
        except OSError as error:
            raise UsageError(f"--audit-dir {args.audit_dir}: {os_reason(error)}") from None
    if args.json:
        print(
            json.dumps(
                {
                    "trace": args.trace,
                    "extension": trace.extension,
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
        described = trace.kit.describe(trace.config)
        print(f"replay {args.trace}: {len(trace.actions)} actions, {described}")
        if trace.decisions is None:
            print("decisions      none recorded in the trace")
        elif difference is None:
            print(f"decisions      all {len(decisions)} match the recorded ones")
        else:
            print(f"decisions      first difference at {difference.describe()}")
        if failure is None:
            print("invariants     all held")
        else:
            same = " (reproduces the recorded failure)" if failure == recorded else ""
            print(f"invariants     violated at action {outcome.failed_at}{same}")
            print(f"  {failure}")
    return 1 if (failure is not None or difference is not None) else 0
