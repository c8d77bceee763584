"""``pictx-fsm audit SESSION.jsonl…``: check Pi session files against the reset lifecycle.

For each file: the reader's structural problems, then the lifecycle findings on every branch
(reset tails, tool pairs, window identity, budget messages, native summaries on marked
branches, legacy resets, overflow storms, out-of-band forks), each with its entries, lines,
severity and the rule or failure mode it breaks. ``--profile 0.25.0`` relaxes the
continuation rules (§2.4, R59) and never checks texts. ``--stats`` adds throughput. Each
file is read once; the checks across files (pi-context-management's session chains) read
what that pass found. ``--recursive`` audits every ``*.jsonl`` below a directory;
``--ray [ADDRESS]`` audits the files on Ray workers, with the same findings.

Exit codes, per file, the overall code being the highest: 0 clean (no finding, or only
``info`` ones), 1 findings (any warning or error), 2 unreadable input (missing, a directory,
not a session). Every file is audited even when an earlier one fails.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from pictx_fsm.conformance.checks import CheckSet, combine
from pictx_fsm.conformance.report import SessionAudit, render_run, run_json
from pictx_fsm.conformance.stream import audit_file, audit_files
from pictx_fsm.errors import UsageError
from pictx_fsm.extensions.context_management.conformance import context_management_checks
from pictx_fsm.extensions.pi_context.conformance import pi_context_checks
from pictx_fsm.extensions.pi_context.texts import DEFAULT_PROFILE, Profile
from pictx_fsm.testing.ray_support import add_ray_arguments, check_workers, worker_count

__all__ = ["configure", "run", "session_checks", "session_files"]

TASKS_PER_WORKER = 4
"""Ray tasks per worker: few enough that a task's dispatch is shared by many files, enough
that a worker done early takes another."""


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
    parser.add_argument(
        "--recursive",
        action="store_true",
        help="a directory stands for every *.jsonl file below it (in path order)",
    )
    add_ray_arguments(parser, "the files audited")


def session_files(names: list[str], recursive: bool) -> list[str]:
    """The files to audit: as given, a directory expanded when ``recursive``."""
    out: list[str] = []
    for name in names:
        if recursive and os.path.isdir(name):
            out += sorted(str(p) for p in Path(name).rglob("*.jsonl") if p.is_file())
        else:
            out.append(name)
    return out


def _audit_batch(files: list[str], profile: str) -> list[SessionAudit]:
    """A Ray task: its files audited one by one (the checks built on the worker)."""
    checks = session_checks(profile)
    return [audit_file(path, checks) for path in files]


def _audit_on_ray(files: list[str], profile: Profile, workers: int | None) -> list[SessionAudit]:
    import ray

    task = ray.remote(num_cpus=1)(_audit_batch)
    size = -(-len(files) // (TASKS_PER_WORKER * worker_count(workers)))
    batches = [files[i : i + size] for i in range(0, len(files), size)]
    parts = ray.get([task.remote(batch, profile.value) for batch in batches])
    return session_checks(profile).finish([audit for part in parts for audit in part], files)


def run(args: argparse.Namespace) -> int:
    profile = Profile.parse(args.profile)
    files = session_files(args.files, args.recursive)
    if not files:
        raise UsageError("no session file found (--recursive looks for *.jsonl)")
    check_workers(args.workers)
    if args.ray is not None:
        from pictx_fsm.testing.ray_support import connect

        connect(args.ray, args.workers)
        audits = _audit_on_ray(files, profile, args.workers)
    else:
        audits = audit_files(files, session_checks(profile))
    if args.json:
        document = run_json(audits, {"profile": profile.value}, stats=args.stats)
        print(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        print(render_run(audits, stats=args.stats))
    return max(audit.exit_code for audit in audits)
