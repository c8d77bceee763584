"""The real Pi host: a JSON-lines bridge between Pi and pictx_fsm's extensions.

Load ``pictx-bridge.mjs`` (:data:`EXTENSION`, pi-context) or ``context-management.mjs``
(pi-context-management) into Pi with ``pi -e`` (``pictx-fsm pi --extension-path [NAME]``
prints them: :func:`entry_path`); each starts ``python -m pictx_fsm.hosts.pi --extension NAME``
and forwards its extension's hooks, tools and commands.
"""

from pathlib import Path

from pictx_fsm.hosts.pi.server import EXTENSION, BridgeSession, serve

ENTRIES = {
    "pi-context": EXTENSION,
    "context-management": EXTENSION.with_name("context-management.mjs"),
}
"""Each served extension's Pi entry (``pi -e``)."""


def entry_path(extension: str) -> Path:
    """The file ``pi -e`` loads for ``extension`` (``pi-context`` or ``context-management``)."""
    return ENTRIES[extension]


__all__ = ["ENTRIES", "EXTENSION", "BridgeSession", "entry_path", "serve"]
