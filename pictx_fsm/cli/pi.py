"""``pictx-fsm pi``: the bridge to the real Pi.

``pictx-fsm pi --extension-path [pi-context|context-management|notesoup]`` prints the Pi
extension to load (``pi -e PATH``): pi-context by default, pi-context-management or notesoup
0.38 (Pi 1.x) when named;
``pictx-fsm pi serve [--extension NAME]`` runs the JSON-lines server the extension talks to (the
extension starts it itself as ``python -m pictx_fsm.hosts.pi --extension NAME``; ``serve`` is
for hosts of your own); ``pictx-fsm pi manifest`` regenerates the manifest the extensions
register their hooks, tools and texts from (``--check``: exit 1 when the committed file is
stale).
"""

from __future__ import annotations

import argparse
import sys

from pictx_fsm.hosts.pi import entry_path
from pictx_fsm.hosts.pi.handshake import PI_CONTEXT, SERVED
from pictx_fsm.hosts.pi.server import serve

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=["serve", "manifest"],
        help="serve: answer bridge requests on stdin/stdout; manifest: regenerate the manifest",
    )
    parser.add_argument(
        "--extension-path",
        nargs="?",
        const=PI_CONTEXT,
        choices=SERVED,
        metavar="EXTENSION",
        help=(
            "print the Pi extension's path (pi-context, the default, context-management or "
            "notesoup)"
        ),
    )
    parser.add_argument(
        "--extension",
        choices=SERVED,
        default=PI_CONTEXT,
        help="with serve: the extension the server runs (default pi-context)",
    )
    parser.add_argument(
        "--check", action="store_true", help="with manifest: only check that it is current"
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "serve":
        return serve(sys.stdin, sys.stdout, extension=args.extension)
    if args.action == "manifest":
        from pictx_fsm.hosts.pi import manifest

        where = manifest.MANIFEST
        if args.check:
            current = manifest.manifest_is_current()
            print(f"{where}: {'current' if current else 'stale (run: pictx-fsm pi manifest)'}")
            return 0 if current else 1
        print(f"{where}: {'written' if manifest.write_manifest() else 'unchanged'}")
        return 0
    print(entry_path(args.extension_path or PI_CONTEXT))
    return 0
