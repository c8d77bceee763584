"""``python -m pictx_fsm.hosts.pi [--extension NAME]``: the bridge server on stdin/stdout,
running pi-context (the default) or the extension named (``context-management``)."""

import sys

from pictx_fsm.hosts.pi.handshake import PI_CONTEXT, SERVED
from pictx_fsm.hosts.pi.server import serve

__all__ = []


def _extension(argv: list[str]) -> str | None:
    if not argv:
        return PI_CONTEXT
    if len(argv) == 2 and argv[0] == "--extension" and argv[1] in SERVED:
        return argv[1]
    return None


extension = _extension(sys.argv[1:])
if extension is None:
    sys.stderr.write(f"usage: python -m pictx_fsm.hosts.pi [--extension {'|'.join(SERVED)}]\n")
    sys.exit(2)
sys.exit(serve(sys.stdin, sys.stdout, extension=extension))
