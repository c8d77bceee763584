"""``pictx-fsm log verify FILE…``: verify audit logs from the shell.

For each file: whether every record is intact and chained, how many segments and records it
holds, whether it ends with its seal (a clean shutdown, nothing cut since), and every damaged
range with its first line — declared ones (a crash the log sealed off and continued after)
and undeclared ones (an edit, or a tear no writer has resumed; nothing after it verifies).

Exit codes, per file, the overall code being the highest: 0 intact (no damage, sealed);
1 broken — damage, or a last segment without its seal (the writer is still running, crashed,
or the log was cut at a record boundary), the first bad line named; 2 unreadable (missing,
a directory, a device, no permission).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from pictx_fsm.audit.store import ChainReport, check_log
from pictx_fsm.errors import UnreadableInputError

__all__ = ["EXIT_BROKEN", "EXIT_INTACT", "EXIT_UNREADABLE", "configure", "run", "verify_file"]

EXIT_INTACT = 0
EXIT_BROKEN = 1
EXIT_UNREADABLE = 2


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="log_command", metavar="ACTION", required=True)
    verify = sub.add_parser("verify", help="verify the hash chain of audit logs")
    verify.add_argument("files", nargs="+", metavar="FILE", help="audit logs (.audit.jsonl)")


def run(args: argparse.Namespace) -> int:
    code = EXIT_INTACT
    for path in args.files:
        lines, file_code = verify_file(path)
        for line in lines:
            print(line)
        code = max(code, file_code)
    return code


def verify_file(path: str) -> tuple[list[str], int]:
    """The lines to print for one file, and its exit code."""
    try:
        report = check_log(path)
    except UnreadableInputError as error:
        return [f"{path}: unreadable: {error.reason}"], EXIT_UNREADABLE
    lines = list(_describe(path, report))
    return lines, EXIT_INTACT if report.intact else EXIT_BROKEN


def _describe(path: str, report: ChainReport) -> Iterator[str]:
    state = "intact" if report.intact else "BROKEN"
    yield (
        f"{path}: {state}: {report.records} records verify in {report.segments} "
        f"segment(s); {'sealed' if report.sealed else 'not sealed'}"
    )
    for damage in report.damage:
        yield "  " + damage.text(path)
    for line in report.unsealed:
        yield f"  {path}:{line}: the segment before this line ended without its seal"
    if not report.sealed and not any(d.declared_at is None for d in report.damage):
        yield (
            f"  {path}: the last segment has no seal: its writer is still running, crashed, "
            "or the log was cut after record "
            f"{report.last_seq}"
        )
