"""``pictx-fsm pi``: the bridge to the real Pi.

``pictx-fsm pi --extension-path`` prints the Pi extension to load (``pi -e PATH``);
``pictx-fsm pi serve`` runs the JSON-lines server the extension talks to (the extension starts
it itself as ``python -m pictx_fsm.hosts.pi``; ``serve`` is for hosts of your own).
"""

from __future__ import annotations

import argparse
import sys

from pictx_fsm.hosts.pi.server import EXTENSION, serve


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=["serve"],
        help="serve: answer bridge requests on stdin/stdout",
    )
    parser.add_argument(
        "--extension-path", action="store_true", help="print the Pi extension's path"
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "serve":
        return serve(sys.stdin, sys.stdout)
    print(EXTENSION)
    return 0
