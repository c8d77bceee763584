"""``pictx-fsm``: one subcommand per module in this package.

Each command module exposes ``configure(parser)`` (add its arguments) and
``run(args) -> int`` (the exit code). User errors are raised as :class:`UsageError` and
reported in one line with exit code 2; no traceback reaches the user for bad input.

Start-up imports only what runs: the list of commands is printed without argparse, and a
command's module (and so the lifecycle, the models, Hypothesis) is imported only when that
command is given.
"""

from __future__ import annotations

import os
import sys

from pictx_fsm.errors import PictxError

# Not ``typing.TYPE_CHECKING``: ``pictx-fsm --help`` imports neither typing nor
# collections.abc nor importlib (each is milliseconds of a start-up budget of 60 ms).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from types import ModuleType

DESCRIPTION = "The pi-context lifecycle as declared, verified state machines."

__all__ = ["COMMANDS", "build_parser", "main"]

# name -> (module, one-line help). Order is the order of ``pictx-fsm --help``.
COMMANDS: dict[str, tuple[str, str]] = {
    "verify": ("pictx_fsm.cli.verify", "explore the lifecycle on the model session and check it"),
    "check": ("pictx_fsm.cli.check", "every action sequence up to a depth, breadth first"),
    "replay": ("pictx_fsm.cli.replay", "re-run a trace and report the first differing decision"),
    "differential": (
        "pictx_fsm.cli.differential",
        "generated runs on a real Pi and on the model session, compared",
    ),
    "inspect": ("pictx_fsm.cli.inspect", "show the structure and problems of Pi session files"),
    "audit": ("pictx_fsm.cli.audit", "check Pi session files against the reset lifecycle"),
    "log": ("pictx_fsm.cli.log", "verify audit logs (hash chain, segments, seals)"),
    "machines": ("pictx_fsm.cli.machines", "list the declared machines"),
    "diagram": ("pictx_fsm.cli.diagram", "render the declared machines as diagrams"),
    "pi": ("pictx_fsm.cli.pi", "the bridge to the real Pi (extension path, server)"),
    "notes": ("pictx_fsm.cli.notes", "list, read and search a notes home (what a model wrote)"),
}


def _load(name: str) -> ModuleType | None:
    module_name, _ = COMMANDS[name]
    try:
        __import__(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise
    return sys.modules[module_name]


def selected_command(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line (the first word), if any."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command listed, but only ``selected`` imported and configured:
    ``pictx-fsm --help`` imports no command, ``pictx-fsm audit …`` only the audit (the
    lifecycle and its model documents load only for the commands that run them)."""
    import argparse

    parser = argparse.ArgumentParser(prog="pictx-fsm", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_text) in COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == selected:
            _configure(name, command_parser)
    return parser


def _configure(name: str, command_parser: argparse.ArgumentParser) -> None:
    import argparse

    try:
        module = _load(name)
    except PictxError as exc:
        # A command that cannot load (a broken model document) reports why when it is
        # asked for; the other commands keep working.
        command_parser.add_argument("rest", nargs=argparse.REMAINDER)
        command_parser.set_defaults(_run=_fail_with(exc))
        return
    if module is None:
        return
    module.configure(command_parser)
    command_parser.set_defaults(_run=module.run)


def _fail_with(error: PictxError) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        raise error

    return run


def top_level_help() -> str:
    """``pictx-fsm --help``: the commands and their one-line help, without argparse."""
    width = max(map(len, COMMANDS)) + 4
    rows = "\n".join(f"    {name:<{width}}{text}" for name, (_, text) in COMMANDS.items())
    return (
        "usage: pictx-fsm [-h] COMMAND ...\n\n"
        f"{DESCRIPTION}\n\n"
        f"commands:\n{rows}\n\n"
        "options:\n  -h, --help  show this help message and exit\n\n"
        "`pictx-fsm COMMAND --help` describes a command."
    )


def _tolerate_lone_surrogates() -> None:
    """Pi writes cut emoji as lone UTF-16 surrogates (``"\\ud83d"``); such a string cannot
    be encoded, so it is printed as the escape ``\\ud83d`` (valid inside JSON output)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    _tolerate_lone_surrogates()
    arguments = sys.argv[1:] if argv is None else list(argv)
    if not arguments or arguments[0] in ("-h", "--help"):
        print(top_level_help(), file=sys.stdout if arguments else sys.stderr)
        return 0 if arguments else 2
    parser = build_parser(selected_command(arguments))
    args = parser.parse_args(arguments)
    run = getattr(args, "_run", None)
    if run is None:  # an optional dependency of this command is not installed
        print(f"pictx-fsm {args.command}: not available in this installation", file=sys.stderr)
        return 2
    try:
        code: int = run(args)
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
