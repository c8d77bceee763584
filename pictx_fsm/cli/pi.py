"""``pictx-fsm pi``: the bridge to the real Pi.

``pictx-fsm pi --extension-path`` prints the Pi extension to load (``pi -e PATH``);
``pictx-fsm pi serve`` runs the JSON-lines server the extension talks to (the extension starts
it itself as ``python -m pictx_fsm.hosts.pi``; ``serve`` is for hosts of your own);
``pictx-fsm pi manifest`` regenerates the manifest the extension registers its hooks, tools
and texts from (``--check``: exit 1 when the committed file is stale).
"""

from __future__ import annotations

import argparse
import sys

from pictx_fsm.hosts.pi.server import EXTENSION, serve


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=["serve", "manifest"],
        help="serve: answer bridge requests on stdin/stdout; manifest: regenerate the manifest",
    )
    parser.add_argument(
        "--extension-path", action="store_true", help="print the Pi extension's path"
    )
    parser.add_argument(
        "--check", action="store_true", help="with manifest: only check that it is current"
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "serve":
        return serve(sys.stdin, sys.stdout)
    if args.action == "manifest":
        from pictx_fsm.hosts.pi import manifest

        where = manifest.MANIFEST
        if args.check:
            current = manifest.manifest_is_current()
            print(f"{where}: {'current' if current else 'stale (run: pictx-fsm pi manifest)'}")
            return 0 if current else 1
        print(f"{where}: {'written' if manifest.write_manifest() else 'unchanged'}")
        return 0
    print(EXTENSION)
    return 0
