"""``pictx-fsm audit SESSION.jsonl…``: check Pi session files against the reset lifecycle.

For each file: the reader's structural problems, then the lifecycle findings on every branch
(reset tails, tool pairs, window identity, budget messages, native summaries on marked
branches, legacy resets, overflow storms, out-of-band forks), each with its entries, lines,
severity and the rule or failure mode it breaks. ``--profile 0.25.0`` relaxes the
continuation rules (§2.4, R59) and never checks texts. ``--stats`` adds throughput.

Exit codes, per file, the overall code being the highest: 0 clean (no finding, or only
``info`` ones), 1 findings (any warning or error), 2 unreadable input (missing, a directory,
not a session). Every file is audited even when an earlier one fails.
"""

from __future__ import annotations

import argparse
import json

from pictx_fsm.conformance.checks import CheckSet, combine
from pictx_fsm.conformance.report import render_run, run_json
from pictx_fsm.conformance.stream import audit_files
from pictx_fsm.extensions.context_management.conformance import context_management_checks
from pictx_fsm.extensions.pi_context.conformance import pi_context_checks
from pictx_fsm.extensions.pi_context.texts import DEFAULT_PROFILE, Profile

__all__ = ["configure", "run", "session_checks"]


def session_checks(profile: Profile | str = DEFAULT_PROFILE) -> CheckSet:
    """Every extension's checks of a session file, composed: the one place that names them
    (an extension registry takes its place). ``profile``: the pi-context release that wrote
    the files."""
    return combine(pi_context_checks(profile), context_management_checks())


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="SESSION", help="Pi session files (.jsonl)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON document for all files",
    )
    parser.add_argument(
        "--profile",
        choices=[profile.value for profile in Profile],
        default=DEFAULT_PROFILE.value,
        help="the pi-context release that wrote the files (default: %(default)s)",
    )
    parser.add_argument(
        "--stats",
        action="store_true",
        help="report throughput (bytes/s, entries/s, elapsed) per file and in total",
    )


def run(args: argparse.Namespace) -> int:
    profile = Profile.parse(args.profile)
    audits = audit_files(args.files, session_checks(profile))
    if args.json:
        document = run_json(audits, {"profile": profile.value}, stats=args.stats)
        print(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        print(render_run(audits, stats=args.stats))
    return max(audit.exit_code for audit in audits)
