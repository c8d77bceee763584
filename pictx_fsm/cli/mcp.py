"""``pictx-fsm mcp``: serve an extension's notes and history tools over MCP (stdio).

    pictx-fsm mcp --session FILE [--notes-home DIR] [--extension notesoup|pi-context]
                  [--agent NAME] [--model ID]

The notes root is ``--notes-home``, else ``$PI_NOTES_HOME``, else ``~/.agents/notes`` (as in
Pi); the session file names the session's own notes home (its id), the project (its
``cwd``) and the history the ``history_*`` tools read (read again whenever Pi appended to
it). ``@self`` is ``--agent``, else ``$PI_NOTES_AGENT``; ``@model`` is ``--model``, else the
session's last model. Needs the optional dependency: ``pip install 'pictx-fsm[mcp]'``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from pictx_fsm.errors import UsageError
from pictx_fsm.extensions.shared.tools.homes import NOTES_AGENT_ENV, default_notes_home

__all__ = ["EXTENSIONS", "MISSING_SDK", "configure", "run"]

EXTENSIONS = ("notesoup", "pi-context")
MISSING_SDK = (
    "pictx-fsm mcp needs the MCP Python SDK, an optional dependency: pip install 'pictx-fsm[mcp]'"
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", type=Path, required=True, help="the Pi session file")
    parser.add_argument("--notes-home", type=Path, help="notes root (default: $PI_NOTES_HOME)")
    parser.add_argument(
        "--extension", choices=EXTENSIONS, default="notesoup", help="whose tools (notesoup)"
    )
    parser.add_argument("--agent", help="the @self agent (default: $PI_NOTES_AGENT)")
    parser.add_argument("--model", metavar="ID", help="the @model id (default: the session's)")


def run(args: argparse.Namespace) -> int:
    try:
        from pictx_fsm.hosts.mcp import SessionFile, surface_for
        from pictx_fsm.hosts.mcp.server import serve_stdio
    except ModuleNotFoundError as error:
        if error.name and error.name.split(".")[0] in ("mcp", "mcp_types", "anyio"):
            raise UsageError(MISSING_SDK) from None
        raise
    root = args.notes_home or default_notes_home(os.environ, Path.home())
    agent = args.agent if args.agent is not None else os.environ.get(NOTES_AGENT_ENV)
    surface = surface_for(
        args.extension, root, SessionFile(args.session), agent=agent, model_id=args.model
    )
    serve_stdio(surface)
    return 0
