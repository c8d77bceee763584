"""``pictx-fsm``: one subcommand per module in this package.

Each command module exposes ``configure(parser)`` (add its arguments) and
``run(args) -> int`` (the exit code). User errors are raised as :class:`UsageError` and
reported in one line with exit code 2; no traceback reaches the user for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from pictx_fsm.errors import PictxError

__all__ = ["COMMANDS", "build_parser", "main"]

# name -> (module, one-line help). Order is the order of ``pictx-fsm --help``.
COMMANDS: dict[str, tuple[str, str]] = {
    "verify": ("pictx_fsm.cli.verify", "explore the lifecycle on the model session and check it"),
    "replay": ("pictx_fsm.cli.replay", "re-run a trace and report the first differing decision"),
    "inspect": ("pictx_fsm.cli.inspect", "show the structure and problems of Pi session files"),
    "audit": ("pictx_fsm.cli.audit", "check Pi session files against the reset lifecycle"),
    "machines": ("pictx_fsm.cli.machines", "list the declared machines"),
    "diagram": ("pictx_fsm.cli.diagram", "render the declared machines as diagrams"),
    "pi": ("pictx_fsm.cli.pi", "the bridge to the real Pi (extension path, server)"),
    "notes": ("pictx_fsm.cli.notes", "list, read and search a notes home (what a model wrote)"),
}


def _load(name: str) -> ModuleType | None:
    module_name, _ = COMMANDS[name]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pictx-fsm",
        description="The pi-context lifecycle as declared, verified state machines.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_text) in COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        try:
            module = _load(name)
        except PictxError as exc:
            # A command that cannot load (a broken model document) reports why when it is
            # asked for; the other commands keep working.
            command_parser.add_argument("rest", nargs=argparse.REMAINDER)
            command_parser.set_defaults(_run=_fail_with(exc))
            continue
        if module is None:
            continue
        module.configure(command_parser)
        command_parser.set_defaults(_run=module.run)
    return parser


def _fail_with(error: PictxError) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        raise error

    return run


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
    except PictxError as exc:  # e.g. a broken model document, found at import
        print(f"pictx-fsm: {exc}", file=sys.stderr)
        return exc.exit_code
    args = parser.parse_args(argv)
    try:
        code: int = args._run(args)
    except PictxError as exc:
        print(f"pictx-fsm {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"pictx-fsm {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`pictx-fsm audit … | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
