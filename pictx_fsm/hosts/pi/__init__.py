"""The real Pi host: a JSON-lines bridge between Pi 0.87 and the lifecycle runtime.

Load ``pictx-bridge.mjs`` (:data:`EXTENSION`; ``pictx-fsm pi --extension-path`` prints it)
into Pi with ``pi -e``; it starts ``python -m pictx_fsm.hosts.pi`` and forwards every
lifecycle hook, the two tools and the two commands.
"""

from pictx_fsm.hosts.pi.server import EXTENSION, BridgeSession, serve

__all__ = ["EXTENSION", "BridgeSession", "serve"]
