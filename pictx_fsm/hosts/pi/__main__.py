"""``python -m pictx_fsm.hosts.pi``: the bridge server on stdin/stdout."""

import sys

from pictx_fsm.hosts.pi.server import serve

sys.exit(serve(sys.stdin, sys.stdout))
